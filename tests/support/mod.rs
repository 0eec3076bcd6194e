//! A real OpenSSH `sshd` on 127.0.0.1, configured like ESXi 8.0.2's (FIPS algorithm lists,
//! keyboard-interactive through PAM, a banner) with fake `esxcli`/`vsish` first on PATH
//! under busybox `sh`, answering from `samples/`. Started per test, killed on drop.
//!
//! The machine must have been prepared by `scripts/install-test-deps.sh` (sshd, busybox,
//! the PAM test user); when it was not, tests fail and say so rather than skip.
//!
//! Files by concern: `sshd` (the server), `fakes` (the fake ESXi commands it runs),
//! `keys` (ssh-keygen and the checked-in keys), `client` (the client side: ssh config,
//! known_hosts, the in-process collection's options and the binary's invocation).
use std::path::{Path, PathBuf};

// The examples that share this module run no binary: none of it is used there.
#[allow(dead_code)]
pub mod client;
mod fakes;
mod keys;
mod sshd;

pub use keys::*;
pub use sshd::*;

pub fn test_user() -> String {
    std::env::var("PVRDMA_TEST_USER").unwrap_or_else(|_| "pvrdmatest".into())
}

#[allow(dead_code)] // unused by some of the binaries sharing this module
pub fn test_password() -> String {
    std::env::var("PVRDMA_TEST_PASSWORD").unwrap_or_else(|_| "pvrdma-test-pw".into())
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
