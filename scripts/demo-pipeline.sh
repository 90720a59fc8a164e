#!/usr/bin/env bash
# The whole rig on loopback, from the bundled captures, no phone or suit:
#
#   pcap-replay wave-60hz.pcapng ─► mocopi-dump --vmc ──────────────┐ body
#   pcap-replay face-60fps.pcapng ◄─handshake─ ifm-handshake --vmc ─┤ face
#                                  (plays the phone after --trigger) │
#                        vmc-average --prefer face:Head ◄────────────┘
#                                  │ one VMC stream
#                        vmc-relay --dump --format json ─► what reached the end
#                                  │
#                        motion-stream serve ─► motion-stream dump (a DLP3D client)
#
#   pcap-replay livelink/face-60fps.pcapng ─► livelink-dump --vmc --subject ─► vmc-relay --dump
#                                  (Live Link Face, a leg of its own)
#
#   scripts/demo-pipeline.sh            build (release) and run, print a summary
#   scripts/demo-pipeline.sh --check    also fail unless the end has every body
#                                       bone, every blendshape and the counts
#   PROFILE=debug scripts/demo-pipeline.sh --check   reuse `cargo test`'s build
#   BIN_DIR=~/.cargo/bin scripts/demo-pipeline.sh    installed tools, no build
#                                       (or an unpacked release archive, /usr/bin)
#   PORT_BASE=47000 ...                 where the ten loopback ports start
#
# Everything listens on 127.0.0.1; the work files stay in a temp directory
# (kept, and named, when the check fails).
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
[ "${1:-}" = "--check" ] && check=1
tools=(mocopi-dump ifm-handshake vmc-average vmc-relay pcap-replay motion-stream livelink-dump)
if [ -n "${BIN_DIR:-}" ]; then
  # Installed tools (cargo install, a release archive, the .deb): no build.
  bin="$BIN_DIR"
  for t in "${tools[@]}"; do
    [ -x "$bin/$t" ] || { echo "demo-pipeline: no $t in BIN_DIR=$bin" >&2; exit 1; }
  done
else
  profile="${PROFILE:-release}"
  packages=()
  for t in "${tools[@]}"; do packages+=(-p "$t"); done
  if [ "$profile" = release ]; then
    cargo build -q --release "${packages[@]}"
  else
    cargo build -q "${packages[@]}"
  fi
  bin="$PWD/target/$profile"
fi

base="${PORT_BASE:-47100}"
mocopi=$((base)) phone=$((base + 1)) ifm=$((base + 2))
body=$((base + 3)) face=$((base + 4)) out=$((base + 5))
dlp_vmc=$((base + 6)) dlp_ws=$((base + 7))
ll=$((base + 8)) ll_out=$((base + 9))
host=127.0.0.1

work="$(mktemp -d "${TMPDIR:-/tmp}/demo-pipeline.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# Waits until a tool's log says it is listening (at most 10 s).
ready() { # LOG
  for _ in $(seq 100); do
    grep -q "listening on" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "demo-pipeline: $(basename "$1" .log) did not start:" >&2
  cat "$1" >&2
  exit 1
}

# The end of the line first, so nothing is sent into a closed port: a DLP3D
# server fed by the relay, and a client of it.
"$bin/motion-stream" serve -l "$host:$dlp_ws" --vmc "$host:$dlp_vmc" --format json \
  >"$work/serve.jsonl" 2>"$work/serve.log" &
serve_pid=$!; pids+=("$serve_pid")
ready "$work/serve.log"
"$bin/motion-stream" dump "ws://$host:$dlp_ws/api/v4/text_generate" --text demo --format json \
  >"$work/dlp3d.jsonl" 2>"$work/dlp3d.log" &
dlp_pid=$!; pids+=("$dlp_pid")

"$bin/vmc-relay" -l "$host:$out" --to "$host:$dlp_vmc" --dump --format json >"$work/end.jsonl" 2>"$work/relay.log" &
relay_pid=$!; pids+=("$relay_pid")
ready "$work/relay.log"

"$bin/vmc-average" -l "$host:$body" -l "$host:$face" \
  --source "body=$host:$body" --source "face=$host:$face" \
  --primary body --prefer face:Head --blends average \
  --to "$host:$out" --format json >"$work/average.jsonl" 2>"$work/average.log" &
average_pid=$!; pids+=("$average_pid")
ready "$work/average.log"

"$bin/mocopi-dump" -l "$host:$mocopi" --vmc "$host:$body" --format json \
  >"$work/mocopi.jsonl" 2>"$work/mocopi.log" &
mocopi_pid=$!; pids+=("$mocopi_pid")
ready "$work/mocopi.log"

# Live Link Face: its own leg, one subject of the two the capture holds.
"$bin/vmc-relay" -l "$host:$ll_out" --dump --format json >"$work/ll-end.jsonl" 2>"$work/ll-relay.log" &
ll_relay_pid=$!; pids+=("$ll_relay_pid")
ready "$work/ll-relay.log"
"$bin/livelink-dump" -l "$host:$ll" --vmc "$host:$ll_out" --subject "Zoe's iPhone" --format json \
  >"$work/livelink.jsonl" 2>"$work/livelink.log" &
