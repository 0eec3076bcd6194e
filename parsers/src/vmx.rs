//! A VM's `.vmx` file, as found in an ESXi vm-support bundle: which `ethernetN` adapters
//! are PVRDMA (`virtualDev = "vrdma"`) and the VM settings PVRDMA needs (hardware version
//! 13+, all guest memory reserved). A bundle has no vsish data, so this is the only place
//! it names the adapters. Real sample of the format (a vm-support `.vmx` excerpt; the
//! PVRDMA value `vrdma` is the one open-vm-tools' `Net_GetNumAdapters()` compares with):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! memSize = "128"
//! ethernet0.virtualDev = "e1000"
//! ethernet0.networkName = "VM Network"
//! ethernet0.addressType = "vpx"
//! ethernet0.generatedAddress = "00:50:56:a5:97:d5"
//! ethernet0.present = "TRUE"
//! displayName = "sitea_vm1"
//! "#;
//! let vmx = parse_vmx(output.trim_start_matches('\n'))?;
//! assert_eq!(vmx.display_name.as_deref(), Some("sitea_vm1"));
//! assert_eq!(vmx.memsize_mb, Some(128));
//! assert!(vmx.pvrdma_adapters.is_empty(), "an e1000 is not a PVRDMA adapter");
//! # Ok::<(), ParseError>(())
//! ```
//!
//! Keys are case-blind (`memsize` and `memSize` both occur); `#` starts a comment; values
//! use `|XX` hex escapes for quotes and bars.
//!
//! Live hosts: the catalogue's `vmx_pvrdma_lines` loop greps the PVRDMA-relevant lines of
//! each running VM's `.vmx` (path from `vm process list`'s `Config File`), one section per
//! file, so PVRDMA VMs are known without vsish. Its form (**composed**: the loop's own
//! markers around lines in the `.vmx` format above):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! ==> /vmfs/volumes/datastore1/hpc-node01/hpc-node01.vmx <==
//! virtualHW.version = "19"
//! memSize = "8192"
//! sched.mem.min = "8192"
//! sched.mem.pin = "TRUE"
//! displayName = "hpc-node01"
//! ethernet1.virtualDev = "vrdma"
//! ethernet1.generatedAddress = "00:50:56:8a:9f:c2"
//! <== /vmfs/volumes/datastore1/hpc-node01/hpc-node01.vmx exit 0 ==>
//! "#;
//! let sections = parse_vmx_pvrdma_lines(output.trim_start_matches('\n'))?;
//! assert_eq!(sections[0].config_file, "/vmfs/volumes/datastore1/hpc-node01/hpc-node01.vmx");
//! let vmx = sections[0].config.as_ref().expect("a whole section");
//! assert_eq!((vmx.hardware_version, vmx.mem_pin), (Some(19), Some(true)));
//! assert_eq!(vmx.pvrdma_adapters[0].ethernet_index, 1);
//! # Ok::<(), ParseError>(())
//! ```
use crate::common::{end_of, fail, is_blank, line_iter, non_empty, run, sections, to_parse_error, PResult, SectionEnd};
use crate::ParseError;
use nom::bytes::complete::{tag, take_till, take_till1, take_while};
use nom::character::complete::char;
use nom::combinator::{all_consuming, opt};
use nom::error::context;
use nom::sequence::{delimited, preceded};
use nom::Parser;
use serde::Serialize;

/// What a `.vmx` file says about a VM's PVRDMA adapters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmxConfig {
    pub display_name: Option<String>,
    pub hardware_version: Option<u32>,
    pub memsize_mb: Option<u64>,
    pub mem_min_mb: Option<u64>,
    pub mem_pin: Option<bool>,
    pub pvrdma_adapters: Vec<VmxAdapter>,
}

/// An `ethernetN` whose `virtualDev` is `vrdma`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmxAdapter {
    pub ethernet_index: u32,
    pub present: Option<bool>,
    pub mac_address: Option<String>,
    pub network_name: Option<String>,
    /// `vrdmaN.nativeEndpointSupport` (N is this adapter's `ethernetN` number: the docs'
    /// "Network Adapter 2" is index 1): native endpoints requested for this adapter.
    pub native_endpoint_support: Option<bool>,
}

fn blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// `key = "value"` (quotes optional), blanks around `=` optional.
fn setting(l: &str) -> PResult<'_, (&str, &str)> {
    context(
        "a `key = \"value\"` line",
        all_consuming((
            preceded(take_while(blank), take_till1(|c: char| c == '=' || blank(c))),
            preceded((take_while(blank), tag("="), take_while(blank)), value),
        )),
    )
    .parse_complete(l.trim_end())
}

