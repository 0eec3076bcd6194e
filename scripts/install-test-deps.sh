#!/bin/sh
# Installs what the real-sshd integration tests (tests/sshd/) need, and nothing else:
#   - OpenSSH's sshd (Debian's openssh-server), the server ESXi itself runs;
#   - busybox, because ESXi's login shell is busybox `sh` and the remote command lines
#     must work under it;
#   - tmux, whose 80-column terminal checks that the report fits the real terminal width
#     (tests/suite/tmux.rs);
#   - python3 and the ClusterShell package, the oracle for node sets
#     (tests/suite/nodeset_oracle.rs);
#   - a local test user whose login shell is busybox sh and whose password is checked by
#     PAM, so keyboard-interactive login goes through the same path as on ESXi.
# Idempotent: every step checks first. Must run as root (CI runs it before `cargo test`).
set -eu

TEST_USER=${PVRDMA_TEST_USER:-pvrdmatest}
# A throwaway password for a local account that only a loopback sshd started by the
# tests accepts logins on; the tests read the same default.
TEST_PASSWORD=${PVRDMA_TEST_PASSWORD:-pvrdma-test-pw}
SHELL_DIR=/usr/local/lib/pvrdma-doctor-test
# busybox picks the applet from argv[0]; a link named `sh` makes it the login shell and
# makes "not found" errors read `-sh: esxcli: not found`, exactly as on ESXi.
BUSYBOX_SH=$SHELL_DIR/sh

if [ "$(id -u)" != 0 ]; then
    echo "install-test-deps.sh: must run as root (it installs packages and creates the user $TEST_USER)" >&2
    exit 1
fi

missing=""
[ -x /usr/sbin/sshd ] || missing="$missing openssh-server"
command -v busybox >/dev/null 2>&1 || missing="$missing busybox"
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
if [ -n "$missing" ]; then
    echo "install-test-deps.sh: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086 # word splitting of the package list is intended
    apt-get install -y -qq --no-install-recommends $missing
fi

# --- ssh_config oracle (tests/suite/ssh_config_diff.rs) ---
# OpenSSH's client, whose `ssh -G` is the reference every generated ssh_config and
# command line is compared with (`getent` and `id` come with the base system).
if ! command -v ssh >/dev/null 2>&1; then
    echo "install-test-deps.sh: installing openssh-client"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends openssh-client
fi
# --- end ssh_config oracle ---

# sshd refuses to start without its privilege-separation directory; containers lack it.
mkdir -p /run/sshd
chmod 0755 /run/sshd

mkdir -p "$SHELL_DIR"
BUSYBOX=$(command -v busybox)
if [ "$(readlink "$BUSYBOX_SH" 2>/dev/null || true)" != "$BUSYBOX" ]; then
    ln -sfn "$BUSYBOX" "$BUSYBOX_SH"
fi
grep -qx "$BUSYBOX_SH" /etc/shells || echo "$BUSYBOX_SH" >> /etc/shells

if ! id "$TEST_USER" >/dev/null 2>&1; then
    useradd --create-home --shell "$BUSYBOX_SH" "$TEST_USER"
fi
if [ "$(getent passwd "$TEST_USER" | cut -d: -f7)" != "$BUSYBOX_SH" ]; then
    usermod --shell "$BUSYBOX_SH" "$TEST_USER"
fi
echo "$TEST_USER:$TEST_PASSWORD" | chpasswd

# --- Prometheus (tests/suite/prometheus.rs) -------------------------------------------------
# promtool (Debian package `prometheus`) lints the metrics and unit-tests the alerting
# rules; node_exporter (`prometheus-node-exporter`) reads the textfile; systemd-analyze
# (`systemd`) verifies the shipped units. The tests start
# node_exporter themselves on 127.0.0.1 and use no system service, so a policy-rc.d
# keeps the packages from starting theirs while installing.
prom_missing=""
[ -x /usr/bin/promtool ] || prom_missing="$prom_missing prometheus"
[ -x /usr/bin/prometheus-node-exporter ] || prom_missing="$prom_missing prometheus-node-exporter"
# systemd-analyze verifies the shipped service and timer (contrib/systemd).
command -v systemd-analyze >/dev/null 2>&1 || prom_missing="$prom_missing systemd"
if [ -n "$prom_missing" ]; then
    echo "install-test-deps.sh: installing$prom_missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    policy=/usr/sbin/policy-rc.d
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\n# no service starts during install-test-deps.sh\nexit 101\n' > "$policy"
        chmod 0755 "$policy"
        trap 'rm -f "$policy"' EXIT
    fi
    # shellcheck disable=SC2086 # word splitting of the package list is intended
    apt-get install -y -qq --no-install-recommends $prom_missing
