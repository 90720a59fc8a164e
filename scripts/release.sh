#!/usr/bin/env bash
# Release archives, a Debian package and package manager files of the
# tools, built here.
#
#   scripts/release.sh TARGET   dist/mocap-tools-VERSION-TARGET.tar.gz, or .zip
#                               when TARGET is a Windows one, and a .sha256
#                               beside it (`sha256sum -c` reads it)
#   scripts/release.sh deb      dist/mocap-tools_VERSION-1_amd64.deb (+ .sha256)
#   scripts/release.sh manifests --base-url URL [--homepage URL]
#                               dist/packaging/scoop/mocap-tools.json and
#                               dist/packaging/homebrew/mocap-tools.rb
#   DIST=dir scripts/release.sh …    write into dir instead of dist/
#
# scripts/test-release.sh checks what this writes. VERSION is the workspace's
# ([workspace.package] version). The tools are every bin target of the
# packages under tools/ (`cargo metadata`, through scripts/lib/release.py).
# Targets built and checked on Debian:
#
#   x86_64-unknown-linux-gnu    glibc, dynamically linked
#   x86_64-unknown-linux-musl   static, runs on any x86_64 Linux; ring's C code
#                               is compiled by musl-gcc (Debian's musl-tools),
#                               which the cc crate finds on PATH by itself
#   x86_64-pc-windows-gnu       Debian's gcc-mingw-w64-x86-64 links it and
#                               compiles ring's C code
#   aarch64-apple-darwin        `cargo zigbuild` (PyPI's cargo-zigbuild and
#   x86_64-apple-darwin         ziglang): zig compiles ring's C and links
#                               against its libSystem stubs, no Apple SDK;
#                               scripts/lib/zigbuild.sh. Oldest macOS: 11.0
#                               (arm64), 10.12 (x86_64)
#   universal2-apple-darwin     both of the above, each tool's two binaries
#                               joined into one file (scripts/lib/macho.py lipo)
#
# Each target needs `rustup target add TARGET`. What is missing (the target's
# standard library, musl-gcc, mingw, zip, cargo-zigbuild) is named and the
# script exits 1.
#
# An archive holds one directory, mocap-tools-VERSION-TARGET/:
#
#   the tools (TOOL.exe on Windows), stripped of their symbol tables (not
#   on macOS: see strip_binary)
#   complete/   TOOL.bash, _TOOL (zsh), TOOL.fish, _TOOL.ps1 (PowerShell)
#   man/        TOOL.1
#   examples/   mocopi-frame-loss.pcapng (captures/mocopi/) and a README.md
#               saying what it is and where it comes from
#   README.md, LICENSE-MIT, LICENSE-APACHE, docs/
#
# Completions and man pages are printed by the tools (`TOOL --generate KIND`).
# When the target's binaries cannot run on this machine (Windows), a host
# build (`--target HOST`, target/HOST/release) prints them instead: the clap
# definitions have no per-platform part, so the text is the same.
#
# Zip archives are written by `zip` when it is installed, else by python3's
# zipfile module (either one is enough; ZIPPER=python3 forces the fallback).
# Entries are sorted, owned by root and dated at the last commit
# (SOURCE_DATE_EPOCH overrides): packing the same files twice gives the same
# bytes.
#
# The .deb (dpkg-deb --build --root-owner-group; dpkg-dev needed, no cargo-deb)
# is made from the x86_64-unknown-linux-gnu binaries: a Debian package links
# the system's glibc like the rest of the system, and its Depends line is then
# computed by dpkg-shlibdeps from what the binaries really import (libc6 and
# libgcc-s1 with minimum versions) rather than written by hand. Distributions
# older than that glibc take the static musl archive instead. Layout:
#
#   /usr/bin/TOOL
#   /usr/share/man/man1/TOOL.1.gz                    (gzip -9n)
#   /usr/share/bash-completion/completions/TOOL
#   /usr/share/zsh/vendor-completions/_TOOL
#   /usr/share/fish/vendor_completions.d/TOOL.fish
#   /usr/share/doc/mocap-tools/copyright             (machine-readable: MIT OR Apache-2.0)
#   /usr/share/doc/mocap-tools/changelog.Debian.gz
#
# DEB_MAINTAINER="Name <mail>" overrides the package's Maintainer field.
#
# `manifests` reads the archives already in dist/ (the Windows zip, both
# macOS archives and the musl one) and their .sha256 files: the Scoop
# manifest installs every .exe of the zip, the Homebrew formula the macOS
# (arm64, x86_64) or Linux archive with man pages and bash, zsh and fish
# completions. Their URLs are URL/ARCHIVE-NAME; the homepage is --homepage,
# else URL.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
. scripts/lib/zigbuild.sh

