#!/bin/sh
# Measures, with the SHIPPED intervals (contrib/prometheus/prometheus.yml,
# pvrdma-doctor.rules.yml, contrib/alertmanager/alertmanager.yml, only ports and paths
# changed), what a real Prometheus and Alertmanager send for each fault a person would
# page on, in front of the demo's simulated hosts (`demo --serve --ssh-dir`) and the
# exporter as its own process (`serve --config`): a fallback injected into esx01 (time
# to firing and to the notification, and how many notifications), its mend (to the
# resolved notification), a second fault on the same host, esx01 going silent with its
# fault in place (to the PvrdmaHostNotRead notification; no resolved meanwhile), its
# return mended, and the exporter killed for 5.5 minutes and restarted while esx02 is
# broken and esx03 unreachable (to its notification; what else was sent). Faults come
# at a random moment of the scrape interval. Everything listens on 127.0.0.1; a round
# takes about 20 minutes. Usage: scripts/measure-alert-latency.sh [BINARY] [ROUNDS]
set -eu
BIN=${1:-target/debug/pvrdma-doctor}
ROUNDS=${2:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/pvrdma-alert-latency.XXXXXX)
PIDS=""
EPID=""
cleanup() { for p in $PIDS $EPID; do kill "$p" 2>/dev/null || true; done; rm -rf "$T"; }
trap cleanup EXIT INT TERM
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
api() { curl -s "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=$1"; }
rnd() { sleep "$(python3 -c 'import random; print(random.uniform(0, 30))')"; }
# The first notification since line $1 of the log that python expression $2 accepts (n:
# the notification): its time; waits for it.
first() {
    until t=$(python3 - "$T/notifications" "$1" "$2" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()[int(sys.argv[2]):]
for l in lines:
    t, body = l.split(" ", 1)
    n = json.loads(body)
    names = [(a["labels"].get("alertname"), a["status"]) for a in n["alerts"]]
    host = n["groupLabels"].get("host_name", "")
    if eval(sys.argv[3]):
        print(t); sys.exit(0)
sys.exit(1)
EOF
    ); do sleep 0.5; done
    echo "$t"
}
# How many notifications since line $1 python expression $2 accepts.
count() {
    python3 - "$T/notifications" "$1" "$2" <<'EOF'
import json, sys
n_ok = 0
for l in open(sys.argv[1]).read().splitlines()[int(sys.argv[2]):]:
    n = json.loads(l.split(" ", 1)[1])
    names = [(a["labels"].get("alertname"), a["status"]) for a in n["alerts"]]
    host = n["groupLabels"].get("host_name", "")
    n_ok += bool(eval(sys.argv[3]))
print(n_ok)
EOF
}
mark() { wc -l < "$T/notifications"; }
secs() { python3 -c "print('%.1f' % ($2 - $1))"; }

EXP=$(port); AM=$(port); PROM=$(port); HOOK=$(port)
cat > "$T/hook.py" <<EOF
import http.server, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers['Content-Length']))
        with open("$T/notifications", "a") as f:
            f.write("%.3f %s\n" % (time.time(), body.decode().replace("\n", " ")))
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", $HOOK), H).serve_forever()
EOF
touch "$T/notifications"
python3 "$T/hook.py" & PIDS="$PIDS $!"

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

