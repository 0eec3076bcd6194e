//! `esxcli vm process list` and the batched `esxcli network vm port list -w <World ID>`:
//! which VMs run, and which switch, port group and uplink each VM MAC really uses.
//! Real sample of the process list (a name with brackets and spaces; records are separated
//! by a blank or whitespace-only line; no running VM = empty output):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! uranium-esx36 [knagaraju] FGT_VM64_ESXI
//!    World ID: 2557323
//!    Process ID: 0
//!    VMX Cartel ID: 2557322
//!    UUID: cc cf 7f af 0f 3d 45 23-8a 69 1f 43 4e c2 97 56
//!    Display Name: uranium-esx36 [knagaraju] FGT_VM64_ESXI
//!    Config File: /vmfs/volumes/58f72d53-3d2f86ee-e2b8-d4ae52e8199a/machines/uranium-esx36 [knagaraju] FGT_VM64_ESXI/uranium-esx36 [knagaraju] FGT_VM64_ESXI.vmx
//! "#;
//! let vms = parse_vm_process_list(output.trim_start_matches('\n'))?;
//! assert_eq!(vms[0].world_id, 2557323);
//! assert_eq!(vms[0].display_name, "uranium-esx36 [knagaraju] FGT_VM64_ESXI");
//! # Ok::<(), ParseError>(())
//! ```
//!
//! The port list has **no public capture**; its form here is **reconstructed**: records
//! separated by blank lines, each `   Port ID:`, `vSwitch:`, `Portgroup:`, `DVPort ID:`,
//! `MAC Address:`, `IP Address:`, `Team Uplink:`, `Uplink Port ID:`, `Active Filters:`.
//! The batch (see the catalogue's loop) heads each World ID's output with `==> <wid> <==`.
use crate::common::{
    end_of, error_text, fail, find, is_blank, key_value, line_iter, non_empty, offset_in, records, run, sections,
    to_parse_error, trim_start, value, PResult, SectionEnd,
};
use crate::ParseError;
use nom::combinator::all_consuming;
use nom::Parser;
use serde::Serialize;

/// One record of `esxcli vm process list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmProcess {
    /// `Display Name:` (falls back to the record's name line).
    pub display_name: String,
    pub world_id: u64,
    pub process_id: Option<u64>,
    pub vmx_cartel_id: Option<u64>,
    pub uuid: Option<String>,
    pub config_file: Option<String>,
}

/// One record of `esxcli network vm port list -w <World ID>`: its values in one owned
/// text (one allocation per port instead of one per field), read through the accessors or
/// [`VmPort::view`]. Serializes as the [`VmPortView`] of its fields.
#[derive(Clone, PartialEq, Eq)]
pub struct VmPort {
    /// The present values back to back, in [`PORT_KEYS`] order.
    text: Box<str>,
    /// Per field, in [`PORT_KEYS`] order: its value's start and end in `text`; `(0, 0)` for
    /// a field that is missing or empty.
    spans: [(usize, usize); 8],
}

/// A [`VmPort`]'s fields, borrowed from it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct VmPortView<'a> {
    pub port_id: Option<&'a str>,
    pub vswitch: Option<&'a str>,
    pub portgroup: Option<&'a str>,
    /// `None` when empty (standard vSwitch port).
    pub dvport_id: Option<&'a str>,
    pub mac_address: Option<&'a str>,
    pub ip_address: Option<&'a str>,
    /// `None` when empty or `void`.
    pub team_uplink: Option<&'a str>,
    pub uplink_port_id: Option<&'a str>,
}

/// The port record's keys, in [`VmPortView`]'s field order.
const PORT_KEYS: [&str; 8] = [
    "Port ID",
    "vSwitch",
    "Portgroup",
    "DVPort ID",
    "MAC Address",
    "IP Address",
    "Team Uplink",
    "Uplink Port ID",
];

