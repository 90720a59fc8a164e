#!/usr/bin/env python3
"""Reads Mach-O files as a Mac's loader would see them, for
scripts/test-release.sh: the architectures (of a thin file or of each slice of
a universal one), the dynamic libraries each slice loads, the minimum macOS
version, and its code signature (arm64 macOS refuses to run a binary without
a valid one). The signature is verified, not only found: every page hash of
the CodeDirectory is recomputed over the bytes it covers, and the hashes of
the blobs beside it (requirements, entitlements) too, so a file changed after
linking (by a GNU strip, say) is reported as invalid.

    python3 scripts/lib/macho.py FILE...          one JSON object per file on stdout;
                                                  exit 1 if a file cannot be read
    python3 scripts/lib/macho.py lipo OUT IN...   join thin files into a universal one

`lipo` copies each thin file unchanged into its slice (so their signatures stay
valid: a signature covers its slice from the slice's first byte).

Written from Apple's <mach-o/loader.h>, <mach-o/fat.h> and the code signing
blob layouts (<kern/cs_blobs.h>); no third-party parser.
"""
import hashlib
import json
import struct
import sys

FAT_MAGIC = 0xCAFEBABE  # big-endian fat header
FAT_MAGIC_64 = 0xCAFEBABF
MH_MAGIC_64 = 0xFEEDFACF  # little-endian 64-bit Mach-O
CPU_TYPES = {0x01000007: "x86_64", 0x0100000C: "arm64"}
MH_EXECUTE = 2
LC_REQ_DYLD = 0x80000000
LC_LOAD_DYLIB = 0x0C
LC_LOAD_WEAK_DYLIB = 0x18 | LC_REQ_DYLD
LC_REEXPORT_DYLIB = 0x1F | LC_REQ_DYLD
LC_LAZY_LOAD_DYLIB = 0x20
LC_LOAD_UPWARD_DYLIB = 0x23 | LC_REQ_DYLD
LC_CODE_SIGNATURE = 0x1D
LC_BUILD_VERSION = 0x32
# Before LC_BUILD_VERSION (macOS 10.14), linkers write this for older minimums.
LC_VERSION_MIN_MACOSX = 0x24
DYLIB_COMMANDS = {LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB}
CS_MAGIC_EMBEDDED_SIGNATURE = 0xFADE0CC0
CS_MAGIC_CODEDIRECTORY = 0xFADE0C02
CSSLOT_CODEDIRECTORY = 0
CS_ADHOC = 0x2
CS_LINKER_SIGNED = 0x20000
CS_HASHES = {1: ("sha1", 20), 2: ("sha256", 32), 3: ("sha256", 20), 4: ("sha384", 48)}
# The slice alignment Apple's lipo uses for each architecture (log2).
FAT_ALIGN = {"x86_64": 12, "arm64": 14}


class Bad(Exception):
    pass


