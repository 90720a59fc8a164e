#!/usr/bin/env bash
# Relay throughput and latency on loopback, side by side in one run:
# vmc-relay raw, vmc-relay filter mode, osc.js and python-osc relays, and the
# minimal recvmmsg/sendmmsg forwarder from shared/bench as the floor.
#
# For each relay and fan-out (1->1, 1->3): udpbench sends paced ~96-byte OSC
# datagrams for 2 s at increasing rates; a udpbench sink per destination counts
# them and reports one-way latency. The highest rate delivered with < 0.1 % loss
# is the lossless rate; p50/p99 one-way latency is reported at 1 k/s and 10 k/s.
# Needs gcc, node/npm (osc.js) and python3 (python-osc); missing peers are skipped.
#
#   BASELINE=target/vmc-relay-old scripts/bench-relay.sh   also rows of another build
#                                                          (base-raw, base-filter), same run
#   SMOOTH=0 scripts/bench-relay.sh                        without the smoothing rows
#   NAMES="vmc-relay-raw base-raw" RATES="1000 10000" REPEAT=5 BASELINE=… SMOOTH=0 scripts/bench-relay.sh
#       only those relays, only those rates, the rows taking turns 5 times: p99 on a
#       shared loopback moves by hundreds of microseconds from run to run (the
#       C forwarder's too), so a latency comparison wants several turns
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
# shared/bench sits next to the main checkout (../shared), or two up from a worktree.
bench_src="${BENCH_DIR:-$root/../shared/bench}"
[ -f "$bench_src/udpbench.c" ] || bench_src="$root/../../shared/bench"
gcc -O2 -o "$work/udpbench" "$bench_src/udpbench.c"
ub="$work/udpbench"
cargo build -q --release -p vmc-relay
relay="$root/target/release/vmc-relay"
have_js=0; have_py=0
if command -v npm >/dev/null && (cd "$work" && npm install --silent osc >/dev/null 2>&1); then have_js=1; fi
python3 -c "import pythonosc" 2>/dev/null || python3 -m pip install -q python-osc >/dev/null 2>&1 || true
python3 -c "import pythonosc" 2>/dev/null && have_py=1
IN=41000
read -r -a RATES <<<"${RATES:-1000 10000 30000 60000 100000 150000 200000}"

start_relay() { # name, fanout -> runs the relay listening on IN, sending to IN+1..IN+fanout
  local name=$1 fan=$2 outs=() tos=()
  for i in $(seq 1 "$fan"); do outs+=(127.0.0.1 $((IN + i))); tos+=(--to 127.0.0.1:$((IN + i))); done
  case $name in
    c-forwarder) "$ub" fwd $IN "${outs[@]}" & ;;
    vmc-relay-raw) "$relay" -q -l 127.0.0.1:$IN "${tos[@]}" & ;;
    vmc-relay-filter) "$relay" -q -l 127.0.0.1:$IN --only '/*' "${tos[@]}" & ;;
    base-raw) "$BASELINE" -q -l 127.0.0.1:$IN "${tos[@]}" & ;;
    base-filter) "$BASELINE" -q -l 127.0.0.1:$IN --only '/*' "${tos[@]}" & ;;
    osc.js) NODE_PATH="$work/node_modules" node "$bench_src/oscjs-relay.js" $IN $((IN + 1)) & ;;
    python-osc) python3 "$bench_src/pythonosc-relay.py" $IN $((IN + 1)) & ;;
  esac
  pids+=($!)
  sleep 0.7
}

measure() { # fanout rate -> "received_min p50 p99" over the sinks
  local fan=$1 rate=$2 sinks=()
  for i in $(seq 1 "$fan"); do "$ub" recv $((IN + i)) 600 >"$work/sink$i" & sinks+=($!); done
  sleep 0.2
  "$ub" send 127.0.0.1 $IN "$rate" 2 64 >"$work/sent"
  wait "${sinks[@]}"
  local min=999999999 p50=0 p99=0
  for i in $(seq 1 "$fan"); do
    local line; line=$(cat "$work/sink$i")
    local n; n=$(awk '{print $2}' <<<"$line")
    [ "$n" -lt "$min" ] && min=$n
    if [ "$i" = 1 ]; then p50=$(awk '{print $8}' <<<"$line"); p99=$(awk '{print $10}' <<<"$line"); fi
  done
  echo "$min ${p50:-0} ${p99:-0}"
}