impl VmPort {
    /// A port with these fields; an empty value reads back as `None`, as the parser gives it.
    pub fn new(v: VmPortView<'_>) -> VmPort {
        VmPort::from_values([
            v.port_id,
            v.vswitch,
            v.portgroup,
            v.dvport_id,
            v.mac_address,
            v.ip_address,
            v.team_uplink,
            v.uplink_port_id,
        ])
    }

    fn from_values(values: [Option<&str>; 8]) -> VmPort {
        let len = values.iter().flatten().map(|v| v.len()).sum();
        let mut text = String::with_capacity(len);
        let mut spans = [(0, 0); 8];
        for (span, v) in spans.iter_mut().zip(values) {
            if let Some(v) = v.filter(|v| !v.is_empty()) {
                *span = (text.len(), text.len() + v.len());
                text.push_str(v);
            }
        }
        VmPort {
            text: text.into_boxed_str(),
            spans,
        }
    }

    fn field(&self, n: usize) -> Option<&str> {
        let &(start, end) = self.spans.get(n)?;
        self.text.get(start..end).filter(|v| !v.is_empty())
    }

    pub fn view(&self) -> VmPortView<'_> {
        VmPortView {
            port_id: self.port_id(),
            vswitch: self.vswitch(),
            portgroup: self.portgroup(),
            dvport_id: self.dvport_id(),
            mac_address: self.mac_address(),
            ip_address: self.ip_address(),
            team_uplink: self.team_uplink(),
            uplink_port_id: self.uplink_port_id(),
        }
    }

    pub fn port_id(&self) -> Option<&str> {
        self.field(0)
    }
    pub fn vswitch(&self) -> Option<&str> {
        self.field(1)
    }
    pub fn portgroup(&self) -> Option<&str> {
        self.field(2)
    }
    /// `None` when empty (standard vSwitch port).
    pub fn dvport_id(&self) -> Option<&str> {
        self.field(3)
    }
    pub fn mac_address(&self) -> Option<&str> {
        self.field(4)
    }
    pub fn ip_address(&self) -> Option<&str> {
        self.field(5)
    }
    /// `None` when empty or `void`.
    pub fn team_uplink(&self) -> Option<&str> {
        self.field(6)
    }
    pub fn uplink_port_id(&self) -> Option<&str> {
        self.field(7)
    }
}

impl std::fmt::Debug for VmPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.view();
        f.debug_struct("VmPort")
            .field("port_id", &v.port_id)
            .field("vswitch", &v.vswitch)
            .field("portgroup", &v.portgroup)
            .field("dvport_id", &v.dvport_id)
            .field("mac_address", &v.mac_address)
            .field("ip_address", &v.ip_address)
            .field("team_uplink", &v.team_uplink)
            .field("uplink_port_id", &v.uplink_port_id)
            .finish()
    }
}

impl Serialize for VmPort {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.view().serialize(s)
    }
}

/// One section of the batched port query (one `==> world <id> <==` block).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmPorts {
    pub world_id: u64,
    pub ports: Vec<VmPort>,
    /// An `Error: ...` line esxcli printed for this world instead of ports, or why the
    /// section cannot be read (cut off, non-zero exit).
    pub error: Option<String>,
    /// The section has no end marker: the batch broke off inside it.
    pub cut_off: bool,
}

fn process_list(input: &str) -> PResult<'_, Vec<VmProcess>> {
    let (rest, recs) = records(input)?;
    let mut out = Vec::new();
    for r in &recs {
        let f = &r.fields;
        let world_id = match find(f, "World ID") {
            Some(w) => w
                .value
                .trim()
                .parse()
                .map_err(|_| fail(w.line, "a numeric `World ID:`"))?,
            None => return Err(fail(r.name_line, "a VM record with a `World ID:` field")),
        };
        let number = |k: &str| value(f, k).and_then(|v| v.trim().parse().ok());
        out.push(VmProcess {
            display_name: value(f, "Display Name")
                .and_then(non_empty)
                .unwrap_or_else(|| r.name.to_string()),
            world_id,
            process_id: number("Process ID"),
            vmx_cartel_id: number("VMX Cartel ID"),
            uuid: value(f, "UUID").and_then(non_empty),
            config_file: value(f, "Config File").and_then(non_empty),
        });
    }
    Ok((rest, out))
}

