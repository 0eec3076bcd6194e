//! Host-key verification against OpenSSH known_hosts files, with OpenSSH's rules.
//!
//! A doctor that logs in as root on every hypervisor must not be the weak link: a changed
//! key is always fatal, an unknown key is fatal unless the admin asked for `--accept-new`.
//! russh's own known_hosts support reads one file, splits on single spaces and has no
//! wildcards, negation, `[host]:port` with patterns or `@revoked`, which real admin files
//! use; so the matching here is our own (hashed `|1|salt|hmac` entries included).
use data_encoding::BASE64;
use hmac::{Hmac, KeyInit, Mac};
use russh::keys::{Algorithm, HashAlg, PublicKey};
use sha1::Sha1;
use std::io::Write;
use std::path::{Path, PathBuf};

use pvrdma_ssh_config::wildcard_match;

/// Where a known_hosts line is, for messages that let the admin fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    path: PathBuf,
    line: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

/// What the known_hosts files say about a host's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostKeyStatus {
    /// A line for this host holds exactly this key.
    Known(Location),
    /// No line for this host holds a key of this algorithm.
    Unknown,
    /// A line for this host holds a different key of the same algorithm.
    Changed(Location),
    /// The key is marked `@revoked`.
    Revoked(Location),
}

struct Entry {
    revoked: bool,
    patterns: String,
    key: PublicKey,
    location: Location,
}

/// The name a host is recorded under: `host` on port 22, `[host]:port` otherwise.
pub(crate) fn host_key_name(host: &str, port: u16) -> String {
    if port == 22 {
        host.to_string()
    } else {
        format!("[{host}]:{port}")
    }
}

/// The known_hosts lines that can matter for one host, read once per connection: the
/// lines whose patterns match its name, and every `@revoked` line. The host pattern is
/// checked before the key is decoded, so a large fleet file costs one key parse per
/// relevant line, not per line.
#[derive(Default)]
pub(crate) struct HostEntries {
    name: String,
    entries: Vec<Entry>,
}

impl HostEntries {
    /// Reads `files` for `host`:`port`. Blocking file I/O: call it off the async runtime.
    pub(crate) fn load(files: &[PathBuf], host: &str, port: u16) -> HostEntries {
        let name = host_key_name(host, port);
        let mut entries = Vec::new();
        for path in files {
            read_entries(path, &name, &mut entries);
        }
        HostEntries { name, entries }
    }

    /// How many lines were kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }

    /// Judges `key`. A revoked key wins over everything; then an exact match; then a
    /// same-algorithm mismatch (changed key).
    pub(crate) fn check(&self, key: &PublicKey) -> HostKeyStatus {
        let mut changed = None;
        let mut known = None;
        for e in &self.entries {
            if e.revoked {
                if e.key.key_data() == key.key_data() {
                    return HostKeyStatus::Revoked(e.location.clone());
                }
                continue;
            }
            if !pattern_list_matches(&e.patterns, &self.name) {
                continue;
            }
            if e.key.key_data() == key.key_data() {
                known.get_or_insert(e.location.clone());
            } else if same_family(e.key.algorithm(), key.algorithm()) {
                changed.get_or_insert(e.location.clone());
            }
        }
        match (known, changed) {
            (Some(loc), _) => HostKeyStatus::Known(loc),
            (None, Some(loc)) => HostKeyStatus::Changed(loc),
            (None, None) => HostKeyStatus::Unknown,
        }
    }

