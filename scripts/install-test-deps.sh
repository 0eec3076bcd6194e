#!/bin/sh
# Installs what the integration tests need, and nothing else. From Debian's archive:
#   - openssh-server: OpenSSH's sshd, the server ESXi itself runs, started by the tests on
#     127.0.0.1 with their own configuration (tests/sshd/). The system's own sshd service is
#     neither started nor enabled by this script (see "The door stays shut" below);
#   - openssh-client: `ssh -G`, the oracle for generated ssh_config (tests/suite/ssh_config_diff.rs);
#   - busybox, because ESXi's login shell is busybox `sh` and the remote command lines
#     must work under it;
#   - tmux, whose 80-column terminal checks that the report fits the real terminal width
#     (tests/suite/tmux.rs);
#   - prometheus (the server and promtool), prometheus-node-exporter and systemd
#     (systemd-analyze): the exporter, textfile and alerting-rule tests; no service of theirs
#     is started;
#   - icinga2-bin: Icinga 2's own parser and config validator for the monitoring plugin;
#   - python3 and python3-pip; and from PyPI the ClusterShell package, the oracle for node
#     sets (tests/suite/nodeset_oracle.rs).
# And it creates a local test user whose login shell is busybox sh and whose password is
# checked by PAM, so keyboard-interactive login goes through the same path as on ESXi.
#
# The door stays shut: the test user's password is generated here, at random, into a file
# only root (and the user who ran this through sudo) can read; the system's sshd, if any,
# is told to refuse the test user (a DenyUsers drop-in); and no package installed here
# starts a service or leaves one enabled for the next boot (the sshd, Prometheus,
# node_exporter, Alertmanager and Icinga 2 services their packages would enable are
# disabled again; a package that was there before is the admin's, left as it is).
# tests/suite/install_test_deps.rs checks all three.
#
# Idempotent: every step checks first; an existing password file is kept. Must run as root
# (CI runs it before `cargo test`). PVRDMA_TEST_USER and PVRDMA_TEST_PASSWORD_FILE override
# the user name and the password file (the tests read the same variables).
set -eu

TEST_USER=${PVRDMA_TEST_USER:-pvrdmatest}
PASSWORD_FILE=${PVRDMA_TEST_PASSWORD_FILE:-/etc/pvrdma-doctor-test/password}
SHELL_DIR=/usr/local/lib/pvrdma-doctor-test
# busybox picks the applet from argv[0]; a link named `sh` makes it the login shell and
# makes "not found" errors read `-sh: esxcli: not found`, exactly as on ESXi.
BUSYBOX_SH=$SHELL_DIR/sh

if [ "$(id -u)" != 0 ]; then
    echo "install-test-deps.sh: must run as root (it installs packages and creates the user $TEST_USER)" >&2
    exit 1
fi

# Debian's way of keeping a service from starting while its package is installed: while
# this policy-rc.d exists, invoke-rc.d starts nothing. Removed on exit if we made it.
POLICY=/usr/sbin/policy-rc.d
no_service_starts() {
    if [ ! -e "$POLICY" ]; then
        printf '#!/bin/sh\n# no service starts during install-test-deps.sh\nexit 101\n' > "$POLICY"
        chmod 0755 "$POLICY"
        trap 'rm -f "$POLICY"' EXIT
    fi
}

# The packages this script installed, one a line: their services stay disabled, on every
# run (tests/suite/install_test_deps.rs reads it). systemd is left out: its units are the
# system's own.
INSTALLED=/var/lib/pvrdma-doctor-test/installed-packages

# Installs the packages named, none of whose services starts, and records them.
apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    no_service_starts
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "$@"
    mkdir -p "$(dirname "$INSTALLED")"
    for pkg in "$@"; do
        [ "$pkg" = systemd ] && continue
        grep -qx "$pkg" "$INSTALLED" 2>/dev/null || echo "$pkg" >> "$INSTALLED"
    done
}

# The systemd units and init scripts a package ships (templates, `name@`, are never enabled
# by name).
services_of() {
    dpkg-query -L "$1" 2>/dev/null \
        | grep -E '^(/usr)?/lib/systemd/system/[^/@]+[.](service|socket|timer)$|^/etc/init[.]d/[^/]+$' || true
}

