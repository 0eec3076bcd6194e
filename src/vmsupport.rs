//! Reads an ESXi `vm-support` bundle, the support bundle VMware's own tooling produces,
//! so an engineer who only has that (no SSH access, no pvrdma-doctor bundle) still gets
//! the host checks.
//!
//! Pipeline stage: *collect*. Layout (the `README` vm-support writes into every bundle,
//! as quoted by fox-it's dissect.target `loaders/vmsupport.py`; `docs/bundles.md`):
//!
//! ```text
//! esx-<host>-<YYYY>-<MM>-<DD>--<HH>.<MM>-<pid>/
//!   commands/localcli_<args>.txt     command output, args joined by `-`, `/` dropped
//!   vmfs/volumes/<ds>/<vm>/<vm>.vmx  the VMs' configuration
//! ```
//!
//! Each catalogue command `esxcli a b -o /X/Y` maps to `commands/localcli_a-b--o-XY.txt`
//! (`localcli` renders exactly like `esxcli`). The per-VM queries (`vm port list -w`,
//! vsish) have no vm-support counterpart: they are reported missing with that reason,
//! and the `.vmx` files say instead which VMs have PVRDMA adapters.
use crate::archive::{walk_dir, Entries, ReadLimits, Walk};
use anyhow::Context;
use pvrdma_engine::capture::{CaptureSource, ErrorKind, Failure, HostCapture, RawOutput, VmxFile};
use pvrdma_engine::catalogue::{self, CATALOGUE};
use std::collections::BTreeMap;
use std::path::Path;

/// vm-support's capture of all advanced options that differ from their default; holds
/// the `/Net/PVRDMAVmknic` record when a vmknic is tagged.
pub const ADVANCED_DELTA_FILE: &str = "localcli_system-settings-advanced-list--d.txt";
/// Output of VMware's RDMA helper script `rdmainfo.sh`, which vm-support runs: holds
/// `rdma device list` and `rdma device vmknic list`, which vm-support may not capture on
/// their own.
const RDMAINFO_FILE: &str = "rdmainfo.sh.txt";
const PVRDMA_VMKNIC_PATH: &str = "/Net/PVRDMAVmknic";

/// The file name vm-support gives the output of `command`, or `None` for commands it
/// cannot have run (shell loops, vsish).
pub fn command_file_name(command: &str) -> Option<String> {
    let mut words = command.split_whitespace();
    if words.next() != Some("esxcli") || command.contains(['$', ';', '|', '"', '\'']) {
        return None;
    }
    let args: Vec<String> = words.map(|w| w.replace('/', "")).collect();
    Some(format!("localcli_{}.txt", args.join("-")))
}

/// The host name in a vm-support top folder `esx-<host>-<YYYY>-<MM>-<DD>--<HH>.<MM>-<pid>`.
/// Host names may hold dashes, so the date and pid are taken off from the right.
pub(crate) fn top_dir_host(name: &str) -> Option<String> {
    let rest = name.strip_prefix("esx-")?;
    let (head, pid) = rest.rsplit_once('-')?;
    let (head, time) = head.rsplit_once("--")?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (hh, mm) = time.split_once('.')?;
    if !digits(hh, 2) || !digits(mm, 2) {
        return None;
    }
    // head = <host>-<YYYY>-<MM>-<DD>
    let mut parts = head.rsplitn(4, '-');
    let (dd, mo, yyyy, host) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if !digits(dd, 2) || !digits(mo, 2) || !digits(yyyy, 4) || host.is_empty() {
        return None;
    }
    Some(host.to_string())
}

/// Whether an entry (path from the archive root, `<top>/...`) is one this reader uses;
/// everything else in a vm-support bundle (logs, the VSI dump) is skipped unread.
pub(crate) fn wanted(path: &str) -> bool {
    let Some((_top, rest)) = path.split_once('/') else {
        return false;
    };
    if let Some(name) = rest.strip_prefix("commands/") {
        return name == ADVANCED_DELTA_FILE || name == RDMAINFO_FILE || known_command_files().any(|(_, f)| f == name);
    }
    is_vmx(rest)
}

