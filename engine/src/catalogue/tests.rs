use super::*;

fn keys(k: &[&str]) -> Vec<String> {
    k.iter().map(|s| s.to_string()).collect()
}

#[test]
fn batch_lines_round_trip_and_carry_the_framing() {
    let line = batch_command(VM_PORT_LIST, &keys(&["11", "12", "13"])).expect("line");
    assert!(
        line.starts_with("q() { esxcli network vm port list -w \"$1\"; }; f() {"),
        "{line}"
    );
    assert!(line.ends_with("b 11 12 13"), "{line}");
    assert_eq!(batch_keys(&line), Some((VM_PORT_LIST, keys(&["11", "12", "13"]))));
    let many: Vec<String> = (0..BATCH_FANOUT + 2).map(|n| format!("{n}_0")).collect();
    let line = batch_command(PVRDMA_PROPERTIES, &many).expect("line");
    assert_eq!(batch_keys(&line), Some((PVRDMA_PROPERTIES, many)));
    // The constants the client relies on are the ones the shell text uses.
    assert!(line.contains(&format!("[ \"$c\" -lt {BATCH_FANOUT} ]")), "{line}");
    assert!(line.contains(&format!("[ \"$z\" -gt {SECTION_CAP} ]")), "{line}");
    // Every batch's line is framed by the functions, and only a batch's.
    for spec in CATALOGUE {
        assert_eq!(
            spec.command.contains(":end $k exit $l lines"),
            spec.is_batch(),
            "{}",
            spec.id
        );
        assert_eq!(spec.needs().is_some(), spec.is_batch(), "{}", spec.id);
        assert!(
            spec.needs().is_none_or(|source| super::spec(source).is_some()),
            "{}",
            spec.id
        );
    }
    let line = batch_command(NIC_DCB_STATUS, &keys(&["vmnic2", "vmnic3"])).expect("line");
    assert!(
        line.starts_with("q() { esxcli network nic dcb status get -n \"$1\"; };"),
        "{line}"
    );
    assert_eq!(batch_keys(&line), Some((NIC_DCB_STATUS, keys(&["vmnic2", "vmnic3"]))));
}

#[test]
fn vmx_inventory_lines_keep_any_path_whole_and_round_trip() {
    let paths = keys(&[
        "/vmfs/volumes/ds 1/hpc [rack 4]/hpc [rack 4].vmx",
        "/vmfs/volumes/ds1/it's; p 'x'/a:b.vmx",
        "/vmfs/volumes/ds1/$(reboot)/`x`.vmx",
    ]);
    let line = vmx_lines_command(&paths).expect("line");
    assert!(line.starts_with("q() { grep -iE '^[[:space:]]*(displayname|"), "{line}");
    assert!(!line.contains("esxcli"), "the process list is not run again: {line}");
    assert_eq!(batch_keys(&line), Some((VMX_PVRDMA_LINES, paths.clone())));
    let many: Vec<String> = (0..BATCH_FANOUT + 3)
        .map(|n| format!("/vmfs/volumes/ds/vm{n}/vm{n}.vmx"))
        .collect();
    let line = vmx_lines_command(&many).expect("line");
    assert_eq!(batch_keys(&line), Some((VMX_PVRDMA_LINES, many)));
    assert_eq!(vmx_lines_command(&keys(&["/a\nb.vmx"])), None);
    assert_eq!(vmx_lines_command(&[]), None);
}

#[test]
fn batch_lines_refuse_what_a_listing_cannot_hold() {
    assert_eq!(batch_command(VM_PORT_LIST, &[]), None);
    assert_eq!(batch_command(VM_PORT_LIST, &keys(&["1; reboot"])), None);
    assert_eq!(batch_command(VM_PORT_LIST, &keys(&["$(x)"])), None);
    assert_eq!(batch_command(NIC_DCB_STATUS, &keys(&["vmnic2 vmnic3"])), None);
    assert_eq!(batch_command(NIC_DCB_STATUS, &keys(&["vmnic-2"])), None);
    assert_eq!(batch_command(SYSTEM_VERSION, &keys(&["1"])), None);
    assert_eq!(batch_keys("esxcli system version get"), None);
}

#[test]
fn grouped_commands_are_whole_answers_no_command_is_built_from() {
    let grouped: Vec<&str> = CATALOGUE.iter().filter(|s| is_grouped(s)).map(|s| s.id).collect();
    assert!(grouped.len() >= 2, "{grouped:?}");
    for spec in CATALOGUE.iter() {
        let built_from = CATALOGUE.iter().any(|s| s.needs() == Some(spec.id));
        if is_grouped(spec) {
            assert_eq!(spec.framing, Framing::Whole, "{}", spec.id);
            assert!(!built_from, "{} is a listing others wait for", spec.id);
        }
    }
    // The listings and the batches keep their own channels; so does the DVPort list.
    for id in [
        VM_PROCESS_LIST,
        RDMA_DEVICE_LIST,
        PVRDMA_DEVICES_LS,
        VM_PORT_LIST,
        DVS_LIST,
    ] {
        assert!(!grouped.contains(&id), "{id}");
    }
    assert!(grouped.contains(&SYSTEM_VERSION) && grouped.contains(&FIREWALL_RULESET_LIST));
}

#[test]
fn a_group_line_runs_each_catalogue_command_as_written_and_round_trips() {
    let ids = [SYSTEM_VERSION, NIC_LIST, PVRDMA_VMKNIC_OPTION];
    let line = group_command(&ids).expect("line");
    for id in ids {
        let command = spec(id).expect("spec").command;
        assert!(line.contains(&format!("{id}) {command} ;; ")), "{line}");
    }
    assert!(line.ends_with(&format!("b {}", ids.join(" "))), "{line}");
    assert!(line.contains(&format!("[ \"$c\" -lt {BATCH_FANOUT} ]")), "{line}");
    assert_eq!(group_keys(&line), Some(keys(&ids)));
    // Only grouped commands, and only lines built here, are groups.
    assert_eq!(group_command(&[SYSTEM_VERSION, VM_PROCESS_LIST]), None);
    assert_eq!(group_command(&[SYSTEM_VERSION, "esxcli_system_shutdown_reboot"]), None);
    let tampered = line.replace("esxcli network nic list", "esxcli network nic down -n vmnic2");
    assert_eq!(group_keys(&tampered), None);
    assert_eq!(group_keys(&format!("{line} ; reboot")), None);
    let batch = batch_command(VM_PORT_LIST, &keys(&["11"])).expect("batch");
    assert_eq!(group_keys(&batch), None);
    assert_eq!(batch_keys(&line), None);
}
