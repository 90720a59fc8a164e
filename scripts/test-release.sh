#!/usr/bin/env bash
# Checks what scripts/release.sh wrote:
#
#   scripts/test-release.sh [FILE...]   default: every archive and .deb in dist/ ($DIST),
#                                       and dist/packaging/{scoop/*.json,homebrew/*.rb}
#
# The tools are every bin target under tools/ (scripts/lib/release.py tools).
# Each check prints `ok`, `FAIL` (with what was wrong) or `skip` (a peer this
# machine lacks: zsh, fish, pwsh, lintian, ruby), and the last line is the summary
# `release: N passed, N failed`. The exit status is 1 when anything failed or
# there was nothing to check.
#
# An archive, mocap-tools-VERSION-TARGET.tar.gz or .zip:
#   - VERSION is the workspace's; the .sha256 beside it is one line
#     `<hex>  <name>` and matches the file
#   - its entries are exactly the expected ones: one top directory, the
#     tools (.exe on Windows), complete/ (bash, zsh, fish, PowerShell),
#     man/TOOL.1, examples/ (README.md, mocopi-frame-loss.pcapng), README.md,
#     LICENSE-MIT, LICENSE-APACHE and docs/ as the repository has it; README,
#     licences, docs and the example capture equal the repository's
#   - tar: the tools are executable (mode 755) and nothing else is;
#     zip: the tools are PE32+ x86-64 programs (MZ and PE headers, and `file`)
#   - bash completions parse (bash -n) and, sourced, register the tool; zsh
#     ones start with `#compdef TOOL` and pass `zsh -n`; fish ones pass
#     `fish -n`; PowerShell ones register a completer for the tool (and parse,
#     if pwsh is installed)
#   - man pages render with `man -l --warnings` (LC_ALL=C.UTF-8, as the
#     tools' own tests do) without a warning and name the tool under NAME
#   - Linux: every tool prints `TOOL VERSION` for --version, the
#     completions and man pages are what the tool itself prints, and
#     mocopi-dump decodes the example (7 frames, 1 skeleton, lost 2,
#     1 duplicate, 1 restart in its JSON summary); musl: run
#     under `env -i`, and statically linked (no program interpreter, no
#     shared library: readelf)
#   - macOS (scripts/lib/macho.py): 64-bit Mach-O executables of the
#     target's architecture (both, in a universal2 file), for macOS 11.0
#     (arm64) / 10.12 (x86_64) and newer, loading only
#     /usr/lib/libSystem.B.dylib; arm64 code carries an ad-hoc signature
#     whose every page hash matches the file's bytes (any other signature is
#     verified the same way), and a file with one byte changed fails that check
#   - cargo binstall: every tool's [package.metadata.binstall], expanded
#     for the archive's target (and x86_64-pc-windows-msvc for the Windows
#     zip), names this archive, its format and the tool's path inside it
#
# A Scoop manifest (packaging/scoop/mocap-tools.json) and a Homebrew formula
# (packaging/homebrew/mocap-tools.rb), checked against the archives in the
# dist folder above them: the fields Scoop requires (version, description,
# homepage, license, and url, hash, extract_dir for 64bit), every tool's
# .exe in `bin`; the formula's on_macos (on_arm, on_intel) and on_linux
# archives, every tool installed with its man page and completions; each URL
# names an archive there and each hash is that archive's. `ruby -c` parses
# the formula when ruby is installed.
#
# A .deb, mocap-tools_VERSION-1_amd64.deb:
#   - .sha256 as above; control fields (Package, Version, Architecture,
#     Maintainer, Description, Depends); every shared library the tools load
#     comes from a package in Depends, and libc6's minimum version covers the
#     newest GLIBC_ symbol version they import (objdump -T)
#   - its entries are exactly the expected paths, owned by root, mode 755 for
#     the tools and directories and 644 for the rest; man pages are gzip files
#     that render without warnings; completions parse as above; the copyright
#     file is machine-readable and names MIT or Apache-2.0; lintian, if
#     installed, reports no error or warning
#   - installed with dpkg -i (as root, or through sudo): the tools are on
#     the standard PATH in /usr/bin and print their version, `man -w` finds
#     /usr/share/man/man1/mocopi-dump.1.gz, the bash completion is in place,
#     `dpkg --verify` is clean; then dpkg -r, and every file is gone. A
#     mocap-tools already installed is not touched: that check fails instead.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t TOOLS < <(python3 scripts/lib/release.py tools)
[ ${#TOOLS[@]} -gt 0 ] || { echo "release: no tools found (scripts/lib/release.py tools)"; exit 1; }
STD_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

passed=0
failed=0
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
bad() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"; }
skip() { printf 'skip  %s\n' "$1"; }

# check WHAT FUNCTION ARGS...: the function prints what is wrong, one line
# each, and returns non-zero; it passes only when it prints nothing and
# returns 0. It runs in this shell (its variables stay set).
check() {
  local what=$1 out status=0
  shift
  "$@" >"$work/check.out" 2>&1 || status=$?
  out=$(cat "$work/check.out")
  if [ $status = 0 ] && [ -z "$out" ]; then
    ok "$what"
  else
    bad "$what"
    [ -n "$out" ] || out="(failed with status $status, no message)"
    printf '%s\n' "$out" | head -n 25 | sed 's/^/        /'
  fi
}

version=$(cargo pkgid -p mocopi-dump | sed 's/.*[#@]//')
work=$(mktemp -d)
deb_installed=0
cleanup() {
  if [ $deb_installed = 1 ]; then as_root dpkg -r mocap-tools >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo "$@"
  else
    echo "needs root or sudo: $*"
    return 1
  fi
}

docs_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard -- docs | sort -u
  else
    find docs -type f | sort
  fi
}

# --- checks shared by archives and the .deb -------------------------------------

check_sha256() {
  local file=$1 sum="$1.sha256" want
  [ -f "$sum" ] || { echo "no $sum"; return 1; }
  want="$(sha256sum "$file" | cut -d' ' -f1)  $(basename "$file")"
  [ "$(cat "$sum")" = "$want" ] || {
    echo "$sum holds:"
    sed 's/^/  /' "$sum"
    echo "the file's is:"
    echo "  $want"
    return 1
  }
}

# compare_lists EXPECTED ACTUAL: sorted lists, one entry a line.
compare_lists() {
  local missing extra
  missing=$(LC_ALL=C comm -23 "$1" "$2")
  extra=$(LC_ALL=C comm -13 "$1" "$2")
  [ -z "$missing" ] || printf '%s\n' "$missing" | sed 's/^/missing: /'
  [ -z "$extra" ] || printf '%s\n' "$extra" | sed 's/^/unexpected: /'
  [ -z "$missing$extra" ]
}

# check_bash DIR NAME_PATTERN: NAME_PATTERN has TOOL where the tool's name goes.
check_bash() {
  local t f problems=0
  for t in "${TOOLS[@]}"; do
    f="$1/${2//TOOL/$t}"
    bash -n "$f" || { echo "bash -n $f failed"; problems=1; continue; }
    bash -c 'source "$1" && complete -p "$2"' _ "$f" "$t" >/dev/null 2>&1 ||
      { echo "sourcing $f registers no completion for $t"; problems=1; }
  done
  return $problems
}

check_zsh() {
  local t f problems=0
  for t in "${TOOLS[@]}"; do
    f="$1/${2//TOOL/$t}"
    [ "$(head -n 1 "$f")" = "#compdef $t" ] || { echo "$f does not start with '#compdef $t'"; problems=1; }
    if command -v zsh >/dev/null; then
      zsh -n "$f" || { echo "zsh -n $f failed"; problems=1; }
    fi
  done
  return $problems
}

check_fish() {
  local t f problems=0
  for t in "${TOOLS[@]}"; do
    f="$1/${2//TOOL/$t}"
    grep -q "^complete -c $t " "$f" || { echo "$f has no 'complete -c $t'"; problems=1; }
    if command -v fish >/dev/null; then
      fish -n "$f" || { echo "fish -n $f failed"; problems=1; }
    fi
  done
  return $problems
}

check_powershell() {
  local t f problems=0
  for t in "${TOOLS[@]}"; do
    f="$1/${2//TOOL/$t}"
    grep -q "^Register-ArgumentCompleter -Native -CommandName '$t' " "$f" ||
      { echo "$f registers no completer for '$t'"; problems=1; }
    if command -v pwsh >/dev/null; then
      # shellcheck disable=SC2016 # PowerShell's variables, not the shell's
      F=$f pwsh -NoProfile -Command '$e = $null; [void][System.Management.Automation.Language.Parser]::ParseFile($env:F, [ref]$null, [ref]$e); if ($e.Count) { $e; exit 1 }' ||
        { echo "pwsh cannot parse $f"; problems=1; }
    fi
  done
  return $problems
}

check_man() {
  local t page err problems=0
  for t in "${TOOLS[@]}"; do
    page="$1/${2//TOOL/$t}"
    case $page in *.gz) gzip -t "$page" || { echo "$page is not a gzip file"; problems=1; continue; } ;; esac
    zcat -f "$page" | grep -m1 '^\.TH' | grep -q "^\.TH $t 1 .*\"$t $version\"" ||
      { echo "$page: .TH line is '$(zcat -f "$page" | grep -m1 '^\.TH')', want $t 1 and \"$t $version\""; problems=1; }
    err=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l --warnings "$page" 2>&1 >"$work/man.txt") || { echo "man -l $page failed: $err"; problems=1; continue; }
    [ -z "$err" ] || { echo "man -l --warnings $page:"; printf '%s\n' "$err"; problems=1; }
    sed -n '/^NAME/,/^SYNOPSIS/p' "$work/man.txt" | grep -q "^ *$t  *- " ||
      { echo "$page: NAME does not name $t"; problems=1; }
  done
  return $problems
}

