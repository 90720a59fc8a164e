#!/usr/bin/env bash
# Frames decoded per second, our SMF decoder and the mocopi_parser crate side by side.
# Pin to one core where taskset exists, so "per core" means one core.
set -euo pipefail
cd "$(dirname "$0")/.."
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
cargo bench -p mocap-core --bench smf --no-run
"${pin[@]}" cargo bench -p mocap-core --bench smf -- "$@"