ll_pid=$!; pids+=("$ll_pid")
ready "$work/livelink.log"
"$bin/pcap-replay" -q captures/livelink/face-60fps.pcapng --to "$host:$ll" \
  --format json >"$work/ll-replay.jsonl" &
ll_replay_pid=$!; pids+=("$ll_replay_pid")

# The replay plays the phone: it waits for ifm-handshake's start command on
# the phone port and answers to the port the command came from.
"$bin/pcap-replay" -q captures/ifacialmocap/face-60fps.pcapng \
  --trigger "$host:$phone" --to-port "$ifm" --format json >"$work/face-replay.jsonl" &
face_replay_pid=$!; pids+=("$face_replay_pid")
sleep 0.2

"$bin/ifm-handshake" "$host" --phone-port "$phone" -l "$host:$ifm" --vmc "$host:$face" \
  --format json >"$work/ifm.jsonl" 2>"$work/ifm.log" &
ifm_pid=$!; pids+=("$ifm_pid")

"$bin/pcap-replay" -q captures/mocopi/wave-60hz.pcapng --to "$host:$mocopi" \
  --format json >"$work/body-replay.jsonl"
wait "$face_replay_pid"
wait "$ll_replay_pid"

# Let the last frames through, then stop from the source end down, each with
# Ctrl-C so every tool prints its summary.
sleep 0.5
stop() { kill -INT "$1"; wait "$1" || { echo "demo-pipeline: a tool failed (exit $?)" >&2; exit 1; }; }
stop "$ifm_pid"
stop "$mocopi_pid"
stop "$ll_pid"
sleep 0.3
stop "$average_pid"
sleep 0.3
stop "$relay_pid"
stop "$ll_relay_pid"
# motion-stream ends the client's streams a second after its input stops.
wait "$dlp_pid" || { echo "demo-pipeline: motion-stream dump failed" >&2; cat "$work/dlp3d.log" >&2; exit 1; }
stop "$serve_pid"
trap - EXIT

set +e
python3 - "$work" "$check" <<'PY'
import json, math, sys
from collections import Counter, defaultdict

work, check = sys.argv[1], sys.argv[2] == "1"

def records(name):
    with open(f"{work}/{name}") as f:
        return [json.loads(line) for line in f if line.strip()]

def summary(name):
    return next(r for r in reversed(records(name)) if r["type"] == "summary")

end = records("end.jsonl")
mocopi, ifm = summary("mocopi.jsonl"), summary("ifm.jsonl")
average, relay = summary("average.jsonl"), summary("end.jsonl")
face_frames = [r for r in records("ifm.jsonl") if r["type"] == "ifm.frame"]

types = Counter(r["type"] for r in end)
bones = defaultdict(list)
blends = defaultdict(list)
for r in end:
    if r["type"] == "vmc.bone":
        bones[r["name"]].append(r)
    elif r["type"] == "vmc.blend":
        blends[r["name"]].append(r["value"])

print(f"mocopi-dump    {mocopi['frames']} frames decoded, {mocopi['vmc']['frames']} sent as VMC "
      f"({mocopi['vmc']['datagrams']} datagrams)")
print(f"ifm-handshake  {ifm['frames']} frames decoded, {ifm.get('vmc_datagrams')} VMC datagrams")
print(f"vmc-average    {average['frames_out']} mixed frames from "
      + ", ".join(f"{s['name']} {s['frames']}" for s in average["sources"]))
print(f"at the end     {types['vmc.time']} frames: {len(bones)} bones, {len(blends)} blendshapes, "
      f"{types['vmc.apply']} Apply, {types['vmc.root']} Root/Pos")
print(f"               bones: {', '.join(sorted(bones))}")
dlp = records("dlp3d.jsonl")
dlp_sum = dlp[-1]
motion_start = next((r for r in dlp if r["type"] == "dlp3d.motion_start"), {})
face_start = next((r for r in dlp if r["type"] == "dlp3d.face_start"), {})
print(f"DLP3D client   {dlp_sum['motion_frames']} motion frames ({len(motion_start.get('joints', []))} joints), "
      f"{dlp_sum['face_frames']} face frames ({len(face_start.get('blendshapes', []))} blendshapes), "
      f"{dlp_sum['audio_s']:.2f} s audio; streams complete: {dlp_sum['complete']}")

failures = []
def expect(ok, what):
    if not ok:
        failures.append(what)

body_bones = {
    "Hips", "Spine", "Chest", "UpperChest", "Neck", "Head",
    "LeftShoulder", "LeftUpperArm", "LeftLowerArm", "LeftHand",
    "RightShoulder", "RightUpperArm", "RightLowerArm", "RightHand",
    "LeftUpperLeg", "LeftLowerLeg", "LeftFoot", "LeftToes",
    "RightUpperLeg", "RightLowerLeg", "RightFoot", "RightToes",
}
expect(mocopi["frames"] == 240 and mocopi["vmc"]["frames"] == 240,
       "mocopi-dump sent all 240 frames of wave-60hz.pcapng")
