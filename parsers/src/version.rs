//! `esxcli system version get`: which ESXi release, because PVRDMA features depend on it
//! (6.5+, native endpoints 7.0 U1+, async mode 8.0+). Real sample (ESXi 6.5):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//!    Product: VMware ESXi
//!    Version: 6.5.0
//!    Build: Releasebuild-5969303
//!    Update: 1
//!    Patch: 26
//! "#;
//! let version = parse_system_version(output.trim_start_matches('\n'))?;
//! assert_eq!(version.product, "VMware ESXi");
//! assert_eq!(version.numbers(), Some((6, 5, 0)));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! ESXi 5.5 has no `Patch`; copies from web pages lose the indent.
use crate::common::{fail, non_empty, run, structure, value, PResult};
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
        let mut it = self.version.split('.').map(|p| p.trim().parse::<u32>().ok());
        let major = it.next()??;
        let minor = it.next().flatten().unwrap_or(0);
        let patch = it.next().flatten().unwrap_or(0);
        Some((major, minor, patch))
    }
}

fn version(input: &str) -> PResult<'_, SystemVersion> {
    let (rest, fields) = structure(input)?;
    let required = |key: &str, expected: &'static str| {
        value(&fields, key)
            .and_then(non_empty)
            .ok_or_else(|| fail(input, expected))
    };
    Ok((
        rest,
        SystemVersion {
            product: required("Product", "a `Product:` field")?,
            version: required("Version", "a `Version:` field")?,
            build: value(&fields, "Build").and_then(|b| non_empty(b.strip_prefix("Releasebuild-").unwrap_or(b))),
            update: value(&fields, "Update").and_then(non_empty),
            patch: value(&fields, "Patch").and_then(non_empty),
        },
    ))
}

pub fn parse_system_version(input: &str) -> Result<SystemVersion, ParseError> {
    run(crate::by_id::SYSTEM_VERSION.id, input, version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esxi_802_without_indent() {
        let input = "Product: VMware ESXi\nVersion: 8.0.2\nBuild: Releasebuild-22380479\nUpdate: 2\nPatch: 0\n";
        let v = parse_system_version(input).unwrap();
        assert_eq!(
            v,
            SystemVersion {
                product: "VMware ESXi".into(),
                version: "8.0.2".into(),
                build: Some("22380479".into()),
                update: Some("2".into()),
                patch: Some("0".into()),
            }
        );
        assert_eq!(v.numbers(), Some((8, 0, 2)));
    }

    #[test]
    fn esxi55_has_no_patch() {
        let input =
            "   Product: VMware ESXi\r\n   Version: 5.5.0\r\n   Build: Releasebuild-3248547\r\n   Update: 3\r\n";
        let v = parse_system_version(input).unwrap();
        assert_eq!(v.patch, None);
        assert_eq!(v.build.as_deref(), Some("3248547"));
    }

    #[test]
    fn missing_version_is_an_error() {
        let e = parse_system_version("   Product: VMware ESXi\n").unwrap_err();
        assert_eq!(e.expected, "a `Version:` field");
        let e = parse_system_version("").unwrap_err();
        assert_eq!(e.expected, "a `Key: value` line");
    }
}
