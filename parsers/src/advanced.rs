//! `esxcli system settings advanced list -o /Net/PVRDMAVmknic`: which vmknic is tagged for
//! PVRDMA (empty by default, and then PVRDMA has no vmknic to use). Real sample of the
//! layout (ESXi 6.7/7.0, another option; on the host an empty value keeps a trailing
//! space, which this copy drops). The record of another option is refused, never read
//! as "no vmknic tagged":
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//!    Path: /VMFS3/UseATSForHBOnVMFS5
//!    Type: integer
//!    Int Value: 1
//!    Default Int Value: 1
//!    Min Value: 0
//!    Max Value: 1
//!    String Value:
//!    Default String Value:
//!    Valid Characters:
//!    Description: Use ATS for HB on ATS supported VMFS5 volumes
//! "#;
//! let other = parse_advanced_option(output.trim_start_matches('\n')).unwrap_err();
//! assert_eq!((other.line, other.snippet.trim()), (1, "Path: /VMFS3/UseATSForHBOnVMFS5"));
//!
//! // The same layout naming the option PVRDMA reads: its empty `String Value` is the
//! // default, no vmknic tagged.
//! let untagged = output.replace("/VMFS3/UseATSForHBOnVMFS5", "/Net/PVRDMAVmknic");
//! let option = parse_advanced_option(untagged.trim_start_matches('\n'))?;
//! assert_eq!((option.int_value, option.string_value.as_str()), (Some(1), ""));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! ESXi 8 appends `Host Specific:` and `Impact:` (ignored).
use crate::common::{blocks, end_of, fail, find, non_empty, run, value, PResult};
use crate::ParseError;
use serde::Serialize;

/// `esxcli system settings advanced list -o <option>` (one record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdvancedOption {
    pub path: String,
    pub option_type: Option<String>,
    pub int_value: Option<i64>,
    /// Trimmed; empty string when the option is unset.
    pub string_value: String,
    pub default_string_value: Option<String>,
    pub description: Option<String>,
}

fn option(input: &str) -> PResult<'_, AdvancedOption> {
    let (rest, recs) = blocks(input)?;
    let fields = match recs.as_slice() {
        [one] => one,
        [] => return Err(fail(end_of(input), "an option record (`Path:` ...)")),
        [_, second, ..] => {
            let at = second.first().map_or(end_of(input), |f| f.line);
            return Err(fail(at, "exactly one option record"));
        }
    };
    let path_field = find(fields, "Path").ok_or_else(|| fail(input, "a `Path:` field"))?;
    let path = non_empty(path_field.value).ok_or_else(|| fail(path_field.line, "a `Path:` field"))?;
    // The record names the option it describes: another option's record (`/Net/UseHwTSO`
    // in this slot) says nothing about PVRDMA. Option paths are case-blind on the host.
    if !path.eq_ignore_ascii_case(OPTION) {
        return Err(fail(
            path_field.line,
            "the record of `/Net/PVRDMAVmknic` (`Path:` names another option)",
        ));
    }
    let string_value = find(fields, "String Value")
        .map(|f| f.value.trim().to_string())
        .ok_or_else(|| fail(end_of(input), "a `String Value:` field"))?;
    Ok((
        rest,
        AdvancedOption {
            path,
            option_type: value(fields, "Type").and_then(non_empty),
            int_value: value(fields, "Int Value").and_then(|v| v.trim().parse().ok()),
            string_value,
            default_string_value: value(fields, "Default String Value").and_then(non_empty),
            description: value(fields, "Description").and_then(non_empty),
        },
    ))
}

/// The option this parser reads.
pub const OPTION: &str = "/Net/PVRDMAVmknic";

pub fn parse_advanced_option(input: &str) -> Result<AdvancedOption, ParseError> {
    run(crate::by_id::PVRDMA_VMKNIC_OPTION.id, input, option)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ESXI8_TAGGED: &str = "   Path: /Net/PVRDMAVmknic\n   Type: string\n   Int Value: 0\n   Default Int Value: 0\n   Min Value: 0\n   Max Value: 0\n   String Value: vmk1\n   Default String Value: \n   Valid Characters: \n   Description: Vmknic for PVRDMA\n   Host Specific: false\n   Impact: none\n";

    #[test]
    fn tagged_vmknic_esxi8() {
        assert_eq!(
            parse_advanced_option(ESXI8_TAGGED).unwrap(),
            AdvancedOption {
                path: "/Net/PVRDMAVmknic".into(),
                option_type: Some("string".into()),
                int_value: Some(0),
                string_value: "vmk1".into(),
                default_string_value: None,
                description: Some("Vmknic for PVRDMA".into()),
            }
        );
    }

    #[test]
    fn untagged_with_and_without_trailing_space() {
        for sv in ["   String Value: ", "   String Value:", "\t   String Value:"] {
            let input =
                format!("   Path: /Net/PVRDMAVmknic\n   Type: string\n{sv}\n   Description: Vmknic for PVRDMA\n");
            assert_eq!(parse_advanced_option(&input).unwrap().string_value, "");
        }
    }

    #[test]
    fn another_options_record_is_an_error_not_an_untagged_vmknic() {
        let input = "   Path: /Net/UseHwTSO\n   Type: integer\n   Int Value: 1\n   String Value: \n   Description: When non-zero, use pNIC HW TSO offload if available\n";
        let e = parse_advanced_option(input).unwrap_err();
        assert_eq!((e.line, e.column), (1, 4));
        assert!(e.expected.contains("/Net/PVRDMAVmknic"), "{e}");
        // The host prints the path with its own case; any case names the same option.
        let lower = ESXI8_TAGGED.replace("/Net/PVRDMAVmknic", "/net/pvrdmavmknic");
        assert_eq!(parse_advanced_option(&lower).unwrap().string_value, "vmk1");
    }

    #[test]
    fn missing_string_value_is_not_untagged() {
        let e = parse_advanced_option("   Path: /Net/PVRDMAVmknic\n   Type: string\n").unwrap_err();
        assert_eq!(e.expected, "a `String Value:` field");
    }
}
