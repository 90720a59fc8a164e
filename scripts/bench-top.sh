#!/usr/bin/env bash
# What watching costs: the CPU of `mocap-top` (the screen under tmux, and JSON
# mode) at four streams × 60 Hz (mocopi, Live Link Face, iFacialMocap, VMC
# captures played by pcap-replay, LOOPS times, default 4) and at a VMC flood
# (the VMC capture at FLOOD datagrams/s, default 20000, for FLOOD_SECS,
# default 8), next to `vmc-relay --dump > /dev/null` and liblo's
# `oscdump > /dev/null` (Debian liblo-tools) on the same flood; alternating,
# RUNS times (default 2). Reports CPU (user + system) as a share of one core
# over the stream, and datagrams received against sent: what the tool counted
# (mocap-top) and what the kernel dropped at its socket (/proc/net/udp's
# `drops`, read just before the tool ends; Linux).
#
#   scripts/bench-top.sh
#   RUNS=3 FLOOD=20000 scripts/bench-top.sh
#   BASELINE=/tmp/mocap-top-old scripts/bench-top.sh   # another build's four-stream runs alongside
#   DRILL=mocopi scripts/bench-top.sh   # the screen runs with the first row matching
#                                       # DRILL (the / filter) drilled into
#
# Context switches (voluntary + involuntary, all threads) per datagram sent
# are what a quiet stream costs most: each one is a wake-up.
set -euo pipefail
cd "$(dirname "$0")/.."
for c in tmux oscdump python3 /usr/bin/time; do
  command -v "$c" >/dev/null || { echo "bench-top: needs $c (Debian: tmux, liblo-tools, python3, time)" >&2; exit 1; }
done
cargo build -q --release -p mocap-top -p vmc-relay -p pcap-replay
bin=$PWD/target/release
runs=${RUNS:-2}
loops=${LOOPS:-4}
flood=${FLOOD:-20000}
flood_secs=${FLOOD_SECS:-8}
tmp=$(mktemp -d)
sock="bench-top-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
# Five free UDP ports in a row is too much to ask on a shared machine: five
# free ones, asked of the kernel (ports[0..3] for the four streams, [4] the flood).
mapfile -t free < <(python3 -c '
import socket
ss = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(5)]
for s in ss: s.bind(("127.0.0.1", 0))
for s in ss: print(s.getsockname()[1])')

captures=(captures/mocopi/wave-60hz.pcapng captures/livelink/face-60fps.pcapng
          captures/ifacialmocap/face-60fps.pcapng captures/vmc/body-60hz.pcapng)

# Kernel drops at the UDP socket on $1 (port), from /proc/net/udp.
drops() {
  python3 - "$1" <<'PY'
import sys
port = "%04X" % int(sys.argv[1])
total = 0
for line in open("/proc/net/udp").read().splitlines()[1:]:
    f = line.split()
    if f[1].endswith(":" + port):
        total += int(f[-1])
print(total)
PY
}

# Polls the drops of port $1 into file $2 until pid $3 ends (the socket goes with it).
watch_drops() {
  local port=$1 out=$2 pid=$3
  echo 0 > "$out"
  while kill -0 "$pid" 2>/dev/null; do
    drops "$port" > "$out.new" && mv "$out.new" "$out"
    sleep 0.2
  done
}

# Runs "$@" (a tool listening on the ports, ending by itself after the
# stream) under /usr/bin/time; $mode: json (stdout to a file), tty (inside
# tmux), raw (stdout to /dev/null). Sets user sys.
timed() { # mode label -- cmd...
  local mode=$1; shift
  local t=$tmp/time
  rm -f "$t" "$tmp/done"
  case $mode in
    tty)
      tmux -L "$sock" kill-server 2>/dev/null || true
      local q; q=$(printf '%q ' "$@")
      tmux -L "$sock" new-session -d -x 120 -y 40 \
        "/usr/bin/time -f '%U %S %e %w %c' -o $t $q 2>$tmp/stderr; touch $tmp/done"
      ;;
    # `|| true`: oscdump ends by timeout's signal (status 124), and set -e
    # would end the subshell before it says it is done.
    json) (/usr/bin/time -f "%U %S %e %w %c" -o "$t" "$@" >"$tmp/stdout" 2>"$tmp/stderr" || true; touch "$tmp/done") & ;;
    raw) (/usr/bin/time -f "%U %S %e %w %c" -o "$t" "$@" >/dev/null 2>"$tmp/stderr" || true; touch "$tmp/done") & ;;
  esac
}

wait_done() {
  local i
  for i in $(seq 600); do [ -e "$tmp/done" ] && return 0; sleep 0.1; done
  echo "bench-top: the tool did not end" >&2; return 1
}

report() { # label stream-seconds sent received drops
  if grep -q "exited with non-zero" "$tmp/time" && [ "$1" != "oscdump >/dev/null, flood" ]; then
    echo "bench-top: $1: $(head -n 1 "$tmp/time"); stderr: $(tail -n 3 "$tmp/stderr")" >&2
  fi
  read -r user sys _ vol invol < <(tail -n 1 "$tmp/time")
  python3 -c "
u, s, secs, cs, sent = $user, $sys, $2, $vol + $invol, $3
print('%-44s CPU %6.2f %% of one core over %4.1f s; sent %7d, received %s, kernel drops %s; %.2f context switches a datagram' % ('$1', 100 * (u + s) / secs, secs, sent, '$4', '$5', cs / max(sent, 1)))"
}

