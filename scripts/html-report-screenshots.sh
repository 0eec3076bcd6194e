#!/usr/bin/env bash
# Makes the two screenshots of the HTML report in docs/images/ again: the page of the
# healthy-cluster sample and of the esxi80-mixed-fleet sample, as Debian's headless
# Chromium (installed by scripts/install-test-deps.sh) draws them in a 1280-pixel-wide
# window. Each Chromium run has a fresh profile of its own, is bounded in time, and is
# given the flags that keep its own requests off the network.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for shot in healthy-cluster:1000 esxi80-mixed-fleet:1250; do
    sample=${shot%%:*}
    height=${shot##*:}
    # The exit code is the report's (1: the mixed fleet has problems); 2 is an error.
    rc=0
    ./target/debug/pvrdma-doctor analyze "samples/$sample" --format html --output "$work/$sample.html" || rc=$?
    [ "$rc" != 2 ] || exit 2
    timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$work/profile-$sample" --hide-scrollbars --force-device-scale-factor=1 \
        --window-size="1280,$height" --screenshot="docs/images/html-report-$sample.png" \
        "file://$work/$sample.html" 2>/dev/null
    echo "docs/images/html-report-$sample.png"
done
