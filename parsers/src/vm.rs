//! `esxcli vm process list` and the batched `esxcli network vm port list -w <World ID>`:
//! which VMs run, and which switch, port group and uplink each VM MAC really uses.
//! Real sample of the process list (a name with brackets and spaces; records are separated
//! by a blank or whitespace-only line; no running VM = empty output):
//!
//! ```text
//! uranium-esx36 [knagaraju] FGT_VM64_ESXI
//!    World ID: 2557323
//!    Process ID: 0
//!    VMX Cartel ID: 2557322
//!    UUID: cc cf 7f af 0f 3d 45 23-8a 69 1f 43 4e c2 97 56
//!    Display Name: uranium-esx36 [knagaraju] FGT_VM64_ESXI
//!    Config File: /vmfs/volumes/58f72d53-3d2f86ee-e2b8-d4ae52e8199a/machines/uranium-esx36 [knagaraju] FGT_VM64_ESXI/uranium-esx36 [knagaraju] FGT_VM64_ESXI.vmx
//! ```
//!
//! The port list has **no public capture**; its form here is **reconstructed**: records
//! separated by blank lines, each `   Port ID:`, `vSwitch:`, `Portgroup:`, `DVPort ID:`,
//! `MAC Address:`, `IP Address:`, `Team Uplink:`, `Uplink Port ID:`, `Active Filters:`.
//! The batch (see the catalogue's loop) heads each World ID's output with `==> <wid> <==`.
use crate::common::{
    blocks, error_text, fail, find, is_blank, line_iter, non_empty, offset_in, records, run, sections, to_parse_error,
    value, Field, PResult, SectionEnd,
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

/// One record of `esxcli network vm port list -w <World ID>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmPort {
    pub port_id: Option<String>,
    pub vswitch: Option<String>,
    pub portgroup: Option<String>,
    /// `None` when empty (standard vSwitch port).
    pub dvport_id: Option<String>,
    pub mac_address: Option<String>,
    pub ip_address: Option<String>,
    /// `None` when empty or `void`.
    pub team_uplink: Option<String>,
    pub uplink_port_id: Option<String>,
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

fn port(fields: &[Field<'_>]) -> VmPort {
    let get = |k: &str| value(fields, k).and_then(non_empty);
    VmPort {
        port_id: get("Port ID"),
        vswitch: get("vSwitch"),
        portgroup: get("Portgroup"),
        dvport_id: get("DVPort ID"),
        mac_address: get("MAC Address"),
        ip_address: get("IP Address"),
        team_uplink: get("Team Uplink").filter(|u| !u.eq_ignore_ascii_case("void")),
        uplink_port_id: get("Uplink Port ID"),
    }
}

fn port_list(input: &str) -> PResult<'_, Vec<VmPort>> {
    let (rest, recs) = blocks(input)?;
    let mut out = Vec::new();
    for b in &recs {
        if find(b, "Port ID").is_none() {
            let at = b.first().map_or(input, |f| f.line);
            return Err(fail(at, "a port record starting with `Port ID:`"));
        }
        out.push(port(b));
    }
    Ok((rest, out))
}

const PORT_BATCH: &str = "esxcli_network_vm_port_list";

fn port_batch(input: &str) -> PResult<'_, Vec<VmPorts>> {
    let (rest, secs) = sections(input, "a `==> <World ID> <==` section header")?;
    let mut out = Vec::new();
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
            match port_list(s.body) {
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

const PROCESS_LIST: &str = "esxcli_vm_process_list";

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
    run(PORT_BATCH, input, port_list)
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
    fn seed_003_copy_without_indentation() {
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
                    ports: vec![VmPort {
                        port_id: Some("33554445".into()),
                        vswitch: Some("vSwitch0".into()),
                        portgroup: Some("VM Network".into()),
                        dvport_id: None,
                        mac_address: Some("00:50:56:8a:12:c1".into()),
                        ip_address: Some("0.0.0.0".into()),
                        team_uplink: None,
                        uplink_port_id: Some("0".into()),
                    }],
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
