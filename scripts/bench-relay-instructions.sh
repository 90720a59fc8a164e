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
#   N=20000 RATE=2000 ROUNDS=5 scripts/bench-relay-instructions.sh
#   RELAY=target/vmc-relay-old scripts/bench-relay-instructions.sh   # another build, same conditions
#   DECODE=1 scripts/bench-relay-instructions.sh                     # also the decoding paths (below)
#   KEEP=/tmp/cg scripts/bench-relay-instructions.sh                 # keep the callgrind files
#     (then: callgrind_annotate /tmp/cg/vmc-relay.1.loaded.out | head -40)
# Needs gcc and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
N=${N:-10000}
RATE=${RATE:-2000}
# Batching differs from run to run (how many datagrams one receive finds), and
# with it the cost per datagram of both: each figure is the median of ROUNDS.
ROUNDS=${ROUNDS:-3}
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

# run NAME FAN MODE -> "total-instructions recvmmsg-calls"; MODE loaded also
# leaves the sinks' counts in $work/got
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
  echo "$total $(recv_calls "$out")"
}

# recv_calls FILE -> calls to libc's recvmmsg in a callgrind file (names are
# given once as "(id) name", then "(id)" alone).
recv_calls() {
  awk '
    /^c?fn=\(/ {
      s = $0; sub(/^c?fn=\(/, "", s); id = s; sub(/\).*/, "", id)
      nm = s; sub(/^[0-9]+\) ?/, "", nm); if (nm != "") names[id] = nm
      want = ($0 ~ /^cfn=/ && names[id] == "recvmmsg"); next
    }
    /^calls=/ { if (want) { split($0, a, /[= ]/); n += a[2] } want = 0 }
    END { print n + 0 }' "$1"
}

echo "callgrind, release build, $N datagrams of 64 bytes at $RATE/s on loopback, run length ${length} s, median of $ROUNDS rounds"
echo "relay: $RELAY"
echo "rounds: instructions per datagram / datagrams per receive call (how much one"
echo "recvmmsg found: the more, the cheaper each datagram, for both); * = a sink missed datagrams"
printf '%-12s %-5s %-15s %-11s %s\n' forwarder fan "instr/datagram" "ratio to C" "rounds"
for fan in 1 4; do
  declare -A idle=() rounds=() pers=()
  for name in c-forwarder vmc-relay; do idle[$name]=$(run "$name" "$fan" idle); done
  # The two forwarders take turns, so a round sees both under the same load.
  for _ in $(seq 1 "$ROUNDS"); do
    for name in c-forwarder vmc-relay; do
      read -r loaded calls < <(run "$name" "$fan" loaded)
      read -r idle_total _ <<<"${idle[$name]}"
      per=$(awk -v l="$loaded" -v i="$idle_total" -v n="$N" 'BEGIN { printf "%.0f", (l - i) / n }')
      # (vmc-relay's calls include its read timeouts, 20 a second without traffic.)
      per_recv=$(awk -v c="$calls" -v n="$N" 'BEGIN { printf "%.2f", n / c }')
      lost=""
      for g in $(cat "$work/got"); do [ "$g" -lt "$N" ] && lost="*"; done
      pers[$name]="${pers[$name]:-} $per"
      rounds[$name]="${rounds[$name]:-} $per/$per_recv$lost"
    done
  done
  c_per=""
  for name in c-forwarder vmc-relay; do
    per=$(tr ' ' '\n' <<<"${pers[$name]}" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    [ "$name" = c-forwarder ] && c_per=$per
    ratio=$(awk -v p="$per" -v c="$c_per" 'BEGIN { printf "%.2f", p / c }')
    printf '%-12s %-5s %-15s %-11s %s\n' "$name" "1->$fan" "$per" "$ratio" "${rounds[$name]# }"
  done
done

# DECODE=1: the same method on paths that decode each datagram (issue 40 asks
# for them measured, not fixed): vmc-relay filtering (--only '/*': decode and
# re-encode) and dumping (--dump --format json), fed by udpbench as above;
# mocopi-dump and livelink-dump (--format json to /dev/null) fed their
# protocol by pcap-replay from captures/ at 200 datagrams a second.
[ "${DECODE:-0}" = 1 ] || exit 0
cargo build -q --release -p vmc-relay -p mocopi-dump -p livelink-dump -p pcap-replay
bin="$root/target/release"
echo
echo "decoding paths (one round; N = datagrams sent to the tool):"
printf '%-22s %-15s %s\n' path "instr/datagram" datagrams
decode_row() { # NAME LOAD(udpbench|capture file) TOOL-COMMAND...
  local name=$1 load=$2 out n secs
  shift 2
  if [ "$load" = udpbench ]; then
    n=$N secs=$send_s
  else
    n=$(( $("$bin/pcap-replay" "$root/$load" --to 127.0.0.1:9 --topspeed --format json -q 2>/dev/null |
      tail -1 | sed 's/.*"sent":\([0-9]*\).*/\1/') * 4 ))
    secs=$(awk -v n="$n" 'BEGIN { printf "%.3f", n / 200 }')
  fi
  local len; len=$(awk -v w="$WARM" -v s="$secs" 'BEGIN { printf "%.3f", w + s + 1 }')
  local totals=()
  for mode in idle loaded; do
    out="$work/decode.$mode.out"
    valgrind -q --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>"$work/stderr" &
    local pid=$!
    if [ "$mode" = loaded ]; then
      sleep "$WARM"
      if [ "$load" = udpbench ]; then
        "$ub" send 127.0.0.1 "$IN" "$RATE" "$send_s" 32 >/dev/null
      else
        "$bin/pcap-replay" "$root/$load" --to "127.0.0.1:$IN" --loop 4 --pps 200 -q >/dev/null 2>&1
      fi
      sleep 1
    else
      sleep "$len"
    fi
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
    [ -n "${KEEP:-}" ] && cp "$out" "$KEEP/decode.$name.$mode.out"
    totals+=("$(awk '/^(summary|totals):/ { print $2; exit }' "$out")")
  done
  printf '%-22s %-15s %s\n' "$name" "$(awk -v l="${totals[1]}" -v i="${totals[0]}" -v n="$n" 'BEGIN { printf "%.0f", (l - i) / n }')" "$n"
}
sink=$((IN + 1))
"$ub" recv "$sink" 60000 >/dev/null & pids+=($!)
decode_row "vmc-relay filter" udpbench "$RELAY" -q -l "127.0.0.1:$IN" --only '/*' --to "127.0.0.1:$sink"
decode_row "vmc-relay dump json" udpbench "$RELAY" -q -l "127.0.0.1:$IN" --dump --format json
decode_row "mocopi-dump json" captures/mocopi/wave-60hz.pcapng "$bin/mocopi-dump" -q -l "127.0.0.1:$IN" --format json
decode_row "livelink-dump json" captures/livelink/face-60fps.pcapng "$bin/livelink-dump" -q -l "127.0.0.1:$IN" --format json
