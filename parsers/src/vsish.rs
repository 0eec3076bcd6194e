//! `vsish -e ls /vmkModules/vrdma/pvrdmaDevices/` and the batched `vsish -e cat
//! .../<wid>_<idx>/properties`: per PVRDMA adapter, whether the physical HCA is in use
//! (`Physical HCA available:1`) or its traffic to other hosts falls back to TCP (`:0`).
//! Real sample (VMware paper "Paravirtual RDMA for HPC", Figure 12; the pasted figure lost
//! the closing `}`, so it is optional):
//!
//! ```text
//! PVRDMA Device Properties {
//! VMM leader ID of VM:1001474360
//! adapter index:0
//! MAC address:00:50:56:8a:9f:c2
//! Physical HCA available:1
//! Namespace allocated:0
//! Native endpoints supported:0
//! Prefer RoCE v1 over v2:0
//! RoCE version:2
//! Active MTU:1024
//! ```
//!
//! The `ls` children (`1001474360_0/`) are reconstructed from vsish's `ls` form (one child
//! per line, trailing `/`) and the node names the paper gives.
use crate::common::{
    bool01, end_of, fail, is_blank, line_iter, non_empty, run, sections, to_parse_error, trim, PResult,
};
use crate::ParseError;
use serde::Serialize;

/// A node name under `/vmkModules/vrdma/pvrdmaDevices/`: `<World ID>_<adapter index>/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PvrdmaDeviceId {
    pub world_id: u64,
    pub index: u32,
}

/// The `PVRDMA Device Properties { ... }` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PvrdmaProperties {
    /// `VMM leader ID of VM`
    pub vmm_leader_id: Option<u64>,
    pub adapter_index: Option<u32>,
    pub mac_address: Option<String>,
    /// `Physical HCA available` — the verdict line. `None` when missing or not 0/1.
    pub physical_hca_available: Option<bool>,
    pub namespace_allocated: Option<bool>,
    pub native_endpoints_supported: Option<bool>,
    pub prefer_roce_v1: Option<bool>,
    pub roce_version: Option<u32>,
    pub active_mtu: Option<u32>,
    /// Every `key:value` member in order, including the ones above.
    pub fields: Vec<(String, String)>,
}

/// One section of the batched properties query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PvrdmaPropertiesSection {
    pub device: PvrdmaDeviceId,
    /// The parsed block, or the vsish error text / parse error message for this device.
    pub properties: Result<PvrdmaProperties, String>,
}

const LS: &str = "vsish_pvrdma_devices_ls";
const PROPERTIES: &str = "vsish_pvrdma_properties";
const TITLE: &str = "PVRDMA Device Properties";

/// `1001474360_0` or `1001474360_0/`.
fn device_id(i: &str) -> PResult<'_, PvrdmaDeviceId> {
    let expected = "a `<World ID>_<adapter index>/` node name";
    let name = i.strip_suffix('/').unwrap_or(i);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match name.split_once('_') {
        Some((w, a)) if digits(w) && digits(a) => match (w.parse(), a.parse()) {
            (Ok(world_id), Ok(index)) => Ok((end_of(i), PvrdmaDeviceId { world_id, index })),
            _ => Err(fail(i, expected)),
        },
        _ => Err(fail(i, expected)),
    }
}

fn device_ls(input: &str) -> PResult<'_, Vec<PvrdmaDeviceId>> {
    let mut out = Vec::new();
    for l in line_iter(input).filter(|l| !is_blank(l)) {
        let (_, id) = device_id(l.trim())?;
        out.push(id);
    }
    Ok((end_of(input), out))
}

/// `key:value` with no space after the colon; keys hold spaces and punctuation.
fn member(l: &str) -> PResult<'_, (&str, &str)> {
    // A byte loop: lines are short, a memchr call costs more than it saves.
    match l.bytes().position(|b| b == b':') {
        Some(at) if at > 0 => Ok((end_of(l), (l.get(..at).unwrap_or(""), l.get(at + 1..).unwrap_or("")))),
        _ => Err(fail(l, "a `key:value` member")),
    }
}

