//! `.vmx` files, as found under `vmfs/volumes/<ds>/<vm>/` in an ESXi vm-support bundle.
//!
//! A vm-support bundle carries no vsish data, so the `.vmx` is the only place that says
//! which VMs have a PVRDMA adapter and whether the VM meets the PVRDMA prerequisites
//! (hardware version 13+, all guest memory reserved). Sample (keys from real `.vmx` files):
//!
//! ```text
//! .encoding = "UTF-8"
//! config.version = "8"
//! virtualHW.version = "19"
//! displayName = "hpc01"
//! memSize = "16384"
//! sched.mem.min = "16384"
//! sched.mem.pin = "TRUE"
//! ethernet1.virtualDev = "vrdma"
//! ethernet1.present = "TRUE"
//! ethernet1.addressType = "vpx"
//! ethernet1.generatedAddress = "00:50:56:8a:9f:c2"
//! ```
//!
//! Keys are case-insensitive (the VMX reads `memSize` and `memsize` alike); when a key
//! repeats, the last line wins, as it does for the VMX. Unknown keys are ignored.
use crate::ParseError;
use nom::branch::alt;
use nom::bytes::complete::{is_not, tag, take_till, take_while1};
use nom::character::complete::space0;
use nom::combinator::{all_consuming, opt, rest, verify};
use nom::sequence::{delimited, terminated};
use nom::{IResult, Parser};
use serde::Serialize;
use std::collections::BTreeMap;

const COMMAND: &str = "vmx";

/// What pvrdma-doctor needs from a `.vmx`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VmxConfig {
    /// `displayName`.
    pub display_name: Option<String>,
    /// `virtualHW.version` (PVRDMA needs 13+, native endpoints 18+).
    pub hardware_version: Option<u32>,
    /// `memSize`, in MB.
    pub memsize_mb: Option<u64>,
    /// `sched.mem.min`, the memory reservation in MB.
    pub mem_min_mb: Option<u64>,
    /// `sched.mem.pin` ("Reserve all guest memory").
    pub mem_pin: Option<bool>,
    /// Adapters whose `ethernetN.virtualDev` is `vrdma`, by index.
    pub pvrdma_adapters: Vec<VmxAdapter>,
}

/// One `ethernetN` with `virtualDev = "vrdma"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmxAdapter {
    /// The `N` of `ethernetN`.
    pub ethernet_index: u32,
    /// `ethernetN.present`; an adapter that is not present is not in the VM.
    pub present: Option<bool>,
    /// `ethernetN.address` (static) or else `ethernetN.generatedAddress`, lower case.
    pub mac_address: Option<String>,
    /// `ethernetN.networkName` (the port group, when the VMX records it).
    pub network_name: Option<String>,
}

/// Parses a whole `.vmx` file.
pub fn parse_vmx(input: &str) -> Result<VmxConfig, ParseError> {
    // Lower-cased key -> (value, 1-based line), last occurrence wins.
    let mut entries: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for (number, raw_line) in input.lines().enumerate() {
        let line_no = number + 1;
        let line = raw_line.trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        match all_consuming(entry).parse(line) {
            Ok((_, (key, value))) => {
                entries.insert(key.to_ascii_lowercase(), (unescape(value), line_no));
            }
            Err(_) => {
                return Err(error_at(
                    line_no,
                    line,
                    column_of_failure(line),
                    "a `key = \"value\"` line",
                ));
            }
        }
    }
    build(&entries, input)
}

/// `key = "value"`, `key = value` (rare, older files), with an optional trailing comment
/// after a quoted value.
fn entry(i: &str) -> IResult<&str, (&str, &str)> {
    let (i, _) = space0(i)?;
    let (i, key) = take_while1(|c: char| !c.is_whitespace() && c != '=' && c != '#')(i)?;
    let (i, _) = delimited(space0, tag("="), space0).parse(i)?;
    let (i, value) = alt((quoted, bare)).parse(i)?;
    let (i, _) = space0(i)?;
    let (i, _) = opt(terminated(tag("#"), rest)).parse(i)?;
    Ok((i, (key, value)))
}

