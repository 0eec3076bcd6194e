//! The evidence rule on captures (no network): an output that did not end cleanly is never
//! evidence, whichever way it broke off and whichever check reads it; batched loops keep
//! their ended sections; captures from before end markers read as they always did.
use pvrdma_doctor::collect::replay::read_host;
use pvrdma_engine::capture::{Cap, CaptureSource, HostCapture, Outcome};
use pvrdma_engine::catalogue::{self, CATALOGUE};
use pvrdma_engine::diagnose::{diagnose_host, HostStatus, Status, Verdict};
use std::path::Path;

fn sample(scenario: &str, host: &str) -> HostCapture {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(scenario)
        .join(host);
    read_host(&dir, host, CaptureSource::Live).expect("sample")
}

fn set(c: &mut HostCapture, id: &str, stdout: &str, outcome: Outcome) {
    let o = c.outputs.get_mut(id).expect("output");
    o.stdout = stdout.to_string();
    o.exit_status = match outcome {
        Outcome::Exited { code } => Some(code),
        _ => None,
    };
    o.outcome = Some(outcome);
}

#[test]
fn every_way_of_breaking_off_makes_every_dependent_check_unknown() {
    let outcomes = [
        (
            Outcome::TimedOut {
                timeout_secs: 60,
                timeout_ms: None,
                after_ms: 60_000,
            },
            "did not finish within --command-timeout 60s",
        ),
        (
            Outcome::TimedOut {
                timeout_secs: 0,
                timeout_ms: Some(500),
                after_ms: 512,
            },
            "did not finish within --command-timeout 500ms",
        ),
        (
            Outcome::Truncated {
                cap: Cap::PerCommand,
                limit_bytes: 16 << 20,
            },
            "output cut at the 16 MiB per-command cap",
        ),
        (
            Outcome::Truncated {
                cap: Cap::SharedChannel,
                limit_bytes: 16 << 20,
            },
            "output cut with the channel it shared with the other single-answer commands, when they had printed 16 MiB together (the channel's cap)",
        ),
        (
            Outcome::Truncated {
                cap: Cap::HostBudget,
                limit_bytes: 32 << 20,
            },
            "output cut at the 32 MiB per-host output budget",
        ),
        (
            Outcome::ConnectionLost {
                after_ms: 2100,
                detail: String::new(),
            },
            "SSH connection lost 2.1 s into the command",
        ),
        (
            Outcome::Signalled {
                signal: "KILL".to_string(),
            },
            "killed by signal KILL",
        ),
        (Outcome::NoExitStatus, "without an exit status"),
    ];
    for (outcome, words) in outcomes {
        // The whole output arrived (it even parses): only the outcome says it is not whole.
        let mut c = sample("healthy-cluster", "esx01");
        let whole = c.outputs[catalogue::RDMA_DEVICE_LIST].stdout.clone();
        set(&mut c, catalogue::RDMA_DEVICE_LIST, &whole, outcome.clone());
        let d = diagnose_host(&c);
        assert_eq!(d.status, HostStatus::Incomplete, "{outcome:?}");
        for id in ["rdma-device-present", "rdma-device-active", "rdma-uplink-on-dvs"] {
            let check = d.checks.iter().find(|k| k.id == id).expect("check");
            assert_eq!(
                check.status,
                Status::Unknown,
                "{id} with {outcome:?}: {}",
                check.summary
            );
            assert!(
                check.summary.contains("esxcli rdma device list") && check.summary.contains(words),
                "{id}: {}",
                check.summary
            );
        }
        assert_eq!(d.incomplete_outputs.len(), 1);
        assert_eq!(d.incomplete_outputs[0].command, catalogue::RDMA_DEVICE_LIST);
    }
}

#[test]
fn a_cut_batch_keeps_its_ended_sections_and_names_the_event_for_the_rest() {
    let mut c = sample("vm-two-adapters", "esx01");
    let whole = c.outputs[catalogue::PVRDMA_PROPERTIES].stdout.clone();
    // Cut inside the second section, before its closing brace and end marker.
    let second = whole
        .find("==> ")
        .and_then(|first| whole[first + 4..].find("==> ").map(|i| i + first + 4));
    let cut_at = second.expect("two sections") + 60;
    set(
        &mut c,
        catalogue::PVRDMA_PROPERTIES,
        &whole[..cut_at],
        Outcome::TimedOut {
            timeout_secs: 5,
            timeout_ms: None,
            after_ms: 5000,
        },
    );
    let d = diagnose_host(&c);
    assert_eq!(d.status, HostStatus::Incomplete);
    let adapters: Vec<_> = d.vms.iter().flat_map(|v| &v.adapters).collect();
    assert_eq!(adapters.len(), 2, "{d:#?}");
    assert_ne!(adapters[0].verdict, Verdict::Unknown, "{:?}", adapters[0]);
    assert_eq!(adapters[1].verdict, Verdict::Unknown);
    let reason = adapters[1].reasons.join(" ");
    assert!(
        reason.contains("did not finish within --command-timeout 5s"),
        "{reason}"
    );
    assert!(reason.contains("no end marker"), "{reason}");
}