def thin(data, offset, size):
    """One 64-bit little-endian Mach-O image at data[offset:offset+size]."""
    image = data[offset:offset + size]
    if len(image) < 32:
        raise Bad("truncated Mach-O header")
    magic, cputype, _sub, filetype, ncmds, sizeofcmds, _flags, _res = struct.unpack_from("<IiiIIIII", image, 0)
    if magic != MH_MAGIC_64:
        raise Bad(f"not a 64-bit little-endian Mach-O (magic {magic:#x})")
    cpu = CPU_TYPES.get(cputype & 0xFFFFFFFF, f"cpu {cputype & 0xFFFFFFFF:#x}")
    pos, end = 32, 32 + sizeofcmds
    if end > len(image):
        raise Bad("load commands run past the file")
    dylibs, signature, platform, minos = [], None, None, None
    for _ in range(ncmds):
        if pos + 8 > end:
            raise Bad("load command past sizeofcmds")
        cmd, cmdsize = struct.unpack_from("<II", image, pos)
        if cmdsize < 8 or pos + cmdsize > end:
            raise Bad(f"bad load command size {cmdsize}")
        if cmd in DYLIB_COMMANDS:
            (name_off,) = struct.unpack_from("<I", image, pos + 8)
            raw = image[pos + name_off:pos + cmdsize]
            dylibs.append(raw.split(b"\0", 1)[0].decode("utf-8", "replace"))
        elif cmd == LC_CODE_SIGNATURE:
            dataoff, datasize = struct.unpack_from("<II", image, pos + 8)
            signature = code_signature(image, dataoff, datasize)
        elif cmd == LC_BUILD_VERSION:
            plat, ver = struct.unpack_from("<II", image, pos + 8)
            platform = {1: "macos"}.get(plat, str(plat))
            minos = f"{ver >> 16}.{(ver >> 8) & 0xFF}"
        elif cmd == LC_VERSION_MIN_MACOSX:
            (ver,) = struct.unpack_from("<I", image, pos + 8)
            platform = "macos"
            minos = f"{ver >> 16}.{(ver >> 8) & 0xFF}"
        pos += cmdsize
    return {
        "arch": cpu,
        "offset": offset,
        "size": size,
        "executable": filetype == MH_EXECUTE,
        "dylibs": dylibs,
        "signature": signature,
        "platform": platform,
        "minos": minos,
    }


def code_signature(image, dataoff, datasize):
    """The embedded signature at image[dataoff:dataoff+datasize], checked
    against the bytes before it. "valid" is true only when every hash matches
    and the CodeDirectory covers the whole image up to the signature."""
    blob = image[dataoff:dataoff + datasize]
    sig = {"size": datasize, "embedded": False, "valid": False, "problems": []}
    problems = sig["problems"]
    if len(blob) != datasize or datasize < 12:
        problems.append("signature runs past the file")
        return sig
    magic, length, count = struct.unpack_from(">III", blob, 0)
    if magic != CS_MAGIC_EMBEDDED_SIGNATURE:
        problems.append(f"not an embedded signature (magic {magic:#x})")
        return sig
    sig["embedded"] = True
    if length > datasize or 12 + 8 * count > length:
        problems.append("superblob length or count out of range")
        return sig
    blobs = {}
    for i in range(count):
        kind, off = struct.unpack_from(">II", blob, 12 + 8 * i)
        if off + 8 > length:
            problems.append(f"blob {kind:#x} starts past the superblob")
            continue
        (blen,) = struct.unpack_from(">I", blob, off + 4)
        if blen < 8 or off + blen > length:
            problems.append(f"blob {kind:#x} runs past the superblob")
            continue
        blobs[kind] = blob[off:off + blen]
    cd = blobs.get(CSSLOT_CODEDIRECTORY)
    if cd is None or len(cd) < 44:
        problems.append("no CodeDirectory")
        return sig
    (cd_magic, _len, version, flags, hash_off, ident_off, n_special, n_code,
     code_limit, hash_size, hash_type, _platform, page_log2) = struct.unpack_from(">IIIIIIIIIBBBB", cd, 0)
    if cd_magic != CS_MAGIC_CODEDIRECTORY:
        problems.append(f"CodeDirectory magic {cd_magic:#x}")
        return sig
    if version >= 0x20300 and len(cd) >= 64:
        (limit64,) = struct.unpack_from(">Q", cd, 56)
        code_limit = limit64 or code_limit
    name, want_size = CS_HASHES.get(hash_type, (None, None))
    ident = cd[ident_off:].split(b"\0", 1)[0].decode("utf-8", "replace") if ident_off < len(cd) else ""
    sig.update({
        "identifier": ident,
        "adhoc": bool(flags & CS_ADHOC),
        "linker_signed": bool(flags & CS_LINKER_SIGNED),
        "hash": name,
        "page_size": 1 << page_log2 if page_log2 else 0,
        "code_limit": code_limit,
        "pages": n_code,
    })
    if name is None or hash_size != want_size:
        problems.append(f"hash type {hash_type} with size {hash_size} is not one this reader knows")
        return sig
    if code_limit != dataoff:
        problems.append(f"code limit {code_limit} is not the signature's offset {dataoff}: bytes outside the signature")
    if page_log2 == 0 or page_log2 > 30:
        problems.append(f"page size 2^{page_log2} (single-page signatures are not checked)")
        return sig
    page = 1 << page_log2
    if n_code != (code_limit + page - 1) // page:
        problems.append(f"{n_code} page hashes for {code_limit} bytes in {page}-byte pages")
    if hash_off - n_special * hash_size > len(cd) or hash_off + n_code * hash_size > len(cd):
        problems.append("hash slots run past the CodeDirectory")
        return sig
    digest = lambda b: hashlib.new(name, b).digest()[:hash_size]  # noqa: E731
    bad_pages = []
    for i in range(n_code):
        want = cd[hash_off + i * hash_size:hash_off + (i + 1) * hash_size]
        if digest(image[i * page:min((i + 1) * page, code_limit)]) != want:
            bad_pages.append(i)
    if bad_pages:
        problems.append(f"{len(bad_pages)} of {n_code} page hashes do not match (first: page {bad_pages[0]}, offset {bad_pages[0] * page})")
    # Special slot k (1 = Info.plist ... 5 = entitlements) sits k hashes before
    # the first page hash; a blob present must match it, an absent one is zeros.
    for k in range(1, n_special + 1):
        want = cd[hash_off - k * hash_size:hash_off - (k - 1) * hash_size]
        if k in blobs:
            if digest(blobs[k]) != want:
                problems.append(f"special slot {k}'s hash does not match its blob")
        elif want != bytes(hash_size) and k in (2, 5, 7):
            problems.append(f"special slot {k} has a hash but no blob")
    sig["valid"] = not problems
    return sig


