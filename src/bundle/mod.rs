//! Support bundles: what a live run collected, packed so a support engineer can attach it
//! to a ticket and analyse it again later, somewhere without access to the hosts.
//!
//! Pipeline stage: *collect* (a bundle is one more source of [`HostCapture`]s) and its
//! mirror image, writing one. Layout of a `.tar.gz` bundle:
//!
//! ```text
//! manifest.json                 first entry: versions, times, per-command status, sha256s
//! report.json  report.txt       the report as the live run printed it (no colour)
//! report.html                   the same report as one page for a ticket
//! <host>/<id>.txt               stdout, verbatim        (same layout `analyze DIR` reads,
//! <host>/<id>.stderr.txt        stderr, when non-empty    see pvrdma_engine::capture::folder)
//! <host>/<id>.exit              exit status
//! <host>/host-error.json        the host's typed failure
//! <host>/vmx/NNN.vmx            .vmx files of a vm-support capture
//! manifest.json.sha256          last entry: `sha256sum` line of manifest.json
//! ```
//!
//! [`HostCapture`]: pvrdma_engine::capture::HostCapture
pub mod manifest;
pub(crate) mod read;
mod write;

pub use crate::archive::{BundleError, ReadLimits};
pub(crate) use write::{check_target, scrub_command_line, Spool};
pub use write::{write_bundle, BundleMeta};

/// The folder name of a host inside a bundle. Host names come from the user or a manifest,
/// so a name that would escape the bundle or be skipped by the directory reader
/// (leading dot) is refused rather than mangled: a mangled name would silently disagree
/// with the report.
fn host_dir(host: &str) -> Result<&str, BundleError> {
    let bad = host.is_empty() || host.starts_with('.') || host.contains(['/', '\\', '\0']) || host.len() > 255;
    if bad {
        Err(BundleError::BadHostName(host.to_string()))
    } else {
        Ok(host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_dir_refuses_escaping_names() {
        for bad in ["", ".", "..", "../x", "a/b", ".hidden", "a\\b", "a\0b"] {
            assert!(host_dir(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["esx01", "esx01.lab.example.com", "10.0.0.5", "fe80::1", "host-001"] {
            assert_eq!(host_dir(good).unwrap(), good);
        }
    }
}