fi
# --- end Prometheus --------------------------------------------------------------------

# --- monitoring plugin (--format nagios): Icinga 2's own parser and config validator ---
# tests/suite/nagios.rs runs `icinga2 console` (performance-data parser, no daemon), `icinga2
# daemon -C` and a short-lived daemon of its own, all with private temporary directories.
# icinga2-bin is the binary alone: no service is enabled or started.
if ! [ -x /usr/sbin/icinga2 ]; then
    echo "install-test-deps.sh: installing icinga2-bin"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends icinga2-bin
fi
# --- end monitoring plugin ---

# --- Prometheus server (tests/suite/serve.rs) -------------------------------------------------
# The exporter tests start a real Prometheus server (/usr/bin/prometheus, Debian package
# `prometheus`, which also ships promtool) on 127.0.0.1 with their own configuration; no
# system service is used, so none is started while installing.
if [ ! -x /usr/bin/prometheus ] || [ ! -x /usr/bin/promtool ]; then
    echo "install-test-deps.sh: installing prometheus (server and promtool)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    serve_policy=/usr/sbin/policy-rc.d
    if [ ! -e "$serve_policy" ]; then
        printf '#!/bin/sh\n# no service starts during install-test-deps.sh\nexit 101\n' > "$serve_policy"
        chmod 0755 "$serve_policy"
        apt-get install -y -qq --no-install-recommends prometheus
        rm -f "$serve_policy"
    else
        apt-get install -y -qq --no-install-recommends prometheus
    fi
fi
# --- end Prometheus server -------------------------------------------------------------
# --- Alertmanager (tests/suite/alerting.rs) ---------------------------------------------------
# The alerting tests start a real Alertmanager (Debian package `prometheus-alertmanager`)
# on 127.0.0.1 with their own configuration, fed by a real Prometheus with the shipped
# rules; no system service is used, so a policy-rc.d keeps the package from starting its
# own while installing.
if [ ! -x /usr/bin/prometheus-alertmanager ]; then
    echo "install-test-deps.sh: installing prometheus-alertmanager"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    am_policy=/usr/sbin/policy-rc.d
    if [ ! -e "$am_policy" ]; then
        printf '#!/bin/sh\n# no service starts during install-test-deps.sh\nexit 101\n' > "$am_policy"
        chmod 0755 "$am_policy"
        apt-get install -y -qq --no-install-recommends prometheus-alertmanager
        rm -f "$am_policy"
    else
        apt-get install -y -qq --no-install-recommends prometheus-alertmanager
    fi
fi
# --- end Alertmanager ---------------------------------------------------------------------
# --- ClusterShell: the oracle of tests/suite/nodeset_oracle.rs, which checks that node sets and
# groups are read exactly as ClusterShell's `nodeset` reads them. The PyPI package, pinned;
# Debian's system python refuses pip installs (externally-managed-environment) unless told.
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
    echo "install-test-deps.sh: installing python3 python3-pip"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3 python3-pip
fi
if ! python3 -c 'import ClusterShell' >/dev/null 2>&1; then
    echo "install-test-deps.sh: installing ClusterShell 1.10.1 from PyPI"
    python3 -m pip install --quiet ClusterShell==1.10.1 \
        || python3 -m pip install --quiet --break-system-packages ClusterShell==1.10.1
fi
# --- end ClusterShell

echo "install-test-deps.sh: ready (sshd: $(/usr/sbin/sshd -V 2>&1 | head -n1 || true); user $TEST_USER, shell $BUSYBOX_SH)"
