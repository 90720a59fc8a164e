#!/usr/bin/env bash
# The demo pipeline under impaired replay for a long time (a benchmark, not a
# test: default 10 minutes):
#
#   pcap-replay --impair body.pcapng ─► mocopi-dump --vmc ───┐
#   pcap-replay --impair --loop 0 (the phone) ◄─ ifm-handshake --vmc ─┤
#                               vmc-average --prefer face:Head ◄──────┘
#                                        │
#                               vmc-relay --dump (the end)
#   pcap-replay --impair face.pcapng ─► livelink-dump --vmc ─► vmc-relay --dump
#
#   scripts/bench-soak.sh [SECONDS] [SPEC]
#       SECONDS  how long the streams play (default 600)
#       SPEC     the --impair faults of every replay, without the seed
#                (default loss=2%,burst=5@0.2%,dup=1%,reorder=2%,jitter=8ms)
#   PORT_BASE=47300   where the nine loopback ports start
#
# The body and Live Link streams are generated for SECONDS (make_captures
# --long / --long-livelink: frame numbers one apart, a mocopi skeleton
# before every 210th frame); the iFacialMocap capture loops. Each replay
# prints a replay.datagram record per datagram; from those the checker
# rebuilds the order datagrams were sent in and computes, from the
# definitions, what each receiver's counters must say. It fails unless every
# tool's counters equal the injected faults, no tool panicked or failed, and
# every tool's resident memory stayed flat: at most 2 MiB above what it was
# a tenth of the way in. Resident memory is sampled every 5 s (rss.tsv).
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-600}"
spec="${2:-loss=2%,burst=5@0.2%,dup=1%,reorder=2%,jitter=8ms}"
cargo build -q --release -p mocopi-dump -p ifm-handshake -p vmc-average -p vmc-relay -p pcap-replay -p livelink-dump
cargo build -q --release -p mocap-core --example make_captures
bin="$PWD/target/release"

base="${PORT_BASE:-47300}"
mocopi=$base phone=$((base + 1)) ifm=$((base + 2)) body=$((base + 3)) face=$((base + 4))
out=$((base + 5)) ll=$((base + 6)) llface=$((base + 7))
host=127.0.0.1

work="$(mktemp -d "${TMPDIR:-/tmp}/bench-soak.XXXXXX")"
echo "bench-soak: ${secs} s, --impair $spec, work files in $work"
"$bin/examples/make_captures" --long "$work/body.pcapng" "$secs" 2>/dev/null
"$bin/examples/make_captures" --long-livelink "$work/face.pcapng" "$secs" 2>/dev/null

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
ready() { # LOG
  for _ in $(seq 100); do
    grep -q "listening on" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "bench-soak: $(basename "$1" .log) did not start:" >&2; cat "$1" >&2; exit 1
}

# Only each tool's last line (its summary) is kept: ten minutes of records
# would be gigabytes.
"$bin/vmc-relay" -l "$host:$out" --dump --format json > >(tail -n 1 >"$work/relay.json") 2>"$work/relay.log" &
relay_pid=$!; pids+=("$relay_pid")
ready "$work/relay.log"
"$bin/vmc-average" -l "$host:$body" -l "$host:$face" \
  --source "body=$host:$body" --source "face=$host:$face" --primary body --prefer face:Head \
  --blends average --to "$host:$out" --format json > >(tail -n 1 >"$work/average.json") 2>"$work/average.log" &
average_pid=$!; pids+=("$average_pid")
ready "$work/average.log"
"$bin/mocopi-dump" -l "$host:$mocopi" --vmc "$host:$body" --format json \
  > >(tail -n 1 >"$work/mocopi.json") 2>"$work/mocopi.log" &
mocopi_pid=$!; pids+=("$mocopi_pid")
ready "$work/mocopi.log"
"$bin/livelink-dump" -l "$host:$ll" --vmc "$host:$llface" --format json \
  > >(tail -n 1 >"$work/livelink.json") 2>"$work/livelink.log" &
