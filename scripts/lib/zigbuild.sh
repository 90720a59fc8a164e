# Sourced by scripts/release.sh and scripts/test-all.sh: cargo-zigbuild, the
# cargo subcommand that links (and compiles ring's C and assembly) for macOS
# with zig, which carries the macOS libSystem stubs: no Apple SDK, no Mac.
#
# Both come from PyPI (`pip install cargo-zigbuild ziglang`). pip puts
# cargo-zigbuild in the interpreter's scripts folder, which a non-login shell
# may not have on PATH; `zigbuild_find` adds that folder. cargo-zigbuild runs
# zig as `python3 -m ziglang` when no `zig` is on PATH.

# The scripts folders pip may have used: the interpreter's, then the user's.
zigbuild_dirs() {
  python3 - <<'EOF' 2>/dev/null
import os, sysconfig
print(sysconfig.get_path("scripts"))
print(sysconfig.get_path("scripts", f"{os.name}_user"))
EOF
}

# zigbuild_find: 0 when cargo-zigbuild and zig can be run (PATH extended if
# need be), else 1 with what is missing on stderr.
zigbuild_find() {
  local d
  if ! command -v cargo-zigbuild >/dev/null; then
    while IFS= read -r d; do
      if [ -n "$d" ] && [ -x "$d/cargo-zigbuild" ]; then
        PATH="$d:$PATH"
        export PATH
        break
      fi
    done < <(zigbuild_dirs)
  fi
  command -v cargo-zigbuild >/dev/null ||
    { echo "cargo-zigbuild (pip install cargo-zigbuild)" >&2; return 1; }
  command -v zig >/dev/null || python3 -c 'import ziglang' 2>/dev/null ||
    { echo "zig (pip install ziglang)" >&2; return 1; }
}

# The oldest macOS each target's binaries run on, written into their
# LC_BUILD_VERSION (without it the stubs' newest version, 15.0, is written):
# 11.0, the first release on Apple silicon; 10.12, Rust's own minimum for x86_64.
zigbuild_min_macos() {
  case $1 in
    aarch64-apple-darwin) echo 11.0 ;;
    x86_64-apple-darwin) echo 10.12 ;;
    *) return 1 ;;
  esac
}

# The rustflags of a macOS build. ctrlc (3.5) waits on a libdispatch
# semaphore through the dispatch2 crate, which pulls in objc2, whose #[link]
# attributes name libobjc and the Foundation framework. Zig has no stubs for
# those two, so the link fails; the tools call nothing in them (libdispatch
# is part of libSystem). macos-stubs/ holds empty stubs with their install
# names, enough for the linker to resolve the names, and -dead_strip_dylibs
# drops every library nothing is imported from: the programs load libSystem
# alone (scripts/test-release.sh checks it). Were a symbol of libobjc or
# Foundation ever used, the empty stub would make the link fail, not the
# program. mocap-link needs two more: quinn (Zenoh's QUIC) brings
# rustls-platform-verifier, whose #[link] attributes name the Security and
# CoreFoundation frameworks; Zenoh never calls it, so nothing is imported
# from them and mocap-link too loads libSystem alone.
zigbuild_rustflags() {
  local src dir
  src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/macos-stubs"
  # A copy under the target directory, named by its real path: the flags
  # (which cargo fingerprints) then stay the same wherever the clone is when
  # target/ is a link into CI's build cache (.ci/run), and cached macOS
  # builds are kept.
  dir="${CARGO_TARGET_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/target}/macos-stubs"
  mkdir -p "$dir" && cp -pR "$src/." "$dir/" && dir="$(cd "$dir" && pwd -P)" || dir=$src
  printf '%s' "-L native=$dir -L framework=$dir -C link-arg=-Wl,-dead_strip_dylibs"
}
