//! The login signature of an identity file, made with ring where ring has the algorithm.
//!
//! Every host of a run costs one signature with the user's key. russh signs with the
//! pure-Rust RSA and NIST-curve code, which on the build machine takes 3.3 ms for a
//! 3072-bit RSA key (ssh-keygen's default size) and 0.125 ms for an ECDSA P-256 key;
//! ring, already linked for the ciphers, takes 1.7 ms and a fraction of the ECDSA time.
//! At fleet scale the RSA signature was the largest share of the client's CPU per host.
//!
//! The signature is the one RFC 4252 §7 asks for, encoded as RFC 4253 §6.6 (RSA with the
//! SHA-2 hash the server named, RFC 8332) and RFC 5656 §3.1.2 (ECDSA) say. What ring
//! cannot sign (Ed25519, whose code is already fast, P-521, RSA with SHA-1) is signed by
//! russh as before.
use russh::keys::ssh_key::private::{EcdsaKeypair, KeypairData};
use russh::keys::{HashAlg, PrivateKey};
use std::sync::OnceLock;

/// An identity file's key as ring holds it, built once per key and kept with it.
pub(crate) enum RingKey {
    Rsa(ring::rsa::KeyPair),
    Ecdsa {
        pair: ring::signature::EcdsaKeyPair,
        /// The SSH name of the signature (`ecdsa-sha2-nistp256`).
        name: &'static str,
    },
}

impl std::fmt::Debug for RingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RingKey::Rsa(_) => "RingKey::Rsa",
            RingKey::Ecdsa { name, .. } => name,
        })
    }
}

impl RingKey {
    /// `key` for ring, when ring signs its algorithm and takes the key as it is; `None`
    /// otherwise (russh signs it then).
    pub(crate) fn of(key: &PrivateKey) -> Option<RingKey> {
        match key.key_data() {
            KeypairData::Rsa(pair) => {
                use rsa::pkcs8::EncodePrivateKey;
                let private = rsa::RsaPrivateKey::try_from(pair).ok()?;
                let der = private.to_pkcs8_der().ok()?;
                ring::rsa::KeyPair::from_pkcs8(der.as_bytes()).ok().map(RingKey::Rsa)
            }
            KeypairData::Ecdsa(pair) => {
                let (alg, name) = match pair {
                    EcdsaKeypair::NistP256 { .. } => {
                        (&ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING, "ecdsa-sha2-nistp256")
                    }
                    EcdsaKeypair::NistP384 { .. } => {
                        (&ring::signature::ECDSA_P384_SHA384_FIXED_SIGNING, "ecdsa-sha2-nistp384")
                    }
                    _ => return None,
                };
                let pair = ring::signature::EcdsaKeyPair::from_private_key_and_public_key(
                    alg,
                    pair.private_key_bytes(),
                    pair.public_key_bytes(),
                    &ring::rand::SystemRandom::new(),
                )
                .ok()?;
                Some(RingKey::Ecdsa { pair, name })
            }
            _ => None,
        }
    }

    /// Whether ring signs for this key with `hash` (the RSA hash the server takes; `None`
    /// for any other key type, or for RSA with SHA-1).
    pub(crate) fn signs(&self, hash: Option<HashAlg>) -> bool {
        match self {
            RingKey::Rsa(_) => matches!(hash, Some(HashAlg::Sha256 | HashAlg::Sha512)),
            RingKey::Ecdsa { .. } => true,
        }
    }

    /// The SSH signature blob (`string name, string signature`) of `data`; `None` when
    /// ring does not sign for this key with `hash`, or failed to.
    fn sign(&self, hash: Option<HashAlg>, data: &[u8]) -> Option<Vec<u8>> {
        let rng = ring::rand::SystemRandom::new();
        let (name, signature) = match self {
            RingKey::Rsa(pair) => {
                let (name, padding): (_, &'static dyn ring::signature::RsaEncoding) = match hash? {
                    HashAlg::Sha256 => ("rsa-sha2-256", &ring::signature::RSA_PKCS1_SHA256),
                    HashAlg::Sha512 => ("rsa-sha2-512", &ring::signature::RSA_PKCS1_SHA512),
                    _ => return None,
                };
                let mut signature = vec![0; pair.public().modulus_len()];
                pair.sign(padding, &rng, data, &mut signature).ok()?;
                (name, signature)
            }
            RingKey::Ecdsa { pair, name } => {
                // ring gives r and s as fixed-size big-endian halves; SSH sends them as
                // two mpints.
                let fixed = pair.sign(&rng, data).ok()?;
                let (r, s) = fixed.as_ref().split_at(fixed.as_ref().len() / 2);
                let mut pair_of_mpints = Vec::new();
                put_mpint(&mut pair_of_mpints, r);
                put_mpint(&mut pair_of_mpints, s);
                (*name, pair_of_mpints)
            }
        };
        let mut blob = Vec::new();
        put_string(&mut blob, name.as_bytes());
        put_string(&mut blob, &signature);
        Some(blob)
    }
}

/// A key file's key with its ring form, built the first time a login needs it.
#[derive(Debug)]
pub(crate) struct FileKey {
    pub(crate) key: std::sync::Arc<PrivateKey>,
    ring: OnceLock<Option<RingKey>>,
}

impl FileKey {
    pub(crate) fn new(key: std::sync::Arc<PrivateKey>) -> Self {
        FileKey {
            key,
            ring: OnceLock::new(),
        }
    }

