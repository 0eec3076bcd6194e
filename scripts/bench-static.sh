#!/usr/bin/env bash
# Size and start-up of the static (musl) release binary beside the glibc one, as quoted in
# docs/benchmarks.md ("Static binary"): the file size (stripped, as shipped) and the
# median wall time of RUNS runs (default 21) of `--version` and of `analyze` of a sample.
# Usage: scripts/bench-static.sh STATIC_BINARY GLIBC_BINARY [SCENARIO]
set -euo pipefail
cd "$(dirname "$0")/.."
static=$1 glibc=$2 scenario=${3:-samples/esxi80-mixed-fleet}
runs=${RUNS:-21}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$static" "$work/static"
cp "$glibc" "$work/glibc"
strip "$work/static" "$work/glibc"
python3 - "$work/static" "$work/glibc" "$scenario" "$runs" <<'PY'
import os, statistics, subprocess, sys, time
static, glibc, scenario, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def median_ms(cmd):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        # analyze exits 1 when the sample has a finding: a result, not a failure.
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
        assert r.returncode in (0, 1, 3), (cmd, r.returncode)
    return statistics.median(times)
rows = []
for name, b in (("static (musl)", static), ("glibc", glibc)):
    rows.append((name, os.path.getsize(b) / 1e6, median_ms([b, "--version"]),
                 median_ms([b, "analyze", scenario])))
print(f"| binary | size (MB, stripped) | `--version` median (ms) | `analyze {scenario}` median (ms) |")
print("|---|---|---|---|")
for name, size, v, a in rows:
    print(f"| {name} | {size:.1f} | {v:.1f} | {a:.1f} |")
s, g = rows
print(f"\nstatic/glibc: size {s[1]/g[1]:.2f}x, --version {s[2]/g[2]:.2f}x, analyze {s[3]/g[3]:.2f}x ({runs} runs each)")
PY
