# The pvrdma-doctor system user, from the same declaration as
# /usr/lib/sysusers.d/pvrdma-doctor.conf (which this package installs).
if command -v systemd-sysusers >/dev/null 2>&1; then
    echo 'u pvrdma-doctor - "pvrdma-doctor exporter and textfile writer" /nonexistent /usr/sbin/nologin' \
        | systemd-sysusers --replace=/usr/lib/sysusers.d/pvrdma-doctor.conf -
elif ! getent passwd pvrdma-doctor >/dev/null; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin pvrdma-doctor
fi