# --- archives ----------------------------------------------------------------------

check_archive() {
  local file=$1 base top target kind exe="" entries="$work/entries" expected="$work/expected"
  base=$(basename "$file")
  case $base in
    *.tar.gz) kind=tar top=${base%.tar.gz} ;;
    *.zip) kind=zip top=${base%.zip} ;;
  esac
  target=${top#"mocap-tools-$version-"}
  if [ "$target" = "$top" ] || [ -z "$target" ]; then
    bad "$base: name is not mocap-tools-$version-TARGET (workspace version $version)"
    return
  fi
  case $target in *windows*) exe=.exe ;; esac
  if [ $kind = zip ] && [ -z "$exe" ]; then bad "$base: a zip for a non-Windows target"; fi
  if [ $kind = tar ] && [ -n "$exe" ]; then bad "$base: a tar.gz for a Windows target"; fi
  echo "-- $file ($(stat -c %s "$file") bytes)"

  check "$target: .sha256 matches" check_sha256 "$file"

  # The entries, directories without their trailing slash.
  if [ $kind = tar ]; then
    tar -tzf "$file" | sed 's,/$,,' | LC_ALL=C sort >"$entries"
  else
    unzip -Z1 "$file" | sed 's,/$,,' | LC_ALL=C sort >"$entries"
  fi
  {
    printf '%s\n' "$top" "$top/complete" "$top/man" "$top/docs" \
      "$top/README.md" "$top/LICENSE-MIT" "$top/LICENSE-APACHE" \
      "$top/examples" "$top/examples/README.md" "$top/examples/mocopi-frame-loss.pcapng"
    for t in "${TOOLS[@]}"; do
      printf '%s\n' "$top/$t$exe" "$top/complete/$t.bash" "$top/complete/_$t" \
        "$top/complete/$t.fish" "$top/complete/_$t.ps1" "$top/man/$t.1"
    done
    docs_files | sed "s,^,$top/,"
    docs_files | sed -n 's,/[^/]*$,,p' | grep -vx docs | sed "s,^,$top/," || true
  } | LC_ALL=C sort -u >"$expected"
  list_entries "$entries"
  check "$target: $(wc -l <"$expected") entries, none missing, none unexpected" compare_lists "$expected" "$entries"

  local x="$work/x-$target"
  rm -rf "$x" && mkdir -p "$x"
  if [ $kind = tar ]; then tar -xzf "$file" -C "$x"; else unzip -q "$file" -d "$x"; fi
  local d="$x/$top"

  check "$target: README.md, licences, docs/ and the example equal the repository's" same_as_repo "$d"
  if [ $kind = tar ]; then
    check "$target: the ${#TOOLS[@]} tools are mode 755, other files 644" tar_modes "$file" "$top"
  else
    check "$target: the ${#TOOLS[@]} .exe files are PE32+ x86-64 programs" pe_files "$d"
  fi
  case $target in
    *-apple-darwin)
      check "$target: Mach-O $(macho_arches "$target") executables, macOS $(macho_minos "$target")+, libSystem only, signatures valid (required on arm64)" macho_files "$d" "$target"
      case $target in
        aarch64-* | universal2-*) check "$target: a changed byte makes the signature check fail" macho_tamper "$d" ;;
      esac
      ;;
  esac
  check "$target: cargo binstall templates of every tool name this archive and its binaries" \
    python3 scripts/lib/release.py check-binstall "$file"
  check "$target: bash completions parse and register each tool" check_bash "$d" "complete/TOOL.bash"
  command -v zsh >/dev/null || skip "$target: zsh -n (zsh not installed; #compdef lines still checked)"
  check "$target: zsh completions" check_zsh "$d" "complete/_TOOL"
  command -v fish >/dev/null || skip "$target: fish -n (fish not installed; complete -c lines still checked)"
  check "$target: fish completions" check_fish "$d" "complete/TOOL.fish"
  command -v pwsh >/dev/null || skip "$target: PowerShell parse (pwsh not installed; Register-ArgumentCompleter lines still checked)"
  check "$target: PowerShell completions" check_powershell "$d" "complete/_TOOL.ps1"
  check "$target: man pages render without warnings" check_man "$d" "man/TOOL.1"

  case $target in
    *-linux-*)
      check "$target: each tool prints '$version' for --version" versions "$d" ""
      check "$target: completions and man pages are what the tools print" generated_match "$d"
      check "$target: mocopi-dump decodes examples/mocopi-frame-loss.pcapng" decodes_example "$d"
      ;;
    *) skip "$target: --version and --generate (a $target program does not run here)" ;;
  esac
  case $target in
    *-linux-musl*)
      check "$target: each tool runs under env -i" versions "$d" "env -i"
      check "$target: statically linked (no interpreter, no shared library)" static_elf "$d"
      ;;
  esac
}

