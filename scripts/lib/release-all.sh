#!/usr/bin/env bash
# Every release archive and the .deb, one scripts/release.sh run after
# another, into DIST (default target/dist):
#
#   scripts/lib/release-all.sh
#
# scripts/test-all.sh starts this in the background at the lowest CPU
# priority (nice 19) once the Windows stage has built its release binaries,
# and waits for it after the last test stage. The tests then take the CPU
# whenever they need it and the release builds use what they leave: their
# sleeps, timeouts, single-threaded peers and Wine. The two never wait for
# each other's cargo lock: the tests build the dev and test profiles, this
# builds release (cargo locks each profile's directory on its own).
#
# The Windows archive reuses the Windows stage's release build of the root
# workspace; the universal2 one joins the two macOS builds; the .deb builds
# the x86_64-unknown-linux-gnu binaries that the Windows and macOS archives'
# completions and man pages already came from.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DIST="${DIST:-target/dist}"
start=$(date +%s)
rm -rf "$DIST"
for what in x86_64-pc-windows-gnu x86_64-unknown-linux-musl aarch64-apple-darwin x86_64-apple-darwin \
  universal2-apple-darwin deb; do
  what_start=$(date +%s)
  scripts/release.sh "$what"
  echo "release $what: $(( $(date +%s) - what_start )) s"
done
echo "release builds: $(( $(date +%s) - start )) s"
