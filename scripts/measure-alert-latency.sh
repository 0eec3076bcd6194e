#!/bin/sh
# Measures, with the SHIPPED intervals (contrib/prometheus/prometheus.yml,
# pvrdma-doctor.rules.yml, contrib/alertmanager/alertmanager.yml, only ports and paths
# changed), how long a real Prometheus and Alertmanager take from a fallback injected
# into `demo --serve`'s scenario folder to the alert firing and to the notification, and
# from the exporter killed to its notification. Everything listens on 127.0.0.1; takes
# about 3 minutes per round. Usage: scripts/measure-alert-latency.sh [BINARY] [ROUNDS]
set -eu
BIN=${1:-target/debug/pvrdma-doctor}
ROUNDS=${2:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/pvrdma-alert-latency.XXXXXX)
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null || true; done; rm -rf "$T"; }
trap cleanup EXIT INT TERM
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
api() { curl -s "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=$1"; }

EXP=$(port); AM=$(port); PROM=$(port); HOOK=$(port)
cat > "$T/hook.py" <<EOF
import http.server, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers['Content-Length']))
        with open("$T/notifications", "a") as f:
            f.write("%.3f %s\n" % (time.time(), body.decode()))
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", $HOOK), H).serve_forever()
EOF
python3 "$T/hook.py" & PIDS="$PIDS $!"
touch "$T/notifications"

sed -e "s#http://127.0.0.1:5001/#http://127.0.0.1:$HOOK/#" \
    "$ROOT/contrib/alertmanager/alertmanager.yml" > "$T/alertmanager.yml"
prometheus-alertmanager --config.file="$T/alertmanager.yml" --storage.path="$T/am" \
    --web.listen-address="127.0.0.1:$AM" --cluster.listen-address= 2>"$T/am.log" & PIDS="$PIDS $!"
cp "$ROOT/contrib/prometheus/pvrdma-doctor.rules.yml" "$T/rules.yml"
sed -e "s#/etc/prometheus/pvrdma-doctor.rules.yml#$T/rules.yml#" \
    -e "s#127.0.0.1:9093#127.0.0.1:$AM#" -e "s#127.0.0.1:39155#127.0.0.1:$EXP#" \
    "$ROOT/contrib/prometheus/prometheus.yml" > "$T/prometheus.yml"
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$PROM" 2>"$T/prom.log" & PIDS="$PIDS $!"

round=0
while [ "$round" -lt "$ROUNDS" ]; do
    round=$((round + 1))
    rm -rf "$T/fleet"; cp -r "$ROOT/samples/esxi80-mixed-fleet" "$T/fleet"
    "$BIN" demo --serve --scenario "$T/fleet" --listen "127.0.0.1:$EXP" 2>"$T/exp.log" & EPID=$!
    PIDS="$PIDS $EPID"
    until api 'pvrdma_adapter_verdict{job="pvrdma",host_name="esx01",verdict="hca"} == 1' | grep -q esx01; do sleep 1; done
    # A random moment within the scrape interval, as a real fault would come.
    sleep "$(python3 -c 'import random; print(random.uniform(0, 30))')"
    : > "$T/notifications"
    t0=$(now)
    cp "$T/fleet/esx02/esxcli_network_firewall_ruleset_list.txt" "$T/fleet/esx01/"
    sed -i 's/Physical HCA available:1/Physical HCA available:0/' "$T/fleet/esx01/vsish_pvrdma_properties.txt"
    until api 'ALERTS{alertname="PvrdmaAdapterTcpFallback",host_name="esx01",alertstate="firing"}' | grep -q esx01; do sleep 0.5; done
    t1=$(now)
    # Firing notifications only (a resolved one of the previous round may arrive now).
    until grep '"host_name":"esx01"' "$T/notifications" | grep -q '"status":"firing"'; do sleep 0.5; done
    t2=$(grep '"host_name":"esx01"' "$T/notifications" | grep '"status":"firing"' | head -n1 | cut -d' ' -f1)
    pages=$(grep '"host_name":"esx01"' "$T/notifications" | grep -c '"status":"firing"')
    sleep "$(python3 -c 'import random; print(random.uniform(0, 30))')"
    : > "$T/notifications"
    t3=$(now)
    kill "$EPID"; wait "$EPID" 2>/dev/null || true
    until grep 'PvrdmaExporterDown' "$T/notifications" | grep -q '"status":"firing"'; do sleep 0.5; done
    t4=$(grep 'PvrdmaExporterDown' "$T/notifications" | grep '"status":"firing"' | head -n1 | cut -d' ' -f1)
    python3 -c "print('round $round: injection -> firing %.1f s, -> notification %.1f s (%d notification(s) for esx01); exporter killed -> notification %.1f s' % ($t1-$t0, $t2-$t0, $pages, $t4-$t3))"
    # Let the exporter's alerts resolve before the next round.
    if [ "$round" -lt "$ROUNDS" ]; then sleep 150; fi
done
