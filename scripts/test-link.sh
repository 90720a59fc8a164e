#!/usr/bin/env bash
# mocap-link: lints and every test, Python interop included.
#
#   scripts/test-link.sh               install eclipse-zenoh (pip) if missing, run all
#   scripts/test-link.sh --no-install  the same with what is installed
#
# mocap-link is a workspace of its own (tools/mocap-link, excluded from the
# root one): Zenoh's build is heavier than every other tool together
# (docs/link.md, "Building"), so `cargo test --workspace` and CI's routine
# run (.ci/run → scripts/test-all.sh) leave it out. It builds into the root
# target directory, where its tests find pcap-replay, mocopi-dump and
# vmc-average, built here first.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

if ! python3 -c "import zenoh" 2>/dev/null; then
  if [ "${1:-}" != --no-install ]; then
    echo "== pip install eclipse-zenoh"
    python3 -m pip install -q --disable-pip-version-check eclipse-zenoh
  else
    echo "test-link: eclipse-zenoh is missing (pip install eclipse-zenoh)" >&2
    exit 1
  fi
fi

echo "== the tools mocap-link's tests drive"
cargo build --locked -p pcap-replay -p mocopi-dump -p vmc-average

cd tools/mocap-link
echo "== cargo fmt --check, clippy (mocap-link)"
cargo fmt -- --check
cargo clippy --locked --all-targets -- -D warnings
echo "== cargo test (mocap-link) -- --include-ignored"
cargo test --locked -- --include-ignored
