//! Loading private keys from disk as `ssh` does, every key OpenSSH writes included.
//!
//! OpenSSH stores an ECDSA private scalar as an `mpint`, which drops leading zero bytes and
//! adds a zero byte when the top bit is set: a P-256 scalar below 2^247 (one key in 512) is
//! written in 31 bytes or fewer, a P-384 one below 2^375 in 47, a P-521 one in 65 or fewer.
//! ssh-key 0.7.0-rc.11 (the newest release, used by russh) refuses an mpint shorter than 32
//! bytes ("length invalid"; RustCrypto/SSH issue #350, only P-521's case was fixed by PRs
//! #351/#356), which only P-256 keys meet in practice. OpenSSH accepts them all, so
//! before decoding, the scalar of an unencrypted OpenSSH-format ECDSA key is re-encoded at
//! the full curve size ([`normalise_openssh`]); nothing else in the key changes.
//!
//! Errors name the file and say what is really wrong: a passphrase is mentioned only when
//! the key has one.
use russh::keys::PrivateKey;
use std::path::{Path, PathBuf};

const OPENSSH_BEGIN: &str = "-----BEGIN OPENSSH PRIVATE KEY-----";
const OPENSSH_END: &str = "-----END OPENSSH PRIVATE KEY-----";
const MAGIC: &[u8] = b"openssh-key-v1\0";
/// Padding block of an unencrypted private section (cipher `none`).
const BLOCK: usize = 8;

/// Why a private key file cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyLoadError {
    #[error("{path}: cannot read the key file ({source})")]
    Unreadable { path: PathBuf, source: std::io::Error },
    #[error("{path} is passphrase-protected; load it into ssh-agent (`ssh-add {path}`) so pvrdma-doctor can use it")]
    Encrypted { path: PathBuf },
    #[error("{path} is not a private key pvrdma-doctor can read ({reason})")]
    Invalid { path: PathBuf, reason: String },
}

/// Reads and decodes the private key at `path` (no passphrase: encrypted keys are for
/// ssh-agent).
pub(crate) fn load_private_key(path: &Path) -> Result<PrivateKey, KeyLoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| KeyLoadError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    decode_private_key(&text).map_err(|e| match e {
        DecodeError::Encrypted => KeyLoadError::Encrypted {
            path: path.to_path_buf(),
        },
        DecodeError::Invalid(reason) => KeyLoadError::Invalid {
            path: path.to_path_buf(),
            reason,
        },
    })
}

#[derive(Debug, PartialEq, Eq)]
enum DecodeError {
    Encrypted,
    Invalid(String),
}

fn decode_private_key(text: &str) -> Result<PrivateKey, DecodeError> {
    if let Some(blob) = openssh_blob(text) {
        let blob = blob.map_err(DecodeError::Invalid)?;
        let layout = Layout::parse(&blob).map_err(DecodeError::Invalid)?;
        if layout.cipher != b"none" {
            return Err(DecodeError::Encrypted);
        }
        let blob = normalise_openssh(&blob).map_err(DecodeError::Invalid)?;
        return PrivateKey::from_bytes(&blob).map_err(|e| DecodeError::Invalid(e.to_string()));
    }
    // PEM (PKCS#1, SEC1, PKCS#8) and PuTTY keys: encoded at fixed sizes, russh reads them.
    russh::keys::decode_secret_key(text, None).map_err(|e| match e {
        russh::keys::Error::KeyIsEncrypted => DecodeError::Encrypted,
        other => DecodeError::Invalid(other.to_string()),
    })
}

/// The binary content of an OpenSSH-format key; `None` when the text is another format.
fn openssh_blob(text: &str) -> Option<Result<Vec<u8>, String>> {
    let start = text.find(OPENSSH_BEGIN)? + OPENSSH_BEGIN.len();
    let rest = text.get(start..)?;
    let end = rest.find(OPENSSH_END).unwrap_or(rest.len());
    let body: String = rest
        .get(..end)
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    Some(
        data_encoding::BASE64
            .decode(body.as_bytes())
            .map_err(|e| format!("bad base64 ({e})")),
    )
}

/// A cursor over SSH wire encoding (RFC 4251 §5).
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn u32(&mut self) -> Result<u32, String> {
        let b = self
            .buf
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| "truncated key".to_string())?;
        self.pos += 4;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        let end = self.pos.checked_add(n).ok_or_else(|| "truncated key".to_string())?;
        let s = self.buf.get(self.pos..end).ok_or_else(|| "truncated key".to_string())?;
        self.pos = end;
        Ok(s)
    }

    fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }
}

fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    out.extend_from_slice(s);
}

/// The outer structure of an `openssh-key-v1` blob (PROTOCOL.key).
struct Layout<'a> {
    cipher: &'a [u8],
    /// Everything from the cipher name up to the private section, kept verbatim.
    header: &'a [u8],
    private: &'a [u8],
}

