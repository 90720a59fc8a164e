#!/usr/bin/env bash
# Hostile senders against every receiving tool at once, to show that no
# per-sender state grows without bound (issue 35). One Python process sends,
# as fast as it can for SECONDS, round-robin to every tool:
#
#   VMC (vmc-average, vmc-relay --smooth --as vrchat --as vmt, motion-stream serve):
#     from one sender that stays: Blend/Val without Apply, each under a new
#     1000-byte name (the issue's case)
#     from ever new senders: bones under new names, bones with no OK/T/Apply
#     ever, NaN and infinite values
#   mocopi (mocopi-dump --vmc), Live Link (livelink-dump --vmc):
#     a whole frame, each from a new source port (a new sender)
#   and for every tool a new source port every 64 datagrams besides.
#
#   scripts/bench-hostile.sh [SECONDS]     (default 30)
#   PROFILE=debug       use target/debug (test-all.sh reuses its test build)
#   PORT_BASE=47400     where the loopback ports start
#   RSS_GROWTH_KIB=8192 the bound: how far a tool's resident memory may grow
#                       from its sample at a third of the run to its last
#   RSS_MAX_KIB=131072  and the most it may ever be
#
# Resident memory (VmRSS) is sampled every second (rss.tsv in the work
# directory). By a third of the way in every bounded table is full (256
# senders, the name caps); from then on the memory must stay flat. The old
# vmc-average went from 4 MB to 470 MB in 3 s here. Everything is sent to
# 127.0.0.1 only, and the run stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-30}"
profile="${PROFILE:-release}"
growth_kib="${RSS_GROWTH_KIB:-8192}"
max_kib="${RSS_MAX_KIB:-131072}"
tools=(vmc-average vmc-relay mocopi-dump livelink-dump motion-stream)
if [ "$profile" = release ]; then
  cargo build -q --release "${tools[@]/#/-p=}"
fi
bin="$PWD/target/$profile"
command -v python3 >/dev/null || { echo "bench-hostile: needs python3" >&2; exit 1; }

base="${PORT_BASE:-47400}"
host=127.0.0.1
average=$base relay=$((base + 1)) mocopi=$((base + 2)) livelink=$((base + 3))
serve_vmc=$((base + 4)) serve_ws=$((base + 5)) sink=$((base + 6))

work="$(mktemp -d "${TMPDIR:-/tmp}/bench-hostile.XXXXXX")"
echo "bench-hostile: ${secs} s against ${#tools[@]} tools ($profile), work files in $work"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
ready() { # NAME
  for _ in $(seq 100); do
    grep -q "listening on\|serving\|VMC on" "$work/$1.log" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "bench-hostile: $1 did not start:" >&2; cat "$work/$1.log" >&2; exit 1
}

# A sink for what the tools send on, read by nobody (the datagrams drop).
start() { # NAME CMD...
  local name=$1; shift
  "$@" --format json > >(tail -n 1 >"$work/$name.json") 2>"$work/$name.log" &
  pids+=($!)
  echo "$name $!" >>"$work/pids"
  ready "$name"
}
# --duration ends each tool by itself, after the sender.
dur="$((secs + 2))s"
start vmc-average "$bin/vmc-average" -l "$host:$average" --to "$host:$sink" --duration "$dur"
start vmc-relay "$bin/vmc-relay" -l "$host:$relay" --to "$host:$sink" --smooth \
  --to "$host:$sink" --as vrchat --to "$host:$sink" --as vmt --duration "$dur"
start mocopi-dump "$bin/mocopi-dump" -l "$host:$mocopi" --vmc "$host:$sink" --duration "$dur"
start livelink-dump "$bin/livelink-dump" -l "$host:$livelink" --vmc "$host:$sink" --duration "$dur"
start motion-stream "$bin/motion-stream" serve -l "$host:$serve_ws" --vmc "$host:$serve_vmc" --duration "$dur"

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
sample() { # T
  while read -r name pid; do
    printf '%s\t%s\t%s\n' "$1" "$name" "$(rss "$pid")"
  done <"$work/pids"
}

# shellcheck disable=SC2016
python3 - "$secs" "$host" "$average" "$relay" "$mocopi" "$livelink" "$serve_vmc" \
  captures/mocopi/seed-frame-1575.bin captures/livelink/face-60fps.pcapng <<'PY' &
import socket, struct, sys, time
secs = float(sys.argv[1]); host = sys.argv[2]
average, relay, mocopi, livelink, serve = (int(p) for p in sys.argv[3:8])
mocopi_frame = open(sys.argv[8], "rb").read()