DEB_MAINTAINER="${DEB_MAINTAINER:-mocap-tools maintainers <maintainers@users.noreply.a-seed-4e6c2113.example>}"

say() { printf '== %s\n' "$*"; }
die() { printf 'release: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '5,12s/^# \{0,1\}//p' "$0" >&2
  exit 2
}
[ $# -ge 1 ] || usage
case $1 in -h | --help) usage ;; esac
what=$1

if [ "$what" = manifests ]; then
  shift
  base_url="" homepage=""
  while [ $# -gt 0 ]; do
    case $1 in
      --base-url=*) base_url=${1#*=} ;;
      --homepage=*) homepage=${1#*=} ;;
      --base-url | --homepage)
        [ $# -ge 2 ] || usage
        if [ "$1" = --base-url ]; then base_url=$2; else homepage=$2; fi
        shift
        ;;
      *) usage ;;
    esac
    shift
  done
  [ -n "$base_url" ] || usage
  command -v python3 >/dev/null || die "python3 is missing (it writes the manifests)"
  mkdir -p "${DIST:-dist}"
  exec python3 scripts/lib/release.py manifests --base-url "$base_url" \
    ${homepage:+--homepage "$homepage"} --dist "${DIST:-dist}"
fi
[ $# = 1 ] || usage

# --- what this machine must have -------------------------------------------

missing=()
need() { command -v "$1" >/dev/null || missing+=("$1 ($2)"); }
need cargo "a Rust toolchain, https://rustup.rs"
need rustc "a Rust toolchain, https://rustup.rs"
need sha256sum "coreutils"
need gzip "apt-get install gzip"
need python3 "apt-get install python3: the tool list, and Mach-O files"

if [ "$what" = deb ]; then
  target=x86_64-unknown-linux-gnu
  need dpkg-deb "apt-get install dpkg"
  need dpkg-shlibdeps "apt-get install dpkg-dev"
else
  target=$what
  case $target in
    *-*-*) ;;
    *) die "'$target' is not a target triple (e.g. x86_64-unknown-linux-musl) nor 'deb'" ;;
  esac
fi

case $target in
  *windows*)
    if [ "${ZIPPER:-}" = python3 ]; then
      need python3 "ZIPPER=python3 asks for python3's zipfile"
    elif ! command -v zip >/dev/null && ! command -v python3 >/dev/null; then
      missing+=("zip or python3, to write the .zip (apt-get install zip)")
    fi
    ;;
  *) need tar "apt-get install tar" ;;
esac
case $target in
  x86_64-unknown-linux-musl)
    if [ -z "${CC_x86_64_unknown_linux_musl:-}" ] && ! command -v musl-gcc >/dev/null &&
      ! command -v x86_64-linux-musl-gcc >/dev/null; then
      missing+=("musl-gcc, the C compiler for ring's C code on musl (apt-get install musl-tools)")
    fi
    ;;
  x86_64-pc-windows-gnu)
    need x86_64-w64-mingw32-gcc "the MinGW-w64 linker and C compiler: apt-get install gcc-mingw-w64-x86-64"
    need x86_64-w64-mingw32-strip "apt-get install binutils-mingw-w64-x86-64"
    ;;
esac
case $target in x86_64-unknown-linux-*) need strip "apt-get install binutils" ;; esac
# The targets cargo builds: a universal2 archive joins the two thin builds.
case $target in
  universal2-apple-darwin) thin_targets=(aarch64-apple-darwin x86_64-apple-darwin) ;;
  *) thin_targets=("$target") ;;
esac
case $target in
  *-apple-darwin)
    zigbuild_find 2>/dev/null ||
      missing+=("cargo-zigbuild and zig, the macOS C compiler and linker (pip install cargo-zigbuild ziglang)")
    ;;
esac
if command -v rustc >/dev/null; then
  host=$(rustc -vV | sed -n 's/^host: //p')
  for t in "${thin_targets[@]}"; do
    if [ ! -d "$(rustc --print sysroot)/lib/rustlib/$t/lib" ]; then
      missing+=("Rust's standard library for $t (rustup target add $t)")
    fi
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  printf 'release: missing on this machine:\n' >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi

# --- where things are --------------------------------------------------------