# --- macOS -------------------------------------------------------------------------

macho_arches() {
  case $1 in
    aarch64-apple-darwin) echo arm64 ;;
    x86_64-apple-darwin) echo x86_64 ;;
    universal2-apple-darwin) echo "arm64+x86_64" ;;
  esac
}
macho_minos() {
  case $1 in
    aarch64-apple-darwin) echo 11.0 ;;
    x86_64-apple-darwin) echo 10.12 ;;
    universal2-apple-darwin) echo "11.0/10.12" ;;
  esac
}

# macho_files DIR TARGET: what scripts/lib/macho.py reads in each tool.
macho_files() {
  local t
  for t in "${TOOLS[@]}"; do printf '%s\n' "$1/$t"; done >"$work/macho.list"
  xargs -d '\n' python3 scripts/lib/macho.py <"$work/macho.list" >"$work/macho.json" || true
  python3 - "$(macho_arches "$2")" "$work/macho.json" <<'EOF'
import json, sys
want_arches = sorted(sys.argv[1].split("+"))
minos = {"arm64": "11.0", "x86_64": "10.12"}
# libSystem is the C library, libdispatch, libm and the rest in one; the only
# library a pure-Rust macOS program needs.
allowed = {"/usr/lib/libSystem.B.dylib"}
for line in open(sys.argv[2]):
    f = json.loads(line)
    name = f["path"].rsplit("/", 1)[-1]
    if "error" in f:
        print(f"{name}: {f['error']}")
        continue
    arches = sorted(s["arch"] for s in f["slices"])
    if arches != want_arches:
        print(f"{name}: architectures {arches}, want {want_arches}")
    if f["universal"] != (len(want_arches) > 1):
        print(f"{name}: universal is {f['universal']}")
    for s in f["slices"]:
        where = f"{name} ({s['arch']})"
        if not s["executable"]:
            print(f"{where}: not an executable (MH_EXECUTE)")
        if s["platform"] != "macos" or s["minos"] != minos.get(s["arch"]):
            print(f"{where}: built for {s['platform']} {s['minos']}, want macos {minos.get(s['arch'])}")
        extra = sorted(set(s["dylibs"]) - allowed)
        if extra or not s["dylibs"]:
            print(f"{where}: loads {s['dylibs']}, want only {sorted(allowed)}")
        sig = s["signature"]
        if sig is None:
            if s["arch"] == "arm64":
                print(f"{where}: no code signature (arm64 macOS kills unsigned programs)")
            continue
        if s["arch"] == "arm64" and not sig.get("adhoc"):
            print(f"{where}: signature is not ad-hoc")
        if not sig["valid"]:
            print(f"{where}: signature invalid: {'; '.join(sig['problems'])}")
EOF
}

