#!/usr/bin/env python3
"""What scripts/release.sh and scripts/test-release.sh share about the
workspace's tools and the package manager files, stdlib only:

    release.py tools
        the tools: every bin target of a package under tools/, from
        `cargo metadata` (a new tool is picked up without editing a list),
        those of a tool that is a workspace of its own included
    release.py workspaces
        the tools that are Cargo workspaces of their own (tools/mocap-link:
        Zenoh stays out of the root's build), one directory a line; cargo
        builds each from its directory (its .cargo/config.toml puts the
        build in the root's target/)
    release.py manifests --base-url URL --dist DIR [--homepage URL]
        DIR/packaging/scoop/mocap-tools.json and
        DIR/packaging/homebrew/mocap-tools.rb from the archives in DIR
        (their URLs are URL/ARCHIVE, their hashes the .sha256 files)
    release.py check-binstall ARCHIVE...
        expands every tool's [package.metadata.binstall] for the target of
        each archive, as cargo-binstall would, and checks the archive name,
        the format and the binary's path inside it
    release.py check-scoop JSON DIR, release.py check-homebrew RB DIR
        the generated files against the tools and the archives in DIR

The check commands print one line per problem and exit 1 if there was any.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DESCRIPTION = "Command-line tools for motion-capture network protocols (mocopi, iFacialMocap, Live Link Face, VMC, DLP3D)"
SCOOP_TARGET = "x86_64-pc-windows-gnu"
# Homebrew: an archive per platform and CPU. Linux takes the static musl
# build: Homebrew on Linux brings its own glibc, which may be older than ours.
BREW_TARGETS = {
    ("macos", "arm"): "aarch64-apple-darwin",
    ("macos", "intel"): "x86_64-apple-darwin",
    ("linux", "intel"): "x86_64-unknown-linux-musl",
}
# Targets cargo-binstall detects whose archive is another target's: the
# Windows build is made with mingw (-gnu), and binstall on Windows asks for -msvc.
BINSTALL_ALIASES = {SCOOP_TARGET: ["x86_64-pc-windows-gnu", "x86_64-pc-windows-msvc"]}


def metadata():
    out = subprocess.run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def workspaces(meta=None):
    """Directories under tools/ (relative to the root) holding a Cargo
    package that is a workspace of its own, outside the root one."""
    meta = meta or metadata()
    members = {os.path.dirname(p["manifest_path"]) for p in meta["packages"]}
    found = []
    tools_dir = os.path.join(ROOT, "tools")
    for name in sorted(os.listdir(tools_dir)):
        manifest = os.path.join(tools_dir, name, "Cargo.toml")
        if not os.path.isfile(manifest) or os.path.dirname(manifest) in members:
            continue
        with open(manifest, "rb") as f:
            if "workspace" in tomllib.load(f):
                found.append(os.path.join("tools", name))
    return found


def tool_packages():
    """(package name, manifest path, [bin names]) for each package under tools/."""
    meta = metadata()
    tools_dir = os.path.join(meta["workspace_root"], "tools") + os.sep
    packages = list(meta["packages"])
    for w in workspaces(meta):
        out = subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1"],
            cwd=os.path.join(ROOT, w), check=True, capture_output=True, text=True,
        ).stdout
        packages.extend(json.loads(out)["packages"])
    found = []
    for pkg in packages:
        if not pkg["manifest_path"].startswith(tools_dir):
            continue
        bins = sorted(t["name"] for t in pkg["targets"] if "bin" in t["kind"])
        if bins:
            found.append((pkg["name"], pkg["manifest_path"], bins, pkg["version"]))
    return sorted(found)


def tools():
    return sorted(b for _, _, bins, _ in tool_packages() for b in bins)


def packages_without(crate, target):
    """Workspace packages none of whose dependencies (any kind, for `target`)
    is `crate`: what can be type-checked for a target whose C toolchain this
    machine lacks (ring compiles C and assembly for Apple's SDK)."""
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", target],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    meta = json.loads(out)
    names = {p["id"]: p["name"] for p in meta["packages"]}
    edges = {n["id"]: [d["pkg"] for d in n["deps"]] for n in meta["resolve"]["nodes"]}
    keep = []
    for member in meta["workspace_members"]:
        seen, stack = set(), [member]
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            stack.extend(edges.get(i, []))
        if not any(names[i] == crate for i in seen):
            keep.append(names[member])
    return sorted(keep)


def archive_target(name, version):
    """The target of mocap-tools-VERSION-TARGET.tar.gz|.zip, or None."""
    m = re.fullmatch(re.escape(f"mocap-tools-{version}-") + r"(.+?)\.(tar\.gz|zip)", name)
    return (m.group(1), m.group(2)) if m else (None, None)


def archive_entries(path):
    if path.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            return {n.rstrip("/") for n in z.namelist()}
    with tarfile.open(path) as t:
        return {n.rstrip("/") for n in t.getnames()}


def sha256_of(archive):
    """The hash in ARCHIVE.sha256, checked against the file itself."""
    with open(archive + ".sha256") as f:
        want, name = f.read().split()
    if name != os.path.basename(archive):
        raise ValueError(f"{archive}.sha256 names {name}")
    h = hashlib.sha256()
    with open(archive, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    if h.hexdigest() != want:
        raise ValueError(f"{archive}.sha256 does not match the file")
    return want


# --- cargo-binstall ----------------------------------------------------------

TEMPLATE_KEY = re.compile(r"\{\s*([A-Za-z-]+)\s*\}")


def expand(template, values):
    unknown = []

    def one(m):
        if m.group(1) not in values:
            unknown.append(m.group(1))
            return m.group(0)
        return values[m.group(1)]

    out = TEMPLATE_KEY.sub(one, template)
    return out, unknown


def binstall_meta(manifest, target):
    """pkg-url, bin-dir and pkg-fmt for TARGET, overrides applied."""
    with open(manifest, "rb") as f:
        cargo = tomllib.load(f)
    meta = cargo.get("package", {}).get("metadata", {}).get("binstall")
    if meta is None:
        return None
    merged = {k: meta.get(k) for k in ("pkg-url", "bin-dir", "pkg-fmt")}
    merged.update(meta.get("overrides", {}).get(target, {}))
    return merged


def check_binstall(archives):
    problems = []
    packages = tool_packages()
    bases = set()
    for archive in archives:
        base = os.path.basename(archive)
        version = packages[0][3] if packages else "?"
        target, kind = archive_target(base, version)
        if target is None:
            problems.append(f"{base}: not mocap-tools-{version}-TARGET.tar.gz|.zip")
            continue
        if target.startswith("universal"):
            continue  # cargo-binstall picks a thin target; nothing maps here
        entries = archive_entries(archive)
        for binstall_target in BINSTALL_ALIASES.get(target, [target]):
            exe = ".exe" if "windows" in binstall_target else ""
            for pkg, manifest, bins, pkg_version in packages:
                meta = binstall_meta(manifest, binstall_target)
                where = f"{pkg} for {binstall_target}"
                if meta is None:
                    problems.append(f"{where}: no [package.metadata.binstall] in {manifest}")
                    continue
                fmt_ext = {"tgz": "tgz", "zip": "zip"}.get(meta.get("pkg-fmt") or "tgz", meta.get("pkg-fmt"))
                values = {
                    "name": pkg, "version": pkg_version, "target": binstall_target,
                    "binary-ext": exe, "archive-format": fmt_ext, "archive-suffix": "." + str(fmt_ext),
                }
                url, unknown = expand(meta.get("pkg-url") or "", values)
                if unknown:
                    problems.append(f"{where}: pkg-url uses {unknown} (no value here: e.g. repo needs a repository)")
                    continue
                if not url.endswith("/" + base):
                    problems.append(f"{where}: pkg-url resolves to {url}, not .../{base}")
                    continue
                bases.add(url[: -len(base)])
                want_fmt = "zip" if kind == "zip" else "tgz"
                if (meta.get("pkg-fmt") or "tgz") != want_fmt:
                    problems.append(f"{where}: pkg-fmt {meta.get('pkg-fmt')}, the archive is {want_fmt}")
                for b in bins:
                    path, unknown = expand(meta.get("bin-dir") or "", dict(values, bin=b))
                    want = f"{base[: -len('.' + kind)]}/{b}{exe}"
                    if unknown:
                        problems.append(f"{where}: bin-dir uses {unknown}")
                    elif path != want:
                        problems.append(f"{where}: bin-dir resolves to {path}, the binary is {want}")
                    elif path not in entries:
                        problems.append(f"{where}: {base} has no {path}")
    if len(bases) > 1:
        problems.append(f"the tools' pkg-url point to different places: {sorted(bases)}")
    return problems


# --- Scoop and Homebrew ------------------------------------------------------


def archive_path(dist, version, target, ext):
    return os.path.join(dist, f"mocap-tools-{version}-{target}.{ext}")


def scoop_manifest(dist, base_url, homepage, version, names):
    zip_path = archive_path(dist, version, SCOOP_TARGET, "zip")
    top = os.path.basename(zip_path)[: -len(".zip")]
    return {
        "version": version,
        "description": DESCRIPTION,
        "homepage": homepage,
        "license": "MIT|Apache-2.0",
        "architecture": {
            "64bit": {
                "url": f"{base_url}/{os.path.basename(zip_path)}",
                "hash": sha256_of(zip_path),
                "extract_dir": top,
            }
        },
        "bin": [f"{n}.exe" for n in names],
        "notes": [
            "PowerShell completions for each tool are in $dir\\complete (_TOOL.ps1); to load them in every session:",
            "  Get-ChildItem \"$dir\\complete\\*.ps1\" | ForEach-Object { Add-Content $PROFILE \". '$($_.FullName)'\" }",
            "Man pages (man\\TOOL.1) and docs\\ are in $dir too.",
        ],
    }


def homebrew_formula(dist, base_url, homepage, version, names):
    blocks = []
    for os_name in ("macos", "linux"):
        inner = []
        for cpu in ("arm", "intel"):
            target = BREW_TARGETS.get((os_name, cpu))
            if target is None:
                continue
            tgz = archive_path(dist, version, target, "tar.gz")
            inner.append(
                f"    on_{cpu} do\n"
                f"      url \"{base_url}/{os.path.basename(tgz)}\"\n"
                f"      sha256 \"{sha256_of(tgz)}\"\n"
                f"    end\n"
            )
        blocks.append(f"  on_{os_name} do\n" + "".join(inner) + "  end\n")
    bins = ", ".join(f'"{n}"' for n in names)
    completions = "".join(
        f"    bash_completion.install \"complete/{n}.bash\" => \"{n}\"\n"
        f"    zsh_completion.install \"complete/_{n}\"\n"
        f"    fish_completion.install \"complete/{n}.fish\"\n"
        for n in names
    )
    checks = "".join(f"    assert_equal \"{n} #{{version}}\", shell_output(\"#{{bin}}/{n} --version\").strip\n" for n in names)
    return (
        "# Generated by scripts/release.sh manifests from the archives it built; do not edit.\n"
        "class MocapTools < Formula\n"
        f"  desc \"{DESCRIPTION.split(' (')[0]}\"\n"
        f"  homepage \"{homepage}\"\n"
        f"  version \"{version}\"\n"
        "  license any_of: [\"MIT\", \"Apache-2.0\"]\n"
        "\n"
        + "".join(blocks)
        + "\n"
        "  def install\n"
        f"    bin.install {bins}\n"
        "    man1.install Dir[\"man/*.1\"]\n"
        + completions
        + "    doc.install \"README.md\", \"docs\", \"examples\"\n"
        "  end\n"
        "\n"
        "  test do\n"
        + checks
        + "  end\n"
        "end\n"
    )


def write_manifests(args):
    base_url = args.base_url.rstrip("/")
    if not re.match(r"https?://[^/]+", base_url):
        print(f"release: --base-url {args.base_url} is not an http(s) URL", file=sys.stderr)
        return 2
    homepage = args.homepage or base_url
    names = tools()
    version = tool_packages()[0][3]
    need = [archive_path(args.dist, version, SCOOP_TARGET, "zip")]
    need += [archive_path(args.dist, version, t, "tar.gz") for t in BREW_TARGETS.values()]
    missing = [p for p in need if not os.path.isfile(p) or not os.path.isfile(p + ".sha256")]
    if missing:
        print("release: the manifests need these archives and their .sha256 (scripts/release.sh TARGET):", file=sys.stderr)
        for p in missing:
            print(f"  {p}", file=sys.stderr)
        return 1
    try:
        scoop = scoop_manifest(args.dist, base_url, homepage, version, names)
        brew = homebrew_formula(args.dist, base_url, homepage, version, names)
    except (OSError, ValueError) as e:
        print(f"release: {e}", file=sys.stderr)
        return 1
    for rel, text in (("scoop/mocap-tools.json", json.dumps(scoop, indent=2) + "\n"), ("homebrew/mocap-tools.rb", brew)):
        path = os.path.join(args.dist, "packaging", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        print(f"== {path}")
    return 0


def url_archive(url, dist):
    """The local archive a manifest URL names (its last path segment)."""
    return os.path.join(dist, url.rsplit("/", 1)[-1])


def check_scoop(path, dist):
    problems = []
    try:
        with open(path) as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        return [f"{path}: {e}"]
    names = tools()
    version = tool_packages()[0][3]
    # The fields Scoop's manifest schema and wiki ask of every app.
    for field in ("version", "description", "homepage", "license"):
        if not isinstance(m.get(field), str) or not m[field]:
            problems.append(f"no {field}")
    if m.get("version") != version:
        problems.append(f"version {m.get('version')}, the workspace's is {version}")
    if m.get("license") != "MIT|Apache-2.0":
        problems.append(f"license {m.get('license')}, want MIT|Apache-2.0 (Scoop's spelling of a choice)")
    arch = m.get("architecture", {}).get("64bit", {})
    for field in ("url", "hash", "extract_dir"):
        if not arch.get(field):
            problems.append(f"no architecture.64bit.{field}")
    if problems:
        return problems
    if not re.match(r"https?://", arch["url"]):
        problems.append(f"url {arch['url']} is not http(s)")
    archive = url_archive(arch["url"], dist)
    if not os.path.isfile(archive):
        return problems + [f"url names {os.path.basename(archive)}, which is not in {dist}"]
    if os.path.basename(archive) != f"mocap-tools-{version}-{SCOOP_TARGET}.zip":
        problems.append(f"url names {os.path.basename(archive)}, not the {SCOOP_TARGET} zip")
    try:
        if arch["hash"] != sha256_of(archive):
            problems.append(f"hash {arch['hash'][:16]}… is not {os.path.basename(archive)}'s")
    except (OSError, ValueError) as e:
        problems.append(str(e))
    entries = archive_entries(archive)
    if arch["extract_dir"] not in entries:
        problems.append(f"extract_dir {arch['extract_dir']} is not a directory of the zip")
    bins = m.get("bin")
    if sorted(bins or []) != sorted(f"{n}.exe" for n in names):
        problems.append(f"bin is {bins}, want every tool: {[n + '.exe' for n in names]}")
    for b in bins or []:
        if f"{arch['extract_dir']}/{b}" not in entries:
            problems.append(f"bin {b} is not in the zip's {arch['extract_dir']}/")
    notes = " ".join(m.get("notes") or [])
    if "complete" not in notes or "$PROFILE" not in notes:
        problems.append("notes do not say how to load the PowerShell completions")
    return problems


def check_homebrew(path, dist):
    problems = []
    try:
        with open(path) as f:
            rb = f.read()
    except OSError as e:
        return [str(e)]
    names = tools()
    version = tool_packages()[0][3]
    if not re.search(r"^class MocapTools < Formula$", rb, re.M):
        problems.append("no 'class MocapTools < Formula'")
    for field in ("desc", "homepage", "version"):
        if not re.search(rf'^  {field} "[^"]+"$', rb, re.M):
            problems.append(f"no {field}")
    if f'  version "{version}"' not in rb:
        problems.append(f"version is not {version}")
    if 'license any_of: ["MIT", "Apache-2.0"]' not in rb:
        problems.append("license is not any_of MIT, Apache-2.0")
    # Each on_OS / on_CPU block: one url and its sha256, for the expected archive.
    for (os_name, cpu), target in BREW_TARGETS.items():
        block = re.search(rf"^  on_{os_name} do\n(.*?)^  end$", rb, re.M | re.S)
        inner = block and re.search(rf"^    on_{cpu} do\n(.*?)^    end$", block.group(1), re.M | re.S)
        if not inner:
            problems.append(f"no on_{os_name} / on_{cpu} block")
            continue
        url = re.search(r'^      url "([^"]+)"$', inner.group(1), re.M)
        sha = re.search(r'^      sha256 "([0-9a-f]{64})"$', inner.group(1), re.M)
        if not url or not sha:
            problems.append(f"on_{os_name} / on_{cpu}: no url or sha256")
            continue
        archive = url_archive(url.group(1), dist)
        want = f"mocap-tools-{version}-{target}.tar.gz"
        if os.path.basename(archive) != want:
            problems.append(f"on_{os_name} / on_{cpu}: url names {os.path.basename(archive)}, want {want}")
            continue
        try:
            if sha.group(1) != sha256_of(archive):
                problems.append(f"on_{os_name} / on_{cpu}: sha256 is not {want}'s")
        except (OSError, ValueError) as e:
            problems.append(str(e))
            continue
        # Homebrew enters the archive's one top directory before install runs.
        top = want[: -len(".tar.gz")]
        entries = archive_entries(archive)
        wanted = ["README.md", "docs", "examples"]
        for n in names:
            wanted += [n, f"complete/{n}.bash", f"complete/_{n}", f"complete/{n}.fish", f"man/{n}.1"]
        for rel in wanted:
            if f"{top}/{rel}" not in entries:
                problems.append(f"{want} has no {rel}, which the formula installs")
    install = re.search(r"^  def install\n(.*?)^  end$", rb, re.M | re.S)
    body = install.group(1) if install else ""
    listed = re.search(r"^    bin\.install (.*)$", body, re.M)
    got = sorted(re.findall(r'"([^"]+)"', listed.group(1))) if listed else []
    if got != names:
        problems.append(f"bin.install names {got}, want every tool: {names}")
    if 'man1.install Dir["man/*.1"]' not in body:
        problems.append("man pages are not installed (man1.install)")
    for n in names:
        for line in (f'bash_completion.install "complete/{n}.bash" => "{n}"',
                     f'zsh_completion.install "complete/_{n}"', f'fish_completion.install "complete/{n}.fish"'):
            if line not in body:
                problems.append(f"install lacks {line}")
        if f'"{n} #{{version}}", shell_output("#{{bin}}/{n} --version")' not in rb:
            problems.append(f"test block does not run {n} --version")
    return problems


def main():
    parser = argparse.ArgumentParser(prog="release.py")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("tools")
    sub.add_parser("workspaces")
    w = sub.add_parser("packages-without")
    w.add_argument("crate")
    w.add_argument("target")
    m = sub.add_parser("manifests")
    m.add_argument("--base-url", required=True)
    m.add_argument("--homepage")
    m.add_argument("--dist", required=True)
    b = sub.add_parser("check-binstall")
    b.add_argument("archives", nargs="+")
    for name in ("check-scoop", "check-homebrew"):
        c = sub.add_parser(name)
        c.add_argument("file")
        c.add_argument("dist")
    args = parser.parse_args()
    if args.cmd == "tools":
        print("\n".join(tools()))
        return 0
    if args.cmd == "workspaces":
        print("\n".join(workspaces()))
        return 0
    if args.cmd == "packages-without":
        print("\n".join(packages_without(args.crate, args.target)))
        return 0
    if args.cmd == "manifests":
        return write_manifests(args)
    if args.cmd == "check-binstall":
        problems = check_binstall(args.archives)
    elif args.cmd == "check-scoop":
        problems = check_scoop(args.file, args.dist)
    else:
        problems = check_homebrew(args.file, args.dist)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