# Smoothing's cost (issue 17): 55-bone frames (+17 blendshapes, Apply, OK, T)
# from 4 senders at 240 fps through vmc-relay filter mode, with and without
# --smooth, side by side: CPU of the relay per second of stream and the age
# of each frame's T at the receiver. SMOOTH_ONLY=1 runs just this part.
smooth_rows() {
  cargo build -q --release -p mocap-core -p mocap-cli --examples
  local load="$root/target/release/examples/vmc_load"
  echo "55-bone frames, 4 senders x 240 fps, 10 s, vmc-relay filter mode:"
  for mode in plain smooth; do
    local extra=(--drop /none); [ $mode = smooth ] && extra=(--drop /none --smooth)
    /usr/bin/time -f "%U %S" -o "$work/time" "$relay" -q -l 127.0.0.1:$IN --to 127.0.0.1:$((IN + 1)) \
      "${extra[@]}" --duration 11s &
    local pid=$!
    sleep 0.5
    local res; res=$("$load" 127.0.0.1:$IN 4 240 10 127.0.0.1:$((IN + 1)))
    wait "$pid"
    read -r user sys <"$work/time"
    python3 - "$res" "$user" "$sys" "$mode" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); cpu = float(sys.argv[2]) + float(sys.argv[3])
print("  %-7s CPU %.2f %% of one core; %d frames with T received; T age p50 %.2f ms, p99 %.2f ms"
      % (sys.argv[4], 100 * cpu / 11, r["mixed_frames_received"],
         r["latency_us"]["p50"] / 1000, r["latency_us"]["p99"] / 1000))
PY
  done
}
if [ "${SMOOTH_ONLY:-0}" = 1 ]; then smooth_rows; exit 0; fi
names=(c-forwarder vmc-relay-raw vmc-relay-filter)
[ -n "${BASELINE:-}" ] && names+=(base-raw base-filter)
names+=(osc.js python-osc)
[ -n "${NAMES:-}" ] && read -r -a names <<<"$NAMES"

printf '%-17s %-5s %-22s %-24s %-24s\n' relay fan "lossless rate (dgram/s)" "1k/s p50/p99 (us)" "10k/s p50/p99 (us)"
for fan in 1 3; do
  for _ in $(seq 1 "${REPEAT:-1}"); do
  for name in "${names[@]}"; do
    case $name in
      osc.js) [ $have_js = 1 ] && [ "$fan" = 1 ] || { printf '%-17s %-5s %s\n' "$name" "1->$fan" "n/a"; continue; } ;;
      python-osc) [ $have_py = 1 ] && [ "$fan" = 1 ] || { printf '%-17s %-5s %s\n' "$name" "1->$fan" "n/a"; continue; } ;;
    esac
    start_relay "$name" "$fan"
    lossless=0; lat1=-; lat10=-
    for rate in "${RATES[@]}"; do
      read -r got p50 p99 < <(measure "$fan" "$rate")
      want=$((rate * 2))
      [ "$rate" = 1000 ] && lat1="$p50/$p99"
      [ "$rate" = 10000 ] && lat10="$p50/$p99"
      if [ $((got * 1000)) -ge $((want * 999)) ]; then lossless=$rate; else break; fi
    done
    printf '%-17s %-5s %-22s %-24s %-24s\n' "$name" "1->$fan" "$lossless" "$lat1" "$lat10"
    kill "${pids[-1]}" 2>/dev/null || true; wait "${pids[-1]}" 2>/dev/null || true
    sleep 0.3
  done
  done
done
[ "${SMOOTH:-1}" = 0 ] || smooth_rows