ll_pid=$!; pids+=("$ll_pid")
ready "$work/livelink.log"
# Live Link Face, a leg of its own as in the demo pipeline.
"$bin/vmc-relay" -l "$host:$llface" --dump --format json > >(tail -n 1 >"$work/ll-relay.json") 2>"$work/ll-relay.log" &
ll_relay_pid=$!; pids+=("$ll_relay_pid")
ready "$work/ll-relay.log"

"$bin/pcap-replay" -q captures/ifacialmocap/face-60fps.pcapng --trigger "$host:$phone" --to-port "$ifm" \
  --loop 0 --duration "${secs}s" --impair "$spec,seed=3" --format json >"$work/ifm-replay.jsonl" &
ifm_replay_pid=$!; pids+=("$ifm_replay_pid")
sleep 0.2
"$bin/ifm-handshake" "$host" --phone-port "$phone" -l "$host:$ifm" --vmc "$host:$face" --format json \
  > >(tail -n 1 >"$work/ifm.json") 2>"$work/ifm.log" &
ifm_pid=$!; pids+=("$ifm_pid")

tools=(mocopi-dump:$mocopi_pid livelink-dump:$ll_pid ifm-handshake:$ifm_pid vmc-average:$average_pid
  vmc-relay:$relay_pid vmc-relay-ll:$ll_relay_pid)
