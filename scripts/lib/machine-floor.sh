# Sourced by the bench scripts: the machine's own timing floor.
#
# `floor SECONDS` prints how late a SCHED_FIFO thread wakes from a plain
# sleep at 60 Hz for SECONDS (cyclictest from rt-tests), as
# {"wakeup_latency_us":{"p50":…,"p99":…,"max":…}}. On a shared VM the host
# preempts virtual CPUs now and then for milliseconds; no thread in the guest
# can be more punctual than this, so a tool's tail is read against the floor
# measured in the same period. Prints "skipped: …" where it cannot measure.

if [ "$(id -u)" = 0 ] && ! command -v cyclictest >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rt-tests >/dev/null 2>&1 || true
fi

floor() { # seconds
  if ! command -v cyclictest >/dev/null; then
    echo "skipped: cyclictest (rt-tests) is not installed"
    return
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "skipped: cyclictest needs root for SCHED_FIFO"
    return
  fi
  cyclictest -m -p 50 -i 16667 -l "$(( $1 * 60 ))" -q -t1 -h 20000 2>/dev/null | awk '
    /^[0-9]+[ \t]/ { n[$1 + 0] += $2; total += $2 }
    /^# Max Latencies/ { max = $4 + 0 }
    END {
      for (us = 0; us <= 20000; us++) {
        c += n[us]
        if (p50 == "" && c >= 0.5 * total) p50 = us
        if (p99 == "" && c >= 0.99 * total) p99 = us
      }
      printf "{\"wakeup_latency_us\":{\"p50\":%d,\"p99\":%d,\"max\":%d}}\n", p50, p99, max
    }'
}