/// The port records of one output, in one pass over its lines: blocks of `Key: value`
/// lines split at blank lines and where a key comes again, each needing a `Port ID:`.
/// `others`: room for the keys a port has besides [`PORT_KEYS`] (reused across sections).
fn port_list<'a>(input: &'a str, others: &mut Vec<&'a str>) -> PResult<'a, Vec<VmPort>> {
    let mut out = Vec::new();
    // The open block: its first line, and the raw value of each known key it has.
    let mut first: Option<&'a str> = None;
    let mut values: [Option<&'a str>; 8] = [None; 8];
    // A block without `Port ID:` is an error, but one in a later line's `Key: value` comes
    // first (the whole output is read into blocks before the blocks are checked).
    let mut missing_port_id: Option<&'a str> = None;
    let mut separated = true;
    let mut close = |first: Option<&'a str>, values: &mut [Option<&'a str>; 8]| {
        if let (Some(line), [port_id, ..]) = (first, &values) {
            if port_id.is_none() {
                missing_port_id.get_or_insert(line);
            } else {
                out.push(port(values));
            }
        }
        *values = [None; 8];
    };
    for l in line_iter(input) {
        if is_blank(l) {
            separated = true;
            continue;
        }
        let (_, (key, value)) = key_value(l)?;
        let slot = PORT_KEYS.iter().position(|k| k.eq_ignore_ascii_case(key));
        let repeated = match slot {
            Some(n) => values.get(n).is_some_and(Option::is_some),
            None => others.iter().any(|o| o.eq_ignore_ascii_case(key)),
        };
        if separated || repeated {
            close(first.take(), &mut values);
            others.clear();
        }
        first.get_or_insert_with(|| trim_start(l));
        match slot.and_then(|n| values.get_mut(n)) {
            Some(v) => *v = Some(value),
            None => others.push(key),
        }
        separated = false;
    }
    close(first, &mut values);
    others.clear();
    match missing_port_id {
        Some(at) => Err(fail(at, "a port record starting with `Port ID:`")),
        None => Ok((end_of(input), out)),
    }
}

/// A port from its block's values (as [`key_value`] gives them: trimmed); empty values and
/// `void` uplinks are none.
fn port(values: &[Option<&str>; 8]) -> VmPort {
    let mut v = values.map(|v| v.filter(|v| !v.is_empty()));
    if let Some(uplink) = v.get_mut(6) {
        *uplink = uplink.filter(|u| !u.eq_ignore_ascii_case("void"));
    }
    VmPort::from_values(v)
}

const PORT_BATCH: &str = crate::by_id::VM_PORT_LIST.id;

fn port_batch(input: &str) -> PResult<'_, Vec<VmPorts>> {
    let (rest, secs) = sections(input, "a `==> <World ID> <==` section header")?;
    let mut out = Vec::with_capacity(secs.len());
    let mut others = Vec::new();
    for s in secs {
        let world_id = s
            .key
            .parse()
            .map_err(|_| fail(s.header, "a `==> <World ID> <==` section header"))?;
        // One VM's failure (it stopped between the two esxcli calls, say) stays that VM's.
        let cut = s.cut_off();
        let (ports, error) = if let Some(cut) = &cut {
            (Vec::new(), Some(cut.clone()))
        } else if error_text(s.body).is_some() {
            (Vec::new(), non_empty(s.body))
        } else if let SectionEnd::Marker(code @ 1..) = s.end {
            let first = line_iter(s.body).find(|l| !is_blank(l)).map(str::trim);
            (
                Vec::new(),
                Some(format!("exit status {code}: {}", first.unwrap_or("no error message"))),
            )
        } else {
            match port_list(s.body, &mut others) {
                Ok((_, ports)) => (ports, None),
                Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
                    (Vec::new(), Some(to_parse_error(PORT_BATCH, input, &e).to_string()))
                }
                Err(nom::Err::Incomplete(_)) => (Vec::new(), Some("port list ended early".into())),
            }
        };
        out.push(VmPorts {
            world_id,
            ports,
            error,
            cut_off: cut.is_some(),
        });
    }
    Ok((rest, out))
}