mapfile -t TOOLS < <(python3 scripts/lib/release.py tools)
[ ${#TOOLS[@]} -gt 0 ] || die "no tools found (scripts/lib/release.py tools: bin targets under tools/)"

version=$(cargo pkgid -p mocopi-dump | sed 's/.*[#@]//')
# Tools that are workspaces of their own carry the root's version by hand.
mapfile -t WORKSPACES < <(python3 scripts/lib/release.py workspaces)
for w in "${WORKSPACES[@]}"; do
  v=$(cd "$w" && cargo pkgid | sed 's/.*[#@]//')
  [ "$v" = "$version" ] || die "$w is version $v, the workspace $version: set it in $w/Cargo.toml"
done
target_dir=$(cargo metadata --no-deps --format-version 1 |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
if [ -z "$version" ] || [ -z "$target_dir" ]; then
  die "cannot read the version or target directory from cargo"
fi
mkdir -p "${DIST:-dist}"
dist=$(cd "${DIST:-dist}" && pwd)
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
exe=""
case $target in *windows*) exe=.exe ;; esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The documentation folder as the repository has it: tracked files and new
# ones that are not ignored (no editor swap files).
docs_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard -- docs | sort -u
  else
    find docs -type f | sort
  fi
}

# --- build ---------------------------------------------------------------------

# --workspace --bins: every tool, the same build as the Windows test stage
# (scripts/lib/platforms.sh) makes; then each tool that is a workspace of
# its own (mocap-link), from its directory, into the same target/.
cargo_release() { # TARGET DIR: cargo (or zigbuild) build --release in DIR
  local t=$1 dir=$2 sub=build scope=(--workspace --bins)
  [ "$dir" = . ] || scope=(--bins)
  case $t in
    *-apple-darwin)
      local min var flags
      min=$(zigbuild_min_macos "$t")
      var=CARGO_TARGET_$(printf '%s' "$t" | tr 'a-z-' 'A-Z_')_RUSTFLAGS
      flags=$(zigbuild_rustflags)
      say "(in $dir) MACOSX_DEPLOYMENT_TARGET=$min $var='$flags' cargo zigbuild --release --locked ${scope[*]} --target $t"
      (cd "$dir" && env MACOSX_DEPLOYMENT_TARGET="$min" "$var=$flags" \
        cargo zigbuild --release --locked "${scope[@]}" --target "$t")
      ;;
    *)
      say "(in $dir) cargo build --release --locked ${scope[*]} --target $t"
      (cd "$dir" && cargo build --release --locked "${scope[@]}" --target "$t")
      ;;
  esac
}
build() {
  local t=$1 start=$SECONDS w
  if [ -n "${CARGO_PROFILE_RELEASE_OPT_LEVEL:-}" ]; then
    say "CARGO_PROFILE_RELEASE_OPT_LEVEL=$CARGO_PROFILE_RELEASE_OPT_LEVEL: not the release profile's optimisation (a check build, not one to publish)"
  fi
  cargo_release "$t" .
  for w in "${WORKSPACES[@]}"; do cargo_release "$t" "$w"; done
  say "built $t in $((SECONDS - start)) s"
}
for t in "${thin_targets[@]}"; do build "$t"; done
bin_dir="$target_dir/$target/release"
if [ "$target" = universal2-apple-darwin ]; then
  # Each slice is the thin build's file, unchanged, so its signature holds.
  mkdir -p "$bin_dir"
  for t in "${TOOLS[@]}"; do
    python3 scripts/lib/macho.py lipo "$bin_dir/$t" \
      "$target_dir/x86_64-apple-darwin/release/$t" "$target_dir/aarch64-apple-darwin/release/$t" ||
      die "joining the two macOS builds of $t failed"
    chmod 0755 "$bin_dir/$t"
  done
  say "joined x86_64 and arm64 into $bin_dir"
fi
for t in "${TOOLS[@]}"; do
  [ -x "$bin_dir/$t$exe" ] || die "cargo did not leave $bin_dir/$t$exe"
done

# The binaries that print completions and man pages: the target's own when
# they run here, else the host's, built with --target as the host's own
# archive and the .deb are (so after those this build is already done).
gen_dir=$bin_dir
if ! "$bin_dir/mocopi-dump$exe" --version >/dev/null 2>&1; then
  say "$target binaries do not run here: completions and man pages from the host build ($host)"
  build "$host"
  gen_dir="$target_dir/$host/release"
fi