fn value(i: &str) -> PResult<'_, &str> {
    let (i, quoted) = opt(delimited(char('"'), take_till(|c| c == '"'), char('"'))).parse_complete(i)?;
    match quoted {
        Some(v) => Ok((i, v)),
        None => Ok((end_of(i), i.trim())),
    }
}

/// Undoes the `|XX` hex escapes the VMX writer uses for `"`, `|` and control characters.
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(pos) = rest.find('|') {
        out.push_str(rest.get(..pos).unwrap_or(""));
        let hex = rest.get(pos + 1..pos + 3);
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(b) if b.is_ascii() => {
                out.push(char::from(b));
                rest = rest.get(pos + 3..).unwrap_or("");
            }
            _ => {
                out.push('|');
                rest = rest.get(pos + 1..).unwrap_or("");
            }
        }
    }
    out.push_str(rest);
    out
}

fn vmx(input: &str) -> PResult<'_, VmxConfig> {
    let mut settings: Vec<(String, String)> = Vec::new();
    for l in line_iter(input) {
        let t = l.trim_start();
        if is_blank(t) || t.starts_with('#') {
            continue;
        }
        let (_, (key, v)) = setting(t).map_err(|_| fail(t, "a `key = \"value\"` line"))?;
        settings.push((key.to_ascii_lowercase(), unescape(v)));
    }
    // The last assignment wins, as when the VMX reads the file.
    let get = |k: &str| settings.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v.trim());
    let flag = |k: &str| {
        get(k).and_then(|v| match v.to_ascii_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        })
    };
    let number = |k: &str| get(k).and_then(|v| v.parse::<u64>().ok());
    let mut indices: Vec<u32> = settings
        .iter()
        .filter_map(|(k, v)| {
            let n = k.strip_prefix("ethernet")?.strip_suffix(".virtualdev")?;
            v.trim().eq_ignore_ascii_case("vrdma").then(|| n.parse().ok())?
        })
        .collect();
    indices.sort_unstable();
    indices.dedup();
    let pvrdma_adapters = indices
        .into_iter()
        .map(|n| {
            let key = |suffix: &str| format!("ethernet{n}.{suffix}");
            let non_empty = |v: Option<&str>| v.filter(|v| !v.is_empty()).map(str::to_string);
            VmxAdapter {
                ethernet_index: n,
                present: flag(&key("present")),
                mac_address: non_empty(get(&key("address"))).or_else(|| non_empty(get(&key("generatedaddress")))),
                network_name: non_empty(get(&key("networkname"))),
                native_endpoint_support: flag(&format!("vrdma{n}.nativeendpointsupport")),
            }
        })
        .collect();
    Ok((
        end_of(input),
        VmxConfig {
            display_name: get("displayname").filter(|v| !v.is_empty()).map(str::to_string),
            hardware_version: get("virtualhw.version").and_then(|v| v.parse().ok()),
            memsize_mb: number("memsize"),
            mem_min_mb: number("sched.mem.min"),
            mem_pin: flag("sched.mem.pin"),
            pvrdma_adapters,
        },
    ))
}

pub fn parse_vmx(input: &str) -> Result<VmxConfig, ParseError> {
    run("vmx", input, vmx)
}

/// One section of the `vmx_pvrdma_lines` loop: one running VM's `.vmx`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmxSection {
    /// The `.vmx` path, as `vm process list` printed its `Config File`.
    pub config_file: String,
    /// What its PVRDMA lines say, or why they could not be read (grep's error, a cut).
    pub config: Result<VmxConfig, String>,
    /// The section has no end marker: the batch broke off inside it.
    pub cut_off: bool,
}

const VMX_LINES: &str = crate::by_id::VMX_PVRDMA_LINES.id;

fn vmx_batch(input: &str) -> PResult<'_, Vec<VmxSection>> {
    let (rest, secs) = sections(input, "a `==> <.vmx path> <==` section header")?;
    let mut out = Vec::with_capacity(secs.len());
    for s in secs {
        // grep exits 1 when no line matched (a VM without any of these keys): still whole.
        let config = match (s.cut_off(), s.end) {
            (Some(cut), _) => Err(cut),
            (None, SectionEnd::Marker(code @ 2..)) => Err(format!(
                "exit status {code}: {}",
                non_empty(s.body).unwrap_or_else(|| "no error message".to_string())
            )),
            _ => match vmx(s.body) {
                Ok((_, c)) => Ok(c),
                Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
                    Err(to_parse_error(VMX_LINES, input, &e).to_string())
                }
                Err(nom::Err::Incomplete(_)) => Err("the .vmx lines ended early".to_string()),
            },
        };
        out.push(VmxSection {
            config_file: s.key.to_string(),
            config,
            cut_off: s.end == SectionEnd::Missing,
        });
    }
    Ok((rest, out))
}

