use super::*;
use proptest::prelude::*;
use std::process::Command;

const CURVES: [(Curve, &str); 2] = [(Curve::P256, "256"), (Curve::P384, "384")];

#[test]
fn both_sides_of_an_exchange_reach_the_same_secret() {
    for (curve, _) in CURVES {
        let client = Ephemeral::generate(curve).unwrap();
        let server = Ephemeral::generate(curve).unwrap();
        let client_public = client.public().to_vec();
        assert_eq!(client_public.len(), 1 + 2 * curve.width(), "SEC1 uncompressed");
        assert_eq!(client_public[0], 4);
        let a = client.agree(server.public(), <[u8]>::to_vec).unwrap();
        let b = server.agree(&client_public, <[u8]>::to_vec).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), curve.width());
    }
}

#[test]
fn a_peer_point_off_the_curve_or_of_the_other_curve_is_refused() {
    for (curve, _) in CURVES {
        let peer = Ephemeral::generate(curve).unwrap();
        let mut off = peer.public().to_vec();
        *off.last_mut().unwrap() ^= 1;
        assert_eq!(
            Ephemeral::generate(curve).unwrap().agree(&off, |_| ()),
            Err(Unspecified)
        );
        let compressed = {
            let p = peer.public();
            let mut c = vec![2 + (p[p.len() - 1] & 1)];
            c.extend_from_slice(&p[1..1 + curve.width()]);
            c
        };
        assert_eq!(
            Ephemeral::generate(curve).unwrap().agree(&compressed, |_| ()),
            Err(Unspecified)
        );
        assert_eq!(Ephemeral::generate(curve).unwrap().agree(&[], |_| ()), Err(Unspecified));
    }
    let p384 = Ephemeral::generate(Curve::P384).unwrap();
    assert_eq!(
        Ephemeral::generate(Curve::P256).unwrap().agree(p384.public(), |_| ()),
        Err(Unspecified)
    );
}

/// An SSH string: a u32 length, then the bytes; returns it and what follows.
fn split_string(input: &[u8]) -> (&[u8], &[u8]) {
    let len = u32::from_be_bytes(input[..4].try_into().unwrap()) as usize;
    (&input[4..4 + len], &input[4 + len..])
}

fn push_string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    out.extend_from_slice(s);
}

/// A message signed by OpenSSH (`ssh-keygen -Y sign`, the SSHSIG format of OpenSSH's
/// PROTOCOL.sshsig): the key's point, the bytes that were signed, and the ECDSA blob.
struct OpensshSignature {
    point: Vec<u8>,
    signed: Vec<u8>,
    blob: Vec<u8>,
    /// The public key and the signature as SSH sends them (a host key blob and the
    /// `string algorithm, string blob` signature).
    key: Vec<u8>,
    signature: Vec<u8>,
}

fn openssh_sign(bits: &str, message: &[u8]) -> OpensshSignature {
    openssh_sign_with("ecdsa", bits, message)
}

fn openssh_sign_with(kind: &str, bits: &str, message: &[u8]) -> OpensshSignature {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", kind, "-N", "", "-f"])
        .arg(&key)
        .args(if bits.is_empty() { vec![] } else { vec!["-b", bits] })
        .status()
        .expect("ssh-keygen (openssh-client) is installed by scripts/install-test-deps.sh");
    assert!(ok.success());
    let data = dir.path().join("data");
    std::fs::write(&data, message).unwrap();
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", "file", "-f"])
        .arg(&key)
        .arg(&data)
        .status()
        .unwrap();
    assert!(ok.success());
    let armored = std::fs::read_to_string(dir.path().join("data.sig")).unwrap();
    let base64: String = armored.lines().filter(|l| !l.starts_with("-----")).collect();
    let decoded = Command::new("sh")
        .args(["-c", "printf %s \"$0\" | base64 -d", &base64])
        .output()
        .unwrap();
    assert!(decoded.status.success());
    let sshsig = decoded.stdout;

    assert_eq!(&sshsig[..6], b"SSHSIG");
    let rest = &sshsig[10..]; // magic, then a u32 version
    let (public_key, rest) = split_string(rest);
    let (namespace, rest) = split_string(rest);
    let (reserved, rest) = split_string(rest);
    let (hash_algorithm, rest) = split_string(rest);
    let (signature, _) = split_string(rest);
    assert_eq!(hash_algorithm, b"sha512");
    // An ECDSA key is `string algorithm, string curve, string Q`; other types carry no point.
    let point = match kind {
        "ecdsa" => {
            let (_, key_rest) = split_string(public_key);
            let (_, key_rest) = split_string(key_rest);
            split_string(key_rest).0
        }
        _ => &[],
    };
    let (_, sig_rest) = split_string(signature);
    let (blob, _) = split_string(sig_rest);

    let mut signed = b"SSHSIG".to_vec();
    push_string(&mut signed, namespace);
    push_string(&mut signed, reserved);
    push_string(&mut signed, hash_algorithm);
    push_string(
        &mut signed,
        ring::digest::digest(&ring::digest::SHA512, message).as_ref(),
    );
    OpensshSignature {
        point: point.to_vec(),
        signed,
        blob: blob.to_vec(),
        key: public_key.to_vec(),
        signature: signature.to_vec(),
    }
}

