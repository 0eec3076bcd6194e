//! Client and host keys: fresh ones from ssh-keygen, and the checked-in ECDSA keys whose
//! private scalar is stored short.
use super::set_mode;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Generates an OpenSSH key pair with ssh-keygen; returns the private key path.
///
/// An ECDSA key whose private scalar is stored short (one P-256 key in 512, see
/// `src/ssh/keys.rs`) is thrown away and made again: tests that are not about that case
/// must not meet it by chance. The short case has its own checked-in fixtures
/// ([`short_scalar_key`]).
pub fn keygen(dir: &Path, name: &str, kind: &str) -> PathBuf {
    let bits = match kind {
        "rsa" => "2048",
        "ecdsa" => "256",
        _ => "",
    };
    keygen_sized(dir, name, kind, bits)
}

/// `keygen` with the key size given (`-b`; empty for the type's only size).
pub fn keygen_sized(dir: &Path, name: &str, kind: &str, bits: &str) -> PathBuf {
    let path = dir.join(name);
    let bits: &[&str] = if bits.is_empty() { &[] } else { &["-b", bits] };
    for _ in 0..64 {
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(path.with_extension("pub"));
        let st = Command::new("ssh-keygen")
            .args(["-q", "-N", "", "-t", kind])
            .args(bits)
            .arg("-f")
            .arg(&path)
            .status()
            .expect("run ssh-keygen");
        assert!(st.success(), "ssh-keygen failed");
        let text = std::fs::read_to_string(&path).expect("read the new key");
        match pvrdma_doctor::ssh::keys::ecdsa_scalar_len(&text) {
            Some((len, size)) if len < size => continue,
            _ => return path,
        }
    }
    panic!("ssh-keygen made 64 ECDSA keys in a row with a short scalar");
}

#[allow(dead_code)] // unused by some of the binaries sharing this module
/// A checked-in ECDSA key (`curve` 256, 384 or 521) whose private scalar is stored
/// shorter than the curve size, copied into `dir` with mode 0600 (ssh-add refuses
/// group-readable keys); returns the private key path, its `.pub` next to it.
pub fn short_scalar_key(dir: &Path, curve: u16) -> PathBuf {
    let name = format!("short_p{curve}");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/keys")
        .join(&name);
    let dest = dir.join(&name);
    std::fs::copy(&src, &dest).expect("copy fixture key");
    std::fs::copy(src.with_extension("pub"), dest.with_extension("pub")).expect("copy fixture public key");
    set_mode(&dest, 0o600);
    let text = std::fs::read_to_string(&dest).expect("read fixture");
    let (len, size) = pvrdma_doctor::ssh::keys::ecdsa_scalar_len(&text).expect("an unencrypted ECDSA key");
    assert!(len < size, "{name} must have a short scalar ({len} of {size} bytes)");
    dest
}