# policy-rc.d kept the services from starting, but their packages' postinst enabled them
# for the next boot (a symlink in /etc/systemd/system/*.wants, S links in /etc/rc?.d):
# disable them. systemctl does both without a running systemd; without it, the links
# go as `systemctl disable` removes them, and update-rc.d turns the S links into K links.
leave_services_disabled() {
    [ -f "$INSTALLED" ] || return 0
    while read -r pkg; do
        for file in $(services_of "$pkg"); do
            name=${file##*/}
            case $file in
                /etc/init.d/*) update-rc.d "$name" disable >/dev/null 2>&1 || true ;;
                *)
                    if command -v systemctl >/dev/null 2>&1; then
                        systemctl disable --quiet "$name" >/dev/null 2>&1 || true
                    else
                        find /etc/systemd/system -path "*.wants/$name" -type l -delete
                    fi
                    ;;
            esac
        done
    done < "$INSTALLED"
}

missing=""
sshd_was_installed=1
if [ ! -x /usr/sbin/sshd ]; then
    missing="$missing openssh-server"
    sshd_was_installed=""
fi
command -v busybox >/dev/null 2>&1 || missing="$missing busybox"
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
# openssl s_server: a TLS server on loopback with the certificate a test makes.
command -v openssl >/dev/null 2>&1 || missing="$missing openssl"
if [ -n "$missing" ]; then
    echo "install-test-deps.sh: installing$missing"
    # shellcheck disable=SC2086 # word splitting of the package list is intended
    apt_install $missing
fi

# --- The door stays shut: the system sshd --------------------------------------------------
# The tests start their own sshd; the system's must not come up because of them. When this
# script installed openssh-server, its services are left disabled (leave_services_disabled,
# at the end) and it is marked "not to be run", which both the systemd units and the init
# script of Debian's package honour. An openssh-server that was there before is the
# admin's: left as it is.
if [ -z "$sshd_was_installed" ]; then
    touch /etc/ssh/sshd_not_to_be_run
fi
# Whatever sshd the system runs (now or later), it refuses the test user: a drop-in in the
# directory Debian's /etc/ssh/sshd_config includes. The tests' own sshd reads only the
# configuration file they write, which includes nothing.
DENY=/etc/ssh/sshd_config.d/pvrdma-doctor-test-$TEST_USER.conf
if [ ! -f "$DENY" ] || ! grep -qx "DenyUsers $TEST_USER" "$DENY"; then
    mkdir -p /etc/ssh/sshd_config.d
    printf '# Written by pvrdma-doctor scripts/install-test-deps.sh: the test account\n# logs in only through the sshd its tests start on 127.0.0.1.\nDenyUsers %s\n' "$TEST_USER" > "$DENY"
    chmod 0644 "$DENY"
    # A running system sshd reads its configuration again on SIGHUP (systemd: reload).
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet ssh.service 2>/dev/null; then
        /usr/sbin/sshd -t && systemctl reload ssh.service || true
    fi
fi
# --- end the system sshd ---------------------------------------------------------------------

# --- ssh_config oracle (tests/suite/ssh_config_diff.rs) ---
# OpenSSH's client, whose `ssh -G` is the reference every generated ssh_config and
# command line is compared with (`getent` and `id` come with the base system).
if ! command -v ssh >/dev/null 2>&1; then
    echo "install-test-deps.sh: installing openssh-client"
    apt_install openssh-client
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
# The password: random, made once, in a file root owns. When this runs through sudo, the
# group of the file is the invoking user's primary group (mode 0640), so the tests that
# scripts/test.sh runs as that user can read it; nobody else can.
if [ ! -s "$PASSWORD_FILE" ]; then
    mkdir -p "$(dirname "$PASSWORD_FILE")"
    chmod 0755 "$(dirname "$PASSWORD_FILE")"
    (
        umask 077
        # 24 characters from [A-Za-z0-9]: about 143 bits.
        tr -dc 'A-Za-z0-9' < /dev/urandom | head -c 24 > "$PASSWORD_FILE.new"
        echo >> "$PASSWORD_FILE.new"
        mv "$PASSWORD_FILE.new" "$PASSWORD_FILE"
    )
fi
PW_GROUP=root
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ] && id "$SUDO_USER" >/dev/null 2>&1; then
    PW_GROUP=$(id -gn "$SUDO_USER")
fi
chown "root:$PW_GROUP" "$PASSWORD_FILE"
if [ "$PW_GROUP" = root ]; then chmod 0600 "$PASSWORD_FILE"; else chmod 0640 "$PASSWORD_FILE"; fi
printf '%s:%s\n' "$TEST_USER" "$(head -n1 "$PASSWORD_FILE")" | chpasswd

# --- Prometheus (tests/suite/prometheus.rs) -------------------------------------------------
# promtool (Debian package `prometheus`) lints the metrics and unit-tests the alerting
# rules; node_exporter (`prometheus-node-exporter`) reads the textfile; systemd-analyze
# (`systemd`) verifies the shipped units. The tests start
# node_exporter themselves on 127.0.0.1 and use no system service: theirs neither starts
# nor stays enabled.
prom_missing=""
[ -x /usr/bin/promtool ] || prom_missing="$prom_missing prometheus"
[ -x /usr/bin/prometheus-node-exporter ] || prom_missing="$prom_missing prometheus-node-exporter"
# systemd-analyze verifies the shipped service and timer (contrib/systemd).
command -v systemd-analyze >/dev/null 2>&1 || prom_missing="$prom_missing systemd"
if [ -n "$prom_missing" ]; then
    echo "install-test-deps.sh: installing$prom_missing"
    # shellcheck disable=SC2086 # word splitting of the package list is intended
    apt_install $prom_missing
fi
# --- end Prometheus --------------------------------------------------------------------

# --- monitoring plugin (--format nagios): Icinga 2's own parser and config validator ---
# tests/suite/nagios.rs runs `icinga2 console` (performance-data parser, no daemon), `icinga2
# daemon -C` and a short-lived daemon of its own, all with private temporary directories.
# icinga2-bin ships the icinga2 service too: it neither starts nor stays enabled.
if ! [ -x /usr/sbin/icinga2 ]; then
    echo "install-test-deps.sh: installing icinga2-bin"
    apt_install icinga2-bin
fi
# --- end monitoring plugin ---

# --- Prometheus server (tests/suite/serve.rs) -------------------------------------------------
# The exporter tests start a real Prometheus server (/usr/bin/prometheus, Debian package
# `prometheus`, which also ships promtool) on 127.0.0.1 with their own configuration; no
# system service is used: its own neither starts nor stays enabled.
if [ ! -x /usr/bin/prometheus ] || [ ! -x /usr/bin/promtool ]; then
    echo "install-test-deps.sh: installing prometheus (server and promtool)"
    apt_install prometheus
fi
# --- end Prometheus server -------------------------------------------------------------
# --- Alertmanager (tests/suite/alerting.rs) ---------------------------------------------------
# The alerting tests start a real Alertmanager (Debian package `prometheus-alertmanager`)
# on 127.0.0.1 with their own configuration, fed by a real Prometheus with the shipped
# rules; no system service is used: the package's own neither starts nor stays enabled.
if [ ! -x /usr/bin/prometheus-alertmanager ]; then
    echo "install-test-deps.sh: installing prometheus-alertmanager"
    apt_install prometheus-alertmanager
fi
# --- end Alertmanager ---------------------------------------------------------------------
# --- ClusterShell: the oracle of tests/suite/nodeset_oracle.rs, which checks that node sets and
# groups are read exactly as ClusterShell's `nodeset` reads them. The PyPI package, pinned;
# Debian's system python refuses pip installs (externally-managed-environment) unless told.
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
    echo "install-test-deps.sh: installing python3 python3-pip"
    apt_install python3 python3-pip
fi
if ! python3 -c 'import ClusterShell' >/dev/null 2>&1; then
    echo "install-test-deps.sh: installing ClusterShell 1.10.1 from PyPI"
    python3 -m pip install --quiet ClusterShell==1.10.1 \
        || python3 -m pip install --quiet --break-system-packages ClusterShell==1.10.1
fi
# --- end ClusterShell

# --- The vSphere simulator: govmomi's simulator package (the engine of VMware's vcsim), which
# tests/vcsim/main.go serves an inventory with for the vCenter client's tests. Debian ships its
# source; with the Go compiler it builds offline (tests/support/vcsim.rs builds it).
if ! command -v go >/dev/null 2>&1 || [ ! -d /usr/share/gocode/src/github.com/vmware/govmomi/simulator ]; then
    echo "install-test-deps.sh: installing golang-go golang-github-vmware-govmomi-dev"
    apt_install golang-go golang-github-vmware-govmomi-dev
fi
# --- end vSphere simulator
# --- The plans' real consumers (tests/suite/plan.rs, tests/suite/plan_apply.rs): Ansible with
# the community.vmware collection and pyVmomi, which apply `--format ansible` to the vSphere
# simulator, and tree-sitter's PowerShell grammar, which parses `--format powercli` (PowerShell
# itself is not installed). Pinned, from PyPI, into a virtualenv of the project's own; the
# system's Python is left as it is. Ansible 8.7.0 ships community.vmware 3.11.1; pyVmomi 7.0.3
# is the release that talks to govmomi 0.24's simulator.
PLAN_VENV=$SHELL_DIR/venv
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    echo "install-test-deps.sh: installing python3-venv"
    apt_install python3-venv
fi
if ! "$PLAN_VENV/bin/python" -c 'import ansible_collections.community.vmware, pyVmomi, tree_sitter, tree_sitter_powershell' >/dev/null 2>&1 \
    || [ "$("$PLAN_VENV/bin/python" -c 'import ansible_collections, importlib.metadata as m; print(m.version("ansible"), m.version("pyvmomi"))' 2>/dev/null)" != "8.7.0 7.0.3" ]; then
    echo "install-test-deps.sh: installing ansible 8.7.0, pyvmomi 7.0.3, tree-sitter and tree-sitter-powershell into $PLAN_VENV"
    python3 -m venv "$PLAN_VENV"
    "$PLAN_VENV/bin/python" -m pip install --quiet ansible==8.7.0 pyvmomi==7.0.3 tree-sitter==0.26.1 tree-sitter-powershell==0.26.4
fi
# --- end plans
leave_services_disabled

echo "install-test-deps.sh: ready (sshd: $(/usr/sbin/sshd -V 2>&1 | head -n1 || true); user $TEST_USER, shell $BUSYBOX_SH, password in $PASSWORD_FILE)"
