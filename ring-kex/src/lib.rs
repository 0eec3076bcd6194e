//! The two elliptic-curve computations of an SSH key exchange with a FIPS-mode server such
//! as ESXi's (`ecdh-sha2-nistp256`/`-nistp384`, ECDSA host keys; RFC 5656), computed with
//! ring.
//!
//! russh computes them with portable arithmetic, and they were the largest share of the
//! client's own instructions per host: its key-exchange step took 59.3 M instructions for
//! 10 hosts, 17.3 M with ring's assembly (callgrind of `host_bench`, docs/benchmarks.md).
//! So the russh copy in `vendor/russh` calls [`Ephemeral`] and [`verify_host_signature`]
//! for those curves and keeps its own code for the others (P-521, curve25519, the DH
//! groups, RSA and Ed25519 host keys).
//!
//! Nothing here parses more than the host key and signature blobs, and every malformed
//! input is a refusal, never a panic.
use ring::agreement::{self, EphemeralPrivateKey, UnparsedPublicKey};
use ring::rand::SystemRandom;
use ring::signature;

/// The NIST curves ring computes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    P256,
    P384,
}

impl Curve {
    /// A field element's width in bytes: what r and s are padded to.
    fn width(self) -> usize {
        match self {
            Curve::P256 => 32,
            Curve::P384 => 48,
        }
    }

    fn agreement(self) -> &'static agreement::Algorithm {
        match self {
            Curve::P256 => &agreement::ECDH_P256,
            Curve::P384 => &agreement::ECDH_P384,
        }
    }

    /// RFC 5656 section 6.2.1: nistp256 signs with SHA-256, nistp384 with SHA-384.
    fn verification(self) -> &'static signature::EcdsaVerificationAlgorithm {
        match self {
            Curve::P256 => &signature::ECDSA_P256_SHA256_FIXED,
            Curve::P384 => &signature::ECDSA_P384_SHA384_FIXED,
        }
    }
}

/// One side's ephemeral ECDH key: made for one exchange, consumed by it.
pub struct Ephemeral {
    curve: Curve,
    secret: EphemeralPrivateKey,
    public: Vec<u8>,
}

impl std::fmt::Debug for Ephemeral {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ephemeral")
            .field("curve", &self.curve)
            .finish_non_exhaustive()
    }
}

/// The random source failed; there is no key to exchange with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unspecified;

impl std::fmt::Display for Unspecified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the elliptic-curve computation failed")
    }
}

impl std::error::Error for Unspecified {}

impl Ephemeral {
    pub fn generate(curve: Curve) -> Result<Ephemeral, Unspecified> {
        let secret = EphemeralPrivateKey::generate(curve.agreement(), &SystemRandom::new()).map_err(|_| Unspecified)?;
        let public = secret.compute_public_key().map_err(|_| Unspecified)?.as_ref().to_vec();
        Ok(Ephemeral { curve, secret, public })
    }

    /// The public point, SEC1 uncompressed: what `Q_C`/`Q_S` carry on the wire.
    pub fn public(&self) -> &[u8] {
        &self.public
    }

    /// The shared secret's x coordinate, handed to `keep`. A peer point that is not on the
    /// curve is refused, as RFC 5656 section 4 requires, and so is a compressed one (which
    /// OpenSSH never sends). ring does not zero its own copies of the secret; what `keep`
    /// keeps is the caller's to wipe (russh keeps it in a `CryptoVec`, zeroed on drop).
    pub fn agree<R>(self, peer: &[u8], keep: impl FnOnce(&[u8]) -> R) -> Result<R, Unspecified> {
        let peer = UnparsedPublicKey::new(self.curve.agreement(), peer);
        agreement::agree_ephemeral(self.secret, &peer, keep).map_err(|_| Unspecified)
    }
}

/// Checks the host's signature over the exchange hash in SSH wire format: `key` is the host
/// key blob (`string "ecdsa-sha2-nistp256", string "nistp256", string Q`, RFC 5656 section
/// 3.1) and `signature` the signature (`string algorithm, string blob`, section 3.1.2).
///
/// `None` when ring does not take this key (another type, P-521, a compressed point, a
/// malformed blob): the caller checks it as before. Otherwise whether it verifies; a
/// signature whose algorithm is not the key's does not.
pub fn verify_host_signature(key: &[u8], signature: &[u8], message: &[u8]) -> Option<bool> {
    let (algorithm, rest) = ssh_string(key)?;
    let (curve_name, rest) = ssh_string(rest)?;
    let (point, rest) = ssh_string(rest)?;
    let curve = match (algorithm, curve_name) {
        (b"ecdsa-sha2-nistp256", b"nistp256") => Curve::P256,
        (b"ecdsa-sha2-nistp384", b"nistp384") => Curve::P384,
        _ => return None,
    };
    if !rest.is_empty() || point.first() != Some(&4) {
        return None;
    }
    let (signed_with, rest) = ssh_string(signature)?;
    let (blob, rest) = ssh_string(rest)?;
    if !rest.is_empty() {
        return None;
    }
    Some(signed_with == algorithm && verify_ecdsa(curve, point, message, blob))
}

/// An SSH string (RFC 4251 section 5) and what follows it.
fn ssh_string(input: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = input.split_first_chunk::<4>()?;
    let len = usize::try_from(u32::from_be_bytes(*len)).ok()?;
    (rest.len() >= len).then(|| rest.split_at(len))
}

/// Checks an SSH ECDSA signature blob (`mpint r, mpint s`, RFC 5656 section 3.1.2) made by
/// the key whose SEC1 point is `point` over `message`. Any malformed blob, an r or s wider
/// than the curve, a negative one or trailing bytes is a refusal.
fn verify_ecdsa(curve: Curve, point: &[u8], message: &[u8], blob: &[u8]) -> bool {
    let width = curve.width();
    let mut fixed = [0u8; 96];
    let mut rest = blob;
    for half in 0..2 {
        let Some((value, after)) = positive_mpint(rest) else {
            return false;
        };
        if value.len() > width {
            return false;
        }
        let end = (half + 1) * width;
        let Some(slot) = fixed.get_mut(end - value.len()..end) else {
            return false;
        };
        slot.copy_from_slice(value);
        rest = after;
    }
    if !rest.is_empty() {
        return false;
    }
    let Some(fixed) = fixed.get(..2 * width) else {
        return false;
    };
    signature::UnparsedPublicKey::new(curve.verification(), point)
        .verify(message, fixed)
        .is_ok()
}

/// An SSH mpint (RFC 4251 section 5) that is zero or positive, without its sign byte, and
/// what follows it.
fn positive_mpint(input: &[u8]) -> Option<(&[u8], &[u8])> {
    let (value, rest) = ssh_string(input)?;
    match value {
        [] => Some((value, rest)),
        [first, ..] if first & 0x80 != 0 => None,
        // A leading zero is only there to keep the next byte's high bit from reading as a
        // sign; RFC 4251 forbids any other.
        [0, next, ..] if next & 0x80 != 0 => Some((&value[1..], rest)),
        [0, ..] => None,
        _ => Some((value, rest)),
    }
}

#[cfg(test)]
mod tests;