fn quoted(i: &str) -> IResult<&str, &str> {
    delimited(tag("\""), opt(is_not("\"")), tag("\""))
        .map(|v| v.unwrap_or(""))
        .parse(i)
}

/// An unquoted value; a value that opens a quote must close it.
fn bare(i: &str) -> IResult<&str, &str> {
    verify(take_till(|c: char| c == '#'), |v: &str| !v.starts_with('"'))
        .map(|v: &str| v.trim_end())
        .parse(i)
}

/// Where the line stops looking like `key = "value"`, for the error message.
fn column_of_failure(line: &str) -> usize {
    let Some(eq) = line.find('=') else {
        return line.chars().count() + 1;
    };
    let after = line.get(eq + 1..).unwrap_or_default();
    let value_start = eq + 1 + (after.len() - after.trim_start().len());
    line.get(..value_start)
        .map_or(value_start, |head| head.chars().count())
        + 1
}

/// The VMX writes characters it cannot keep literally as `|XX` (two hex digits), e.g. `|22`
/// for a double quote inside a display name.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.char_indices().peekable();
    while let Some((pos, c)) = chars.next() {
        if c == '|' {
            let hex = value.get(pos + 1..pos + 3);
            if let Some(byte) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                if byte.is_ascii() {
                    out.push(char::from(byte));
                    chars.next();
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

fn build(
    entries: &BTreeMap<String, (String, usize)>,
    input: &str,
) -> Result<VmxConfig, ParseError> {
    let text = |key: &str| entries.get(key).map(|(v, _)| v.clone());
    let number = |key: &str| -> Result<Option<u64>, ParseError> {
        match entries.get(key) {
            None => Ok(None),
            Some((v, _)) if v.trim().is_empty() => Ok(None),
            Some((v, line)) => v.trim().parse::<u64>().map(Some).map_err(|_| {
                let raw = input.lines().nth(line - 1).unwrap_or_default();
                error_at(*line, raw, column_of_failure(raw), "a whole number")
            }),
        }
    };
    let hardware_version = match number("virtualhw.version")? {
        None => None,
        Some(v) => Some(u32::try_from(v).map_err(|_| {
            let line = entries.get("virtualhw.version").map_or(1, |(_, l)| *l);
            let raw = input.lines().nth(line - 1).unwrap_or_default();
            error_at(
                line,
                raw,
                column_of_failure(raw),
                "a hardware version number",
            )
        })?),
    };

    let mut pvrdma_adapters = Vec::new();
    for (key, (value, _)) in entries {
        let Some(index) = key
            .strip_prefix("ethernet")
            .and_then(|k| k.strip_suffix(".virtualdev"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if !value.trim().eq_ignore_ascii_case("vrdma") {
            continue;
        }
        let field = |name: &str| text(&format!("ethernet{index}.{name}"));
        let mac = field("address")
            .filter(|m| !m.trim().is_empty())
            .or_else(|| field("generatedaddress"))
            .map(|m| m.trim().to_ascii_lowercase())
            .filter(|m| !m.is_empty());
        pvrdma_adapters.push(VmxAdapter {
            ethernet_index: index,
            present: field("present").and_then(|v| boolean(&v)),
            mac_address: mac,
            network_name: field("networkname"),
        });
    }
    pvrdma_adapters.sort_by_key(|a| a.ethernet_index);

    Ok(VmxConfig {
        display_name: text("displayname"),
        hardware_version,
        memsize_mb: number("memsize")?,
        mem_min_mb: number("sched.mem.min")?,
        mem_pin: text("sched.mem.pin").and_then(|v| boolean(&v)),
        pvrdma_adapters,
    })
}

fn boolean(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

fn error_at(line: usize, raw: &str, column: usize, expected: &'static str) -> ParseError {
    ParseError {
        command: COMMAND,
        line,
        column,
        expected,
        snippet: raw.chars().take(80).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PVRDMA_VM: &str = r#".encoding = "UTF-8"
config.version = "8"
virtualHW.version = "19"
displayName = "hpc |22node|22 01"
memSize = "16384"
sched.mem.min = "16384"
sched.mem.minSize = "16384"
sched.mem.pin = "TRUE"
# management NIC
ethernet0.virtualDev = "vmxnet3"
ethernet0.present = "TRUE"
ethernet0.generatedAddress = "00:50:56:8a:11:22"
ethernet1.virtualDev = "VRDMA"
ethernet1.present = "TRUE"
ethernet1.networkName = "PVRDMA-PG"
ethernet1.addressType = "vpx"
ethernet1.generatedAddress = "00:50:56:8A:9F:C2"
ethernet3.virtualDev = "vrdma"
ethernet3.present = "FALSE"
ethernet3.address = "00:50:56:00:00:03"
ethernet3.generatedAddress = "00:50:56:8a:00:99"
"#;

    #[test]
    fn finds_pvrdma_adapters_and_reservation() {
        let vmx = parse_vmx(PVRDMA_VM).unwrap();
        assert_eq!(vmx.display_name.as_deref(), Some("hpc \"node\" 01"));
        assert_eq!(vmx.hardware_version, Some(19));
        assert_eq!(vmx.memsize_mb, Some(16384));
        assert_eq!(vmx.mem_min_mb, Some(16384));
        assert_eq!(vmx.mem_pin, Some(true));
        assert_eq!(
            vmx.pvrdma_adapters,
            vec![
                VmxAdapter {
                    ethernet_index: 1,
                    present: Some(true),
                    mac_address: Some("00:50:56:8a:9f:c2".into()),
                    network_name: Some("PVRDMA-PG".into()),
                },
                VmxAdapter {
                    ethernet_index: 3,
                    present: Some(false),
                    mac_address: Some("00:50:56:00:00:03".into()),
                    network_name: None,
                },
            ]
        );
    }

    #[test]
    fn keys_are_case_insensitive_and_last_wins() {
        let vmx = parse_vmx("MEMSIZE = \"1024\"\nmemsize = \"2048\"\nVirtualHw.Version = \"13\"\n")
            .unwrap();
        assert_eq!(vmx.memsize_mb, Some(2048));
        assert_eq!(vmx.hardware_version, Some(13));
        assert!(vmx.pvrdma_adapters.is_empty());
    }

    #[test]
    fn vm_without_pvrdma_and_without_reservation() {
        let vmx = parse_vmx(
            "displayName = \"web01\"\r\nethernet0.virtualDev = \"e1000e\"\r\nmemSize = \"4096\"\r\n",
        )
        .unwrap();
        assert_eq!(vmx.display_name.as_deref(), Some("web01"));
        assert_eq!(vmx.mem_min_mb, None);
        assert_eq!(vmx.mem_pin, None);
        assert!(vmx.pvrdma_adapters.is_empty());
    }

    #[test]
    fn unquoted_values_and_trailing_comments() {
        let vmx = parse_vmx("memsize = 512 # small\ndisplayName = \"a # b\" # note\n").unwrap();
        assert_eq!(vmx.memsize_mb, Some(512));
        assert_eq!(vmx.display_name.as_deref(), Some("a # b"));
    }

    #[test]
    fn line_without_equals_is_an_error_with_position() {
        let err = parse_vmx("displayName = \"a\"\nthis is not a vmx line\n").unwrap_err();
        assert_eq!(err.command, "vmx");
        assert_eq!(err.line, 2);
        assert_eq!(err.snippet, "this is not a vmx line");
    }

    #[test]
    fn non_numeric_hardware_version_is_an_error() {
        let err = parse_vmx("virtualHW.version = \"vmx-19\"\n").unwrap_err();
        assert_eq!(err.line, 1);
        assert_eq!(err.expected, "a whole number");
        assert_eq!(err.column, 21);
    }

    #[test]
    fn unterminated_quote_is_an_error() {
        let err = parse_vmx("displayName = \"abc\n").unwrap_err();
        assert_eq!(err.line, 1);
    }

    #[test]
    fn empty_file_is_an_empty_config() {
        assert_eq!(parse_vmx("").unwrap(), VmxConfig::default());
    }
}