sample() {
  printf 't_s' >"$work/rss.tsv"
  for t in "${tools[@]}"; do printf '\t%s' "${t%%:*}" >>"$work/rss.tsv"; done
  echo >>"$work/rss.tsv"
  local start=$SECONDS
  while true; do
    printf '%d' $((SECONDS - start)) >>"$work/rss.tsv"
    for t in "${tools[@]}"; do
      printf '\t%s' "$(awk '/^VmRSS/ {print $2}' "/proc/${t#*:}/status" 2>/dev/null || echo -)" >>"$work/rss.tsv"
    done
    echo >>"$work/rss.tsv"
    sleep 5
  done
}
sample &
sampler_pid=$!; pids+=("$sampler_pid")

"$bin/pcap-replay" -q "$work/body.pcapng" --to "$host:$mocopi" --impair "$spec,seed=1" --format json \
  >"$work/body-replay.jsonl" &
body_replay_pid=$!; pids+=("$body_replay_pid")
"$bin/pcap-replay" -q "$work/face.pcapng" --to "$host:$ll" --impair "$spec,seed=2" --format json \
  >"$work/ll-replay.jsonl"
wait "$body_replay_pid"
wait "$ifm_replay_pid"
sleep 1
kill "$sampler_pid"
stop() { kill -INT "$1"; wait "$1" || { echo "bench-soak: a tool failed (exit $?)" >&2; exit 1; }; }
stop "$ifm_pid"; stop "$mocopi_pid"; stop "$ll_pid"
sleep 0.3; stop "$ll_relay_pid"
sleep 0.3; stop "$average_pid"
sleep 0.3; stop "$relay_pid"
trap - EXIT
sleep 0.5 # the tails write their line

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
failures = []
def expect(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)

def load(name):
    with open(f"{work}/{name}") as f:
        return json.loads(f.read().strip().splitlines()[-1])

def sent_order(replay):
    """Datagram numbers in the order the replay sent them, copies included,
    rebuilt from its replay.datagram records: a held datagram goes right
    after the next one sent; one still held when a pass ends goes last."""
    notes, summary = [], None
    with open(f"{work}/{replay}") as f:
        for line in f:
            r = json.loads(line)
            if r["type"] == "replay.datagram":
                notes.append(r)
            elif r["type"] == "summary":
                summary = r
    notes.sort(key=lambda r: r["n"])
    order, held = [], None
    for r in notes:
        if r["fate"] == "dropped":
            continue
        if r.get("held"):
            held = r
            continue
        order += [r["n"]] * r["copies"]
        if held:
            order += [held["n"]] * held["copies"]
            held = None
    if held:
        order += [held["n"]] * held["copies"]
    return order, notes, summary

def health(seq):
    """lost / duplicates / reordered of a frame-number sequence, by definition."""
    seen, first, newest, dups, late = set(), None, None, 0, 0
    for f in seq:
        if f in seen:
            dups += 1
            continue
        if first is not None and f < newest:
            late += 1
        seen.add(f)
        first = f if first is None else first
        newest = f if newest is None else max(newest, f)
    lost = newest - first + 1 - sum(1 for f in seen if first <= f <= newest)
    return {"frames": len(seq), "lost": lost, "duplicates": dups, "reordered": late}

# mocopi: datagram n (1-based) is a skeleton when (n - 1) % 211 == 0, else frame
# fnum 10000 + (n - 1) - (n - 1) // 211 - 1 (make_captures --long).
order, notes, rs = sent_order("body-replay.jsonl")
frames = [10000 + (n - 1) - (n - 1) // 211 - 1 for n in order if (n - 1) % 211]
skeletons = sum(1 for n in order if (n - 1) % 211 == 0)
want = health(frames)
m = load("mocopi.json")
got = {k: m[k] for k in want}
print(f"body replay    {len(notes)} datagrams; impaired {rs['impaired']}")
expect(got == want, f"mocopi-dump health {got} == the injected faults {want}")
expect(m["skeletons"] == skeletons, f"mocopi-dump skeletons {m['skeletons']} == sent {skeletons}")
expect(m["errors"] == 0, "mocopi-dump: no errors")

order, notes, rs = sent_order("ll-replay.jsonl")
want = health([n for n in order])
l = load("livelink.json")
got = {k: l[k] for k in want}
print(f"Live Link      {len(notes)} datagrams; impaired {rs['impaired']}")
expect(got == want, f"livelink-dump health {got} == the injected faults {want}")

order, notes, rs = sent_order("ifm-replay.jsonl")
i = load("ifm.json")
print(f"iFacialMocap   {len(notes)} datagrams; impaired {rs['impaired']}")
expect(i["frames"] == len(order), f"ifm-handshake frames {i['frames']} == datagrams sent {len(order)}")

a = load("average.json")
src = {s["name"]: s for s in a["sources"]}
print(f"vmc-average    {a['frames_out']} mixed frames; " + ", ".join(f"{k} {v['frames']}" for k, v in src.items()))
expect(src["body"]["frames"] == m["vmc"]["frames"], f"vmc-average got every body frame mocopi-dump sent ({m['vmc']['frames']})")
expect(src["face"]["datagrams"] == i["vmc_datagrams"], f"vmc-average got every face datagram ifm-handshake sent ({i['vmc_datagrams']})")
r = load("relay.json")
expect(r["datagrams"] == a["datagrams_out"] and r["decode_errors"] == 0,
       f"vmc-relay got every datagram vmc-average sent ({a['datagrams_out']}), all decoded")
r = load("ll-relay.json")
expect(r["datagrams"] == l["vmc"]["datagrams"] and r["decode_errors"] == 0,
       f"the Live Link relay got every datagram livelink-dump sent ({l['vmc']['datagrams']}), all decoded")
expect(l["frames"] == l["vmc"]["frames"], "livelink-dump sent every face frame on as VMC")

with open(f"{work}/rss.tsv") as f:
    rows = [line.rstrip("\n").split("\t") for line in f]
head, rows = rows[0], [r for r in rows[1:] if "-" not in r]
tenth = rows[max(1, len(rows) // 10)]
for c, name in enumerate(head[1:], start=1):
    series = [int(r[c]) for r in rows]
    early, late_max = int(tenth[c]), max(int(r[c]) for r in rows[len(rows) // 10:])
    grew = late_max - early
    expect(grew <= 2048, f"{name:14} RSS {early / 1024:.1f} MiB at {tenth[0]} s, at most {late_max / 1024:.1f} MiB after (+{grew} KiB)")

for log in ["mocopi", "livelink", "ifm", "average", "relay", "ll-relay"]:
    text = open(f"{work}/{log}.log").read()
    expect("panicked" not in text, f"{log}: no panic")
if failures:
    print(f"bench-soak: FAILED ({len(failures)}), work files in {work}", file=sys.stderr)
    sys.exit(1)
print("bench-soak: ok")
PY
rm -rf "$work"
