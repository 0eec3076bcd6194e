//! `vsish -e ls /vmkModules/vrdma/pvrdmaDevices/` and the batched `vsish -e cat
//! .../<wid>_<idx>/properties`: per PVRDMA adapter, whether the physical HCA is in use
//! (`Physical HCA available:1`) or its traffic to other hosts falls back to TCP (`:0`).
//! Real sample (VMware paper "Paravirtual RDMA for HPC", Figure 12; the pasted figure lost
//! the closing `}`, so it is optional):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
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
//! "#;
//! let properties = parse_pvrdma_properties(output.trim_start_matches('\n'))?;
//! assert_eq!(properties.vmm_leader_id, Some(1001474360));
//! assert_eq!(properties.physical_hca_available, Some(true)); // the HCA carries its traffic
//! assert_eq!(properties.roce_version, Some(2));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! The `ls` children (`1001474360_0/`) are reconstructed from vsish's `ls` form (one child
//! per line, trailing `/`) and the node names the paper gives.
use crate::common::{
    bool01, end_of, fail, is_blank, line_iter, non_empty, run, sections, to_parse_error, trim, PResult, Section,
    SectionEnd,
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
    pub fields: PropertyMembers,
}

/// The `key:value` members of a properties block, in order: one owned text holding every
/// key and value back to back, and where each ends. Two allocations per block instead of
/// two per member (a block has about twenty). Serializes, compares and prints as the list
/// of `(key, value)` pairs it holds.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct PropertyMembers {
    text: String,
    /// Per member: where its key ends and where its value ends in `text` (a key starts
    /// where the previous value ended).
    ends: Vec<(usize, usize)>,
}

impl PropertyMembers {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `n`-th member as `(key, value)`.
    pub fn get(&self, n: usize) -> Option<(&str, &str)> {
        let start = match n.checked_sub(1) {
            Some(p) => self.ends.get(p)?.1,
            None => 0,
        };
        let &(key_end, value_end) = self.ends.get(n)?;
        Some((self.text.get(start..key_end)?, self.text.get(key_end..value_end)?))
    }

    /// The members in order, as `(key, value)`.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        (0..self.ends.len()).map(|n| self.get(n).unwrap_or_default())
    }

    /// The value of the first member with this key.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Appends a member whose key is `prefix` parts and `key` joined by `/`.
    fn push(&mut self, prefix: &[&str], key: &str, value: &str) {
        for p in prefix {
            self.text.push_str(p);
            self.text.push('/');
        }
        self.text.push_str(key);
        let key_end = self.text.len();
        self.text.push_str(value);
        self.ends.push((key_end, self.text.len()));
    }
}

impl std::fmt::Debug for PropertyMembers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for PropertyMembers {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// One section of the batched properties query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PvrdmaPropertiesSection {
    pub device: PvrdmaDeviceId,
    /// The parsed block, or the vsish error text / parse error message for this device.
    pub properties: Result<PvrdmaProperties, String>,
    /// The section has no end marker: the batch broke off inside it.
    pub cut_off: bool,
}

const LS: &str = crate::by_id::PVRDMA_DEVICES_LS.id;
const PROPERTIES: &str = crate::by_id::PVRDMA_PROPERTIES.id;
const TITLE: &str = "PVRDMA Device Properties";

/// `1001474360_0` or `1001474360_0/`. Without nom, with nom's error positions: the
/// start of a number that is missing or overflows, the spot where `_` was expected, or
/// what is left after the optional `/`.
fn device_id(i: &str) -> PResult<'_, PvrdmaDeviceId> {
    const EXPECTED: &str = "a `<World ID>_<adapter index>/` node name";
    /// The leading ASCII digits of `s` as a number, and the rest; `Err(s)` when there are
    /// none or the number overflows (nom's `u64`/`u32` fail at their input then).
    fn number<T: std::str::FromStr>(s: &str) -> Result<(T, &str), &str> {
        let n = s.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(s.len());
        match (s.get(..n), s.get(n..)) {
            (Some(d), Some(rest)) if n > 0 => d.parse().map(|v| (v, rest)).map_err(|_| s),
            _ => Err(s),
        }
    }
    let (world_id, rest) = number::<u64>(i).map_err(|at| fail(at, EXPECTED))?;
    let rest = rest.strip_prefix('_').ok_or_else(|| fail(rest, EXPECTED))?;
    let (index, rest) = number::<u32>(rest).map_err(|at| fail(at, EXPECTED))?;
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    if !rest.is_empty() {
        return Err(fail(rest, EXPECTED));
    }
    Ok((rest, PvrdmaDeviceId { world_id, index }))
}

fn device_ls(input: &str) -> PResult<'_, Vec<PvrdmaDeviceId>> {
    let mut out = Vec::new();
    for l in line_iter(input).filter(|l| !is_blank(l)) {
        let (_, id) = device_id(trim(l))?;
        out.push(id);
    }
    Ok((end_of(input), out))
}