# macho_tamper DIR: one byte changed in the middle of each signed slice of
# mocopi-dump must make macho.py report the signature invalid; otherwise the
# check above proves nothing.
macho_tamper() {
  cp "$1/mocopi-dump" "$work/tampered"
  python3 - "$work/tampered" <<'EOF'
import json, subprocess, sys
path = sys.argv[1]
info = json.loads(subprocess.run([sys.executable, "scripts/lib/macho.py", path], capture_output=True, text=True).stdout)
signed = [s for s in info["slices"] if s.get("signature")]
if not signed:
    print("no signed slice to change")
    sys.exit(1)
with open(path, "r+b") as f:
    for s in signed:
        at = s["offset"] + s["size"] // 2
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x01]))
after = json.loads(subprocess.run([sys.executable, "scripts/lib/macho.py", path], capture_output=True, text=True).stdout)
for s in after["slices"]:
    if s.get("signature") and s["signature"]["valid"]:
        print(f"{s['arch']}: still reported valid with a byte changed at {s['offset'] + s['size'] // 2}")
EOF
}

# The entries, one line per directory.
list_entries() {
  awk '{
      n = split($0, p, "/"); dir = (n == 1) ? "" : substr($0, 1, length($0) - length(p[n]) - 1)
      if (n == 1) next
      files[dir] = files[dir] " " p[n]
    }
    END { for (d in files) print "   " d "/:" files[d] }' "$1" | LC_ALL=C sort
}