#[test]
fn signatures_made_by_openssh_verify_and_any_changed_bit_does_not() {
    for (curve, bits) in CURVES {
        // Several signatures, so that both an r or s with its high bit set (an mpint with a
        // sign byte) and one without are met.
        let mut sign_bytes = 0;
        for round in 0..10 {
            let message = format!("exchange hash {round} on {bits}");
            let sig = openssh_sign(bits, message.as_bytes());
            assert!(
                verify_ecdsa(curve, &sig.point, &sig.signed, &sig.blob),
                "{bits} round {round}"
            );
            sign_bytes += [&sig.blob[4..], &sig.blob[8 + sig.blob[3] as usize..]]
                .iter()
                .filter(|v| v[0] == 0)
                .count();

            let mut message = sig.signed.clone();
            message[7] ^= 0x10;
            assert!(!verify_ecdsa(curve, &sig.point, &message, &sig.blob));
            for at in [5, sig.blob.len() - 1] {
                let mut blob = sig.blob.clone();
                blob[at] ^= 0x01;
                assert!(!verify_ecdsa(curve, &sig.point, &sig.signed, &blob));
            }
            let mut point = sig.point.clone();
            *point.last_mut().unwrap() ^= 1;
            assert!(!verify_ecdsa(curve, &point, &sig.signed, &sig.blob));
            let mut trailing = sig.blob.clone();
            trailing.push(0);
            assert!(!verify_ecdsa(curve, &sig.point, &sig.signed, &trailing));
            let other = if curve == Curve::P256 { Curve::P384 } else { Curve::P256 };
            assert!(!verify_ecdsa(other, &sig.point, &sig.signed, &sig.blob));
        }
        assert!(sign_bytes > 0, "no signature with a sign byte met in 20 values");
    }
}

/// The P-256 group order n (FIPS 186-4, D.1.2.3).
const P256_ORDER: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xbc, 0xe6, 0xfa,
    0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
];

#[test]
fn r_or_s_of_zero_of_the_order_or_one_byte_too_wide_is_refused() {
    let sig = openssh_sign("256", b"exchange hash");
    let (r, rest) = split_string(&sig.blob);
    let (s, _) = split_string(rest);
    let blob = |r: &[u8], s: &[u8]| {
        let mut b = Vec::new();
        push_mpint(&mut b, r);
        push_mpint(&mut b, s);
        b
    };
    assert!(verify_ecdsa(Curve::P256, &sig.point, &sig.signed, &blob(r, s)));
    for (r2, s2) in [(&[][..], s), (r, &[][..]), (&P256_ORDER[..], s), (r, &P256_ORDER[..])] {
        assert!(!verify_ecdsa(Curve::P256, &sig.point, &sig.signed, &blob(r2, s2)));
    }
    // 33 bytes without a sign byte: wider than the field.
    let mut wide = Vec::new();
    push_string(&mut wide, &[&[0x01][..], &[0u8; 32][..]].concat());
    push_mpint(&mut wide, s);
    assert!(!verify_ecdsa(Curve::P256, &sig.point, &sig.signed, &wide));
}

/// A key blob with another point (`Q`) in it.
fn with_point(key: &[u8], point: &[u8]) -> Vec<u8> {
    let (algorithm, rest) = split_string(key);
    let (curve, _) = split_string(rest);
    let mut out = Vec::new();
    push_string(&mut out, algorithm);
    push_string(&mut out, curve);
    push_string(&mut out, point);
    out
}

#[test]
fn the_host_signature_is_checked_here_for_p256_and_p384_keys_and_left_to_the_caller_otherwise() {
    for (bits, other) in [("256", "ecdsa-sha2-nistp384"), ("384", "ecdsa-sha2-nistp256")] {
        let sig = openssh_sign(bits, b"exchange hash");
        assert_eq!(verify_host_signature(&sig.key, &sig.signature, &sig.signed), Some(true));
        let mut changed = sig.signed.clone();
        changed[0] ^= 1;
        assert_eq!(verify_host_signature(&sig.key, &sig.signature, &changed), Some(false));
        // The same blob presented as a signature of the other curve's algorithm.
        let mut relabelled = Vec::new();
        push_string(&mut relabelled, other.as_bytes());
        push_string(&mut relabelled, &sig.blob);
        assert_eq!(verify_host_signature(&sig.key, &relabelled, &sig.signed), Some(false));
        // A compressed point, or bytes after the key or the signature: the caller's to judge.
        let width = sig.point.len() / 2;
        let compressed = [&[2 + (sig.point[sig.point.len() - 1] & 1)][..], &sig.point[1..=width]].concat();
        assert_eq!(
            verify_host_signature(&with_point(&sig.key, &compressed), &sig.signature, &sig.signed),
            None
        );
        let trailing = [&sig.key[..], &[0][..]].concat();
        assert_eq!(verify_host_signature(&trailing, &sig.signature, &sig.signed), None);
        let trailing = [&sig.signature[..], &[0][..]].concat();
        assert_eq!(verify_host_signature(&sig.key, &trailing, &sig.signed), None);
    }
    // Keys ring does not take here: P-521, Ed25519, RSA.
    for (kind, bits) in [("ecdsa", "521"), ("ed25519", ""), ("rsa", "2048")] {
        let sig = openssh_sign_with(kind, bits, b"exchange hash");
        assert_eq!(
            verify_host_signature(&sig.key, &sig.signature, &sig.signed),
            None,
            "{kind} {bits}"
        );
    }
}