fn properties(input: &str) -> PResult<'_, PvrdmaProperties> {
    let mut it = line_iter(input).filter(|l| !is_blank(l));
    let opening = it.next();
    let is_title = |l: &str| l.trim().strip_suffix('{').is_some_and(|t| t.trim() == TITLE);
    match opening {
        Some(l) if is_title(l) => {}
        Some(l) => return Err(fail(l, "a `PVRDMA Device Properties {` line")),
        None => return Err(fail(input, "a `PVRDMA Device Properties {` line")),
    }
    let mut fields: Vec<(String, String)> = Vec::with_capacity(20);
    // Keys of the nested `key:Title {` blocks we are in; their members are kept as
    // `key/member` so nothing is lost and nothing collides with the top-level names.
    let mut nested: Vec<String> = Vec::new();
    let mut closed = false;
    for l in it {
        let t = trim(l);
        if closed {
            return Err(fail(t, "nothing after the closing `}`"));
        }
        if t == "}" {
            if nested.pop().is_none() {
                closed = true;
            }
            continue;
        }
        let (_, (key, value)) = member(t).map_err(|_| fail(t, "a `key:value` member"))?;
        let (key, value) = (trim(key), trim(value));
        if value.ends_with('{') {
            nested.push(key.to_string());
            continue;
        }
        let key = if nested.is_empty() {
            key.to_string()
        } else {
            format!("{}/{key}", nested.join("/"))
        };
        fields.push((key, value.to_string()));
    }
    let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    Ok((
        end_of(input),
        PvrdmaProperties {
            vmm_leader_id: get("VMM leader ID of VM").and_then(|v| v.parse().ok()),
            adapter_index: get("adapter index").and_then(|v| v.parse().ok()),
            mac_address: get("MAC address").and_then(non_empty),
            physical_hca_available: get("Physical HCA available").and_then(bool01),
            namespace_allocated: get("Namespace allocated").and_then(bool01),
            native_endpoints_supported: get("Native endpoints supported").and_then(bool01),
            prefer_roce_v1: get("Prefer RoCE v1 over v2").and_then(bool01),
            roce_version: get("RoCE version").and_then(|v| v.parse().ok()),
            active_mtu: get("Active MTU").and_then(|v| v.parse().ok()),
            fields,
        },
    ))
}

/// What one batch section says about its device: the block, or why there is none.
fn section_properties<'a>(whole: &'a str, body: &'a str) -> Result<PvrdmaProperties, String> {
    let first = line_iter(body).find(|l| !is_blank(l));
    let Some(first) = first else {
        return Err("vsish printed nothing for this device".to_string());
    };
    if !first.trim_start().starts_with(TITLE) {
        // vsish's own complaint (`VSISHPath_Form():Extraneous ...`), kept verbatim.
        let text: Vec<&str> = line_iter(body).filter(|l| !is_blank(l)).map(str::trim).collect();
        return Err(text.join("\n"));
    }
    match properties(body) {
        Ok((_, p)) => Ok(p),
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => Err(to_parse_error(PROPERTIES, whole, &e).to_string()),
        Err(nom::Err::Incomplete(_)) => Err("the properties block ended early".to_string()),
    }
}

fn properties_batch(input: &str) -> PResult<'_, Vec<PvrdmaPropertiesSection>> {
    let (rest, secs) = sections(input, "a `==> <World ID>_<adapter index> <==` section header")?;
    let mut out = Vec::new();
    for s in secs {
        let (_, device) =
            device_id(s.key).map_err(|_| fail(s.header, "a `==> <World ID>_<adapter index> <==` section header"))?;
        out.push(PvrdmaPropertiesSection {
            device,
            properties: match s.problem {
                Some(problem) => Err(problem),
                None => section_properties(input, s.body),
            },
        });
    }
    Ok((rest, out))
}

pub fn parse_pvrdma_device_ls(input: &str) -> Result<Vec<PvrdmaDeviceId>, ParseError> {
    run(LS, input, device_ls)
}

/// One `vsish -e cat .../properties` output.
pub fn parse_pvrdma_properties(input: &str) -> Result<PvrdmaProperties, ParseError> {
    run(PROPERTIES, input, properties)
}