same_as_repo() {
  local f problems=0
  for f in README.md LICENSE-MIT LICENSE-APACHE $(docs_files); do
    cmp -s "$f" "$1/$f" || { echo "$f differs from the repository's"; problems=1; }
  done
  cmp -s captures/mocopi/mocopi-frame-loss.pcapng "$1/examples/mocopi-frame-loss.pcapng" ||
    { echo "examples/mocopi-frame-loss.pcapng differs from captures/mocopi/'s"; problems=1; }
  grep -q 'mocopi-frame-loss.pcapng' "$1/examples/README.md" ||
    { echo "examples/README.md does not describe mocopi-frame-loss.pcapng"; problems=1; }
  return $problems
}

# tar_modes ARCHIVE TOP: modes as tar records them.
tar_modes() {
  local mode name want problems=0 tools=" ${TOOLS[*]} "
  while read -r mode _ _ _ _ name; do
    case $mode in
      d*) want=drwxr-xr-x ;;
      *) case $tools in *" ${name#"$2/"} "*) want=-rwxr-xr-x ;; *) want=-rw-r--r-- ;; esac ;;
    esac
    [ "$mode" = "$want" ] || { echo "$name is $mode, want $want"; problems=1; }
  done < <(tar -tvzf "$1")
  return $problems
}

pe_files() {
  local t f offset problems=0
  for t in "${TOOLS[@]}"; do
    f="$1/$t.exe"
    [ "$(head -c 2 "$f")" = MZ ] || { echo "$f does not start with MZ"; problems=1; continue; }
    # The PE header's offset is at 0x3c, little-endian; there: "PE\0\0", machine 0x8664.
    offset=$(od -An -tu4 -j 60 -N 4 "$f" | tr -d ' ')
    [ "$(od -An -tx1 -j "$offset" -N 6 "$f" | tr -d ' ')" = 504500006486 ] ||
      { echo "$f has no x86-64 PE header at $offset"; problems=1; }
    if command -v file >/dev/null; then
      file -b "$f" | grep -q '^PE32+ executable (console) x86-64' ||
        { echo "file says $f is: $(file -b "$f")"; problems=1; }
    fi
  done
  return $problems
}

# versions DIR [PREFIX]: each tool's --version, run as PREFIX TOOL (env -i).
versions() {
  local t out problems=0
  for t in "${TOOLS[@]}"; do
    # shellcheck disable=SC2086 # PREFIX is words
    out=$($2 "$1/$t" --version 2>&1) || { echo "$2 $t --version failed: $out"; problems=1; continue; }
    [ "$out" = "$t $version" ] || { echo "$2 $t --version printed '$out', want '$t $version'"; problems=1; }
  done
  return $problems
}

