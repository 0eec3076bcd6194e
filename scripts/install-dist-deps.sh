#!/usr/bin/env bash
# Installs what scripts/dist.sh and scripts/check-dist.sh need, and nothing else:
#   - from Debian's archive (as root, through sudo when run as yourself): musl-tools (the
#     C compiler for the static binary's C parts), binutils (strip), file, lintian,
#     rpmlint, rpm (rpmbuild builds the .rpm from packaging/rpm/pvrdma-doctor.spec),
#     man-db (man), bash-completion and systemd (systemd-analyze);
#   - from rustup: the x86_64-unknown-linux-musl target of the toolchain in use;
#   - from crates.io (cargo install --locked, pinned): cargo-deb.
# No service is started: a policy-rc.d keeps the packages from starting any.
# Idempotent: every step checks first.
set -euo pipefail

CARGO_DEB_VERSION=3.8.0

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

missing=""
command -v musl-gcc >/dev/null 2>&1 || missing="$missing musl-tools"
command -v strip >/dev/null 2>&1 || missing="$missing binutils"
command -v file >/dev/null 2>&1 || missing="$missing file"
command -v lintian >/dev/null 2>&1 || missing="$missing lintian"
command -v rpmlint >/dev/null 2>&1 || missing="$missing rpmlint"
command -v rpmbuild >/dev/null 2>&1 || missing="$missing rpm"
command -v man >/dev/null 2>&1 || missing="$missing man-db"
[ -f /usr/share/bash-completion/bash_completion ] || missing="$missing bash-completion"
command -v systemd-analyze >/dev/null 2>&1 || missing="$missing systemd"
if [ -n "$missing" ]; then
    echo "install-dist-deps.sh: installing$missing"
    as_root sh -c '
        set -e
        export DEBIAN_FRONTEND=noninteractive
        policy=/usr/sbin/policy-rc.d
        if [ ! -e "$policy" ]; then
            printf "#!/bin/sh\n# no service starts during install-dist-deps.sh\nexit 101\n" > "$policy"
            chmod 0755 "$policy"
            trap "rm -f $policy" EXIT
        fi
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "$@"
    ' sh $missing
fi

if ! rustup target list --installed | grep -qx x86_64-unknown-linux-musl; then
    echo "install-dist-deps.sh: adding the rustup target x86_64-unknown-linux-musl"
    rustup target add x86_64-unknown-linux-musl
fi

installed=$(cargo install --list)
if ! grep -q "^cargo-deb v$CARGO_DEB_VERSION:" <<<"$installed"; then
    echo "install-dist-deps.sh: installing cargo-deb $CARGO_DEB_VERSION"
    cargo install --locked --version "$CARGO_DEB_VERSION" cargo-deb
fi
