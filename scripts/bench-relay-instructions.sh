#!/usr/bin/env bash
# CPU instructions per forwarded datagram (issue 40): vmc-relay raw against the
# minimal recvmmsg/sendmmsg forwarder of shared/bench (`udpbench fwd`), side by
# side in one run, fan-out 1->1 and 1->4.
#
# Method: each forwarder (release build) runs under callgrind for a fixed
# length while `udpbench send` paces N 64-byte OSC datagrams at RATE/s into it,
# one `udpbench recv` sink per destination; then once more, the same length,
# with nothing sent. (total instructions loaded - total idle) / N is the cost
# of one datagram: start-up, the idle loop and shutdown cancel out. Callgrind
# counts user-space instructions only; the kernel's share of the socket calls
# is not in either figure.
#
#   scripts/bench-relay-instructions.sh
#   N=20000 RATE=2000 scripts/bench-relay-instructions.sh
#   RELAY=target/vmc-relay-old scripts/bench-relay-instructions.sh   # another build, same conditions
#   KEEP=/tmp/cg scripts/bench-relay-instructions.sh                 # keep the callgrind files
#     (then: callgrind_annotate /tmp/cg/vmc-relay.1.loaded.out | head -40)
# Needs gcc and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
N=${N:-10000}
RATE=${RATE:-2000}
IN=${PORT:-43100}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
# shared/bench sits next to the main checkout (../shared), or two up from a worktree.
bench_src="${BENCH_DIR:-$root/../shared/bench}"
[ -f "$bench_src/udpbench.c" ] || bench_src="$root/../../shared/bench"
gcc -O2 -o "$work/udpbench" "$bench_src/udpbench.c"
ub="$work/udpbench"
if [ -z "${RELAY:-}" ]; then
  cargo build -q --release -p vmc-relay
  RELAY="$root/target/release/vmc-relay"
fi
# Valgrind starts slowly: the sender waits this long for the socket to be bound.
WARM=${WARM:-2}
send_s=$(awk -v n="$N" -v r="$RATE" 'BEGIN { printf "%.3f", n / r }')
length=$(awk -v w="$WARM" -v s="$send_s" 'BEGIN { printf "%.3f", w + s + 1 }')

# run NAME FAN MODE -> total instructions; MODE loaded also leaves the sinks' counts in $work/got
run() {
  local name=$1 fan=$2 mode=$3 outs=() tos=() sinks=()
  for i in $(seq 1 "$fan"); do outs+=(127.0.0.1 $((IN + i))); tos+=(--to 127.0.0.1:$((IN + i))); done
  local out="$work/$name.$fan.$mode.out"
  local cmd
  case $name in
    c-forwarder) cmd=("$ub" fwd "$IN" "${outs[@]}") ;;
    vmc-relay) cmd=("$RELAY" -q -l "127.0.0.1:$IN" "${tos[@]}") ;;
  esac
  if [ "$mode" = loaded ]; then
    for i in $(seq 1 "$fan"); do "$ub" recv $((IN + i)) 1500 >"$work/sink$i" & sinks+=($!); done
  fi
  valgrind -q --tool=callgrind --callgrind-out-file="$out" "${cmd[@]}" >/dev/null 2>"$work/stderr" &
  local pid=$!
  pids+=("$pid")
  if [ "$mode" = loaded ]; then
    sleep "$WARM"
    "$ub" send 127.0.0.1 "$IN" "$RATE" "$send_s" 32 >/dev/null
    sleep 1
  else
    sleep "$length"
  fi
  # SIGTERM ends vmc-relay like Ctrl-C and the C forwarder by default;
  # callgrind writes its totals either way.
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  if [ "$mode" = loaded ]; then
    wait "${sinks[@]}"
    local got=""
    for i in $(seq 1 "$fan"); do got="$got $(awk '{print $2}' "$work/sink$i")"; done
    echo "$got" >"$work/got"
  fi
  [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$out" "$KEEP/"
  local total
  total=$(awk '/^(summary|totals):/ { print $2; exit }' "$out")
  [ -n "$total" ] || { echo "no callgrind totals for $name 1->$fan $mode:" >&2; cat "$work/stderr" >&2; exit 1; }
  echo "$total"
}

echo "callgrind, release build, $N datagrams of 64 bytes at $RATE/s on loopback, run length ${length} s"
echo "relay: $RELAY"
printf '%-12s %-5s %-16s %-11s %s\n' forwarder fan "instr/datagram" "ratio to C" "received per sink"
for fan in 1 4; do
  c_per=""
  for name in c-forwarder vmc-relay; do
    idle=$(run "$name" "$fan" idle)
    loaded=$(run "$name" "$fan" loaded)
    got=$(cat "$work/got")
    per=$(awk -v l="$loaded" -v i="$idle" -v n="$N" 'BEGIN { printf "%.0f", (l - i) / n }')
    [ "$name" = c-forwarder ] && c_per=$per
    ratio=$(awk -v p="$per" -v c="$c_per" 'BEGIN { printf "%.2f", p / c }')
    short=""
    for g in $got; do [ "$g" -lt "$N" ] && short=" (short: datagrams lost, figure not valid)"; done
    printf '%-12s %-5s %-16s %-11s %s%s\n' "$name" "1->$fan" "$per" "$ratio" "$got" "$short"
  done
done