generated_match() {
  local t kind file problems=0
  for t in "${TOOLS[@]}"; do
    for kind in complete-bash:complete/$t.bash complete-zsh:complete/_$t \
      complete-fish:complete/$t.fish complete-powershell:complete/_$t.ps1 man:man/$t.1; do
      file=${kind#*:}
      "$1/$t" --generate "${kind%%:*}" | cmp -s - "$1/$file" ||
        { echo "$file differs from '$t --generate ${kind%%:*}'"; problems=1; }
    done
  done
  return $problems
}

decodes_example() {
  local summary want problems=0
  summary=$("$1/mocopi-dump" --format json -r "$1/examples/mocopi-frame-loss.pcapng" 2>/dev/null |
    grep '^{"type":"summary"') || { echo "mocopi-dump -r examples/mocopi-frame-loss.pcapng printed no summary"; return 1; }
  for want in '"frames":7,"skeletons":1' '"lost":2,"duplicates":1' '"restarts":1'; do
    case $summary in *"$want"*) ;; *) echo "summary lacks $want: ${summary:0:200}"; problems=1 ;; esac
  done
  return $problems
}

static_elf() {
  local t problems=0
  for t in "${TOOLS[@]}"; do
    if readelf -lW "$1/$t" | grep -q 'Requesting program interpreter'; then
      echo "$t has a program interpreter: $(readelf -lW "$1/$t" | grep -o 'interpreter: [^]]*')"
      problems=1
    fi
    if readelf -dW "$1/$t" | grep -q '(NEEDED)'; then
      echo "$t loads shared libraries: $(readelf -dW "$1/$t" | grep '(NEEDED)' | grep -o '\[.*\]' | tr '\n' ' ')"
      problems=1
    fi
  done
  return $problems
}

# --- the Debian package --------------------------------------------------------------

# The package's directories and files, as dpkg-deb -c names them (without
# the trailing slash of directories).
deb_dirs() {
  printf '%s\n' . ./usr ./usr/bin ./usr/share ./usr/share/man ./usr/share/man/man1 \
    ./usr/share/bash-completion ./usr/share/bash-completion/completions \
    ./usr/share/zsh ./usr/share/zsh/vendor-completions \
    ./usr/share/fish ./usr/share/fish/vendor_completions.d \
    ./usr/share/doc ./usr/share/doc/mocap-tools
}
deb_files() {
  local t
  printf '%s\n' ./usr/share/doc/mocap-tools/copyright ./usr/share/doc/mocap-tools/changelog.Debian.gz
  for t in "${TOOLS[@]}"; do
    printf './%s\n' "usr/bin/$t" "usr/share/man/man1/$t.1.gz" \
      "usr/share/bash-completion/completions/$t" "usr/share/zsh/vendor-completions/_$t" \
      "usr/share/fish/vendor_completions.d/$t.fish"
  done
}

check_deb() {
  local file=$1 base
  base=$(basename "$file")
  if [ "$base" != "mocap-tools_$version-1_amd64.deb" ]; then
    bad "$base: name is not mocap-tools_$version-1_amd64.deb (workspace version $version)"
    return
  fi
  echo "-- $file ($(stat -c %s "$file") bytes)"
  check "deb: .sha256 matches" check_sha256 "$file"
  check "deb: control fields" deb_control "$file"

  local x="$work/deb"
  rm -rf "$x" && mkdir -p "$x"
  dpkg-deb -x "$file" "$x"
  check "deb: Depends covers the libraries the tools load" deb_depends "$file" "$x/usr/bin"
  check "deb: $(cat <(deb_dirs) <(deb_files) | wc -l) paths, none missing, none unexpected; root-owned, modes 755/644" deb_entries "$file"
  check "deb: man pages are gzipped and render without warnings" check_man "$x" "usr/share/man/man1/TOOL.1.gz"
  check "deb: bash completions parse and register each tool" check_bash "$x" "usr/share/bash-completion/completions/TOOL"
  check "deb: zsh completions" check_zsh "$x" "usr/share/zsh/vendor-completions/_TOOL"
  check "deb: fish completions" check_fish "$x" "usr/share/fish/vendor_completions.d/TOOL.fish"
  check "deb: copyright is machine-readable, MIT or Apache-2.0" deb_copyright "$x/usr/share/doc/mocap-tools/copyright"
  if command -v lintian >/dev/null; then
    check "deb: lintian reports no error or warning" deb_lintian "$file"
  else
    skip "deb: lintian (not installed)"
  fi
  check "deb: dpkg -i, tools on PATH, man -w, completion in place, dpkg --verify" deb_install "$file"
  check "deb: dpkg -r removes every file" deb_remove
}

