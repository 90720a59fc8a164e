#!/usr/bin/env bash
# The Windows build of every tool, tested on this Linux machine under Wine
# against Linux peers on 127.0.0.1 (tools/*/tests/windows.rs), and the macOS
# targets checked (`cargo check`; see below).
#
#   scripts/test-windows.sh              install what is missing, then test
#   scripts/test-windows.sh --no-install only test; a missing piece fails
#
# scripts/test-all.sh runs the same tests inside its one `cargo test` run
# (it calls windows_prepare from scripts/lib/platforms.sh); this script is for
# running the Windows stage alone.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
. scripts/lib/platforms.sh

install=1
[ "${1:-}" = "--no-install" ] && install=0

if [ $install = 1 ]; then
  windows_install
fi
start=$(date +%s)
windows_prepare
trap windows_stop EXIT
echo "== cargo test (tests/windows.rs of every tool) -- --ignored"
cargo test --workspace --test windows -- --ignored
macos_check
echo "windows stage: $(( $(date +%s) - start )) s"
