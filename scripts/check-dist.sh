#!/usr/bin/env bash
# Builds dist/ (scripts/dist.sh) and checks it with the distributions' own tools:
#   - sha256sum -c SHA256SUMS; the archive's binary is static (`file`, `ldd`) and runs;
#   - lintian on the .deb (errors and warnings fail; each accepted warning is overridden
#     with its reason in packaging/deb/lintian-overrides); rpmlint on the .rpm (errors fail);
#   - the .deb installed for real into a throwaway root (dpkg --root, its maintainer
#     scripts run there) and the .rpm likewise (rpm --root): --version and demo run from
#     it, man renders its page, its bash completion loads and completes, systemd-analyze
#     verify passes on its units; removing the package leaves only the configuration file;
#   - both packages' changelogs (changelog.Debian.gz, rpm -q --changelog) carry CHANGELOG.md.
# Must run as root (dpkg and rpm install into the throwaway roots as root).
# SKIP_BUILD=1 checks an existing dist/.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
    echo "check-dist.sh: must run as root (dpkg --root and rpm --root install as root)" >&2
    exit 1
fi
[ "${SKIP_BUILD:-}" = 1 ] || bash scripts/dist.sh

fail() { echo "check-dist.sh: FAIL: $*" >&2; exit 1; }
ok() { echo "check-dist.sh: ok: $*"; }

version=$(cargo metadata --no-deps --format-version 1 \
    | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "pvrdma-doctor"))')
TARGET=x86_64-unknown-linux-musl
archive=dist/pvrdma-doctor-$version-$TARGET.tar.gz
deb=$(ls dist/pvrdma-doctor_"$version"-*_amd64.deb)
rpmf=$(ls dist/pvrdma-doctor-"$version"-*.x86_64.rpm)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- checksums and the archive ---
(cd dist && sha256sum -c --strict SHA256SUMS) || fail "sha256sum -c SHA256SUMS"
[ "$(wc -l < dist/SHA256SUMS)" = 3 ] || fail "SHA256SUMS does not list the archive, the .deb and the .rpm"
ok "sha256sum -c SHA256SUMS"
tar -C "$work" -xzf "$archive"
top=$work/pvrdma-doctor-$version-$TARGET
for f in pvrdma-doctor pvrdma-doctor.1 complete/pvrdma-doctor.bash complete/_pvrdma-doctor \
    complete/pvrdma-doctor.fish README.md LICENSE-MIT LICENSE-APACHE \
    contrib/systemd/pvrdma-doctor-exporter.service contrib/sysusers/pvrdma-doctor.conf \
    contrib/exporter/exporter.yml; do
    [ -f "$top/$f" ] || fail "the archive lacks $f"
done
what=$(file -b "$top/pvrdma-doctor")
case "$what" in
    *"statically linked"* | *"static-pie linked"*) ;;
    *) fail "the archive's binary is not static: $what" ;;
esac
# ldd says "statically linked" (static-pie) or "not a dynamic executable"; a library it
# would load shows as "name => path".
libs=$(ldd "$top/pvrdma-doctor" 2>&1 || true)
case "$libs" in
    *"=>"*) fail "ldd finds shared libraries in the archive's binary: $libs" ;;
esac
"$top/pvrdma-doctor" --version | grep -qx "pvrdma-doctor $version" || fail "--version of the archive's binary"
ok "archive: complete, its binary static ($what), runs"

# --- lintian and rpmlint ---
lintian --fail-on error,warning --display-info --info "$deb" || fail "lintian $deb"
ok "lintian: no error, no warning left unexplained"
rpmlint -r packaging/rpm/pvrdma-doctor.rpmlintrc "$rpmf" || fail "rpmlint $rpmf"
ok "rpmlint: no error"