    /// Key algorithms already recorded for the host.
    pub(crate) fn algorithms(&self) -> Vec<Algorithm> {
        let mut out: Vec<Algorithm> = Vec::new();
        for e in &self.entries {
            if !e.revoked && pattern_list_matches(&e.patterns, &self.name) {
                let a = e.key.algorithm();
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
        out
    }
}

/// Appends to `out` the lines of `path` that can matter for `name`.
fn read_entries(path: &Path, name: &str, out: &mut Vec<Entry>) {
    // A missing or unreadable file holds no keys, as for ssh.
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    for (idx, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let mut first = fields.next().unwrap_or("");
        let mut revoked = false;
        let mut cert_authority = false;
        if first == "@revoked" {
            revoked = true;
            first = fields.next().unwrap_or("");
        } else if first == "@cert-authority" {
            cert_authority = true;
            first = fields.next().unwrap_or("");
        }
        // Lines for other hosts are skipped before their key is decoded; CA lines are
        // not used for plain host keys.
        if cert_authority || (!revoked && !pattern_list_matches(first, name)) {
            continue;
        }
        let key_text: Vec<&str> = fields.collect();
        // A malformed key on someone else's line must not stop checking the others.
        let Ok(key) = PublicKey::from_openssh(&key_text.join(" ")) else {
            continue;
        };
        out.push(Entry {
            revoked,
            patterns: first.to_string(),
            key,
            location: Location {
                path: path.to_path_buf(),
                line: idx + 1,
            },
        });
    }
}

fn pattern_list_matches(patterns: &str, name: &str) -> bool {
    let name_lc = name.to_ascii_lowercase();
    let mut matched = false;
    for p in patterns.split(',') {
        if let Some(hashed) = p.strip_prefix("|1|") {
            // ssh lowercases the name before hashing it into the file.
            if hashed_matches(hashed, &name_lc) {
                matched = true;
            }
        } else if let Some(neg) = p.strip_prefix('!') {
            if wildcard_match(&neg.to_ascii_lowercase(), &name_lc) {
                return false;
            }
        } else if wildcard_match(&p.to_ascii_lowercase(), &name_lc) {
            matched = true;
        }
    }
    matched
}

fn hashed_matches(salt_and_hash: &str, name: &str) -> bool {
    let Some((salt, hash)) = salt_and_hash.split_once('|') else {
        return false;
    };
    let (Ok(salt), Ok(hash)) = (BASE64.decode(salt.as_bytes()), BASE64.decode(hash.as_bytes())) else {
        return false;
    };
    let Ok(mac) = <Hmac<Sha1> as KeyInit>::new_from_slice(&salt) else {
        return false;
    };
    mac.chain_update(name.as_bytes()).verify_slice(&hash).is_ok()
}

/// Checks `key` for `host`:`port` against every file, in order (see [`HostEntries::check`]).
pub(crate) fn check(files: &[PathBuf], host: &str, port: u16, key: &PublicKey) -> HostKeyStatus {
    HostEntries::load(files, host, port).check(key)
}

fn same_family(a: Algorithm, b: Algorithm) -> bool {
    match (a, b) {
        (Algorithm::Rsa { .. }, Algorithm::Rsa { .. }) => true,
        (a, b) => a == b,
    }
}

/// Serialises `--accept-new` appends within the process: hosts connect concurrently, and
/// two learns must neither interleave their bytes nor both add the same host.
static LEARN_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Appends `host`:`port` `key` to `path` (accept-new), creating the file (0600) and its
/// directory (0700) as ssh does. With `hash` (`HashKnownHosts yes`) the name is written as
/// `|1|salt|hmac`, so the file does not list the hosts. Does nothing when the file already
/// vouches for this key (another connection of this run may have just learned it).
pub(crate) fn learn(path: &Path, host: &str, port: u16, key: &PublicKey, hash: bool) -> std::io::Result<()> {
    let mut public = key.clone();
    public.set_comment("");
    let text = public.to_openssh().map_err(|e| std::io::Error::other(e.to_string()))?;
    // A poisoned lock only means another learn panicked; the file is still consistent
    // because each line is a single write.
    let _guard = LEARN_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    let existing = std::fs::read(path).unwrap_or_default();
    if matches!(check(&[path.to_path_buf()], host, port, key), HostKeyStatus::Known(_)) {
        return Ok(());
    }
    let mut line = String::new();
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        line.push('\n');
    }
    let name = host_key_name(host, port);
    line.push_str(&if hash { hashed_name(&name)? } else { name });
    line.push(' ');
    line.push_str(text.trim());
    line.push('\n');
    // O_APPEND plus one write keeps the line whole even against another process (ssh)
    // appending at the same time.
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(line.as_bytes())
}

/// `|1|salt|hmac` for a known_hosts name, as `ssh-keygen -H` and `HashKnownHosts` write it:
/// HMAC-SHA1 of the lowercased name keyed with a random 20-byte salt.
fn hashed_name(name: &str) -> std::io::Result<String> {
    let salt: [u8; 20] = rand::random();
    let mac = <Hmac<Sha1> as KeyInit>::new_from_slice(&salt)
        .map_err(|e| std::io::Error::other(e.to_string()))?
        .chain_update(name.to_ascii_lowercase().as_bytes())
        .finalize()
        .into_bytes();
    Ok(format!("|1|{}|{}", BASE64.encode(&salt), BASE64.encode(&mac)))
}

/// `SHA256:...`, the fingerprint ssh prints.
pub(crate) fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use russh::keys::PrivateKey;