#[test]
fn a_section_without_its_marker_is_unknown_even_when_the_command_exited() {
    let mut c = sample("healthy-cluster", "esx01");
    let whole = c.outputs[catalogue::PVRDMA_PROPERTIES].stdout.clone();
    let marker = whole.rfind("<== ").expect("end marker");
    set(
        &mut c,
        catalogue::PVRDMA_PROPERTIES,
        &whole[..marker],
        Outcome::Exited { code: 0 },
    );
    let d = diagnose_host(&c);
    let a = &d.vms.iter().find(|v| v.name == "hpc-node01").expect("vm").adapters[0];
    assert_eq!(a.verdict, Verdict::Unknown);
    assert!(a.reasons.join(" ").contains("no end marker"), "{:?}", a.reasons);
}

#[test]
fn old_captures_without_markers_read_as_complete_and_old_flags_still_count() {
    // esxi67-healthy keeps the marker-less batches of older captures (a directory).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/esxi67-healthy/esx67");
    let c = read_host(&dir, "esx67", CaptureSource::Directory).expect("sample");
    assert!(!c.outputs[catalogue::PVRDMA_PROPERTIES].stdout.contains("<== "));
    let d = diagnose_host(&c);
    assert_eq!(d.status, HostStatus::Ok, "{d:#?}");
    // An older bundle recorded only `timeout_hit`: still not evidence.
    let mut c = read_host(&dir, "esx67", CaptureSource::Directory).expect("sample");
    let o = c.outputs.get_mut(catalogue::PVRDMA_PROPERTIES).expect("output");
    o.timeout_hit = true;
    o.outcome = None;
    let d = diagnose_host(&c);
    assert_eq!(d.status, HostStatus::Incomplete);
    assert!(d
        .vms
        .iter()
        .flat_map(|v| &v.adapters)
        .all(|a| a.verdict == Verdict::Unknown));
}

#[test]
fn a_failed_vm_process_list_is_the_hosts_own_reason_and_blames_no_port_query() {
    let mut c = sample("rdma-device-down", "esx01");
    let o = c.outputs.get_mut(catalogue::VM_PROCESS_LIST).expect("output");
    o.stdout = "Error: Unable to connect to hostd\n".to_string();
    o.exit_status = Some(1);
    // The .vmx loop iterates over it and prints nothing when it fails; the port batch is
    // built from the vsish listing and does not depend on it.
    c.outputs
        .get_mut(catalogue::VMX_PVRDMA_LINES)
        .expect("output")
        .stdout
        .clear();
    let d = diagnose_host(&c);
    let vms_error = d.vms_error.clone().expect("vms_error");
    assert!(
        vms_error.contains("esxcli vm process list") && vms_error.contains("hostd"),
        "{vms_error}"
    );
    let adapter = &d.vms[0].adapters[0];
    assert_eq!(adapter.verdict, Verdict::TcpFallback, "{adapter:?}");
    let reasons = adapter.reasons.join("\n");
    assert!(!reasons.contains("no port with MAC"), "{reasons}");
    assert!(!reasons.contains("port is unknown"), "{reasons}");
}

#[test]
fn vmx_inventory_names_adapters_vsish_never_reached() {
    let mut c = sample("healthy-cluster", "esx01");
    // vsish printed nothing before the timeout: no section at all.
    set(
        &mut c,
        catalogue::PVRDMA_PROPERTIES,
        "",
        Outcome::TimedOut {
            timeout_secs: 60,
            timeout_ms: None,
            after_ms: 60_000,
        },
    );
    set(
        &mut c,
        catalogue::PVRDMA_DEVICES_LS,
        "",
        Outcome::TimedOut {
            timeout_secs: 60,
            timeout_ms: None,
            after_ms: 60_000,
        },
    );
    let d = diagnose_host(&c);
    let vm = d
        .vms
        .iter()
        .find(|v| v.name == "hpc-node01")
        .expect("listed from its .vmx");
    let a = &vm.adapters[0];
    assert_eq!(a.verdict, Verdict::Unknown);
    assert_eq!(a.mac.as_deref(), Some("00:50:56:8a:9f:c2"));
    assert!(
        a.reasons[0].contains("did not finish within --command-timeout 60s"),
        "{:?}",
        a.reasons
    );
    assert!(CATALOGUE.iter().any(|s| s.id == catalogue::VMX_PVRDMA_LINES));
}
