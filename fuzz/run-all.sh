#!/usr/bin/env bash
# Runs the fuzz targets one after another, each for at most RUNS executions or SECONDS
# seconds, niced, with -s none (see fuzz/README.md). Logs (with libFuzzer's
# final stats: executions, new units, and any crash) go to $LOGS/<target>.log.
#   fuzz/run-all.sh [target...]       default: every target
set -uo pipefail
cd "$(dirname "$0")"
RUNS=${RUNS:-10000000}
SECONDS_PER_TARGET=${SECONDS_PER_TARGET:-0}
LOGS=${LOGS:-/tmp/fuzzlogs}
mkdir -p "$LOGS"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(vsish vm rdma vswitch ip_interface nic firewall advanced version vmx vmkping frames diagnosis)
for t in "${targets[@]}"; do
    max_len=4096
    [ "$t" = diagnosis ] && max_len=32768
    nice cargo +nightly fuzz run -s none "$t" -- -runs="$RUNS" -max_total_time="$SECONDS_PER_TARGET" \
        -max_len="$max_len" -print_final_stats=1 >"$LOGS/$t.log" 2>&1
    echo "$t: exit $? $(grep -E '^stat::number_of_executed_units' "$LOGS/$t.log")"
done