def inspect(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise Bad("too short")
    (magic,) = struct.unpack_from(">I", data, 0)
    if magic in (FAT_MAGIC, FAT_MAGIC_64):
        (n,) = struct.unpack_from(">I", data, 4)
        slices, pos = [], 8
        for _ in range(n):
            if magic == FAT_MAGIC:
                _cpu, _sub, off, size, _align = struct.unpack_from(">iiIII", data, pos)
                pos += 20
            else:
                _cpu, _sub, off, size, _align, _res = struct.unpack_from(">iiQQII", data, pos)
                pos += 32
            slices.append(thin(data, off, size))
        return {"path": path, "universal": True, "slices": slices}
    return {"path": path, "universal": False, "slices": [thin(data, 0, len(data))]}


def lipo(out, inputs):
    """A universal (fat) file of the thin Mach-O files, each slice aligned as
    Apple's lipo aligns it, the slices in the order given."""
    images, arches = [], []
    for path in inputs:
        with open(path, "rb") as f:
            data = f.read()
        info = thin(data, 0, len(data))
        cputype, cpusubtype = struct.unpack_from("<II", data, 4)
        images.append(data)
        arches.append((cputype, cpusubtype, FAT_ALIGN.get(info["arch"], 14)))
    header = bytearray(struct.pack(">II", FAT_MAGIC, len(images)))
    offset = 8 + 20 * len(images)
    body = bytearray()
    for data, (cputype, cpusubtype, align) in zip(images, arches):
        start = -(-offset // (1 << align)) * (1 << align)
        body += bytes(start - offset)
        header += struct.pack(">IIIII", cputype, cpusubtype, start, len(data), align)
        body += data
        offset = start + len(data)
    with open(out, "wb") as f:
        f.write(header + body)


def main():
    if sys.argv[1:2] == ["lipo"]:
        if len(sys.argv) < 5:
            print("usage: macho.py lipo OUT IN IN...", file=sys.stderr)
            return 2
        try:
            lipo(sys.argv[2], sys.argv[3:])
        except (Bad, struct.error, OSError) as e:
            print(f"macho.py lipo: {e}", file=sys.stderr)
            return 1
        return 0
    status = 0
    for path in sys.argv[1:]:
        try:
            print(json.dumps(inspect(path)))
        except (Bad, struct.error, OSError) as e:
            print(json.dumps({"path": path, "error": str(e)}))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