/// The catalogue's `vmx_pvrdma_lines` loop: one `==> <.vmx path> <==` section per running VM.
/// A section that was cut, or whose file could not be read, is `Err` for that VM only.
pub fn parse_vmx_pvrdma_lines(input: &str) -> Result<Vec<VmxSection>, ParseError> {
    run(VMX_LINES, input, vmx_batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pvrdma_adapter_and_reservation() {
        let input = ".encoding = \"UTF-8\"\r\n\
config.version = \"8\"\r\n\
virtualHW.version = \"19\"\r\n\
memSize = \"8192\"\r\n\
sched.mem.min = \"8192\"\r\n\
sched.mem.pin = \"TRUE\"\r\n\
displayName = \"hpc |22node|22 01\"\r\n\
# comment = \"ignored\"\r\n\
ethernet0.virtualDev = \"vmxnet3\"\r\n\
ethernet0.networkName = \"VM Network\"\r\n\
ethernet1.virtualDev = \"vrdma\"\r\n\
ethernet1.present = \"TRUE\"\r\n\
ethernet1.addressType = \"vpx\"\r\n\
ethernet1.generatedAddress = \"00:50:56:8a:9f:c2\"\r\n\
vrdma1.nativeEndpointSupport = \"TRUE\"\r\n";
        assert_eq!(
            parse_vmx(input).unwrap(),
            VmxConfig {
                display_name: Some("hpc \"node\" 01".into()),
                hardware_version: Some(19),
                memsize_mb: Some(8192),
                mem_min_mb: Some(8192),
                mem_pin: Some(true),
                pvrdma_adapters: vec![VmxAdapter {
                    ethernet_index: 1,
                    present: Some(true),
                    mac_address: Some("00:50:56:8a:9f:c2".into()),
                    network_name: None,
                    native_endpoint_support: Some(true),
                }],
            }
        );
    }

    #[test]
    fn lowercase_keys_and_no_pvrdma() {
        let c = parse_vmx("   memsize = \"1024\"\n   ethernet0.present = \"true\"\n").unwrap();
        assert_eq!(c.memsize_mb, Some(1024));
        assert!(c.pvrdma_adapters.is_empty());
        assert_eq!(c.hardware_version, None);
    }

    #[test]
    fn pvrdma_lines_batch_with_odd_paths_cut_and_unreadable_sections() {
        let input = "==> /vmfs/volumes/vsan:52 1/a [b] c/a [b] c.vmx <==\n\
virtualHW.version = \"19\"\n\
ethernet1.virtualDev = \"vrdma\"\n\
ethernet1.address = \"00:50:56:8a:00:01\"\n\
<== /vmfs/volumes/vsan:52 1/a [b] c/a [b] c.vmx exit 0 ==>\n\
==> /vmfs/volumes/ds/gone/gone.vmx <==\n\
grep: /vmfs/volumes/ds/gone/gone.vmx: No such file or directory\n\
<== /vmfs/volumes/ds/gone/gone.vmx exit 2 ==>\n\
==> /vmfs/volumes/ds/plain/plain.vmx <==\n\
<== /vmfs/volumes/ds/plain/plain.vmx exit 1 ==>\n\
==> /vmfs/volumes/ds/cut/cut.vmx <==\n\
ethernet0.virtualDev = \"vrdma\"\n";
        let secs = parse_vmx_pvrdma_lines(input).unwrap();
        assert_eq!(secs.len(), 4);
        assert_eq!(secs[0].config_file, "/vmfs/volumes/vsan:52 1/a [b] c/a [b] c.vmx");
        let c = secs[0].config.as_ref().unwrap();
        assert_eq!(c.hardware_version, Some(19));
        assert_eq!(c.pvrdma_adapters[0].mac_address.as_deref(), Some("00:50:56:8a:00:01"));
        assert!(secs[1].config.as_ref().unwrap_err().contains("No such file"));
        assert!(secs[2].config.as_ref().unwrap().pvrdma_adapters.is_empty());
        assert!(secs[3].cut_off);
        assert!(secs[3].config.as_ref().unwrap_err().contains("no end marker"));
    }

    #[test]
    fn a_line_that_is_not_a_setting_is_an_error() {
        let e = parse_vmx("memSize = \"1024\"\ngarbage\n").unwrap_err();
        assert_eq!((e.command, e.line, e.column), ("vmx", 2, 1));
        assert_eq!(e.expected, "a `key = \"value\"` line");
    }
}
