//! The test set-up, `scripts/install-test-deps.sh`, opens no door on the machine it prepares:
//! no service of a package it installed is enabled for the next boot (their packages enable
//! them; policy-rc.d only kept them from starting), whatever sshd the system runs refuses
//! the test user, and the test user's password is readable by root and its group only.
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the set-up records the packages it installed, one a line.
const INSTALLED: &str = "/var/lib/pvrdma-doctor-test/installed-packages";
const FIX: &str = "run `sudo scripts/install-test-deps.sh`";

/// The systemd units (templates aside: never enabled by name) and init scripts `pkg` ships.
fn services_of(pkg: &str) -> Vec<String> {
    let out = Command::new("dpkg-query")
        .args(["-L", pkg])
        .output()
        .expect("dpkg-query");
    assert!(out.status.success(), "{pkg} is in {INSTALLED} but not installed: {FIX}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|path| {
            let unit = ["/lib/systemd/system/", "/usr/lib/systemd/system/"]
                .iter()
                .find_map(|dir| path.strip_prefix(dir))
                .is_some_and(|name| {
                    !name.contains(['/', '@']) && [".service", ".socket", ".timer"].iter().any(|e| name.ends_with(e))
                });
            let script = path
                .strip_prefix("/etc/init.d/")
                .is_some_and(|name| !name.contains('/'));
            unit || script
        })
        .map(str::to_string)
        .collect()
}

/// What starts `service` at boot: its links in a `.wants` or `.requires` folder of
/// /etc/systemd/system, or an init script's S links in the runlevels a boot enters.
fn enabled_by(service: &str) -> Vec<PathBuf> {
    let name = service.rsplit('/').next().unwrap();
    let mut links = Vec::new();
    if service.starts_with("/etc/init.d/") {
        for level in ["S", "2", "3", "4", "5"] {
            let Ok(dir) = std::fs::read_dir(format!("/etc/rc{level}.d")) else {
                continue;
            };
            for entry in dir.flatten() {
                let file = entry.file_name().to_string_lossy().into_owned();
                if file.starts_with('S') && file.get(3..) == Some(name) {
                    links.push(entry.path());
                }
            }
        }
        return links;
    }
    let Ok(dir) = std::fs::read_dir("/etc/systemd/system") else {
        return links;
    };
    for entry in dir.flatten() {
        let folder = entry.path();
        let wanted = folder.extension().is_some_and(|e| e == "wants" || e == "requires");
        if wanted && folder.join(name).symlink_metadata().is_ok() {
            links.push(folder.join(name));
        }
    }
    links
}

#[test]
#[ignore = "needs the test set-up (scripts/install-test-deps.sh): scripts/test.sh runs it"]
fn no_service_of_a_package_the_set_up_installed_is_enabled() {
    let record = std::fs::read_to_string(INSTALLED)
        .unwrap_or_else(|e| panic!("cannot read {INSTALLED} ({e}): {FIX}, which writes it"));
    let mut enabled = Vec::new();
    for pkg in record.lines().filter(|l| !l.trim().is_empty()) {
        for service in services_of(pkg) {
            for link in enabled_by(&service) {
                enabled.push(format!("{pkg}: {service} is enabled by {}", link.display()));
            }
        }
    }
    assert!(
        enabled.is_empty(),
        "services of packages the test set-up installed start at the next boot:\n{}",
        enabled.join("\n")
    );
}

#[test]
#[ignore = "needs the test set-up (scripts/install-test-deps.sh): scripts/test.sh runs it"]
fn the_system_sshd_refuses_the_test_user_and_its_password_is_not_world_readable() {
    let user = crate::support::test_user();
    // The configuration the system's sshd would run with, drop-ins included, as sshd reads it.
    let out = Command::new("/usr/sbin/sshd")
        .arg("-T")
        .output()
        .expect("/usr/sbin/sshd");
    let config = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sshd -T: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        config.lines().any(|l| l
            .strip_prefix("denyusers ")
            .is_some_and(|u| u.split(',').any(|u| u == user))),
        "the system's sshd lets {user} in: {FIX}\n{config}"
    );
    let file = std::env::var("PVRDMA_TEST_PASSWORD_FILE").unwrap_or_else(|_| "/etc/pvrdma-doctor-test/password".into());
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(Path::new(&file)).unwrap_or_else(|e| panic!("{file}: {e}: {FIX}"));
    assert_eq!(meta.uid(), 0, "{file} is not root's");
    assert_eq!(
        meta.mode() & 0o137,
        0,
        "{file} has mode {:o}: others may read it",
        meta.mode() & 0o777
    );
}