const PROCESS_LIST: &str = crate::by_id::VM_PROCESS_LIST.id;

/// `esxcli vm process list` read record by record: the VMs whose records parse, and one
/// error per record that does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmProcessList {
    pub vms: Vec<VmProcess>,
    pub broken: Vec<ParseError>,
}

/// All-or-nothing form: the first broken record fails the whole list.
pub fn parse_vm_process_list(input: &str) -> Result<Vec<VmProcess>, ParseError> {
    let list = parse_vm_process_records(input)?;
    match list.broken.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(list.vms),
    }
}

/// Record by record: the output is cut into blank-line separated blocks (as every capture
/// separates its records) and each block parses on its own, so a wrapped `Config File:`
/// line or a cut record costs that record only. An esxcli error instead of a list is an
/// error for the whole output.
pub fn parse_vm_process_records(input: &str) -> Result<VmProcessList, ParseError> {
    if let Some(e) = error_text(input) {
        return Err(to_parse_error(PROCESS_LIST, input, &e));
    }
    let mut out = VmProcessList {
        vms: Vec::new(),
        broken: Vec::new(),
    };
    for block in blank_separated(input) {
        match all_consuming(process_list).parse_complete(block) {
            Ok((_, vms)) => out.vms.extend(vms),
            Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
                out.broken.push(to_parse_error(PROCESS_LIST, input, &e))
            }
            Err(nom::Err::Incomplete(_)) => {}
        }
    }
    Ok(out)
}

/// Maximal runs of non-blank lines, each a sub-slice of `input` (so errors keep their
/// line numbers).
fn blank_separated(input: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    for l in line_iter(input) {
        let Some(start) = offset_in(input, l) else { continue };
        if is_blank(l) {
            if let Some((a, b)) = run.take() {
                out.push(input.get(a..b).unwrap_or(""));
            }
            continue;
        }
        let end = start + l.len();
        run = Some(run.map_or((start, end), |(a, _)| (a, end)));
    }
    if let Some((a, b)) = run {
        out.push(input.get(a..b).unwrap_or(""));
    }
    out
}

/// One `esxcli network vm port list -w <World ID>` output (not batched).
pub fn parse_vm_port_list(input: &str) -> Result<Vec<VmPort>, ParseError> {
    run(PORT_BATCH, input, |i| port_list(i, &mut Vec::new()))
}

