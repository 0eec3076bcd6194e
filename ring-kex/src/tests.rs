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
fn ssh_string(input: &[u8]) -> (&[u8], &[u8]) {
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
}

fn openssh_sign(bits: &str, message: &[u8]) -> OpensshSignature {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ecdsa", "-b", bits, "-N", "", "-f"])
        .arg(&key)
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
    let (public_key, rest) = ssh_string(rest);
    let (namespace, rest) = ssh_string(rest);
    let (reserved, rest) = ssh_string(rest);
    let (hash_algorithm, rest) = ssh_string(rest);
    let (signature, _) = ssh_string(rest);
    assert_eq!(hash_algorithm, b"sha512");
    let (_, key_rest) = ssh_string(public_key);
    let (_, key_rest) = ssh_string(key_rest);
    let (point, _) = ssh_string(key_rest);
    let (_, sig_rest) = ssh_string(signature);
    let (blob, _) = ssh_string(sig_rest);

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
    }
}

#[test]
fn signatures_made_by_openssh_verify_and_any_changed_bit_does_not() {
    for (curve, bits) in CURVES {
        // Several signatures, so that both an r or s with its high bit set (an mpint with a
        // sign byte) and one without are met.
        let mut sign_bytes = 0;
        for round in 0..6 {
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
        assert!(sign_bytes > 0, "no signature with a sign byte met in 12 values");
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
    fn no_blob_or_point_panics(
        blob in proptest::collection::vec(any::<u8>(), 0..120),
        point in proptest::collection::vec(any::<u8>(), 0..100),
        p384 in any::<bool>(),
    ) {
        let curve = if p384 { Curve::P384 } else { Curve::P256 };
        prop_assert!(!verify_ecdsa(curve, &point, b"message", &blob));
        prop_assert!(Ephemeral::generate(curve).unwrap().agree(&point, |_| ()).is_err() || point.len() == 1 + 2 * curve.width());
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