impl<'a> Layout<'a> {
    fn parse(blob: &'a [u8]) -> Result<Self, String> {
        let body = blob.strip_prefix(MAGIC).ok_or("not an openssh-key-v1 key")?;
        let mut r = Reader { buf: body, pos: 0 };
        let cipher = r.string()?;
        r.string()?; // kdf name
        r.string()?; // kdf options
        let keys = r.u32()?;
        for _ in 0..keys {
            r.string()?; // public key
        }
        let header = body.get(..r.pos).unwrap_or_default();
        let private = r.string()?;
        Ok(Layout {
            cipher,
            header,
            private,
        })
    }
}

/// The scalar size of an ECDSA curve as named in the key.
fn curve_size(curve: &[u8]) -> Option<usize> {
    match curve {
        b"nistp256" => Some(32),
        b"nistp384" => Some(48),
        b"nistp521" => Some(66),
        _ => None,
    }
}

/// For an unencrypted OpenSSH-format ECDSA key: the length in bytes of the private scalar's
/// mpint as stored (sign byte included) and the curve's full size. `None` for other
/// keys. Tests use it to check their fixtures really have short scalars.
pub fn ecdsa_scalar_len(text: &str) -> Option<(usize, usize)> {
    let blob = openssh_blob(text)?.ok()?;
    let layout = Layout::parse(&blob).ok()?;
    if layout.cipher != b"none" {
        return None;
    }
    let key = EcdsaPrivate::parse(layout.private).ok()??;
    Some((key.scalar.len(), key.size))
}

fn strip_zeros(b: &[u8]) -> &[u8] {
    let first = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    b.get(first..).unwrap_or_default()
}

/// The fields of an unencrypted private section holding one ECDSA key.
struct EcdsaPrivate<'a> {
    check: &'a [u8],
    key_type: &'a [u8],
    curve: &'a [u8],
    point: &'a [u8],
    scalar: &'a [u8],
    size: usize,
    comment: &'a [u8],
}

impl<'a> EcdsaPrivate<'a> {
    /// `Ok(None)` when the section holds another key type.
    fn parse(private: &'a [u8]) -> Result<Option<Self>, String> {
        let mut r = Reader { buf: private, pos: 0 };
        r.u32()?;
        r.u32()?;
        let check = private.get(..8).unwrap_or_default();
        let key_type = r.string()?;
        if !key_type.starts_with(b"ecdsa-sha2-") {
            return Ok(None);
        }
        let curve = r.string()?;
        let Some(size) = curve_size(curve) else {
            return Ok(None);
        };
        let point = r.string()?;
        let scalar = r.string()?;
        let comment = r.string()?;
        // Only padding may follow; anything else (a second key) is left to the decoder.
        if r.rest().len() >= BLOCK {
            return Ok(None);
        }
        Ok(Some(EcdsaPrivate {
            check,
            key_type,
            curve,
            point,
            scalar,
            size,
            comment,
        }))
    }
}

