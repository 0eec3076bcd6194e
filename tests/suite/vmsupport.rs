//! `analyze` on an ESXi vm-support bundle: the host captures come from `commands/`, the
//! PVRDMA VMs from the `.vmx` files, and what such a bundle cannot hold is reported missing
//! with the reason, folder or `.tgz` alike.
use pvrdma_doctor::offline::load_captures;
use pvrdma_engine::capture::{CaptureSource, HostCapture};
use pvrdma_engine::catalogue::{self, CATALOGUE};
use pvrdma_parsers::parse_vmx;
use std::path::Path;

const SAMPLE_PARENT: &str = "samples/vm-support";
const TOP: &str = "esx-esx01-2026-11-20--10.15-123456";

fn check_sample_capture(captures: &[HostCapture]) {
    assert_eq!(captures.len(), 1);
    let c = &captures[0];
    assert_eq!(c.host, "esx01");
    assert_eq!(c.source, CaptureSource::VmSupport);
    assert_eq!(c.error, None);

    let rdma = &c.outputs[catalogue::RDMA_DEVICE_LIST];
    let on_disk = std::fs::read_to_string(
        Path::new(SAMPLE_PARENT)
            .join(TOP)
            .join("commands/localcli_rdma-device-list.txt"),
    )
    .unwrap();
    assert_eq!(rdma.stdout, on_disk);
    assert_eq!(rdma.command, "vm-support commands/localcli_rdma-device-list.txt");

    // The tagged vmknic comes out of the all-options delta list as one record.
    let option = &c.outputs[catalogue::PVRDMA_VMKNIC_OPTION].stdout;
    assert!(option.starts_with("   Path: /Net/PVRDMAVmknic\n"), "{option}");
    assert!(option.contains("   String Value: vmk1\n"));
    assert!(!option.contains("TcpipDefLROEnabled"));

    // Every catalogue id is either there or missing with a reason; vsish and the per-VM
    // port loop can only be missing.
    for spec in CATALOGUE {
        assert!(
            c.outputs.contains_key(spec.id) != c.missing.contains_key(spec.id),
            "{} neither collected nor explained",
            spec.id
        );
    }
    for id in [
        catalogue::PVRDMA_DEVICES_LS,
        catalogue::PVRDMA_PROPERTIES,
        catalogue::VM_PORT_LIST,
    ] {
        let reason = &c.missing[id];
        assert!(
            reason.message.contains("vm-support bundles carry no vsish"),
            "{id}: {}",
            reason.message
        );
    }
    // Nor do they hold the flow-control queries (pauseParams list, the DCB loop).
    assert!(c.missing[catalogue::VMX_PVRDMA_LINES]
        .message
        .contains(".vmx files themselves"));
    // What a bundle holds: every esxcli command but the batched queries and `pauseParams
    // list`.
    let absent: Vec<&str> = CATALOGUE
        .iter()
        .filter(|s| s.is_batch() || !s.command.starts_with("esxcli ") || s.id == catalogue::NIC_PAUSE_PARAMS)
        .map(|s| s.id)
        .collect();
    let mut missing: Vec<&str> = c.missing.keys().map(String::as_str).collect();
    missing.sort_by_key(|id| CATALOGUE.iter().position(|s| s.id == *id));
    assert_eq!(missing, absent);

    // Two VMs, one with a PVRDMA adapter; the symlinked datastore name is not followed.
    let mut vmx: Vec<_> = c.vmx_files.iter().map(|v| v.path.as_str()).collect();
    vmx.sort();
    assert_eq!(
        vmx,
        [
            "vmfs/volumes/5cce4874-40c5c88e-a836-003048fc4ffe/hpc01/hpc01.vmx",
            "vmfs/volumes/5cce4874-40c5c88e-a836-003048fc4ffe/web01/web01.vmx",
        ]
    );
    let pvrdma_vms: Vec<_> = c
        .vmx_files
        .iter()
        .map(|v| parse_vmx(&v.content).unwrap())
        .filter(|v| !v.pvrdma_adapters.is_empty())
        .collect();
    assert_eq!(pvrdma_vms.len(), 1);
    assert_eq!(pvrdma_vms[0].display_name.as_deref(), Some("hpc01"));
    assert_eq!(pvrdma_vms[0].hardware_version, Some(19));
    assert_eq!(pvrdma_vms[0].mem_min_mb, Some(16384));
}