    fn key(alg: Algorithm) -> PublicKey {
        PrivateKey::random(&mut rand::rng(), alg).unwrap().public_key().clone()
    }

    fn line(k: &PublicKey) -> String {
        k.to_openssh().unwrap()
    }

    fn hashed(name: &str) -> String {
        let salt = b"0123456789abcdef0123";
        let mac = <Hmac<Sha1> as KeyInit>::new_from_slice(salt)
            .unwrap()
            .chain_update(name.as_bytes())
            .finalize()
            .into_bytes();
        format!("|1|{}|{}", BASE64.encode(salt), BASE64.encode(&mac))
    }

    #[test]
    fn known_unknown_changed_revoked_wildcards_hashed() {
        let ecdsa = Algorithm::Ecdsa {
            curve: russh::keys::EcdsaCurve::NistP256,
        };
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("known_hosts");
        let global = dir.path().join("ssh_known_hosts");
        let k1 = key(ecdsa.clone());
        let k2 = key(ecdsa.clone());
        let k3 = key(ecdsa.clone());
        let ed = key(Algorithm::Ed25519);
        std::fs::write(
            &user,
            format!(
                "# comment\nesx01,10.0.0.1 {}\n{}\t  {}\n[esx03]:2222 {}\n*.lab,!bad.lab {}\n",
                line(&k1),
                hashed("esx02"),
                line(&k2),
                line(&k2),
                line(&k3)
            ),
        )
        .unwrap();
        std::fs::write(&global, format!("@revoked * {}\nesx09 {}\n", line(&k2), line(&ed))).unwrap();
        let files = vec![user.clone(), global.clone()];
        assert!(matches!(check(&files, "esx01", 22, &k1), HostKeyStatus::Known(_)));
        assert!(matches!(check(&files, "10.0.0.1", 22, &k1), HostKeyStatus::Known(_)));
        // esx01 is known with k1: k3 for it is a changed key, naming line 2.
        assert_eq!(
            check(&files, "esx01", 22, &k3),
            HostKeyStatus::Changed(Location {
                path: user.clone(),
                line: 2
            })
        );
        // Port 22 entry does not vouch for another port.
        assert_eq!(check(&files, "esx01", 2200, &k1), HostKeyStatus::Unknown);
        assert!(matches!(check(&files, "a.lab", 22, &k3), HostKeyStatus::Known(_)));
        assert_eq!(check(&files, "bad.lab", 22, &k3), HostKeyStatus::Unknown);
        // Revoked beats the hashed and [host]:port lines that list the same key.
        assert_eq!(
            check(&files, "esx02", 22, &k2),
            HostKeyStatus::Revoked(Location {
                path: global.clone(),
                line: 1
            })
        );
        assert!(matches!(
            check(std::slice::from_ref(&user), "esx02", 22, &k2),
            HostKeyStatus::Known(_)
        ));
        // Names are case-insensitive, hashed ones included.
        assert!(matches!(
            check(std::slice::from_ref(&user), "ESX02", 22, &k2),
            HostKeyStatus::Known(_)
        ));
        assert!(matches!(check(&files, "ESX01", 22, &k1), HostKeyStatus::Known(_)));
        assert!(matches!(
            check(std::slice::from_ref(&user), "esx03", 2222, &k2),
            HostKeyStatus::Known(_)
        ));
        // A key of another algorithm is unknown, not changed (the server may hold both).
        assert_eq!(check(&files, "esx09", 22, &k1), HostKeyStatus::Unknown);
        assert_eq!(
            HostEntries::load(&files, "esx09", 22).algorithms(),
            vec![Algorithm::Ed25519]
        );
    }

