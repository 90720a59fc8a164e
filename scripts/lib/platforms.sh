# Sourced by scripts/test-windows.sh and scripts/test-all.sh: the other
# systems our users run. First the Windows
# build of every tool, runnable under Wine on this Linux machine.
#
# `windows_prepare` cross-builds the workspace for x86_64-pc-windows-gnu
# (release, the same build scripts/release.sh packs), makes a Wine prefix of
# its own under target/ (nothing is cached outside the repository), and
# exports what the Windows tests read (crates/mocap-core/src/testutil.rs,
# module `wine`):
#
#   MOCAP_WINDOWS_BIN  the folder of the .exe files
#   MOCAP_WINE         Debian's Wine loader (wine64)
#   WINEPREFIX         the prefix; WINEDEBUG=-all keeps Wine's own chatter
#                      off the tools' stderr, which the tests compare
#
# Debian bookworm's Wine 8 has no bcryptprimitives.dll, whose ProcessPrng
# Rust's standard library imports on Windows; the prefix gets a stand-in
# built here from scripts/lib/wine/ (test scaffolding, never shipped).
#
# `windows_stop` ends the prefix's wineserver. Needs rustup's target,
# Debian's gcc-mingw-w64-x86-64 and wine64 (the callers install them).

WINDOWS_TARGET=x86_64-pc-windows-gnu

windows_wine() {
  if command -v wine64 >/dev/null; then command -v wine64
  elif [ -x /usr/lib/wine/wine64 ]; then echo /usr/lib/wine/wine64
  else return 1
  fi
}

windows_wineserver() {
  if command -v wineserver >/dev/null; then command -v wineserver
  elif [ -x /usr/lib/wine/wineserver ]; then echo /usr/lib/wine/wineserver
  else return 1
  fi
}

windows_prepare() {
  local root wine server prefix
  root="$(pwd)"
  wine="$(windows_wine)" || { echo "windows: wine64 is missing (apt-get install wine64)" >&2; return 1; }
  server="$(windows_wineserver)" || { echo "windows: wineserver is missing (apt-get install wine64)" >&2; return 1; }
  command -v x86_64-w64-mingw32-gcc >/dev/null \
    || { echo "windows: x86_64-w64-mingw32-gcc is missing (apt-get install gcc-mingw-w64-x86-64)" >&2; return 1; }
  rustup target list --installed 2>/dev/null | grep -qx "$WINDOWS_TARGET" \
    || { echo "windows: rustup target $WINDOWS_TARGET is missing (rustup target add $WINDOWS_TARGET)" >&2; return 1; }

  # Every target (tests, benches, examples) must compile for Windows too: a
  # contributor there runs `cargo test --workspace`, and Unix-only test code
  # once broke that without anyone here seeing it.
  echo "== cargo check --workspace --all-targets --target $WINDOWS_TARGET"
  cargo check --locked --workspace --all-targets --target "$WINDOWS_TARGET"
  echo "== cargo build --release --target $WINDOWS_TARGET"
  cargo build --release --locked --workspace --bins --target "$WINDOWS_TARGET"

  prefix="$root/target/wine-prefix"
  export WINEPREFIX="$prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  export MOCAP_WINDOWS_BIN="$root/target/$WINDOWS_TARGET/release" MOCAP_WINE="$wine"
  if [ ! -f "$prefix/system.reg" ]; then
    echo "== wine prefix $prefix"
    # Its services start here, away from the tests' pipes: a child that
    # started them would hand them its stdout, which then never closes.
    "$wine" wineboot --init </dev/null >/dev/null 2>&1
  fi
  "$server" -w
  x86_64-w64-mingw32-gcc -shared -O2 -o "$prefix/drive_c/windows/system32/bcryptprimitives.dll" \
    scripts/lib/wine/bcryptprimitives.c scripts/lib/wine/bcryptprimitives.def -ladvapi32
  # One server for every test, started with no pipe of ours.
  "$server" -p </dev/null >/dev/null 2>&1
  "$wine" cmd /c exit </dev/null >/dev/null 2>&1 || true
  local version
  version="$("$wine" "$MOCAP_WINDOWS_BIN/mocopi-dump.exe" --version 2>&1)" \
    || { echo "windows: mocopi-dump.exe does not start under Wine: $version" >&2; return 1; }
  echo "windows: mocopi-dump.exe --version says \"$version\" under $("$wine" --version 2>/dev/null || echo Wine)"
}

windows_stop() {
  local server
  server="$(windows_wineserver)" && WINEPREFIX="${WINEPREFIX:-$(pwd)/target/wine-prefix}" "$server" -k 2>/dev/null || true
}

# `windows_install`: what windows_prepare and macos_check need, from Debian
# (as root or through sudo) and rustup.
windows_install() {
  local want=()
  windows_wine >/dev/null || want+=(wine64)
  command -v x86_64-w64-mingw32-gcc >/dev/null || want+=(gcc-mingw-w64-x86-64)
  if [ ${#want[@]} != 0 ]; then
    echo "== apt-get install ${want[*]}"
    local sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo -n)
    "${sudo[@]}" apt-get update -q >/dev/null
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${want[@]}" >/dev/null
  fi
  local t
  for t in "$WINDOWS_TARGET" "${MACOS_TARGETS[@]}"; do
    rustup target list --installed | grep -qx "$t" || rustup target add "$t"
  done
}

# macOS cannot be run here, but it can be type-checked: every package whose
# dependencies need no Apple C toolchain. motion-stream is the exception:
# rustls's ring compiles C and assembly, which needs Apple's SDK (on a Mac,
# `cargo build` builds it as usual).
MACOS_TARGETS=(aarch64-apple-darwin x86_64-apple-darwin)
MACOS_PACKAGES=(mocap-core mocap-cli mocap-testutil mocopi-dump ifm-handshake livelink-dump vmc-relay vmc-average pcap-replay mocap-top)

macos_check() {
  local t p args=()
  for p in "${MACOS_PACKAGES[@]}"; do args+=(-p "$p"); done
  for t in "${MACOS_TARGETS[@]}"; do
    echo "== cargo check --all-targets --target $t (${MACOS_PACKAGES[*]}; not motion-stream: ring needs Apple's C toolchain)"
    cargo check --locked --target "$t" "${args[@]}" --all-targets
  done
}