/// `key:value` with no space after the colon; keys hold spaces and punctuation.
fn member(l: &str) -> PResult<'_, (&str, &str)> {
    // A byte loop: lines are short, a searcher costs more than it saves.
    match l.bytes().position(|b| b == b':') {
        Some(at) if at > 0 => Ok((end_of(l), (l.get(..at).unwrap_or(""), l.get(at + 1..).unwrap_or("")))),
        _ => Err(fail(l, "a `key:value` member")),
    }
}

fn properties(input: &str) -> PResult<'_, PvrdmaProperties> {
    block(input, false)
}

/// The block; `require_close`: its closing `}` must be there (output of the catalogue's
/// marked loop, where a missing brace means vsish's output was cut).
fn block(input: &str, require_close: bool) -> PResult<'_, PvrdmaProperties> {
    let mut lines = line_iter(input);
    let opening = lines.find(|l| !is_blank(l));
    let is_title = |l: &str| l.trim().strip_suffix('{').is_some_and(|t| t.trim() == TITLE);
    match opening {
        Some(l) if is_title(l) => {}
        Some(l) => return Err(fail(l, "a `PVRDMA Device Properties {` line")),
        None => return Err(fail(input, "a `PVRDMA Device Properties {` line")),
    }
    // Room for a whole block: vsish prints about twenty members, whose keys and values
    // are shorter than the block's text.
    let mut fields = PropertyMembers {
        text: String::with_capacity(input.len()),
        ends: Vec::with_capacity(24),
    };
    // Keys of the nested `key:Title {` blocks we are in; their members are kept as
    // `key/member` so nothing is lost and nothing collides with the top-level names.
    let mut nested: Vec<&str> = Vec::new();
    // The first top-level value of each member read into a typed field, in [`KNOWN`] order.
    let mut known: [Option<&str>; KNOWN.len()] = [None; KNOWN.len()];
    let mut closed = false;
    for l in lines {
        let t = trim(l);
        if t.is_empty() {
            continue;
        }
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
            nested.push(key);
            continue;
        }
        if nested.is_empty() {
            // A nested key holds a `/`, which no known name does.
            if let Some(slot) = KNOWN.iter().position(|k| *k == key).and_then(|i| known.get_mut(i)) {
                slot.get_or_insert(value);
            }
        }
        fields.push(&nested, key, value);
    }
    if require_close && !closed {
        return Err(fail(
            end_of(input),
            "the closing `}` of the properties block (vsish's output was cut off)",
        ));
    }
    let [leader, index, mac, hca, namespace, native, prefer_v1, roce, mtu] = known;
    Ok((
        end_of(input),
        PvrdmaProperties {
            vmm_leader_id: leader.and_then(|v| v.parse().ok()),
            adapter_index: index.and_then(|v| v.parse().ok()),
            mac_address: mac.and_then(non_empty),
            physical_hca_available: hca.and_then(bool01),
            namespace_allocated: namespace.and_then(bool01),
            native_endpoints_supported: native.and_then(bool01),
            prefer_roce_v1: prefer_v1.and_then(bool01),
            roce_version: roce.and_then(|v| v.parse().ok()),
            active_mtu: mtu.and_then(|v| v.parse().ok()),
            fields,
        },
    ))
}

/// The members read into [`PvrdmaProperties`]' typed fields.
const KNOWN: [&str; 9] = [
    "VMM leader ID of VM",
    "adapter index",
    "MAC address",
    "Physical HCA available",
    "Namespace allocated",
    "Native endpoints supported",
    "Prefer RoCE v1 over v2",
    "RoCE version",
    "Active MTU",
];

/// What one batch section says about its device: the block, or why there is none.
fn section_properties<'a>(whole: &'a str, s: &Section<'a>) -> Result<PvrdmaProperties, String> {
    if let Some(cut) = s.cut_off() {
        return Err(cut);
    }
    let body = s.body;
    let first = line_iter(body).find(|l| !is_blank(l));
    let Some(first) = first else {
        return Err(match s.end {
            SectionEnd::Marker(code @ 1..) => format!("vsish exited with status {code} and printed nothing"),
            _ => "vsish printed nothing for this device".to_string(),
        });
    };
    if !first.trim_start().starts_with(TITLE) {
        // vsish's own complaint (`VSISHPath_Form():Extraneous ...`), kept verbatim.
        let text: Vec<&str> = line_iter(body).filter(|l| !is_blank(l)).map(trim).collect();
        // A shell reports a query killed by signal N as status 128 + N.
        return Err(match s.end {
            SectionEnd::Marker(code @ 129..=192) => format!(
                "vsish was killed by signal {} (exit status {code}): {}",
                code - 128,
                text.join("\n")
            ),
            _ => text.join("\n"),
        });
    }
    if let SectionEnd::Marker(code @ 1..) = s.end {
        return Err(format!("vsish exited with status {code}: {}", first.trim()));
    }
    match block(body, matches!(s.end, SectionEnd::Marker(_))) {
        Ok((_, p)) => Ok(p),
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => Err(to_parse_error(PROPERTIES, whole, &e).to_string()),
        Err(nom::Err::Incomplete(_)) => Err("the properties block ended early".to_string()),
    }
}

