#!/usr/bin/env bash
# Builds the seed corpora of the cargo-fuzz targets under fuzz/corpus/<target>/
# from the repository's captures/ (and our own encoders where captures/ has
# nothing for a protocol). Runs on stable; safe to run again (seeds are
# rewritten, inputs the fuzzer added are kept).
#
#   scripts/fuzz-corpus.sh
#
# Datagrams are taken out of the pcap/pcapng captures by fuzz/examples/seeds.rs
# through mocap-core's own reader (pcap::Datagrams), so fragmented captures
# give their reassembled datagrams.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus="$root/fuzz/corpus"
mkdir -p "$corpus"

CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/fuzz/target}" cargo run --quiet --manifest-path "$root/fuzz/Cargo.toml" --example seeds -- \
    "$root/captures" "$corpus"

# Whole files for the file-level targets. libFuzzer's default -max_len is the
# largest seed, so big files are cut to 16 KiB (the reader reports the cut
# record as an error, which is a path worth having too).
mkdir -p "$corpus/pcap" "$corpus/textcap"
for f in "$root"/captures/*/*.pcap "$root"/captures/*/*.pcapng; do
    head -c 16384 "$f" > "$corpus/pcap/$(basename "$f")"
done
for f in "$root"/captures/mocopi/animu-sphere/*.mocopipackets; do
    head -c 8192 "$f" > "$corpus/textcap/$(basename "$f")"
done
# A hex-lines capture of two SMF datagrams, as `xxd -p -c0` writes them.
{
    echo "# hex lines"
    for f in "$root"/captures/mocopi/t-34400/*.bin; do
        od -An -v -tx1 "$f" | tr -d ' \n'
        echo
    done
} > "$corpus/textcap/hex-lines.txt"

for d in "$corpus"/*/; do
    printf '%-22s %4d seeds\n' "$(basename "$d")" "$(find "$d" -type f | wc -l)"
done
