#!/bin/sh
# Installs what the real-sshd integration tests (tests/sshd.rs) need, and nothing else:
#   - OpenSSH's sshd (Debian's openssh-server), the server ESXi itself runs;
#   - busybox, because ESXi's login shell is busybox `sh` and the remote command lines
#     must work under it;
#   - tmux, whose 80-column terminal checks that the report fits the real terminal width
#     (tests/tmux.rs);
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

# --- ssh_config oracle (tests/ssh_config_diff.rs) ---
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

echo "install-test-deps.sh: ready (sshd: $(/usr/sbin/sshd -V 2>&1 | head -n1 || true); user $TEST_USER, shell $BUSYBOX_SH)"