start_exporter() {
    "$BIN" serve --config "$T/ssh/exporter.yml" --listen "127.0.0.1:$EXP" 2>>"$T/exp.log" & EPID=$!
}
SAMPLE="$ROOT/samples/esxi80-mixed-fleet"
break_esx01() {
    cp "$T/fleet/esx02/esxcli_network_firewall_ruleset_list.txt" "$T/fleet/esx01/"
    sed -i 's/Physical HCA available:1/Physical HCA available:0/' "$T/fleet/esx01/vsish_pvrdma_properties.txt"
}
mend_esx01() { rm -f "$T/fleet/esx01/host-error.json"; cp "$SAMPLE"/esx01/* "$T/fleet/esx01/"; }
ESX01_FIRING='host == "esx01" and n["status"] == "firing"'
ESX01_RESOLVED='host == "esx01" and n["status"] == "resolved"'

round=0
while [ "$round" -lt "$ROUNDS" ]; do
    round=$((round + 1))
    rm -rf "$T/fleet" "$T/ssh"; cp -r "$SAMPLE" "$T/fleet"
    "$BIN" demo --serve --ssh-dir "$T/ssh" --scenario "$T/fleet" 2>"$T/hosts.log" & HPID=$!
    PIDS="$PIDS $HPID"
    until [ -s "$T/ssh/exporter.yml" ]; do sleep 0.2; done
    start_exporter
    until api 'pvrdma_adapter_verdict{job="pvrdma",host_name="esx01",verdict="hca"} == 1' | grep -q esx01; do sleep 1; done

    # A fallback on esx01.
    rnd; m=$(mark); t0=$(now); break_esx01
    until api 'ALERTS{alertname="PvrdmaAdapterTcpFallback",host_name="esx01",alertstate="firing"}' | grep -q esx01; do sleep 0.5; done
    t1=$(now); t2=$(first "$m" "$ESX01_FIRING")
    sleep 30; pages=$(count "$m" "$ESX01_FIRING")
    # Mended.
    rnd; m=$(mark); t3=$(now); mend_esx01
    t4=$(first "$m" "$ESX01_RESOLVED")
    # A second fault on the same host.
    rnd; m=$(mark); t5=$(now); break_esx01
    t6=$(first "$m" "$ESX01_FIRING")
    # esx01 goes silent, its fault in place.
    rnd; m=$(mark); t7=$(now)
    rm -f "$T/fleet/esx01"/*; cp "$T/fleet/esx03/host-error.json" "$T/fleet/esx01/"
    t8=$(first "$m" "$ESX01_FIRING"' and ("PvrdmaHostNotRead", "firing") in names')
    false_resolved=$(count "$m" 'host == "esx01" and any(s == "resolved" for _, s in names)')
    # It answers again, mended.
    rnd; m=$(mark); t9=$(now); mend_esx01
    t10=$(first "$m" "$ESX01_RESOLVED")

    # The exporter killed for 5.5 minutes (past keep_firing_for and MetricsAbsent's 5m),
    # esx02 broken and esx03 unreachable as planted.
    rnd; m=$(mark); t11=$(now)
    kill -9 "$EPID"; wait "$EPID" 2>/dev/null || true
    t12=$(first "$m" 'n["status"] == "firing" and ("PvrdmaExporterDown", "firing") in names')
    sleep $((330 - ${t12%.*} + ${t11%.*}))
    down_pages=$(count "$m" '("PvrdmaExporterDown", "firing") in names')
    down_hosts=$(count "$m" 'host != ""')
    down_absent=$(count "$m" 'any(a == "PvrdmaMetricsAbsent" for a, _ in names)')
    m=$(mark); t13=$(now); start_exporter
    t14=$(first "$m" '("PvrdmaExporterDown", "resolved") in names')
    sleep 150
    back_hosts=$(count "$m" 'host != ""')
    back_all=$(count "$m" 'True')
    echo "round $round:"
    echo "  fallback: injection -> firing $(secs "$t0" "$t1") s, -> notification $(secs "$t0" "$t2") s ($pages notification(s) for esx01)"
    echo "  mended -> resolved notification $(secs "$t3" "$t4") s"
    echo "  second fault on esx01 -> notification $(secs "$t5" "$t6") s"
    echo "  esx01 silent, fault in place -> PvrdmaHostNotRead notification $(secs "$t7" "$t8") s ($false_resolved resolved meanwhile)"
    echo "  esx01 answers again, mended -> resolved notification $(secs "$t9" "$t10") s"
    echo "  exporter killed -> notification $(secs "$t11" "$t12") s; while down 5.5 min: $down_pages exporter page(s), $down_hosts host notification(s), $down_absent PvrdmaMetricsAbsent"
    echo "  exporter restarted -> its resolved notification $(secs "$t13" "$t14") s; 150 s after: $back_hosts host notification(s), $back_all in all"
    kill "$EPID" "$HPID" 2>/dev/null || true; wait "$EPID" "$HPID" 2>/dev/null || true
    # Let the alerts resolve before the next round.
    if [ "$round" -lt "$ROUNDS" ]; then sleep 240; fi
done