#[test]
fn an_mpint_is_read_as_rfc_4251_writes_it() {
    assert_eq!(positive_mpint(&[0, 0, 0, 0, 9]), Some((&[][..], &[9][..])));
    assert_eq!(positive_mpint(&[0, 0, 0, 1, 0x7f]), Some((&[0x7f][..], &[][..])));
    assert_eq!(positive_mpint(&[0, 0, 0, 2, 0, 0x80]), Some((&[0x80][..], &[][..])));
    // Negative, a needless leading zero, a zero written as one byte, too short.
    assert_eq!(positive_mpint(&[0, 0, 0, 1, 0x80]), None);
    assert_eq!(positive_mpint(&[0, 0, 0, 2, 0, 0x7f]), None);
    assert_eq!(positive_mpint(&[0, 0, 0, 1, 0]), None);
    assert_eq!(positive_mpint(&[0, 0, 0, 3, 1, 2]), None);
    assert_eq!(positive_mpint(&[0, 0, 0]), None);
    assert_eq!(positive_mpint(&[0xff, 0xff, 0xff, 0xff, 1]), None);
}

proptest! {
    #[test]
    fn no_bytes_panic_anywhere(
        bytes in proptest::collection::vec(any::<u8>(), 0..160),
        p384 in any::<bool>(),
    ) {
        let curve = if p384 { Curve::P384 } else { Curve::P256 };
        prop_assert!(!verify_ecdsa(curve, &bytes, b"message", &bytes));
        prop_assert_ne!(verify_host_signature(&bytes, &bytes, b"message"), Some(true));
        if Ephemeral::generate(curve).unwrap().agree(&bytes, |_| ()).is_ok() {
            prop_assert_eq!(bytes.len(), 1 + 2 * curve.width());
        }
    }

    #[test]
    fn well_framed_values_of_any_width_and_sign_never_panic_nor_verify(
        r in proptest::collection::vec(any::<u8>(), 0..60),
        s in proptest::collection::vec(any::<u8>(), 0..60),
        trailing in proptest::collection::vec(any::<u8>(), 0..3),
        p384 in any::<bool>(),
    ) {
        // Framed as SSH strings, so the values reach the mpint and width checks and the
        // arithmetic rather than stopping at a length.
        let curve = if p384 { Curve::P384 } else { Curve::P256 };
        let point = Ephemeral::generate(curve).unwrap().public().to_vec();
        let mut blob = Vec::new();
        push_string(&mut blob, &r);
        push_string(&mut blob, &s);
        blob.extend_from_slice(&trailing);
        prop_assert!(!verify_ecdsa(curve, &point, b"message", &blob));
    }

}

/// RFC 4251's mpint of a positive value: leading zero bytes dropped, one put back when the
/// high bit is set.
fn push_mpint(out: &mut Vec<u8>, value: &[u8]) {
    let value = &value[value.iter().take_while(|b| **b == 0).count()..];
    if value.first().is_some_and(|b| b & 0x80 != 0) {
        push_string(out, &[&[0][..], value].concat());
    } else {
        push_string(out, value);
    }
}

#[test]
fn an_r_or_s_shorter_than_the_field_is_padded_back() {
    // About one signature in 128 has an r or s whose first byte is zero; its mpint is then
    // shorter than the field and must be padded on the left, not refused.
    let rng = ring::rand::SystemRandom::new();
    for (curve, signing) in [
        (Curve::P256, &signature::ECDSA_P256_SHA256_FIXED_SIGNING),
        (Curve::P384, &signature::ECDSA_P384_SHA384_FIXED_SIGNING),
    ] {
        let pkcs8 = signature::EcdsaKeyPair::generate_pkcs8(signing, &rng).unwrap();
        let key = signature::EcdsaKeyPair::from_pkcs8(signing, pkcs8.as_ref(), &rng).unwrap();
        let point = signature::KeyPair::public_key(&key).as_ref().to_vec();
        let width = curve.width();
        let mut short = 0;
        for round in 0u32..4000 {
            let message = round.to_be_bytes();
            let fixed = key.sign(&rng, &message).unwrap();
            let (r, s) = fixed.as_ref().split_at(width);
            if r[0] != 0 && s[0] != 0 {
                continue;
            }
            let mut blob = Vec::new();
            push_mpint(&mut blob, r);
            push_mpint(&mut blob, s);
            assert!(blob.len() < 8 + 2 * width + 2);
            assert!(verify_ecdsa(curve, &point, &message, &blob), "{curve:?} round {round}");
            short += 1;
            if short == 3 {
                break;
            }
        }
        assert_eq!(short, 3, "{curve:?}: 4000 signatures and not three with a short r or s");
    }
}