# mocap-top's own count of datagrams: the JSON summary, or the human one on stderr.
top_count() {
  if [ -s "$tmp/stdout" ] && grep -q '"type":"summary"' "$tmp/stdout"; then
    grep '"type":"summary"' "$tmp/stdout" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["datagrams"])'
  else
    sed -n 's/.*done ([^)]*): \([0-9]*\) datagrams.*/\1/p' "$tmp/stderr" | head -n 1
  fi
}

four() { # mode [binary label]
  local mode=$1 top=${2:-$bin/mocap-top} label=${3:-mocap-top} secs args=() ports=() pids=() sent=0 i
  secs=$(python3 -c "print(4.0 * $loops)")
  for i in 0 1 2 3; do ports+=("${free[$i]}"); args+=(-l "127.0.0.1:${free[$i]}"); done
  local fmt=(--format json); [ "$mode" = tty ] && fmt=()
  timed "$mode" "$top" "${fmt[@]}" "${args[@]}" --duration "$(python3 -c "print(int($secs) + 3)")s"
  sleep 1
  for i in 0 1 2 3; do
    "$bin/pcap-replay" -q --format json --loop "$loops" --to "127.0.0.1:${ports[$i]}" "${captures[$i]}" >"$tmp/replay$i" 2>/dev/null &
    pids+=($!)
  done
  if [ "$mode" = tty ] && [ -n "${DRILL:-}" ]; then
    # Once the streams are rows: filter to DRILL, keep it, drill into it.
    sleep 1.5
    tmux -L "$sock" send-keys /
    tmux -L "$sock" send-keys -l "$DRILL"
    tmux -L "$sock" send-keys Enter Enter
    sleep 0.5
    tmux -L "$sock" capture-pane -p | grep -q " on 127.0.0.1:" ||
      echo "bench-top: the drill-down into $DRILL did not open" >&2
    label="$label, drilled into $DRILL"
  fi
  for p in "${pids[@]}"; do wait "$p"; done
  for i in 0 1 2 3; do
    sent=$((sent + $(python3 -c "import json; print(json.loads(open('$tmp/replay$i').read().splitlines()[-1])['sent'])")))
  done
  wait_done
  report "$label ($mode) 4 streams x 60 Hz" "$secs" "$sent" "$(top_count)" "-"
}

flood_run() { # label kind
  local label=$1 kind=$2 port=${free[4]} secs=$flood_secs pid
  rm -f "$tmp/stdout"
  case $kind in
    top-json) timed json "$bin/mocap-top" --format json -l "127.0.0.1:$port" --duration "$((secs + 2))s" ;;
    top-tty) timed tty "$bin/mocap-top" -l "127.0.0.1:$port" --duration "$((secs + 2))s" ;;
    relay) timed raw "$bin/vmc-relay" -l "127.0.0.1:$port" --dump -q --duration "$((secs + 2))s" ;;
    oscdump) timed raw timeout -s INT -k 1 "$((secs + 2))" oscdump "$port" ;;
  esac
  sleep 1
  # The tool's pid, for the drops watch: whoever holds the port.
  pid=$(python3 - "$port" <<'PY'
import os, sys
port = "%04X" % int(sys.argv[1])
inodes = set()
for line in open("/proc/net/udp").read().splitlines()[1:]:
    f = line.split()
    if f[1].endswith(":" + port):
        inodes.add(f[9])
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        for fd in os.listdir(f"/proc/{p}/fd"):
            link = os.readlink(f"/proc/{p}/fd/{fd}")
            if link.startswith("socket:[") and link[8:-1] in inodes:
                print(p); sys.exit(0)
    except OSError:
        pass
PY
)
  watch_drops "$port" "$tmp/drops" "${pid:-0}" &
  local watcher=$!
  "$bin/pcap-replay" -q --format json --pps "$flood" --loop 0 --duration "${secs}s" \
    --to "127.0.0.1:$port" captures/vmc/body-60hz.pcapng >"$tmp/replay" 2>/dev/null
  local sent; sent=$(python3 -c "import json; print(json.loads(open('$tmp/replay').read().splitlines()[-1])['sent'])")
  wait_done
  wait "$watcher" 2>/dev/null || true
  local got="-"
  case $kind in top-*) got=$(top_count) ;; esac
  report "$label" "$secs" "$sent" "$got" "$(cat "$tmp/drops")"
}

echo "machine: $(nproc) cores; $(uname -sr)"
for r in $(seq "$runs"); do
  echo "run $r"
  four tty
  four json
  if [ -n "${BASELINE:-}" ]; then
    four tty "$BASELINE" baseline
    four json "$BASELINE" baseline
  fi
  flood_run "mocap-top (tty) VMC flood ${flood}/s" top-tty
  flood_run "mocap-top (json) VMC flood ${flood}/s" top-json
  flood_run "vmc-relay --dump >/dev/null, flood" relay
  flood_run "oscdump >/dev/null, flood" oscdump
done