# Strips a staged copy: the symbol table left by cargo's default
# strip=debuginfo (a fifth of the size; panics still print their message,
# backtraces show no function names) and the linker's .comment section.
strip_binary() {
  case $target in
    x86_64-unknown-linux-*) strip --remove-section=.comment "$1" ;;
    # PE files carry a link time, which strip rewrites: to this date.
    x86_64-pc-windows-gnu) SOURCE_DATE_EPOCH=$epoch x86_64-w64-mingw32-strip "$1" ;;
    # Mach-O: the signature zig's linker writes covers every byte before it,
    # and a strip after the link would leave it wrong (arm64 macOS then kills
    # the program); GNU strip cannot rewrite Mach-O at all. They stay as linked.
    *-apple-darwin) ;;
    *) say "no strip known for $target: $(basename "$1") left as built" ;;
  esac
}

# generate TOOL KIND FILE: what the tool prints for --generate KIND, into FILE.
generate() {
  "$gen_dir/$1" --generate "$2" >"$3" || die "$gen_dir/$1 --generate $2 failed"
  [ -s "$3" ] || die "$gen_dir/$1 --generate $2 printed nothing"
}

# --- the archive -----------------------------------------------------------------

# What examples/ holds (README.md's Windows walk-through uses it).
examples_readme() {
  cat <<'EOF'
# Examples

`mocopi-frame-loss.pcapng`: eight Sony mocopi datagrams (a skeleton, then
frames with a gap of 2, a duplicate and a sender restart) at their recorded
receive times, from 127.0.0.1:50012.

    mocopi-dump -r examples/mocopi-frame-loss.pcapng   # a line a packet, then the stream's health
    pcap-replay examples/mocopi-frame-loss.pcapng      # send them to 127.0.0.1:12351 (a running mocopi-dump)

The datagrams are the frame-loss capture of the animu-sphere mocopi corpus
(github.com/animu-sphere/usd-vrm-plugins, adapters/liveCapture/mocopi/tests/corpus/,
commit f2f5511d), licensed under the Apache License 2.0: see LICENSE-APACHE.
EOF
}

make_archive() {
  local name="mocap-tools-$version-$target"
  local top="$work/$name"
  mkdir -p "$top/complete" "$top/man"
  for t in "${TOOLS[@]}"; do
    install -m 0755 "$bin_dir/$t$exe" "$top/$t$exe"
    strip_binary "$top/$t$exe"
    generate "$t" complete-bash "$top/complete/$t.bash"
    generate "$t" complete-zsh "$top/complete/_$t"
    generate "$t" complete-fish "$top/complete/$t.fish"
    generate "$t" complete-powershell "$top/complete/_$t.ps1"
    generate "$t" man "$top/man/$t.1"
  done
  install -m 0644 README.md LICENSE-MIT LICENSE-APACHE "$top/"
  install -D -m 0644 captures/mocopi/mocopi-frame-loss.pcapng "$top/examples/mocopi-frame-loss.pcapng"
  examples_readme >"$top/examples/README.md"
  local f
  while IFS= read -r f; do
    install -D -m 0644 "$f" "$top/$f"
  done < <(docs_files)
  chmod -R u=rwX,go=rX "$top"
  for t in "${TOOLS[@]}"; do chmod 0755 "$top/$t$exe"; done
  find "$top" -exec touch -h -d "@$epoch" {} +

  local archive
  case $target in
    *windows*)
      archive="$dist/$name.zip"
      rm -f "$archive"
      if [ "${ZIPPER:-}" != python3 ] && command -v zip >/dev/null; then
        (cd "$work" && find "$name" | LC_ALL=C sort | TZ=UTC zip -X -9 -q "$archive" -@)
      else
        say "writing $name.zip with python3's zipfile (${ZIPPER:+ZIPPER=python3}${ZIPPER:-zip is not installed})"
        python3 - "$work" "$name" "$archive" <<'EOF'
import os, sys, time, zipfile
root, name, out = sys.argv[1:]
os.chdir(root)
paths = []
for d, dirs, files in os.walk(name):
    paths.append(d + "/")
    paths.extend(os.path.join(d, f) for f in files)
with zipfile.ZipFile(out, "w") as z:
    for p in sorted(paths):
        st = os.stat(p)
        info = zipfile.ZipInfo(p, time.gmtime(st.st_mtime)[:6])
        info.create_system = 3  # Unix, so that the mode bits below are read
        info.external_attr = (st.st_mode & 0xFFFF) << 16
        if p.endswith("/"):
            info.external_attr |= 0x10  # MS-DOS directory bit
            z.writestr(info, b"")
        else:
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(p, "rb") as f:
                z.writestr(info, f.read(), compresslevel=9)