def livelink_payload(path):
    # The first UDP payload of the capture (pcapng, Ethernet or raw IPv4):
    # found as the bytes after the first UDP header to port 11111.
    data = open(path, "rb").read()
    at = data.find(struct.pack(">H", 11111), 40)
    while at > 0:
        length = struct.unpack(">H", data[at + 2:at + 4])[0]
        if 8 < length < 2000:
            return data[at + 6:at + 6 + length - 8]
        at = data.find(struct.pack(">H", 11111), at + 2)
    raise SystemExit("no Live Link datagram in " + path)
livelink_frame = livelink_payload(sys.argv[9])

def s(text):
    b = text.encode() + b"\0"
    return b + b"\0" * (-len(b) % 4)
def msg(address, tags, *args):
    out = s(address) + s("," + tags)
    for t, a in zip(tags, args):
        out += s(a) if t == "s" else struct.pack(">f", a)
    return out

long = "x" * 1000
nan, inf = float("nan"), float("inf")
def staged(k):
    # The issue's case, from one sender that stays: Blend/Val under a new
    # long name, never applied.
    return msg("/VMC/Ext/Blend/Val", "sf", f"{long}{k}", 0.5)
def vmc(k):
    shape = k % 4
    if shape == 0:   # a bone under a new name, no frame end
        return msg("/VMC/Ext/Bone/Pos", "sfffffff", f"Bone{k}", 0, 1, 0, 0, 0, 0, 1)
    if shape == 1:   # a real bone, never an OK
        return msg("/VMC/Ext/Bone/Pos", "sfffffff", "Hips", 0, 1, 0, 0, 0, 0, 1)
    if shape == 2:   # NaN and infinity
        return msg("/VMC/Ext/Bone/Pos", "sfffffff", "Head", nan, inf, 0, nan, 0, 0, 1)
    return msg("/VMC/Ext/Blend/Val", "sf", "Joy", nan)

socks = []
def sock(k):
    # A new source port every 64 datagrams: a stream of new senders.
    if k % 64 == 0 or not socks:
        if socks:
            socks.pop().close()
        socks.append(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
    return socks[-1]

stays = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
k = 0
sent = 0
end = time.time() + secs
while time.time() < end:
    for _ in range(200):
        d = vmc(k)
        tx = sock(k)
        for port in (average, relay, serve):
            tx.sendto(d, (host, port))
            stays.sendto(staged(k), (host, port))
        # The body and face dumps get whole frames, each from a new port.
        one = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        one.sendto(mocopi_frame, (host, mocopi))
        one.sendto(livelink_frame, (host, livelink))
        one.close()
        k += 1
        sent += 8
    # Let the tools breathe on a shared machine: about 20k datagrams/s.
    time.sleep(0.05)
print(f"bench-hostile: sent {sent} datagrams", file=sys.stderr)
PY
sender=$!
pids+=("$sender")

: >"$work/rss.tsv"
for t in $(seq 0 "$secs"); do
  sample "$t" >>"$work/rss.tsv"
  sleep 1
done
wait "$sender"
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done

# Verdict per tool: its RSS at a third of the run, its last and its peak.
fail=0
third=$((secs / 3))
printf '%-14s %10s %10s %10s %10s\n' tool "start KiB" "1/3 KiB" "last KiB" "peak KiB"
while read -r name _; do
  read -r first mid last peak < <(awk -v n="$name" -v third="$third" '
    $2 == n && $3 > 0 { if (!f) f = $3; if ($1 <= third) m = $3; l = $3; if ($3 > p) p = $3 }
    END { print f + 0, m + 0, l + 0, p + 0 }' "$work/rss.tsv")
  printf '%-14s %10s %10s %10s %10s\n' "$name" "$first" "$mid" "$last" "$peak"
  if [ "$peak" -gt "$max_kib" ] || [ $((last - mid)) -gt "$growth_kib" ]; then
    echo "bench-hostile: FAIL $name: past ${max_kib} KiB or grew more than ${growth_kib} KiB after ${third} s" >&2
    fail=1
  fi
  if grep -qi "panicked" "$work/$name.log"; then
    echo "bench-hostile: FAIL $name panicked:" >&2; cat "$work/$name.log" >&2; fail=1
  fi
  if ! grep -q '"type":"summary"' "$work/$name.json"; then
    echo "bench-hostile: FAIL $name gave no summary:" >&2; tail -n 5 "$work/$name.log" >&2; fail=1
  fi
done <"$work/pids"
[ $fail = 0 ] && echo "bench-hostile: ok (every tool within ${growth_kib} KiB of its size at ${third} s, under ${max_kib} KiB)"
exit $fail
