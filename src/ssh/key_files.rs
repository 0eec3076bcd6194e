//! Identity files as read once per run (and, in the exporter, once per configuration
//! load): whether the file is there, its public half, and its private key decoded. Every
//! host of a run offers the same few keys; reading and decoding them again for every
//! connection (three file reads and a key decoding per host) was a fixed cost of every
//! exporter probe. A key file changed while the run goes on is not seen until the next
//! run (the exporter's next load: SIGHUP), as ssh-agent keeps what was added to it.
use crate::ssh::keys::{load_private_key, KeyLoadError};
use crate::ssh::signer::FileKey;
use russh::keys::PublicKey;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Why a private key cannot be offered, as it was worded when read.
#[derive(Debug, Clone)]
pub(crate) enum Unusable {
    /// Passphrase-protected: for ssh-agent.
    Encrypted(String),
    /// Unreadable or not a key.
    Other(String),
}

/// One identity file as read.
#[derive(Debug)]
pub(crate) struct KeyFile {
    pub(crate) exists: bool,
    /// The file itself holds an OpenSSH public key (`-i key.pub`).
    pub(crate) public_itself: Option<PublicKey>,
    /// Its `.pub` half, when there is one.
    pub(crate) public_half: Option<PublicKey>,
    /// The private key, or why it cannot be used; `None` when the file is missing or
    /// holds a public key. Kept with its ring form once a login has built it.
    pub(crate) private: Option<Result<Arc<FileKey>, Unusable>>,
}

impl KeyFile {
    fn read(path: &Path) -> Self {
        let public_itself = public_key_file(path);
        let mut pub_path = path.to_path_buf().into_os_string();
        pub_path.push(".pub");
        let public_half = public_key_file(Path::new(&pub_path));
        let exists = path.exists();
        let private = (exists && public_itself.is_none()).then(|| match load_private_key(path) {
            Ok(k) => Ok(Arc::new(FileKey::new(Arc::new(k)))),
            Err(e @ KeyLoadError::Encrypted { .. }) => Err(Unusable::Encrypted(e.to_string())),
            Err(e) => Err(Unusable::Other(e.to_string())),
        });
        KeyFile {
            exists,
            public_itself,
            public_half,
            private,
        }
    }

    /// The public key this file stands for: its `.pub` half, else the file itself when it
    /// is a public key.
    pub(crate) fn public(&self) -> Option<&PublicKey> {
        self.public_half.as_ref().or(self.public_itself.as_ref())
    }
}

/// The key in `path` when that file is an OpenSSH public key.
fn public_key_file(path: &Path) -> Option<PublicKey> {
    let text = std::fs::read_to_string(path).ok()?;
    PublicKey::from_openssh(text.trim()).ok()
}

/// The identity files of a run, each read the first time a host needs it.
#[derive(Default)]
pub(crate) struct KeyFiles {
    files: Mutex<HashMap<PathBuf, Arc<KeyFile>>>,
}

impl std::fmt::Debug for KeyFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.files.lock().map(|m| m.len()).unwrap_or(0);
        write!(f, "KeyFiles({n} read)")
    }
}

impl KeyFiles {
    /// `path` as read the first time.
    pub(crate) fn get(&self, path: &Path) -> Arc<KeyFile> {
        match self.files.lock() {
            Ok(mut m) => m
                .entry(path.to_path_buf())
                .or_insert_with(|| Arc::new(KeyFile::read(path)))
                .clone(),
            Err(_) => Arc::new(KeyFile::read(path)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_is_read_once_and_kept_as_read() {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/keys");
        let name = std::fs::read_dir(&fixtures)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_none() && p.with_extension("pub").is_file())
            .expect("a key fixture with its .pub");
        let key = dir.path().join("id");
        std::fs::copy(&name, &key).unwrap();
        std::fs::copy(name.with_extension("pub"), dir.path().join("id.pub")).unwrap();
        let files = KeyFiles::default();
        let first = files.get(&key);
        assert!(first.exists);
        assert!(matches!(first.private, Some(Ok(_))));
        assert!(first.public_half.is_some() && first.public_itself.is_none());
        // Removed on disk: the run keeps what it read.
        std::fs::remove_file(&key).unwrap();
        assert!(Arc::ptr_eq(&first, &files.get(&key)));
        let missing = files.get(&dir.path().join("nope"));
        assert!(!missing.exists && missing.private.is_none() && missing.public().is_none());
        let public = files.get(&dir.path().join("id.pub"));
        assert!(public.public_itself.is_some() && public.private.is_none());
    }
}