expect(ifm["frames"] == 203, "ifm-handshake decoded all 203 frames of face-60fps.pcapng")
by_name = {s["name"]: s for s in average["sources"]}
expect(by_name["body"]["frames"] == 240 and by_name["face"]["frames"] == 203,
       "vmc-average received every body and face frame")
expect(body_bones <= set(bones), f"every body bone at the end (missing {body_bones - set(bones)})")
sent_names = {n for f in face_frames for n in f["blendshapes"]}
expect(len(sent_names) == 52 and set(blends) == sent_names,
       f"the 52 ARKit blendshapes at the end (got {len(blends)})")
# ~4 s of body at 60 Hz and ~3.4 s of face: a loaded machine may drop a few ticks.
expect(types["vmc.time"] >= 180, f">= 180 mixed frames at the end (got {types['vmc.time']})")
expect(types["vmc.apply"] >= 150, f">= 150 frames with blendshapes (got {types['vmc.apply']})")
# Values survive the mix: blendshapes are values the phone sent, / 100.
sent = defaultdict(set)
for f in face_frames:
    for n, v in f["blendshapes"].items():
        sent[n].add(round(min(max(v, 0.0), 1.0), 5))
stray = [(n, v) for n, vs in blends.items() for v in vs if round(v, 5) not in sent[n]]
expect(not stray, f"every blendshape value at the end was sent by the phone (stray: {stray[:3]})")
# The capture waves the left forearm 30° ± 25° about the body's forward axis.
angles = [math.degrees(2 * math.acos(min(1.0, abs(r["rot"][3])))) for r in bones["LeftLowerArm"]]
expect(angles and 4.0 <= min(angles) and max(angles) <= 56.0 and max(angles) - min(angles) > 40.0,
       f"LeftLowerArm waves between 5° and 55° (got {min(angles, default=0):.1f}–{max(angles, default=0):.1f}°)")
print(f"               LeftLowerArm {min(angles, default=0):.1f}°–{max(angles, default=0):.1f}°, "
      f"jawOpen {min(blends['jawOpen'], default=0):.2f}–{max(blends['jawOpen'], default=0):.2f}")

# ~4.5 s of mixed input at 30 fps, less the 0.5 s the server waits to learn names.
expect(dlp_sum["complete"] and dlp_sum["errors"] == 0, "the DLP3D client got whole, ordered streams")
expect(dlp_sum["motion_frames"] >= 100 and dlp_sum["face_frames"] == dlp_sum["motion_frames"],
       f">= 100 DLP3D motion frames with as many face frames (got {dlp_sum['motion_frames']}, {dlp_sum['face_frames']})")
expect(set(face_start.get("blendshapes", [])) == sent_names,
       "the DLP3D face start names the 52 ARKit blendshapes")
expect(abs(dlp_sum["audio_s"] - dlp_sum["motion_frames"] / 30) < 0.01, "audio as long as the motion")

# Live Link Face: every packet of the subject reaches the end as one frame of
# 52 blendshapes, with the values the phone sent.
ll, ll_end = summary("livelink.jsonl"), records("ll-end.jsonl")
ll_types = Counter(r["type"] for r in ll_end)
ll_sent = defaultdict(set)
for r in records("livelink.jsonl"):
    if r["type"] == "livelink.frame":
        for n, v in r["blendshapes"].items():
            ll_sent[n[0].lower() + n[1:]].add(v)
ll_vals = [(r["name"], r["value"]) for r in ll_end if r["type"] == "vmc.blend"]
print(f"livelink-dump  {ll['frames']} face frames, {ll['noface']} no-face, {ll['errors']} errors, "
      f"lost {ll['lost']}, duplicates {ll['duplicates']}; {ll['vmc']['frames']} sent as VMC; "
      f"at its end {ll_types['vmc.apply']} Apply, {len({n for n, _ in ll_vals})} blendshapes")
expect((ll["frames"], ll["noface"], ll["errors"], ll["lost"], ll["duplicates"]) == (268, 30, 1, 3, 1),
       "livelink-dump counted the capture's frames, no-face packets, error, gap and duplicate")
expect(ll["vmc"]["frames"] == 238 and ll_types["vmc.apply"] == 238,
       f"every packet of Zoe's iPhone reached the end as a frame (got {ll_types['vmc.apply']})")
ll_stray = [(n, v) for n, v in ll_vals if v not in ll_sent[n]]
expect(len({n for n, _ in ll_vals}) == 52 and not ll_stray,
       f"the 52 blendshapes at the end are the phone's values (stray: {ll_stray[:3]})")

if failures:
    print(f"demo-pipeline: FAILED (work files in {work}):", file=sys.stderr)
    for f in failures:
        print(f"  - {f}", file=sys.stderr)
    sys.exit(1 if check else 0)
print("demo-pipeline: ok" + (" (checked)" if check else ""))
PY
status=$?
[ "$status" = 0 ] && rm -rf "$work"
exit "$status"
