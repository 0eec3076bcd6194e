#!/usr/bin/env python3
"""Makes the checked-in ECDSA fixture keys whose private scalar is short.

OpenSSH stores the ECDSA private scalar as an mpint, which drops leading zero bytes and
adds one when the top bit is set: a P-256 scalar below 2^247 takes 31 bytes or fewer
instead of 32 (one key in 512). ssh-key
0.7.0-rc.11 refuses those (RustCrypto/SSH#350), so pvrdma-doctor normalises the key
before decoding (src/ssh/keys.rs). This script loops `ssh-keygen` until each curve
yields a key whose stored scalar is shorter than the curve size, and writes it to
tests/fixtures/keys/short_<curve> (+ .pub). Run once; the keys are test-only.

Usage: scripts/gen-short-scalar-keys.py [OUT_DIR]
"""
import base64, os, struct, subprocess, sys, tempfile

SIZES = {256: 32, 384: 48, 521: 66}


def read_string(buf, off):
    (n,) = struct.unpack(">I", buf[off:off + 4])
    return buf[off + 4:off + 4 + n], off + 4 + n


def scalar_len(path):
    """Length in bytes of the private scalar's mpint as stored (sign byte included)."""
    text = open(path).read()
    body = "".join(l for l in text.splitlines() if not l.startswith("-----"))
    blob = base64.b64decode(body)
    magic = b"openssh-key-v1\0"
    assert blob.startswith(magic)
    off = len(magic)
    cipher, off = read_string(blob, off)
    assert cipher == b"none", "fixtures are unencrypted"
    _, off = read_string(blob, off)  # kdfname
    _, off = read_string(blob, off)  # kdfoptions
    off += 4  # number of keys (1)
    _, off = read_string(blob, off)  # public key
    priv, off = read_string(blob, off)
    p = 8  # two checkints
    _, p = read_string(priv, p)  # key type
    _, p = read_string(priv, p)  # curve
    _, p = read_string(priv, p)  # public point
    d, p = read_string(priv, p)
    return len(d)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "fixtures", "keys")
    os.makedirs(out, exist_ok=True)
    for bits, size in SIZES.items():
        # P-521: a 65-byte mpint happens one time in two, so ask for 64 bytes there.
        want = size - 2 if bits == 521 else size - 1
        with tempfile.TemporaryDirectory() as tmp:
            tries = 0
            while True:
                tries += 1
                key = os.path.join(tmp, "k%d" % tries)
                subprocess.run(["ssh-keygen", "-q", "-N", "", "-t", "ecdsa", "-b", str(bits),
                                "-C", "pvrdma-doctor short-scalar fixture P-%d" % bits, "-f", key],
                               check=True)
                n = scalar_len(key)
                if n <= want:
                    break
                os.remove(key)
                os.remove(key + ".pub")
            dest = os.path.join(out, "short_p%d" % bits)
            os.replace(key, dest)
            os.replace(key + ".pub", dest + ".pub")
            os.chmod(dest, 0o600)
            print("P-%d: %d-byte scalar after %d keys -> %s" % (bits, n, tries, dest))


if __name__ == "__main__":
    main()
