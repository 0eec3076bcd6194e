//! A real OpenSSH `sshd` on 127.0.0.1, configured like ESXi 8.0.2's (FIPS algorithm lists,
//! keyboard-interactive through PAM, a banner) with fake `esxcli`/`vsish` first on PATH
//! under busybox `sh`, answering from `samples/`. Started per test, killed on drop.
//!
//! The tests that use it are `#[ignore = "needs …"]`: a plain `cargo test` counts them as
//! ignored, `scripts/test.sh` runs them (`--include-ignored`) on a machine prepared by
//! `scripts/install-test-deps.sh` (sshd, busybox, the PAM test user and its password file),
//! and when it was not prepared they fail and say so rather than skip.
//!
//! Files by concern: `sshd` (the server), `fakes` (the fake ESXi commands it runs),
//! `keys` (ssh-keygen and the checked-in keys), `client` (the client side: ssh config,
//! known_hosts, the in-process collection's options and the binary's invocation).
use std::path::{Path, PathBuf};

// Headless Chromium for the HTML report's tests and benchmark.
#[allow(dead_code)]
pub mod chromium;
// The examples that share this module run no binary: none of it is used there.
#[allow(dead_code)]
pub mod client;
mod fakes;
mod keys;
// Each user takes what it needs of it.
#[allow(dead_code)]
pub mod measure;
// promtool's lint, for the binaries that check an exposition.
#[allow(dead_code)]
pub mod promtool;
mod sshd;
// govmomi's vSphere simulator, for the tests that read the fleet from vCenter.
#[allow(dead_code)]
pub mod vcsim;

pub use keys::*;
pub use sshd::*;

pub fn test_user() -> String {
    std::env::var("PVRDMA_TEST_USER").unwrap_or_else(|_| "pvrdmatest".into())
}

/// The test user's password: `PVRDMA_TEST_PASSWORD` when set, else the first line of the
/// file `scripts/install-test-deps.sh` generated it into (`PVRDMA_TEST_PASSWORD_FILE`,
/// by default /etc/pvrdma-doctor-test/password, readable by root and the user who ran the
/// script through sudo). No published default: a missing file fails the test, naming the fix.
#[allow(dead_code)] // unused by some of the binaries sharing this module
pub fn test_password() -> String {
    if let Ok(pw) = std::env::var("PVRDMA_TEST_PASSWORD") {
        return pw;
    }
    let file = std::env::var("PVRDMA_TEST_PASSWORD_FILE").unwrap_or_else(|_| "/etc/pvrdma-doctor-test/password".into());
    match std::fs::read_to_string(&file) {
        Ok(text) if !text.trim().is_empty() => text.lines().next().unwrap_or("").to_string(),
        Ok(_) => panic!("{file} is empty: run `sudo scripts/install-test-deps.sh` again"),
        Err(e) => panic!(
            "cannot read the test user's password from {file} ({e}): run `sudo scripts/install-test-deps.sh` (it generates it), and run the tests as root or as the user who ran it"
        ),
    }
}

#[allow(dead_code)] // unused by some of the binaries sharing this module
pub fn samples_host(scenario: &str, host: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(scenario)
        .join(host)
}

pub fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// One sshd whose fake `esxcli` and `vsish` print `flood_mib` MiB for every command, reached
/// as `hosts` ssh_config aliases (`flood000`, ...) with their keys in a known_hosts of `dir`:
/// the server, the ssh_config file and the alias names. For the flood benchmarks.
#[allow(dead_code)] // unused by some of the binaries sharing this module
pub fn flooding_aliases(dir: &Path, hosts: usize, flood_mib: usize) -> (Sshd, PathBuf, Vec<String>) {
    let key = keygen(dir, "id_test", "ecdsa");
    let mut o = SshdOptions::new(samples_host("healthy-cluster", "esx01"));
    o.authorized_keys.push(key.clone());
    o.flood = vec!["all".to_string()];
    o.flood_bytes = flood_mib * 1024 * 1024;
    let sshd = Sshd::start(o);
    let known_hosts = dir.join("known_hosts");
    let mut config = String::new();
    let mut kh = String::new();
    let mut targets = Vec::new();
    for i in 0..hosts {
        let name = format!("flood{i:03}");
        config.push_str(&format!(
            "Host {name}\n  HostName 127.0.0.1\n  Port {}\n  HostKeyAlias {name}\n",
            sshd.port
        ));
        kh.push_str(&format!("{name} {}\n", sshd.host_key_pub));
        targets.push(name);
    }
    config.push_str(&format!(
        "Host *\n  User {}\n  IdentityFile {}\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile {}/none\n",
        test_user(),
        key.display(),
        known_hosts.display(),
        dir.display()
    ));
    std::fs::write(&known_hosts, kh).expect("known_hosts");
    let ssh_config = dir.join("config");
    std::fs::write(&ssh_config, config).expect("ssh config");
    (sshd, ssh_config, targets)
}
