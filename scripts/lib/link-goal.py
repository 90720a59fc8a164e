"""Issue 58's loopback goals for mocap-link, as ratios against plain socat
forwarders measured in the same run (scripts/bench-link.sh): p99 added at
most 0.3 ms over the same chain of forwarders, and the busiest mocap-link
process at most twice one forwarder's CPU.

Usage: link-goal.py LINK_CASE SOCAT_CASE LINK_P99 SOCAT_P99 LINK_CPU SOCAT_CPU
"""

import sys

link, socat = sys.argv[1], sys.argv[2]
la, sa, lc, sc = map(float, sys.argv[3:7])
d = la - sa
r = lc / sc if sc > 0 else float("inf")
print(
    f"        {link} vs {socat}: p99 added {la:.3f} vs {sa:.3f} ms, +{d:.3f} ms "
    f"(goal <= +0.3: {'met' if d <= 0.3 else 'missed'}); busiest process {lc:.2f} % "
    f"vs a forwarder {sc:.2f} % of a core, x{r:.2f} (goal <= 2: {'met' if r <= 2 else 'missed'})"
)