/// The catalogue's batched form: one `==> <wid>_<idx> <==` section per adapter. A section
/// holding vsish's error text, nothing, or a malformed block is `Err(message)` for that
/// adapter only.
pub fn parse_pvrdma_properties_batch(input: &str) -> Result<Vec<PvrdmaPropertiesSection>, ParseError> {
    run(PROPERTIES, input, properties_batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 003, Figure 12, as printed (no indentation, no closing brace).
    const FIGURE_12: &str = "PVRDMA Device Properties {\nVMM leader ID of VM:1001474360\nadapter index:0\nMAC address:00:50:56:8a:9f:c2\nPhysical HCA available:1\nNamespace allocated:0\nHardware S/R available:0\nMR tracing available:0\nSRQ support enabled:1\nMR Key extension enabled:1\nPhys handles enabled:1\nNative endpoints supported:0\nNative vmotion supported:0\nDMA accelerator enabled:0\nDMA accelerator transfer threshold:32768\nPrefer RoCE v1 over v2:0\nRoCE version:2\nActive MTU:1024\n";

    #[test]
    fn figure_12_without_closing_brace() {
        let p = parse_pvrdma_properties(FIGURE_12).unwrap();
        assert_eq!(p.vmm_leader_id, Some(1001474360));
        assert_eq!(p.adapter_index, Some(0));
        assert_eq!(p.mac_address.as_deref(), Some("00:50:56:8a:9f:c2"));
        assert_eq!(p.physical_hca_available, Some(true));
        assert_eq!(p.namespace_allocated, Some(false));
        assert_eq!(p.native_endpoints_supported, Some(false));
        assert_eq!(p.prefer_roce_v1, Some(false));
        assert_eq!(p.roce_version, Some(2));
        assert_eq!(p.active_mtu, Some(1024));
        assert_eq!(p.fields.len(), 17);
        assert_eq!(p.fields[5], ("Hardware S/R available".to_string(), "0".to_string()));
    }

    #[test]
    fn indented_with_brace_nested_block_and_odd_hca_value() {
        let input = "PVRDMA Device Properties {\r\n   Physical HCA available:2\r\n   stats:Counters {\r\n      sent:5\r\n   }\r\n   Active MTU:4096\r\n}\r\n";
        let p = parse_pvrdma_properties(input).unwrap();
        assert_eq!(p.physical_hca_available, None);
        assert_eq!(p.active_mtu, Some(4096));
        assert_eq!(
            p.fields,
            vec![
                ("Physical HCA available".to_string(), "2".to_string()),
                ("stats/sent".to_string(), "5".to_string()),
                ("Active MTU".to_string(), "4096".to_string()),
            ]
        );
    }

    #[test]
    fn vsish_error_is_not_a_block() {
        let e = parse_pvrdma_properties("VSISHPath_Form():Extraneous 'x' in path.\n").unwrap_err();
        assert_eq!(e.expected, "a `PVRDMA Device Properties {` line");
        let e = parse_pvrdma_properties("PVRDMA Device Properties {\nno colon\n").unwrap_err();
        assert_eq!((e.line, e.expected), (2, "a `key:value` member"));
    }

    #[test]
    fn ls_children() {
        assert_eq!(
            parse_pvrdma_device_ls("1001474360_0/\n1001474360_1/\n").unwrap(),
            vec![
                PvrdmaDeviceId {
                    world_id: 1001474360,
                    index: 0
                },
                PvrdmaDeviceId {
                    world_id: 1001474360,
                    index: 1
                },
            ]
        );
        assert_eq!(parse_pvrdma_device_ls("").unwrap(), vec![]);
        let e = parse_pvrdma_device_ls("1001474360_0/\nstats/\n").unwrap_err();
        assert_eq!((e.line, e.expected), (2, "a `<World ID>_<adapter index>/` node name"));
    }

    #[test]
    fn batch_keeps_each_sections_failure_to_itself() {
        let input = format!(
            "==> 1001474360_0 <==\n{FIGURE_12}}}\n==> 1001474360_1 <==\nVSISHPath_Form():Extraneous '1001474360_1' in path.\nVSISHCmdGetInt():mal-formed path\n==> 7_0 <==\n==> 8_0 <==\nPVRDMA Device Properties {{\n   bad line\n}}\n"
        );
        let b = parse_pvrdma_properties_batch(&input).unwrap();
        assert_eq!(b.len(), 4);
        assert_eq!(
            b[0].device,
            PvrdmaDeviceId {
                world_id: 1001474360,
                index: 0
            }
        );
        assert_eq!(
            b[0].properties.as_ref().map(|p| p.physical_hca_available),
            Ok(Some(true))
        );
        assert_eq!(
            b[1].properties,
            Err("VSISHPath_Form():Extraneous '1001474360_1' in path.\nVSISHCmdGetInt():mal-formed path".to_string())
        );
        assert_eq!(
            b[2].properties,
            Err("vsish printed nothing for this device".to_string())
        );
        assert_eq!(
            b[3].properties,
            Err(
                "vsish_pvrdma_properties: line 27, column 4: expected a `key:value` member, found \"   bad line\""
                    .to_string()
            )
        );
        assert_eq!(parse_pvrdma_properties_batch("").unwrap(), vec![]);
    }
}