deb_control() {
  local field value problems=0
  for field in Package:mocap-tools Version:"$version-1" Architecture:amd64; do
    value=$(dpkg-deb -f "$1" "${field%%:*}")
    [ "$value" = "${field#*:}" ] || { echo "${field%%:*} is '$value', want '${field#*:}'"; problems=1; }
  done
  dpkg-deb -f "$1" Maintainer | grep -q '^[^<]* <[^@>]*@[^>]*>$' ||
    { echo "Maintainer is '$(dpkg-deb -f "$1" Maintainer)', want 'Name <address>'"; problems=1; }
  [ "$(dpkg-deb -f "$1" Description | wc -l)" -ge 2 ] ||
    { echo "Description has no long description"; problems=1; }
  dpkg-deb -f "$1" Depends | grep -q 'libc6 (>= [0-9.]*)' ||
    { echo "Depends is '$(dpkg-deb -f "$1" Depends)', want libc6 (>= VERSION) in it"; problems=1; }
  return $problems
}

# Every NEEDED library's package is in Depends; libc6's minimum is at least
# the newest GLIBC_x.y the tools import.
deb_depends() {
  local depends lib pkg need have problems=0
  depends=$(dpkg-deb -f "$1" Depends)
  for lib in $(for b in "$2"/*; do readelf -dW "$b"; done | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
    pkg=$(dpkg -S "*/$lib" 2>/dev/null | grep -v -- '-dev\|lib32\|i386' | head -n 1 | cut -d: -f1)
    [ -n "$pkg" ] || { echo "no installed package ships $lib"; problems=1; continue; }
    case ", $depends," in
      *", $pkg "* | *", $pkg,"*) ;;
      *) echo "the tools load $lib (package $pkg), which Depends ($depends) lacks"; problems=1 ;;
    esac
  done
  need=$(for b in "$2"/*; do objdump -T "$b"; done | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
  have=$(printf '%s\n' "$depends" | sed -n 's/.*libc6 (>= \([0-9.]*\)).*/\1/p')
  if [ -z "$have" ] || [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | tail -n 1)" != "$have" ]; then
    echo "the tools import GLIBC_$need; Depends says libc6 (>= ${have:-nothing})"
    problems=1
  fi
  return $problems
}

