use crate::ParseError;
use serde::Serialize;

/// `esxcli system version get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SystemVersion {
    pub product: String,
    /// `8.0.2`
    pub version: String,
    /// The build number with the `Releasebuild-` prefix stripped, e.g. `22380479`.
    pub build: Option<String>,
    pub update: Option<String>,
    pub patch: Option<String>,
}

impl SystemVersion {
    /// `(major, minor, patch)` of `version`, `None` when it is not dotted numbers.
    pub fn numbers(&self) -> Option<(u32, u32, u32)> {
        let mut it = self
            .version
            .split('.')
            .map(|p| p.trim().parse::<u32>().ok());
        let major = it.next()??;
        let minor = it.next().flatten().unwrap_or(0);
        let patch = it.next().flatten().unwrap_or(0);
        Some((major, minor, patch))
    }
}

pub fn parse_system_version(input: &str) -> Result<SystemVersion, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_system_version_get"))
}