    /// The ring form of the key, when ring signs for it with `hash`.
    pub(crate) fn ring(&self, hash: Option<HashAlg>) -> Option<&RingKey> {
        self.ring
            .get_or_init(|| RingKey::of(&self.key))
            .as_ref()
            .filter(|k| k.signs(hash))
    }
}

/// Signs a login's request with a [`RingKey`], for `authenticate_publickey_with`.
pub(crate) struct RingSigner<'a>(pub(crate) &'a RingKey);

/// Why a ring signature did not go out.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RingSignError {
    #[error("the connection closed while signing")]
    Send(#[from] russh::SendError),
    #[error("ring could not sign with it")]
    Sign,
}

impl russh::Signer for RingSigner<'_> {
    type Error = RingSignError;

    async fn auth_sign(
        &mut self,
        _key: &russh::keys::agent::AgentIdentity,
        hash_alg: Option<HashAlg>,
        mut to_sign: Vec<u8>,
    ) -> Result<Vec<u8>, Self::Error> {
        let blob = self.0.sign(hash_alg, &to_sign).ok_or(RingSignError::Sign)?;
        // The request goes out as what was signed followed by the signature (RFC 4252 §7).
        put_string(&mut to_sign, &blob);
        Ok(to_sign)
    }
}

fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// A non-negative integer given big-endian, as an SSH mpint: no leading zero bytes, and
/// one zero byte in front when the top bit is set (RFC 4251 §5).
fn put_mpint(out: &mut Vec<u8>, magnitude: &[u8]) {
    let digits = magnitude
        .iter()
        .position(|&b| b != 0)
        .and_then(|at| magnitude.get(at..))
        .unwrap_or_default();
    let mut value = Vec::with_capacity(digits.len() + 1);
    if digits.first().is_some_and(|b| b & 0x80 != 0) {
        value.push(0);
    }
    value.extend_from_slice(digits);
    put_string(out, &value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use russh::keys::signature::Verifier;
    use russh::keys::ssh_encoding::Decode;
    use russh::keys::ssh_key::Signature;

    /// A fixture key as a login loads it (these have a private scalar shorter than the
    /// curve, which the loader pads).
    fn key(name: &str) -> PrivateKey {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/keys")
            .join(name);
        crate::ssh::keys::load_private_key(&path).expect("a fixture key")
    }

    fn keygen(kind: &str, bits: &str) -> PrivateKey {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("id");
        let ok = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", kind, "-b", bits, "-N", "", "-f"])
            .arg(&path)
            .status()
            .expect("ssh-keygen runs")
            .success();
        assert!(ok, "ssh-keygen made a {kind} key");
        PrivateKey::read_openssh_file(&path).expect("the new key")
    }

    /// What ring signed, checked by the other implementation: the SSH blob decodes to a
    /// signature that russh's own verifier accepts for the key's public half, under the
    /// name the server asked for.
    fn assert_verifies(private: &PrivateKey, hash: Option<HashAlg>, name: &str) {
        let ring_key = RingKey::of(private).expect("ring takes the key");
        assert!(ring_key.signs(hash));
        let data = b"session id and userauth request".to_vec();
        let identity = private.public_key().clone().into();
        let signed = futures::executor::block_on(russh::Signer::auth_sign(
            &mut RingSigner(&ring_key),
            &identity,
            hash,
            data.clone(),
        ))
        .expect("ring signs");
        let mut rest = signed
            .strip_prefix(data.as_slice())
            .expect("what was signed comes first");
        let blob = Vec::<u8>::decode(&mut rest).expect("a string");
        assert!(rest.is_empty());
        let signature = Signature::decode(&mut blob.as_slice()).expect("an SSH signature");
        assert_eq!(signature.algorithm().as_str(), name);
        Verifier::verify(private.public_key(), &data, &signature).expect("the signature verifies");
        // One bit changed in what was signed: it does not.
        let mut other = data;
        other[0] ^= 1;
        assert!(Verifier::verify(private.public_key(), &other, &signature).is_err());
    }

    #[test]
    fn ecdsa_signatures_verify_under_the_keys_own_name() {
        assert_verifies(&key("short_p256"), None, "ecdsa-sha2-nistp256");
        assert_verifies(&key("short_p384"), None, "ecdsa-sha2-nistp384");
        // P-521: ring has no such curve; russh signs it.
        assert!(RingKey::of(&key("short_p521")).is_none());
    }

    #[test]
    fn rsa_signatures_use_the_hash_the_server_named_and_sha1_is_left_to_russh() {
        let private = keygen("rsa", "2048");
        assert_verifies(&private, Some(HashAlg::Sha256), "rsa-sha2-256");
        assert_verifies(&private, Some(HashAlg::Sha512), "rsa-sha2-512");
        let ring_key = RingKey::of(&private).expect("ring takes the key");
        assert!(!ring_key.signs(None), "ssh-rsa (SHA-1) stays with russh");
    }

    #[test]
    fn ed25519_is_left_to_russh() {
        assert!(RingKey::of(&keygen("ed25519", "256")).is_none());
    }

    #[test]
    fn mpints_drop_leading_zeros_and_keep_the_sign_bit_clear() {
        let mut out = Vec::new();
        put_mpint(&mut out, &[0, 0, 0x7f, 1]);
        put_mpint(&mut out, &[0x80, 0]);
        put_mpint(&mut out, &[0, 0]);
        assert_eq!(out, [0, 0, 0, 2, 0x7f, 1, 0, 0, 0, 3, 0, 0x80, 0, 0, 0, 0, 0]);
    }
}
