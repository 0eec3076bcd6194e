//! The page's own style sheet and script, inline, and the Content-Security-Policy that
//! allows exactly them: no load from anywhere (`default-src 'none'`), inline styles, and
//! the one inline script by the SHA-256 of its exact text, computed here from the text the
//! page holds, so the two cannot drift apart.
use sha2::{Digest, Sha256};

/// The style sheet (screen and print).
pub(super) const STYLE: &str = include_str!("style.css");

/// The script: table filters and the fold buttons; the page reads the same without it.
pub(super) const SCRIPT: &str = include_str!("script.js");

/// The policy, for a `<meta http-equiv="Content-Security-Policy">` in the head.
pub(super) fn content_security_policy() -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src '{}'; img-src 'none'; font-src 'none'; \
         connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; worker-src 'none'; \
         manifest-src 'none'; base-uri 'none'; form-action 'none'",
        script_hash()
    )
}

/// `sha256-<base64>` of [`SCRIPT`], as CSP writes a hash source.
pub(super) fn script_hash() -> String {
    let digest = Sha256::digest(SCRIPT.as_bytes());
    format!("sha256-{}", data_encoding::BASE64.encode(&digest))
}