deb_entries() {
  local mode owner name want problems=0
  cat <(deb_dirs) <(deb_files) | LC_ALL=C sort >"$work/deb-expected"
  dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's,\(.\)/$,\1,' | LC_ALL=C sort >"$work/deb-entries"
  compare_lists "$work/deb-expected" "$work/deb-entries" || problems=1
  while read -r mode owner _ _ _ name; do
    case $mode:$name in
      d*) want=drwxr-xr-x ;;
      *:./usr/bin/*) want=-rwxr-xr-x ;;
      *) want=-rw-r--r-- ;;
    esac
    [ "$mode" = "$want" ] || { echo "$name is $mode, want $want"; problems=1; }
    [ "$owner" = root/root ] || { echo "$name is owned by $owner"; problems=1; }
  done < <(dpkg-deb -c "$1")
  return $problems
}

deb_copyright() {
  local problems=0
  [ "$(head -n 1 "$1")" = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" ] ||
    { echo "$1 is not machine-readable (no Format: line)"; problems=1; }
  grep -qx 'License: MIT or Apache-2.0' "$1" || { echo "$1 has no 'License: MIT or Apache-2.0'"; problems=1; }
  if ! grep -qx 'License: MIT' "$1" || ! grep -qx 'License: Apache-2.0' "$1"; then
    echo "$1 lacks a stand-alone MIT or Apache-2.0 license paragraph"
    problems=1
  fi
  return $problems
}

# initial-upload-closes-no-bugs asks the first changelog entry of a package
# uploaded to Debian to close its ITP bug; this one is not uploaded there.
deb_lintian() {
  local out
  out=$(lintian --tag-display-limit 0 --suppress-tags initial-upload-closes-no-bugs "$1" 2>&1) || true
  if printf '%s\n' "$out" | grep -q '^[EW]: '; then
    printf '%s\n' "$out" | grep '^[EW]: '
    return 1
  fi
}

deb_install() {
  local t out problems=0
  if dpkg-query -W -f '${Status}' mocap-tools 2>/dev/null | grep -q 'ok installed'; then
    echo "mocap-tools is already installed here; remove it first (dpkg -r mocap-tools)"
    return 1
  fi
  for t in "${TOOLS[@]}"; do
    [ ! -e "/usr/bin/$t" ] || { echo "/usr/bin/$t exists before the install"; return 1; }
  done
  out=$(as_root dpkg -i "$1" 2>&1) || { echo "dpkg -i failed:"; printf '%s\n' "$out"; return 1; }
  deb_installed=1
  for t in "${TOOLS[@]}"; do
    out=$(env PATH=$STD_PATH sh -c "command -v $t") || true
    [ "$out" = "/usr/bin/$t" ] || { echo "command -v $t gives '$out', want /usr/bin/$t"; problems=1; continue; }
    out=$(env PATH=$STD_PATH "$t" --version 2>&1) || true
    [ "$out" = "$t $version" ] || { echo "$t --version printed '$out'"; problems=1; }
  done
  out=$(env -u MANPATH man -w mocopi-dump 2>&1) || true
  [ "$out" = /usr/share/man/man1/mocopi-dump.1.gz ] || { echo "man -w mocopi-dump gives '$out'"; problems=1; }
  [ -f /usr/share/bash-completion/completions/mocopi-dump ] ||
    { echo "no /usr/share/bash-completion/completions/mocopi-dump"; problems=1; }
  out=$(dpkg --verify mocap-tools 2>&1) || true
  [ -z "$out" ] || { echo "dpkg --verify mocap-tools:"; printf '%s\n' "$out"; problems=1; }
  return $problems
}

deb_remove() {
  local p out problems=0
  [ $deb_installed = 1 ] || { echo "not installed (see above)"; return 1; }
  out=$(as_root dpkg -r mocap-tools 2>&1) || { echo "dpkg -r failed:"; printf '%s\n' "$out"; return 1; }
  deb_installed=0
  while read -r p; do
    [ ! -e "${p#.}" ] || { echo "${p#.} is still there"; problems=1; }
  done < <(deb_files)
  [ ! -e /usr/share/doc/mocap-tools ] || { echo "/usr/share/doc/mocap-tools is still there"; problems=1; }
  return $problems
}

# --- Scoop and Homebrew ----------------------------------------------------------------

# The dist folder of DIST/packaging/KIND/FILE.
manifest_dist() { dirname "$(dirname "$(dirname "$1")")"; }

check_scoop() {
  echo "-- $1"
  check "scoop: required fields, every tool's .exe, url and hash of the zip it names" \
    python3 scripts/lib/release.py check-scoop "$1" "$(manifest_dist "$1")"
}

check_homebrew() {
  echo "-- $1"
  check "homebrew: every tool, man pages, completions; url and sha256 of each archive it names" \
    python3 scripts/lib/release.py check-homebrew "$1" "$(manifest_dist "$1")"
  if command -v ruby >/dev/null; then
    check "homebrew: ruby -c parses the formula" ruby_syntax "$1"
  else
    skip "homebrew: ruby -c (ruby not installed: apt-get install ruby)"
  fi
}

ruby_syntax() {
  local out
  out=$(ruby -c "$1" 2>&1) || { printf '%s\n' "$out"; return 1; }
}

# --- main ----------------------------------------------------------------------------

files=("$@")
if [ ${#files[@]} = 0 ]; then
  dist=${DIST:-dist}
  shopt -s nullglob
  files=("$dist"/mocap-tools-*.tar.gz "$dist"/mocap-tools-*.zip "$dist"/mocap-tools_*.deb
    "$dist"/packaging/scoop/*.json "$dist"/packaging/homebrew/*.rb)
  shopt -u nullglob
fi
[ ${#files[@]} -gt 0 ] || bad "nothing to check: no archive or .deb in ${DIST:-dist}/ (scripts/release.sh TARGET|deb)"

for f in "${files[@]}"; do
  if [ ! -f "$f" ]; then
    bad "$f: no such file"
    continue
  fi
  case $f in
    *.tar.gz | *.zip) check_archive "$f" ;;
    *.deb) check_deb "$f" ;;
    */scoop/*.json) check_scoop "$f" ;;
    */homebrew/*.rb) check_homebrew "$f" ;;
    *) bad "$f: neither a .tar.gz, a .zip, a .deb, a Scoop manifest nor a Homebrew formula" ;;
  esac
done

echo "release: $passed passed, $failed failed"
[ $failed = 0 ]
