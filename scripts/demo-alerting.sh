#!/bin/sh
# Pages from the demo, on this machine, without root: the demo's simulated ESXi hosts
# (`demo --serve --ssh-dir`), the exporter in front of them as its own process (`serve
# --config`, so it can be killed and restarted alone), Prometheus and Alertmanager with
# the shipped files (only paths and ports changed) and a receiver that prints each
# notification. Everything listens on 127.0.0.1 (Alertmanager's cluster port is off) and
# keeps its data in one temporary directory, removed on exit (Ctrl-C).
#
# Usage: scripts/demo-alerting.sh [BINARY]   (default target/debug/pvrdma-doctor)
# Ports: PROMETHEUS_PORT (9090), ALERTMANAGER_PORT (9093), EXPORTER_PORT (39155),
# RECEIVER_PORT (5001): the shipped files' own. Needs prometheus, prometheus-alertmanager
# (Debian packages) and python3.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/target/debug/pvrdma-doctor}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
PROM=${PROMETHEUS_PORT:-9090}
AM=${ALERTMANAGER_PORT:-9093}
EXP=${EXPORTER_PORT:-39155}
HOOK=${RECEIVER_PORT:-5001}
for tool in prometheus prometheus-alertmanager python3; do
    command -v "$tool" >/dev/null || { echo "demo-alerting: $tool is missing (Debian: apt install prometheus prometheus-alertmanager python3)" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "demo-alerting: $BIN is missing: cargo build first, or give the binary" >&2; exit 2; }
for p in "$PROM" "$AM" "$EXP" "$HOOK"; do
    if python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$p))!=0)"; then
        echo "demo-alerting: 127.0.0.1:$p is taken; pick others with PROMETHEUS_PORT, ALERTMANAGER_PORT, EXPORTER_PORT, RECEIVER_PORT" >&2
        exit 2
    fi
done

T=$(mktemp -d /tmp/pvrdma-demo-alerting.XXXXXX)
PIDS=""
cleanup() {
    for p in $PIDS $(cat "$T/exporter.pid" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# The hosts: the mixed fleet (esx01 on the HCA, esx02 falling back, esx03 unreachable),
# from a folder read again every second.
cp -r "$ROOT/samples/esxi80-mixed-fleet" "$T/fleet"
"$BIN" demo --serve --ssh-dir "$T/ssh" --scenario "$T/fleet" 2>"$T/hosts.log" & PIDS="$PIDS $!"
i=0
until [ -s "$T/ssh/exporter.yml" ]; do
    i=$((i + 1)); [ "$i" -lt 100 ] || { cat "$T/hosts.log" >&2; exit 1; }
    sleep 0.1
done

# The exporter, its own process.
cat > "$T/start-exporter" <<EOF
#!/bin/sh
"$BIN" serve --config "$T/ssh/exporter.yml" --listen 127.0.0.1:$EXP 2>>"$T/exporter.log" &
echo \$! > "$T/exporter.pid"
EOF
chmod +x "$T/start-exporter"
"$T/start-exporter"

# The receiver: one block per notification.
cat > "$T/receiver.py" <<EOF
import http.server, json, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        group = ", ".join("%s=%s" % kv for kv in sorted(n.get("groupLabels", {}).items())) or "(no host)"
        print("\n=== %s notification: %s [%s]" % (time.strftime("%H:%M:%S"), n["status"].upper(), group))
        for a in n["alerts"]:
            print("  - %s %s: %s" % (a["status"], a["labels"].get("alertname"), a["annotations"].get("summary", "")))
            print("    %s" % a["annotations"].get("description", ""))
            print("    runbook: %s" % a["annotations"].get("runbook_url", ""))
        print(flush=True)
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", $HOOK), H).serve_forever()
EOF
python3 "$T/receiver.py" & PIDS="$PIDS $!"

sed -e "s#http://127.0.0.1:5001/#http://127.0.0.1:$HOOK/#" \
    "$ROOT/contrib/alertmanager/alertmanager.yml" > "$T/alertmanager.yml"
prometheus-alertmanager --config.file="$T/alertmanager.yml" --storage.path="$T/am" \
    --web.listen-address="127.0.0.1:$AM" --cluster.listen-address= 2>"$T/alertmanager.log" & PIDS="$PIDS $!"
cp "$ROOT/contrib/prometheus/pvrdma-doctor.rules.yml" "$T/rules.yml"
sed -e "s#/etc/prometheus/pvrdma-doctor.rules.yml#$T/rules.yml#" \
    -e "s#127.0.0.1:9093#127.0.0.1:$AM#" -e "s#127.0.0.1:39155#127.0.0.1:$EXP#" \
    "$ROOT/contrib/prometheus/prometheus.yml" > "$T/prometheus.yml"
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$PROM" 2>"$T/prometheus.log" & PIDS="$PIDS $!"

cat <<EOF
pvrdma-doctor alerting demo: everything on 127.0.0.1, data in $T (removed on exit).
  Prometheus   http://127.0.0.1:$PROM/alerts     Alertmanager http://127.0.0.1:$AM/
  exporter     http://127.0.0.1:$EXP/            logs: $T/*.log
Within about 2 minutes: a page for esx02 (its firewall blocks PVRDMA: the check and the
fallback of its VM's adapter, one notification) and one for esx03 (not read: why).
Then try, in another terminal:
  break esx01:  cp $T/fleet/esx02/esxcli_network_firewall_ruleset_list.txt $T/fleet/esx01/
                sed -i 's/Physical HCA available:1/Physical HCA available:0/' $T/fleet/esx01/vsish_pvrdma_properties.txt
  mend it:      cp $ROOT/samples/esxi80-mixed-fleet/esx01/* $T/fleet/esx01/
  kill the exporter:   kill \$(cat $T/exporter.pid)      (one page: PvrdmaExporterDown)
  start it again:      $T/start-exporter                (no page again for what did not change)
Ctrl-C stops everything. Notifications:
EOF
wait