# Checks one installed root: the binary, demo, man, bash completion, the units.
check_root() { # ROOT UNITDIR LABEL
    local root=$1 unitdir=$2 label=$3
    local bin=$root/usr/bin/pvrdma-doctor
    "$bin" --version | grep -qx "pvrdma-doctor $version" || fail "$label: --version"
    # demo: three simulated hosts on 127.0.0.1; exit 0 = came out as planted.
    "$bin" demo --no-progress >"$work/demo.out" 2>&1 || fail "$label: demo: $(cat "$work/demo.out")"
    grep -q "esx02" "$work/demo.out" || fail "$label: demo printed no host"
    local page
    page=$(find "$root/usr/share/man/man1" -name 'pvrdma-doctor.1*')
    MANWIDTH=80 man -l "$page" 2>"$work/man.err" | grep -q "pvrdma-doctor" || fail "$label: man -l $page"
    [ ! -s "$work/man.err" ] || fail "$label: man warns: $(cat "$work/man.err")"
    # The completion function completes a long option in bash, as bash-completion loads it.
    local got
    got=$(bash -c '
        source /usr/share/bash-completion/bash_completion
        source "$1/usr/share/bash-completion/completions/pvrdma-doctor"
        COMP_WORDS=(pvrdma-doctor --vers); COMP_CWORD=1; COMP_LINE="pvrdma-doctor --vers"; COMP_POINT=${#COMP_LINE}
        "$(complete -p pvrdma-doctor | sed -E "s/.*-F ([^ ]+).*/\1/")" pvrdma-doctor --vers pvrdma-doctor
        printf "%s\n" "${COMPREPLY[@]}"' bash "$root") || fail "$label: bash completion does not load"
    grep -qx -- "--version" <<<"$got" || fail "$label: bash completion of --vers gave: $got"
    [ -f "$root/usr/share/zsh/"*"/_pvrdma-doctor" ] || fail "$label: no zsh completion"
    [ -f "$root/usr/share/fish/vendor_completions.d/pvrdma-doctor.fish" ] || fail "$label: no fish completion"
    # The installed units are those in contrib/systemd (which the archive ships).
    local unit
    for unit in pvrdma-doctor-exporter.service pvrdma-doctor-textfile.service pvrdma-doctor-textfile.timer; do
        cmp -s "$root/$unitdir/$unit" "contrib/systemd/$unit" || fail "$label: $unit differs from contrib/systemd"
    done
    # systemd itself accepts the installed units. They start /usr/bin/pvrdma-doctor:
    # in a private mount namespace, the root's /usr/bin is laid over the machine's.
    local said
    said=$(unshare --mount sh -c '
        mount -t overlay overlay -o "lowerdir=$1/usr/bin:/usr/bin" /usr/bin || exit 99
        shift
        systemd-analyze verify --man=no "$@" 2>&1' sh "$root" \
        "$root/$unitdir/pvrdma-doctor-exporter.service" \
        "$root/$unitdir/pvrdma-doctor-textfile.timer" \
        "$root/$unitdir/pvrdma-doctor-textfile.service") || fail "$label: systemd-analyze verify: $said"
    [ -z "$said" ] || fail "$label: systemd-analyze verify: $said"
    [ -f "$root/etc/pvrdma-doctor/exporter.yml" ] || fail "$label: no /etc/pvrdma-doctor/exporter.yml"
    [ -f "$root/usr/share/doc/pvrdma-doctor/contrib/exporter/exporter.yml" ] || fail "$label: no contrib/ under /usr/share/doc"
    ok "$label: --version, demo, man, bash completion, systemd-analyze verify"
}

# Files left in ROOT, but for the package managers' own databases and the user database.
# The account databases (and their lock) keep the system user: Debian leaves a package's
# system user in place on removal, so files it owns elsewhere keep a known owner.
leftovers() {
    (cd "$1" && find . -type f ! -path './var/lib/dpkg/*' ! -path './var/lib/rpm/*' ! -path './root/.rpmdb/*' \
        ! -path './usr/lib/sysimage/*' ! -path './var/log/*' \
        ! -regex '\./etc/\(passwd\|group\|shadow\|gshadow\)-?' ! -path './etc/.pwd.lock' | sort)
}

# --- the .deb, installed for real into a throwaway root ---
droot=$work/deb-root
mkdir -p "$droot/var/lib/dpkg/info" "$droot/var/lib/dpkg/updates" "$droot/etc"
: > "$droot/var/lib/dpkg/status"
: > "$droot/var/lib/dpkg/available"
# Its maintainer scripts run without chroot (the root has no shell), DPKG_ROOT set.
dpkg_root() { dpkg --root="$droot" --log=/dev/null --force-script-chrootless --force-depends "$@"; }
dpkg_root -i "$deb" || fail "dpkg --root -i $deb"
grep -q '^pvrdma-doctor:' "$droot/etc/passwd" || fail "deb: the postinst made no pvrdma-doctor user"
[ "$(dpkg-query --root="$droot" -W -f='${Conffiles}' pvrdma-doctor | awk 'NF {print $1}')" = /etc/pvrdma-doctor/exporter.yml ] \
    || fail "deb: exporter.yml is not the one conffile"
check_root "$droot" lib/systemd/system deb
dpkg_root -r pvrdma-doctor || fail "dpkg --root -r"
left=$(leftovers "$droot")
[ "$left" = ./etc/pvrdma-doctor/exporter.yml ] || fail "deb: removal left: $left"
dpkg_root -P pvrdma-doctor || fail "dpkg --root -P"
left=$(leftovers "$droot")
[ -z "$left" ] || fail "deb: purge left: $left"
ok "deb: installs, removal keeps only /etc/pvrdma-doctor/exporter.yml, purge removes it"

# --- the .rpm, installed for real into a throwaway root ---
# Its scriptlets need a shell inside the root, which a throwaway root has not: they are
# left out here (rpmlint reads them) and the system user is made as they would.
rroot=$work/rpm-root
mkdir -p "$rroot"
rpm --root "$rroot" --initdb
rpm --root "$rroot" -i --nodeps --noscripts "$rpmf" || fail "rpm --root -i $rpmf"
rpm --root "$rroot" -q --configfiles pvrdma-doctor | grep -qx /etc/pvrdma-doctor/exporter.yml \
    || fail "rpm: exporter.yml is not a configuration file"
rpm --root "$rroot" -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$rpmf" | grep -qx 'cn /etc/pvrdma-doctor/exporter.yml' \
    || fail "rpm: exporter.yml is not %config(noreplace)"
check_root "$rroot" usr/lib/systemd/system rpm
# An admin's edit survives removal, as %config(noreplace) promises (an unedited one goes).
echo "# edited" >> "$rroot/etc/pvrdma-doctor/exporter.yml"
rpm --root "$rroot" -e --noscripts pvrdma-doctor || fail "rpm --root -e"
left=$(leftovers "$rroot")
[ "$left" = ./etc/pvrdma-doctor/exporter.yml.rpmsave ] || fail "rpm: removal left: $left"
ok "rpm: installs, removal keeps only the edited configuration (exporter.yml.rpmsave)"

# --- the changelogs: both packages carry CHANGELOG.md's newest entries ---
# The first entry of the newest section, as scripts/changelog.py words it (Markdown marks
# dropped), must be in the .deb's changelog.Debian.gz and the .rpm's %changelog.
first=$(python3 scripts/changelog.py rpm "$version" x 0 | sed -n '2{s/^- //;p;q}')
[ -n "$first" ] || fail "changelog.py gave no entry for $version"
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/pvrdma-doctor/changelog.Debian.gz | gzip -dc \
    | grep -qF -- "$first" || fail "deb: changelog.Debian.gz lacks CHANGELOG.md's entry: $first"
rpm -qp --changelog "$rpmf" | grep -qF -- "$first" || fail "rpm: rpm -q --changelog lacks CHANGELOG.md's entry: $first"
rpm -qpl "$rpmf" | grep -qx /usr/share/doc/pvrdma-doctor/CHANGELOG.md || fail "rpm: no /usr/share/doc/pvrdma-doctor/CHANGELOG.md"
ok "changelogs: the .deb and the .rpm carry CHANGELOG.md ($first)"

echo "check-dist.sh: all checks passed"