/// The catalogue's batched form: one `==> <World ID> <==` section per running VM. A section
/// whose body is an esxcli error, or does not parse, gets [`VmPorts::error`] (with the
/// rendered parse error in the second case) instead of failing the whole batch.
pub fn parse_vm_port_list_batch(input: &str) -> Result<Vec<VmPorts>, ParseError> {
    run(PORT_BATCH, input, port_batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_config_file_costs_only_its_record() {
        let input = "hpc-node01\n   World ID: 2101874\n   Process ID: 0\n   Display Name: hpc-node01\n   Config File: /vmfs/volumes/64f1c2a3-5d8e21b0-7c3a-ec0d9a7f3196/hpc-node01/hpc-\nnode01.vmx\n\nhpc-node02\n   World ID: 2101990\n   Process ID: 0\n   Display Name: hpc-node02\n   Config File: /vmfs/volumes/ds/hpc-node02/hpc-node02.vmx\n \nweb01\n   World ID: 2102000\n   Display Name: web01\n";
        let list = parse_vm_process_records(input).unwrap();
        let names: Vec<&str> = list.vms.iter().map(|v| v.display_name.as_str()).collect();
        assert_eq!(names, ["hpc-node02", "web01"]);
        assert_eq!(list.broken.len(), 1);
        assert_eq!(list.broken[0].line, 6, "{}", list.broken[0]);
        // The all-or-nothing form still refuses the list.
        assert!(parse_vm_process_list(input).is_err());
        // An esxcli error is not a list with every record broken.
        assert!(parse_vm_process_records("Error: Unknown command or namespace vm process list\n").is_err());
        assert_eq!(parse_vm_process_records("").unwrap().vms, vec![]);
    }

    #[test]
    fn names_with_spaces_and_a_single_space_separator_line() {
        let input = "RH236_3.1\n   World ID: 68762\n   Process ID: 0\n   VMX Cartel ID: 68761\n   UUID: 56 4d 70 ad 43 f1 5e 25-8a 12 a0 e2 18 2e 38 ec\n   Display Name: RH236_3.1\n   Config File: /vmfs/volumes/5cce4874-40c5c88e-a836-003048fc4ffe/RH236_3.1/RH236_3.1.vmx\n \nServer 2016 Vcenter\n   World ID: 68982\n   Display Name: Server 2016 Vcenter\n   Config File: /vmfs/volumes/5cce65ea-ab8c59fa-82c7-003048fc4ffe/Server 2016 Vcenter/Server 2016 Vcenter.vmx\n";
        assert_eq!(
            parse_vm_process_list(input).unwrap(),
            vec![
                VmProcess {
                    display_name: "RH236_3.1".into(),
                    world_id: 68762,
                    process_id: Some(0),
                    vmx_cartel_id: Some(68761),
                    uuid: Some("56 4d 70 ad 43 f1 5e 25-8a 12 a0 e2 18 2e 38 ec".into()),
                    config_file: Some(
                        "/vmfs/volumes/5cce4874-40c5c88e-a836-003048fc4ffe/RH236_3.1/RH236_3.1.vmx".into()
                    ),
                },
                VmProcess {
                    display_name: "Server 2016 Vcenter".into(),
                    world_id: 68982,
                    process_id: None,
                    vmx_cartel_id: None,
                    uuid: None,
                    config_file: Some(
                        "/vmfs/volumes/5cce65ea-ab8c59fa-82c7-003048fc4ffe/Server 2016 Vcenter/Server 2016 Vcenter.vmx"
                            .into()
                    ),
                },
            ]
        );
    }

    #[test]
    fn the_vmware_papers_copy_without_indentation() {
        let input = "rhel80_1\nWorld ID: 1001474360\nProcess ID: 0\nVMX Cartel ID: 1001474359\nUUID: 42 31 0d 66 62 8c b0 5d-46 6f 24 42 52 c6 95 8f\nDisplay Name: rhel80_1\nConfig File: /vmfs/volumes/abd78922-9b6e495c/bryantan/rhel80_1/rhel80_1.vmx\n";
        let v = parse_vm_process_list(input).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].world_id, 1001474360);
        assert_eq!(v[0].display_name, "rhel80_1");
    }

    #[test]
    fn a_vm_named_like_an_error_is_still_a_vm() {
        let v = parse_vm_process_list("Error: test VM\n   World ID: 5\n").unwrap();
        assert_eq!(v[0].display_name, "Error: test VM");
        let e = parse_vm_process_list("Error: Unknown command or namespace vm process lis\n").unwrap_err();
        assert_eq!(e.expected, "command output, not an esxcli `Error:` message");
    }

    #[test]
    fn no_running_vm_is_empty_and_bad_world_id_is_an_error() {
        assert_eq!(parse_vm_process_list("").unwrap(), vec![]);
        assert_eq!(parse_vm_process_list("\n").unwrap(), vec![]);
        let e = parse_vm_process_list("vm\n   World ID: twelve\n").unwrap_err();
        assert_eq!(e.expected, "a numeric `World ID:`");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn batch_with_ports_error_and_empty_sections() {
        let input = "==> 2101874 <==\n   Port ID: 33554445\n   vSwitch: vSwitch0\n   Portgroup: VM Network\n   DVPort ID: \n   MAC Address: 00:50:56:8a:12:c1\n   IP Address: 0.0.0.0\n   Team Uplink: void\n   Uplink Port ID: 0\n   Active Filters: \n\n\
==> 2100342 <==\n\
==> 77 <==\nError: Unknown World ID 77\n";
        assert_eq!(
            parse_vm_port_list_batch(input).unwrap(),
            vec![
                VmPorts {
                    world_id: 2101874,
                    ports: vec![VmPort::new(VmPortView {
                        port_id: Some("33554445"),
                        vswitch: Some("vSwitch0"),
                        portgroup: Some("VM Network"),
                        dvport_id: None,
                        mac_address: Some("00:50:56:8a:12:c1"),
                        ip_address: Some("0.0.0.0"),
                        team_uplink: None,
                        uplink_port_id: Some("0"),
                    })],
                    error: None,
                    cut_off: false,
                },
                VmPorts {
                    world_id: 2100342,
                    ports: vec![],
                    error: None,
                    cut_off: false,
                },
                VmPorts {
                    world_id: 77,
                    ports: vec![],
                    error: Some("Error: Unknown World ID 77".into()),
                    cut_off: false,
                },
            ]
        );
        assert_eq!(parse_vm_port_list_batch("").unwrap(), vec![]);
    }

    #[test]
    fn a_port_reads_back_what_it_was_built_from() {
        let view = VmPortView {
            port_id: Some("7"),
            dvport_id: Some(""),
            mac_address: Some("00:50:56:00:00:01"),
            uplink_port_id: Some("0"),
            ..VmPortView::default()
        };
        let port = VmPort::new(view);
        assert_eq!(port.port_id(), Some("7"));
        // Empty is none, as the parser gives it; the rest are where they were put.
        assert_eq!(port.dvport_id(), None);
        assert_eq!(port.vswitch(), None);
        assert_eq!(port.uplink_port_id(), Some("0"));
        assert_eq!(
            port.view(),
            VmPortView {
                dvport_id: None,
                ..view
            }
        );
        assert!(format!("{port:?}").starts_with("VmPort { port_id: Some(\"7\"), vswitch: None"));
    }

    #[test]
    fn marked_batch_cut_section_and_failed_iteration() {
        let input = "==> 5 <==\n   Port ID: 1\n   MAC Address: 00:50:56:00:00:01\n<== 5 exit 0 ==>\n==> 6 <==\nsomething\n<== 6 exit 1 ==>\n==> 7 <==\n   Port ID: 2\n   MAC Add";
        let b = parse_vm_port_list_batch(input).unwrap();
        assert_eq!(b.len(), 3);
        assert_eq!(
            (b[0].ports.len(), b[0].error.as_deref(), b[0].cut_off),
            (1, None, false)
        );
        assert_eq!(b[1].error.as_deref(), Some("exit status 1: something"));
        assert!(b[2].cut_off && b[2].ports.is_empty());
        assert!(
            b[2].error.as_deref().unwrap().contains("no end marker"),
            "{:?}",
            b[2].error
        );
    }

    #[test]
    fn batch_section_that_does_not_parse_fails_alone() {
        let input = "==> 5 <==\n   vSwitch: x\n==> 6 <==\n   Port ID: 1\n";
        let b = parse_vm_port_list_batch(input).unwrap();
        assert_eq!(
            b[0].error.as_deref(),
            Some("esxcli_network_vm_port_list: line 2, column 4: expected a port record starting with `Port ID:`, found \"   vSwitch: x\"")
        );
        assert_eq!(b[1].ports.len(), 1);
        let e = parse_vm_port_list_batch("junk\n==> 5 <==\n").unwrap_err();
        assert_eq!(e.expected, "a `==> <World ID> <==` section header");
    }
}
