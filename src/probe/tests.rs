use super::plan::*;
use super::*;
use pvrdma_engine::capture::RawOutput;
use pvrdma_engine::diagnose::probe::judge::*;
use pvrdma_engine::diagnose::probe::*;
use pvrdma_engine::diagnose::{HostDiagnosis, Status};

#[test]
fn plan_is_a_ring_of_sorted_names_independent_of_order() {
    let hosts: Vec<String> = ["esx03", "esx01", "esx04", "esx02"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let all = plan(&hosts, None);
    assert_eq!(all["esx01"], ["esx02", "esx03", "esx04"]);
    assert_eq!(all["esx04"], ["esx01", "esx02", "esx03"]);
    let two = plan(&hosts, Some(2));
    assert_eq!(two["esx01"], ["esx02", "esx03"]);
    assert_eq!(two["esx04"], ["esx01", "esx02"]);
    let mut shuffled = hosts.clone();
    shuffled.reverse();
    assert_eq!(plan(&shuffled, Some(2)), two);
    assert!(plan(&hosts[..1], None)["esx03"].is_empty());
    assert_eq!(plan(&hosts, Some(99)), all, "K above N-1 is N-1");
    assert!(plan(&hosts, Some(0)).values().all(Vec::is_empty));
}

#[test]
fn command_round_trips_and_nothing_else_parses() {
    let from = Endpoint {
        vmknic: "vmk1".into(),
        ip: Ipv4Addr::new(10, 0, 0, 1),
        mtu: Some(9000),
    };
    let to = Ipv4Addr::new(10, 0, 0, 2);
    let line = probe_command(&from, to);
    assert!(line.contains("vmkping -I vmk1 -c 3 -W 1 10.0.0.2 2>&1"));
    assert!(line.contains("vmkping -I vmk1 -d -s 8972 -c 3 -W 1 10.0.0.2 2>&1"));
    assert_eq!(parse_probe_command(&line), Some(("vmk1".into(), to, Some(8972))));
    let plain_only = probe_command(
        &Endpoint {
            mtu: None,
            ..from.clone()
        },
        to,
    );
    assert_eq!(parse_probe_command(&plain_only), Some(("vmk1".into(), to, None)));
    for bad in [
        "vmkping -I vmk1 10.0.0.2",
        &line.replace("vmk1", "vmk1;reboot"),
        &format!("{line}; reboot"),
        &line.replace("10.0.0.2", "10.0.0.2 -s 1"),
        &line.replace("8972", "4294967295"),
        "esxcli network ip interface list",
    ] {
        assert_eq!(parse_probe_command(bad), None, "{bad}");
    }
}

fn raw(stdout: &str) -> RawOutput {
    RawOutput {
        stdout: stdout.to_string(),
        exit_status: Some(0),
        ..RawOutput::new(PROBE_ID, "")
    }
}

fn judged(stdout: &str, mtu: Option<u32>) -> Probe {
    let mut p = Probe {
        from: "a".into(),
        to: "b".into(),
        from_vmknic: None,
        to_ip: None,
        status: ProbeStatus::Skipped,
        detail: String::new(),
        losses: None,
        rtt: None,
        jumbo: None,
        run_stage: None,
    };
    judge(&mut p, &raw(stdout), mtu);
    p
}

const OK3: &str = "PING 10.0.0.2 (10.0.0.2): 56 data bytes\n64 bytes from 10.0.0.2: icmp_seq=0 ttl=64 time=0.243 ms\n64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.260 ms\n64 bytes from 10.0.0.2: icmp_seq=2 ttl=64 time=0.262 ms\n\n--- 10.0.0.2 ping statistics ---\n3 packets transmitted, 3 packets received, 0% packet loss\nround-trip min/avg/max = 0.243/0.255/0.262 ms\n";
const LOST: &str = "PING 10.0.0.2 (10.0.0.2): 8972 data bytes\n\n--- 10.0.0.2 ping statistics ---\n3 packets transmitted, 0 packets received, 100% packet loss\n";

#[test]
fn statuses_from_the_two_pings() {
    let jumbo_ok = OK3.replace(": 56 data", ": 8972 data");
    let ok = judged(
        &format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n==> jumbo <==\n{jumbo_ok}<== jumbo exit 0 ==>\n"),
        Some(9000),
    );
    assert_eq!(ok.status, ProbeStatus::Ok, "{}", ok.detail);
    assert_eq!(ok.losses.map(|l| l.received), Some(3));
    assert_eq!(ok.rtt.map(|r| r.avg_ms), Some(Number(0.255)));
    assert_eq!(
        ok.jumbo.as_ref().map(|j| (j.payload_bytes, j.passed)),
        Some((8972, Some(true)))
    );

    let mtu = judged(
        &format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n==> jumbo <==\n{LOST}<== jumbo exit 2 ==>\n"),
        Some(9000),
    );
    assert_eq!(mtu.status, ProbeStatus::Mtu, "{}", mtu.detail);
    assert!(mtu.detail.contains("dropped on the path"), "{}", mtu.detail);

    let too_long = "PING 10.0.0.2 (10.0.0.2): 8972 data bytes\nsendto() failed (Message too long)\n";
    let local = judged(
        &format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n==> jumbo <==\n{too_long}<== jumbo exit 2 ==>\n"),
        Some(9000),
    );
    assert_eq!(
        local.status,
        ProbeStatus::Mtu,
        "statistics missing but the run ended: {}",
        local.detail
    );
    assert!(local.detail.contains("Message too long"));

    let dead = judged(
        &format!(
            "==> plain <==\n{}<== plain exit 2 ==>\n==> jumbo <==\n{LOST}<== jumbo exit 2 ==>\n",
            LOST.replace("8972", "56")
        ),
        Some(9000),
    );
    assert_eq!(dead.status, ProbeStatus::Unreachable);
    assert_eq!(dead.losses.map(|l| l.loss_percent), Some(Number(100.0)));

    let cut = judged("==> plain <==\nPING 10.0.0.2 (10.0.0.2): 56 data bytes\n", Some(9000));
    assert_eq!(
        cut.status,
        ProbeStatus::Unknown,
        "no end marker, no reply: {}",
        cut.detail
    );

    let no_jumbo = judged(&format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n"), Some(9000));
    assert_eq!(no_jumbo.status, ProbeStatus::Unknown, "jumbo cut off is never a pass");

    let no_mtu = judged(&format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n"), None);
    assert_eq!(no_mtu.status, ProbeStatus::Unknown);
    assert!(no_mtu.detail.contains("MTU is unknown"));

    let bad_vmk = judged(
        "==> plain <==\nUnknown interface 'vmk9': Invalid argument\n<== plain exit 1 ==>\n",
        Some(9000),
    );
    assert_eq!(bad_vmk.status, ProbeStatus::Unknown);
    assert!(bad_vmk.detail.contains("Unknown interface"), "{}", bad_vmk.detail);

    let not_found = judged(
        "==> plain <==\nsh: vmkping: not found\n<== plain exit 127 ==>\n",
        Some(9000),
    );
    assert_eq!(not_found.status, ProbeStatus::Unknown);

    let garbage = judged("Error: something\n", Some(9000));
    assert_eq!(garbage.status, ProbeStatus::Unknown);
}

fn probe(from: &str, to: &str, status: ProbeStatus) -> Probe {
    Probe {
        from: from.into(),
        to: to.into(),
        from_vmknic: Some("vmk1".into()),
        to_ip: Some("10.0.0.9".into()),
        status,
        detail: "d".into(),
        losses: None,
        rtt: None,
        jumbo: None,
        run_stage: None,
    }
}

#[test]
fn check_fails_on_unreachable_warns_on_mtu_and_folds_pairs() {
    use ProbeStatus::*;
    assert_eq!(check(&[]), None);
    let ok = check(&[probe("a", "b", Ok), probe("b", "a", Ok)]).unwrap();
    assert_eq!(ok.status, Status::Pass);
    let warn = check(&[probe("a", "b", Ok), probe("a", "c", Mtu), probe("c", "a", Mtu)]).unwrap();
    assert_eq!(warn.status, Status::Warn);
    let fail = check(&[probe("a", "b", Mtu), probe("a", "c", Unreachable)]).unwrap();
    assert_eq!(fail.status, Status::Fail);
    assert!(fail.remedy.is_some());
    let unknown = check(&[probe("a", "b", Skipped)]).unwrap();
    assert_eq!(unknown.status, Status::Unknown);
    let lines = pvrdma_engine::report::probe_lines(&[
        probe("a", "c", Mtu),
        probe("c", "a", Mtu),
        probe("a", "b", Unreachable),
        probe("a", "b", Ok),
    ]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains("a vmk1 ↔ c 10.0.0.9"), "{lines:?}");
    assert!(lines[1].contains("→"), "{lines:?}");
}

#[test]
fn results_skip_pairs_whose_side_has_no_usable_vmknic() {
    use crate::collect::replay;
    use pvrdma_engine::capture::CaptureSource;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/probe-outputs");
    let mut captures = replay::read_dir(&root, CaptureSource::Directory).unwrap();
    // esx03 loses its PVRDMA tag: the pairs from or to it that were not probed are
    // skipped; a captured output still counts (evidence beats inference).
    let untagged = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("samples/vmknic-untagged/esx01/esxcli_system_settings_advanced_list_pvrdmavmknic.txt"),
    )
    .unwrap();
    let esx03 = captures.iter_mut().find(|c| c.host == "esx03").unwrap();
    esx03
        .outputs
        .get_mut(pvrdma_engine::catalogue::PVRDMA_VMKNIC_OPTION)
        .unwrap()
        .stdout = untagged;
    esx03.probe = Some(ProbeCapture {
        peers: vec!["esx01".into(), "esx02".into()],
        ..ProbeCapture::default()
    });
    let esx01 = captures.iter_mut().find(|c| c.host == "esx01").unwrap();
    esx01.probe.as_mut().unwrap().outputs.remove("esx03");
    let hosts: Vec<HostDiagnosis> = captures.iter().map(pvrdma_engine::diagnose::diagnose_host).collect();
    let probes = results(&captures, &hosts);
    let of = |from: &str, to: &str| probes.iter().find(|p| p.from == from && p.to == to).unwrap();
    for (from, to) in [("esx01", "esx03"), ("esx03", "esx01"), ("esx03", "esx02")] {
        let p = of(from, to);
        assert_eq!(p.status, ProbeStatus::Skipped, "{from} -> {to}: {p:?}");
        assert_eq!(p.detail, "esx03 has no vmknic tagged for PVRDMA");
    }
    assert_eq!(of("esx01", "esx02").to_ip.as_deref(), Some("10.10.10.12"));
    assert_eq!(of("esx01", "esx03").to_ip, None);
    assert_eq!(
        of("esx01", "esx02").status,
        ProbeStatus::Mtu,
        "the others are still judged"
    );
    let captured = of("esx02", "esx03");
    assert_eq!(
        captured.status,
        ProbeStatus::Unknown,
        "judged from its output: {captured:?}"
    );
    // A probe planned but never answered is unknown, never skipped or passed.
    let esx01 = captures.iter_mut().find(|c| c.host == "esx01").unwrap();
    if let Some(p) = &mut esx01.probe {
        p.outputs.remove("esx02");
    }
    let probes = results(&captures, &hosts);
    let lost = probes.iter().find(|p| p.from == "esx01" && p.to == "esx02").unwrap();
    assert_eq!(lost.status, ProbeStatus::Unknown, "{lost:?}");
}