EOF
      fi
      ;;
    *)
      archive="$dist/$name.tar.gz"
      tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
        -C "$work" -cf - "$name" | gzip -9n >"$archive.part"
      mv "$archive.part" "$archive"
      ;;
  esac
  finish "$archive"
}

# --- the Debian package ----------------------------------------------------------

make_deb() {
  local arch=amd64
  local name="mocap-tools_$version-1_$arch"
  local root="$work/$name"
  local doc="$root/usr/share/doc/mocap-tools"
  install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" \
    "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d" "$doc"
  for t in "${TOOLS[@]}"; do
    install -m 0755 "$bin_dir/$t" "$root/usr/bin/$t"
    strip_binary "$root/usr/bin/$t"
    generate "$t" man "$work/$t.1"
    gzip -9n <"$work/$t.1" >"$root/usr/share/man/man1/$t.1.gz"
    generate "$t" complete-bash "$root/usr/share/bash-completion/completions/$t"
    generate "$t" complete-zsh "$root/usr/share/zsh/vendor-completions/_$t"
    generate "$t" complete-fish "$root/usr/share/fish/vendor_completions.d/$t.fish"
  done

  {
    cat <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: mocap-tools
Source: the mocap-tools workspace; built by scripts/release.sh

Files: *
Copyright: 2026 The mocap-tools developers
License: MIT or Apache-2.0

License: MIT
EOF
    # The MIT text, minus its title and copyright lines, as continuation lines.
    sed -n '/^Permission/,$p' LICENSE-MIT | sed 's/^$/./; s/^/ /'
    cat <<'EOF'

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License.
 .
 On Debian systems, the full text of the Apache License, Version 2.0 can be
 found in /usr/share/common-licenses/Apache-2.0.
EOF
  } >"$doc/copyright"
  printf '%s\n' \
    "mocap-tools ($version-1) unstable; urgency=medium" "" \
    "  * Built from the mocap-tools workspace by scripts/release.sh." "" \
    " -- $DEB_MAINTAINER  $(LC_ALL=C date -u -R -d "@$epoch")" |
    gzip -9n >"$doc/changelog.Debian.gz"

  # What the binaries import, as Debian package names and minimum versions.
  mkdir -p "$work/shlibs/debian"
  printf 'Source: mocap-tools\n\nPackage: mocap-tools\nArchitecture: %s\n' "$arch" \
    >"$work/shlibs/debian/control"
  local depends
  depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "${TOOLS[@]/#/$root/usr/bin/}" |
    sed -n 's/^shlibs:Depends=//p')
  [ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies"

  chmod -R u=rwX,go=rX "$root"
  chmod 0755 "$root"/usr/bin/*
  find "$root" -exec touch -h -d "@$epoch" {} +
  (cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
  chmod 0644 "$root/DEBIAN/md5sums"
  cat >"$root/DEBIAN/control" <<EOF
Package: mocap-tools
Version: $version-1
Architecture: $arch
Maintainer: $DEB_MAINTAINER
Installed-Size: $(du -sk --apparent-size "$root/usr" | cut -f1)
Depends: $depends
Section: net
Priority: optional
Description: command-line tools for motion-capture network protocols
 Sniff, decode, replay and forward the network streams of motion-capture
 rigs from the shell: every stream on every port live in one terminal
 (mocap-top), Sony mocopi (mocopi-dump), iFacialMocap and
 Facemotion3d (ifm-handshake), Epic's Live Link Face (livelink-dump), the
 VMC protocol (vmc-relay, vmc-average),
 UDP replay of pcap/pcapng captures (pcap-replay) and DLP3D motion streams
 over WebSocket (motion-stream).
EOF
  chmod 0644 "$root/DEBIAN/control"

  local deb="$dist/$name.deb"
  SOURCE_DATE_EPOCH=$epoch dpkg-deb --build --root-owner-group "$root" "$deb.part" >/dev/null
  mv "$deb.part" "$deb"
  say "Depends: $depends"
  finish "$deb"
}

finish() {
  local file=$1 base
  base=$(basename "$file")
  (cd "$(dirname "$file")" && sha256sum "$base" >"$base.sha256")
  local bytes
  bytes=$(stat -c %s "$file")
  say "$file: $bytes bytes ($(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 1048576 }') MiB)"
  say "$file.sha256: $(cut -c1-16 "$file.sha256")…"
}

if [ "$what" = deb ]; then make_deb; else make_archive; fi