fn is_vmx(rest: &str) -> bool {
    rest.starts_with("vmfs/volumes/")
        && rest
            .rsplit_once('.')
            .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("vmx"))
}

fn known_command_files() -> impl Iterator<Item = (&'static str, String)> {
    CATALOGUE
        .iter()
        .filter_map(|s| command_file_name(s.command).map(|f| (s.id, f)))
}

/// A folder that is a vm-support bundle (has `commands/`) or holds some (`esx-*/commands/`).
pub(crate) fn is_vm_support_dir(path: &Path) -> bool {
    if path.join("commands").is_dir() {
        return true;
    }
    top_dirs(path).is_ok_and(|dirs| !dirs.is_empty())
}

fn top_dirs(path: &Path) -> std::io::Result<Vec<(String, std::path::PathBuf)>> {
    let mut out = Vec::new();
    for item in std::fs::read_dir(path)? {
        let item = item?;
        let name = item.file_name().to_string_lossy().into_owned();
        if item.file_type()?.is_dir() && top_dir_host(&name).is_some() && item.path().join("commands").is_dir() {
            out.push((name, item.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Reads an unpacked vm-support bundle: the `esx-…` folder itself, or a folder holding one
/// or more of them (one host each).
pub(crate) fn read_dir(path: &Path, limits: &ReadLimits) -> anyhow::Result<Vec<HostCapture>> {
    let mut tops = top_dirs(path).with_context(|| format!("cannot list {}", path.display()))?;
    if tops.is_empty() {
        let name = path
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "esx-host".to_string());
        tops.push((name, path.to_path_buf()));
    }
    let mut entries = Vec::new();
    let mut kept = 0u64;
    for (name, dir) in tops {
        let prefix = format!("{name}/");
        let walk = Walk {
            limits,
            prefix: &prefix,
            // On ESXi `/vmfs/volumes/<name>` links to the volume, which would list every
            // VM twice: links are skipped, never followed.
            skip_links: true,
            // Only two subtrees matter; the rest of a vm-support bundle can be gigabytes.
            descend: &|rel| rel == "commands" || rel == "vmfs" || rel.starts_with("vmfs/"),
            keep: &wanted,
            noun: "file",
        };
        walk_dir(&dir, &walk, &mut kept, &mut entries)?;
    }
    from_entries(entries)
}

/// Builds one capture per top folder from the wanted entries (paths `<top>/...`).
pub(crate) fn from_entries(entries: Entries) -> anyhow::Result<Vec<HostCapture>> {
    let mut by_top: BTreeMap<String, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    for (path, data) in entries {
        if let Some((top, rest)) = path.split_once('/') {
            by_top
                .entry(top.to_string())
                .or_default()
                .insert(rest.to_string(), data);
        }
    }
    anyhow::ensure!(
        !by_top.is_empty(),
        "the vm-support bundle holds none of the commands/ captures or .vmx files pvrdma-doctor reads"
    );
    Ok(by_top
        .into_iter()
        .map(|(top, files)| host_capture(&top, &files))
        .collect())
}

fn host_capture(top: &str, files: &BTreeMap<String, Vec<u8>>) -> HostCapture {
    let host = top_dir_host(top).unwrap_or_else(|| top.to_string());
    let mut capture = HostCapture::new(host, CaptureSource::VmSupport);
    let text = |name: &str| {
        files
            .get(&format!("commands/{name}"))
            .map(|b| String::from_utf8_lossy(b).into_owned())
    };
    for spec in CATALOGUE {
        match find_output(spec, &text) {
            Ok((source, stdout)) => {
                capture.outputs.insert(
                    spec.id.to_string(),
                    // vm-support records no exit status per command.
                    RawOutput {
                        stdout,
                        outcome: Some(pvrdma_engine::capture::Outcome::Recorded),
                        ..RawOutput::new(spec.id, format!("vm-support {source}"))
                    },
                );
            }
            Err(reason) => {
                capture
                    .missing
                    .insert(spec.id.to_string(), Failure::new(ErrorKind::Config, reason));
            }
        }
    }
    for (rest, data) in files {
        if is_vmx(rest) {
            capture.vmx_files.push(VmxFile {
                path: rest.clone(),
                content: String::from_utf8_lossy(data).into_owned(),
            });
        }
    }
    if capture.outputs.is_empty() && capture.vmx_files.is_empty() {
        capture.error = Some(Failure::new(
            ErrorKind::Config,
            format!("the vm-support folder {top} holds none of the captures pvrdma-doctor reads"),
        ));
    }
    capture
}

/// Where in a vm-support bundle the output of `spec` is (a description for the
/// `command` field, and the text), or why it is not there.
fn find_output(
    spec: &catalogue::CommandSpec,
    text: &dyn Fn(&str) -> Option<String>,
) -> Result<(String, String), String> {
    if spec.id == catalogue::VMX_PVRDMA_LINES {
        return Err("vm-support bundles hold the VMs' .vmx files themselves, which are read instead".to_string());
    }
    let Some(file) = command_file_name(spec.command) else {
        return Err(format!(
            "vm-support bundles carry no vsish, per-VM port or other batched query output (`{}` is not captured)",
            spec.label()
        ));
    };
    if let Some(stdout) = text(&file) {
        return Ok((format!("commands/{file}"), stdout));
    }
    if spec.id == catalogue::PVRDMA_VMKNIC_OPTION {
        if let Some(all) = text(ADVANCED_DELTA_FILE) {
            return match extract_advanced_record(&all, PVRDMA_VMKNIC_PATH) {
                Some(record) => Ok((
                    format!("commands/{ADVANCED_DELTA_FILE} ({PVRDMA_VMKNIC_PATH} record)"),
                    record,
                )),
                None => Err(format!(
                    "vm-support's {ADVANCED_DELTA_FILE} (options that differ from their default) has no {PVRDMA_VMKNIC_PATH} record: most likely no vmknic is tagged for PVRDMA; confirm with `esxcli system settings advanced list -o {PVRDMA_VMKNIC_PATH}`"
                )),
            };
        }
    }
    // VMware's RDMA helper script prints these two tables under a banner each.
    let in_rdmainfo = [catalogue::RDMA_DEVICE_LIST, catalogue::RDMA_VMKNIC_LIST].contains(&spec.id);
    if in_rdmainfo {
        let local = spec.command.replacen("esxcli", "localcli", 1);
        if let Some(section) = text(RDMAINFO_FILE).and_then(|all| extract_rdmainfo_section(&all, &local)) {
            return Ok((format!("commands/{RDMAINFO_FILE} (\"{local}\" section)"), section));
        }
    }
    Err(format!("the vm-support bundle has no commands/{file}"))
}

/// The output `rdmainfo.sh` printed after its `Output of "<command>":` banner, up to the
/// blank line the script echoes after it.
fn extract_rdmainfo_section(all: &str, command: &str) -> Option<String> {
    let banner = format!("Output of \"{command}\":");
    let mut lines = all.lines().skip_while(|l| l.trim() != banner);
    lines.next()?;
    let section: String = lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    (!section.is_empty()).then_some(section)
}

/// The record of one option from an `advanced list` output (records separated by blank
/// lines, each with a `Path:` line), as `advanced list -o <path>` would print it.
pub fn extract_advanced_record(all: &str, option: &str) -> Option<String> {
    let mut record: Vec<&str> = Vec::new();
    let mut matches = false;
    let flush = |record: &mut Vec<&str>, matches: &mut bool| -> Option<String> {
        let out = if *matches {
            Some(record.iter().map(|l| format!("{l}\n")).collect())
        } else {
            None
        };
        record.clear();
        *matches = false;
        out
    };
    for line in all.lines() {
        if line.trim().is_empty() {
            if let Some(found) = flush(&mut record, &mut matches) {
                return Some(found);
            }
            continue;
        }
        if let Some(path) = line.trim_start().strip_prefix("Path:") {
            // A new record may start without a blank line in damaged copies.
            if !record.is_empty() {
                if let Some(found) = flush(&mut record, &mut matches) {
                    return Some(found);
                }
            }
            // esxcli matches option paths case-insensitively.
            matches = path.trim().eq_ignore_ascii_case(option);
        }
        record.push(line);
    }
    flush(&mut record, &mut matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_follow_the_vm_support_rule() {
        assert_eq!(
            command_file_name("esxcli rdma device list").as_deref(),
            Some("localcli_rdma-device-list.txt")
        );
        assert_eq!(
            command_file_name("esxcli system settings advanced list -o /Net/PVRDMAVmknic").as_deref(),
            Some("localcli_system-settings-advanced-list--o-NetPVRDMAVmknic.txt")
        );
        assert_eq!(
            command_file_name("esxcli vm process list").as_deref(),
            Some("localcli_vm-process-list.txt")
        );
        assert_eq!(command_file_name("vsish -e ls /vmkModules/vrdma/pvrdmaDevices/"), None);
        let port_loop = catalogue::spec(catalogue::VM_PORT_LIST).unwrap().command;
        assert_eq!(command_file_name(port_loop), None);
    }

    #[test]
    fn host_from_top_dir() {
        assert_eq!(
            top_dir_host("esx-localhost8-2026-01-09--16.04-135806").as_deref(),
            Some("localhost8")
        );
        assert_eq!(
            top_dir_host("esx-esx-rack-01.lab-2026-11-20--10.15-123456").as_deref(),
            Some("esx-rack-01.lab")
        );
        assert_eq!(top_dir_host("esx-2026-11-20--10.15-123456"), None);
        assert_eq!(top_dir_host("esx01"), None);
        assert_eq!(top_dir_host("esx-h-2026-11-20--10.15-"), None);
    }

    #[test]
    fn extracts_one_record_case_insensitively() {
        let all = "   Path: /Net/TcpipDefLROEnabled\n   Type: integer\n   Int Value: 0\n\n   Path: /Net/PVRDMAVmknic\n   Type: string\n   String Value: vmk2\n   Description: Vmknic for PVRDMA\n\n   Path: /VMFS3/X\n   Type: integer\n";
        assert_eq!(
            extract_advanced_record(all, "/net/pvrdmavmknic").as_deref(),
            Some("   Path: /Net/PVRDMAVmknic\n   Type: string\n   String Value: vmk2\n   Description: Vmknic for PVRDMA\n")
        );
        assert_eq!(extract_advanced_record(all, "/Net/Nothing"), None);
        // Last record, no trailing blank line.
        assert_eq!(
            extract_advanced_record(all, "/VMFS3/X").as_deref(),
            Some("   Path: /VMFS3/X\n   Type: integer\n")
        );
    }

    #[test]
    fn rdmainfo_sections() {
        let all = "RDMA Device Information.\n\nOutput of \"localcli rdma device list\":\nName     Driver\n-------  ------\nvmrdma0  nmlx5_rdma\n\nOutput of \"localcli rdma device vmknic list\":\nDevice   Vmknic\n-------  ------\nvmrdma0  vmk1\n\nPer-device output:\n";
        assert_eq!(
            extract_rdmainfo_section(all, "localcli rdma device list").as_deref(),
            Some("Name     Driver\n-------  ------\nvmrdma0  nmlx5_rdma\n")
        );
        assert_eq!(
            extract_rdmainfo_section(all, "localcli rdma device vmknic list").as_deref(),
            Some("Device   Vmknic\n-------  ------\nvmrdma0  vmk1\n")
        );
        assert_eq!(
            extract_rdmainfo_section(all, "localcli rdma device protocol list"),
            None
        );
    }

    #[test]
    fn wanted_keeps_only_mapped_commands_and_vmx() {
        let top = "esx-esx01-2026-11-20--10.15-123456";
        assert!(wanted(&format!("{top}/commands/localcli_rdma-device-list.txt")));
        assert!(wanted(&format!("{top}/commands/{ADVANCED_DELTA_FILE}")));
        assert!(wanted(&format!("{top}/vmfs/volumes/ds1/hpc01/hpc01.vmx")));
        assert!(!wanted(&format!("{top}/vmfs/volumes/ds1/hpc01/hpc01.vmxf")));
        assert!(!wanted(&format!("{top}/commands/vsi_traverse_-s.txt")));
        assert!(!wanted(&format!("{top}/var/run/log/vmkernel.log")));
    }
}
