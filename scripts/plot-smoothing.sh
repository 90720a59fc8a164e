#!/usr/bin/env bash
# Raw vs --smooth on a recorded capture, as a picture for docs/smoothing.md:
# captures/ifacialmocap/face-60fps.pcapng (a phone's recorded head and face
# values) played through `ifm-handshake --vmc` at its recorded timing, once
# as is and once with --smooth, each received by `vmc-relay --dump`; the head
# rotation angle and jawOpen of both runs are plotted to docs/smoothing.png.
#
#   scripts/plot-smoothing.sh [OUT.png]     needs python3 (matplotlib is pip-installed if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/smoothing.png}"
cargo build -q --release -p ifm-handshake -p vmc-relay
python3 -c "import matplotlib" 2>/dev/null || python3 -m pip install -q matplotlib
bin=target/release
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
port=${PORT:-47300}
run() { # label [flags...]
  local label=$1
  shift
  "$bin/vmc-relay" -l 127.0.0.1:$port --dump --format json --duration 5s >"$work/$label.jsonl" 2>/dev/null &
  local pid=$!
  sleep 0.5
  "$bin/ifm-handshake" -r captures/ifacialmocap/face-60fps.pcapng --vmc 127.0.0.1:$port -q "$@"
  wait "$pid"
}
run raw
run smooth --smooth
python3 - "$work" "$out" <<'PY'
import json, math, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

def series(path):
    head, jaw = [], []
    for line in open(path):
        r = json.loads(line)
        if r["type"] == "vmc.bone" and r["name"] == "Head":
            x, y, z, w = r["rot"]
            head.append(math.degrees(2 * math.atan2(math.sqrt(x * x + y * y + z * z), abs(w))))
        elif r["type"] == "vmc.blend" and r["name"] == "jawOpen":
            jaw.append(r["value"])
    return head, jaw

work, out = sys.argv[1], sys.argv[2]
(h0, j0), (h1, j1) = series(f"{work}/raw.jsonl"), series(f"{work}/smooth.jsonl")
fig, (a, b) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
a.plot(h0, color="#999999", lw=1, label="as sent")
a.plot(h1, color="#1f77b4", lw=1.6, label="--smooth (defaults)")
a.set_ylabel("head rotation (deg)")
a.legend(loc="upper right")
b.plot(j0, color="#999999", lw=1, label="as sent")
b.plot(j1, color="#d62728", lw=1.6, label="--smooth (defaults)")
b.set_ylabel("jawOpen")
b.set_xlabel("frame (60 fps)")
b.legend(loc="upper right")
fig.suptitle("face-60fps.pcapng through ifm-handshake --vmc, raw vs 1€ smoothed")
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"wrote {out}: {len(h0)} / {len(h1)} head samples, {len(j0)} / {len(j1)} jawOpen samples")
PY