fn properties_batch(input: &str) -> PResult<'_, Vec<PvrdmaPropertiesSection>> {
    let (rest, secs) = sections(input, "a `==> <World ID>_<adapter index> <==` section header")?;
    let mut out = Vec::with_capacity(secs.len());
    for s in secs {
        let (_, device) =
            device_id(s.key).map_err(|_| fail(s.header, "a `==> <World ID>_<adapter index> <==` section header"))?;
        // The block names its device (VMware, "Paravirtual RDMA for High Performance
        // Computing", Figure 12: `VMM leader ID of VM` is the World ID of
        // the node name, `adapter index` its index): another device's block in this
        // section says nothing about this adapter.
        let properties = section_properties(input, &s).and_then(|p| {
            let wid_ok = p.vmm_leader_id.is_none_or(|w| w == device.world_id);
            let idx_ok = p.adapter_index.is_none_or(|i| i == device.index);
            if wid_ok && idx_ok {
                Ok(p)
            } else {
                Err(format!(
                    "the section of {}_{} holds the properties of {}_{}",
                    device.world_id,
                    device.index,
                    p.vmm_leader_id.map_or_else(|| "?".to_string(), |w| w.to_string()),
                    p.adapter_index.map_or_else(|| "?".to_string(), |i| i.to_string())
                ))
            }
        });
        out.push(PvrdmaPropertiesSection {
            device,
            properties,
            cut_off: s.end == SectionEnd::Missing,
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

    #[test]
    fn a_section_holding_another_devices_block_is_that_sections_error() {
        let input = "==> 2101874_0 <==\nPVRDMA Device Properties {\n   VMM leader ID of VM:2101874\n   adapter index:1\n   Physical HCA available:1\n}\n==> 2101874_1 <==\nPVRDMA Device Properties {\n   VMM leader ID of VM:2101874\n   adapter index:1\n   Physical HCA available:0\n}\n";
        let s = parse_pvrdma_properties_batch(input).unwrap();
        assert!(s[0]
            .properties
            .as_ref()
            .unwrap_err()
            .contains("holds the properties of 2101874_1"));
        assert_eq!(s[1].properties.as_ref().unwrap().physical_hca_available, Some(false));
    }

    /// VMware, "Paravirtual RDMA for High Performance Computing", Figure 12, as printed (no
    /// indentation, no closing brace).
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
        assert_eq!(p.fields.get(5), Some(("Hardware S/R available", "0")));
        assert_eq!(p.fields.value("RoCE version"), Some("2"));
        assert_eq!(p.fields.get(17), None);
    }

    #[test]
    fn indented_with_brace_nested_block_and_odd_hca_value() {
        let input = "PVRDMA Device Properties {\r\n   Physical HCA available:2\r\n   stats:Counters {\r\n      sent:5\r\n   }\r\n   Active MTU:4096\r\n}\r\n";
        let p = parse_pvrdma_properties(input).unwrap();
        assert_eq!(p.physical_hca_available, None);
        assert_eq!(p.active_mtu, Some(4096));
        assert_eq!(
            p.fields.iter().collect::<Vec<_>>(),
            [
                ("Physical HCA available", "2"),
                ("stats/sent", "5"),
                ("Active MTU", "4096"),
            ]
        );
        assert_eq!(
            format!("{:?}", p.fields),
            r#"[("Physical HCA available", "2"), ("stats/sent", "5"), ("Active MTU", "4096")]"#
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
    fn marked_batch_needs_the_closing_brace_and_the_end_marker() {
        let whole = "PVRDMA Device Properties {\n   Physical HCA available:1\n}\n";
        let input = format!(
            "==> 1_0 <==\n{whole}<== 1_0 exit 0 ==>\n==> 1_1 <==\nPVRDMA Device Properties {{\n   Physical HCA available:1\n<== 1_1 exit 0 ==>\n==> 1_2 <==\n{whole}"
        );
        let b = parse_pvrdma_properties_batch(&input).unwrap();
        assert_eq!(b[0].properties.as_ref().unwrap().physical_hca_available, Some(true));
        assert!(
            b[1].properties.as_ref().unwrap_err().contains("closing `}`"),
            "{:?}",
            b[1]
        );
        // A whole block whose iteration never printed its end marker: vsish did not finish.
        assert!(b[2].cut_off);
        assert!(b[2].properties.as_ref().unwrap_err().contains("no end marker"));
        // Captures from before the markers keep the old rule: the brace is optional.
        let legacy = parse_pvrdma_properties_batch(&format!("==> 1001474360_0 <==\n{FIGURE_12}")).unwrap();
        assert_eq!(
            legacy[0].properties.as_ref().unwrap().physical_hca_available,
            Some(true)
        );
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