/// A copy of the sample with the datastore-name symlink ESXi has in /vmfs/volumes.
fn sample_copy(dest: &Path) -> std::path::PathBuf {
    let top = dest.join(TOP);
    copy_dir(&Path::new(SAMPLE_PARENT).join(TOP), &top);
    std::os::unix::fs::symlink(
        "5cce4874-40c5c88e-a836-003048fc4ffe",
        top.join("vmfs/volumes/datastore1"),
    )
    .unwrap();
    top
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for item in std::fs::read_dir(from).unwrap() {
        let item = item.unwrap();
        let target = to.join(item.file_name());
        if item.file_type().unwrap().is_dir() {
            copy_dir(&item.path(), &target);
        } else {
            std::fs::copy(item.path(), &target).unwrap();
        }
    }
}

#[test]
fn reads_the_vm_support_folder_itself_or_its_parent() {
    check_sample_capture(&load_captures(&Path::new(SAMPLE_PARENT).join(TOP)).unwrap());
    check_sample_capture(&load_captures(Path::new(SAMPLE_PARENT)).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let top = sample_copy(dir.path());
    check_sample_capture(&load_captures(&top).unwrap());
}

#[test]
fn reads_a_vm_support_tgz() {
    let dir = tempfile::tempdir().unwrap();
    sample_copy(dir.path());
    let tgz = dir.path().join("esx-esx01-2026-11-20--10.15-123456.tgz");
    let file = std::fs::File::create(&tgz).unwrap();
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    builder.follow_symlinks(false);
    builder.append_dir_all(TOP, dir.path().join(TOP)).unwrap();
    builder.into_inner().unwrap().finish().unwrap();

    let from_tgz = load_captures(&tgz).unwrap();
    check_sample_capture(&from_tgz);
    let from_dir = load_captures(&Path::new(SAMPLE_PARENT).join(TOP)).unwrap();
    assert_eq!(from_tgz, from_dir);
}

#[test]
fn without_the_pvrdma_record_the_option_is_missing_with_the_likely_cause() {
    let dir = tempfile::tempdir().unwrap();
    let top = sample_copy(dir.path());
    let delta = top.join("commands/localcli_system-settings-advanced-list--d.txt");
    let text = std::fs::read_to_string(&delta).unwrap();
    let without: String = text
        .split("\n\n")
        .filter(|r| !r.contains("PVRDMAVmknic"))
        .collect::<Vec<_>>()
        .join("\n\n");
    std::fs::write(&delta, without).unwrap();
    let c = load_captures(&top).unwrap().remove(0);
    assert!(!c.outputs.contains_key(catalogue::PVRDMA_VMKNIC_OPTION));
    let reason = &c.missing[catalogue::PVRDMA_VMKNIC_OPTION];
    assert!(
        reason.message.contains("no /Net/PVRDMAVmknic record"),
        "{}",
        reason.message
    );
}

#[test]
fn rdma_tables_come_from_rdmainfo_when_localcli_files_are_absent() {
    let dir = tempfile::tempdir().unwrap();
    let top = sample_copy(dir.path());
    let with_files = load_captures(&top).unwrap().remove(0);
    for f in ["localcli_rdma-device-list.txt", "localcli_rdma-device-vmknic-list.txt"] {
        std::fs::remove_file(top.join("commands").join(f)).unwrap();
    }
    let from_script = load_captures(&top).unwrap().remove(0);
    for id in [catalogue::RDMA_DEVICE_LIST, catalogue::RDMA_VMKNIC_LIST] {
        assert_eq!(from_script.outputs[id].stdout, with_files.outputs[id].stdout, "{id}");
        assert!(
            from_script.outputs[id].command.contains("rdmainfo.sh.txt"),
            "{}",
            from_script.outputs[id].command
        );
    }
    // Without either source the command is missing, and the reason names the file.
    std::fs::remove_file(top.join("commands/rdmainfo.sh.txt")).unwrap();
    let none = load_captures(&top).unwrap().remove(0);
    assert!(none.missing[catalogue::RDMA_DEVICE_LIST]
        .message
        .contains("localcli_rdma-device-list.txt"));
}