    #[test]
    fn only_the_lines_for_the_host_and_revocations_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known_hosts");
        let ecdsa = Algorithm::Ecdsa {
            curve: russh::keys::EcdsaCurve::NistP256,
        };
        let (k1, k2) = (key(ecdsa.clone()), key(ecdsa));
        let mut text = String::new();
        for i in 0..200 {
            text.push_str(&format!("other{i} {}\n", line(&k2)));
        }
        text.push_str(&format!(
            "esx01 {}\n@revoked * {}\n@cert-authority * {}\n",
            line(&k1),
            line(&k2),
            line(&k2)
        ));
        std::fs::write(&path, text).unwrap();
        let entries = HostEntries::load(std::slice::from_ref(&path), "esx01", 22);
        assert_eq!(entries.len(), 2);
        assert!(matches!(entries.check(&k1), HostKeyStatus::Known(_)));
        assert!(matches!(entries.check(&k2), HostKeyStatus::Revoked(_)));
    }

    #[test]
    fn concurrent_learns_write_whole_lines_and_each_host_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known_hosts");
        std::fs::write(&path, "# no newline at the end").unwrap();
        let keys: Vec<PublicKey> = (0..16).map(|_| key(Algorithm::Ed25519)).collect();
        std::thread::scope(|s| {
            for _ in 0..3 {
                for (i, k) in keys.iter().enumerate() {
                    let path = &path;
                    s.spawn(move || {
                        learn(path, &format!("esx{i:02}"), 22, k, false).unwrap();
                    });
                }
            }
        });
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 17, "{text}");
        assert_eq!(lines.first(), Some(&"# no newline at the end"));
        for (i, k) in keys.iter().enumerate() {
            let name = format!("esx{i:02}");
            let expected = format!("{name} {}", k.to_openssh().unwrap().trim());
            assert_eq!(lines.iter().filter(|l| **l == expected).count(), 1, "{name}:\n{text}");
        }
    }

    #[test]
    fn learn_appends_a_line_check_accepts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/known_hosts");
        let k = key(Algorithm::Ecdsa {
            curve: russh::keys::EcdsaCurve::NistP256,
        });
        learn(&path, "127.0.0.1", 2200, &k, false).unwrap();
        learn(&path, "esx01", 22, &k, false).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("[127.0.0.1]:2200 ecdsa-sha2-nistp256 "), "{text}");
        assert_eq!(text.lines().count(), 2);
        let files = vec![path];
        assert!(matches!(check(&files, "127.0.0.1", 2200, &k), HostKeyStatus::Known(_)));
        assert!(matches!(check(&files, "esx01", 22, &k), HostKeyStatus::Known(_)));
    }

    #[test]
    fn hashed_learning_hides_the_name_and_still_matches_with_private_modes() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ssh_dir = dir.path().join("home/.ssh");
        let path = ssh_dir.join("known_hosts");
        let k = key(Algorithm::Ecdsa {
            curve: russh::keys::EcdsaCurve::NistP256,
        });
        learn(&path, "ESX01.lab", 2222, &k, true).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("|1|") && !text.to_lowercase().contains("esx01"),
            "{text}"
        );
        let files = vec![path.clone()];
        assert!(matches!(check(&files, "esx01.lab", 2222, &k), HostKeyStatus::Known(_)));
        assert!(matches!(check(&files, "esx01.lab", 22, &k), HostKeyStatus::Unknown));
        // Learning again finds the hashed line: no duplicate.
        learn(&path, "esx01.lab", 2222, &k, true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ssh_dir), 0o700);
        assert_eq!(mode(&dir.path().join("home")), 0o700);
        assert_eq!(mode(&path), 0o600);
    }
}