/// Re-encodes the private scalar of an unencrypted OpenSSH ECDSA key at its curve's full
/// size (plus the mpint sign byte when the top bit is set), and redoes the padding. Any
/// other key, and a scalar longer than the curve, is returned unchanged for the decoder to
/// judge.
fn normalise_openssh(blob: &[u8]) -> Result<Vec<u8>, String> {
    let layout = Layout::parse(blob)?;
    if layout.cipher != b"none" {
        return Ok(blob.to_vec());
    }
    let Some(key) = EcdsaPrivate::parse(layout.private)? else {
        return Ok(blob.to_vec());
    };
    let value = strip_zeros(key.scalar);
    if value.len() > key.size || (value.len() == key.size && key.scalar.len() == value.len() + 1) {
        return Ok(blob.to_vec());
    }
    let mut scalar = vec![0u8; key.size - value.len()];
    scalar.extend_from_slice(value);
    if scalar.first().is_some_and(|b| b & 0x80 != 0) {
        scalar.insert(0, 0);
    }
    let mut private = Vec::with_capacity(layout.private.len() + key.size);
    private.extend_from_slice(key.check);
    put_string(&mut private, key.key_type);
    put_string(&mut private, key.curve);
    put_string(&mut private, key.point);
    put_string(&mut private, &scalar);
    put_string(&mut private, key.comment);
    let mut pad = 1u8;
    while private.len() % BLOCK != 0 {
        private.push(pad);
        pad += 1;
    }
    let mut out = Vec::with_capacity(blob.len() + key.size);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(layout.header);
    put_string(&mut out, &private);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use russh::keys::{Algorithm, EcdsaCurve};

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/keys")
            .join(name)
    }

    #[test]
    fn short_scalar_fixtures_load_on_every_curve_with_their_public_key() {
        for (name, curve, full) in [
            ("short_p256", EcdsaCurve::NistP256, 32),
            ("short_p384", EcdsaCurve::NistP384, 48),
            ("short_p521", EcdsaCurve::NistP521, 66),
        ] {
            let path = fixture(name);
            let text = std::fs::read_to_string(&path).unwrap();
            let (len, size) = ecdsa_scalar_len(&text).unwrap();
            assert_eq!(size, full);
            assert!(
                len < size,
                "{name}: the fixture must have a short scalar ({len} bytes stored)"
            );
            let key = load_private_key(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(key.algorithm(), Algorithm::Ecdsa { curve });
            let public = std::fs::read_to_string(path.with_extension("pub")).unwrap();
            let public = russh::keys::PublicKey::from_openssh(public.trim()).unwrap();
            assert_eq!(key.public_key().key_data(), public.key_data(), "{name}");
        }
    }

    #[test]
    fn the_unpatched_decoder_refuses_the_p256_fixture() {
        // What this module works around; when ssh-key accepts it, normalising is moot.
        let text = std::fs::read_to_string(fixture("short_p256")).unwrap();
        assert!(russh::keys::decode_secret_key(&text, None).is_err());
    }

    #[test]
    fn normalising_keeps_full_size_keys_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        for (kind, bits) in [("ecdsa", "256"), ("ecdsa", "521"), ("rsa", "2048"), ("ed25519", "256")] {
            let path = dir.path().join(format!("k_{kind}_{bits}"));
            let st = std::process::Command::new("ssh-keygen")
                .args(["-q", "-N", "", "-t", kind, "-b", bits, "-f"])
                .arg(&path)
                .status()
                .unwrap();
            assert!(st.success());
            let text = std::fs::read_to_string(&path).unwrap();
            let blob = openssh_blob(&text).unwrap().unwrap();
            let full = ecdsa_scalar_len(&text).is_none_or(|(len, size)| len >= size);
            if full {
                assert_eq!(normalise_openssh(&blob).unwrap(), blob, "{kind}");
            }
            assert!(load_private_key(&path).is_ok(), "{kind} {bits}");
        }
    }

    #[test]
    fn a_short_p256_scalar_is_padded_to_32_bytes() {
        let text = std::fs::read_to_string(fixture("short_p256")).unwrap();
        let blob = openssh_blob(&text).unwrap().unwrap();
        let fixed = normalise_openssh(&blob).unwrap();
        let layout = Layout::parse(&fixed).unwrap();
        assert_eq!(layout.private.len() % BLOCK, 0);
        let key = EcdsaPrivate::parse(layout.private).unwrap().unwrap();
        assert!(key.scalar.len() == 32 || (key.scalar.len() == 33 && key.scalar[0] == 0));
        let before = EcdsaPrivate::parse(Layout::parse(&blob).unwrap().private)
            .unwrap()
            .unwrap();
        assert_eq!(strip_zeros(key.scalar), strip_zeros(before.scalar));
        assert_eq!(key.comment, before.comment);
    }

    #[test]
    fn errors_name_the_file_and_mention_a_passphrase_only_when_there_is_one() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let e = load_private_key(&missing).unwrap_err();
        assert!(matches!(e, KeyLoadError::Unreadable { .. }));
        assert!(e.to_string().contains(&missing.display().to_string()), "{e}");

        let garbage = dir.path().join("garbage");
        std::fs::write(&garbage, "not a key\n").unwrap();
        let e = load_private_key(&garbage).unwrap_err().to_string();
        assert!(
            e.contains(&garbage.display().to_string()) && !e.contains("passphrase"),
            "{e}"
        );

        // A truncated OpenSSH key is invalid, not "encrypted".
        let text = std::fs::read_to_string(fixture("short_p256")).unwrap();
        let cut: String = text.lines().take(3).collect::<Vec<_>>().join("\n");
        let broken = dir.path().join("broken");
        std::fs::write(&broken, format!("{cut}\n{OPENSSH_END}\n")).unwrap();
        let e = load_private_key(&broken).unwrap_err().to_string();
        assert!(!e.contains("passphrase"), "{e}");

        let enc = dir.path().join("enc");
        let st = std::process::Command::new("ssh-keygen")
            .args(["-q", "-N", "correct horse", "-t", "ecdsa", "-f"])
            .arg(&enc)
            .status()
            .unwrap();
        assert!(st.success());
        let e = load_private_key(&enc).unwrap_err();
        assert!(matches!(e, KeyLoadError::Encrypted { .. }), "{e}");
        assert!(e.to_string().contains("passphrase") && e.to_string().contains("ssh-add"));
    }
}
