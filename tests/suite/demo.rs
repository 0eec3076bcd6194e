//! The in-process simulated ESXi fleet, reached over real SSH through `collect_live`:
//! the demo's promise (scenario host names, every output delivered) and the read-only
//! promise (every command line the tool sends is a catalogue entry).
use crate::support::client::Doctor;
use pvrdma_doctor::demo::{load_scenario, run_demo, scale_fleet, DemoOptions, SimFleet};
use pvrdma_doctor::live::{collect_live, LiveOptions};
use pvrdma_engine::capture::ErrorKind;
use pvrdma_engine::catalogue::CATALOGUE;
use std::path::Path;
use std::time::Duration;

fn live() -> LiveOptions {
    LiveOptions {
        connect_timeout: Some(Duration::from_secs(20)),
        command_timeout: Duration::from_secs(20),
        run_timeout: Some(Duration::from_secs(120)),
        ..LiveOptions::default()
    }
}

/// The command lines a capture's outputs took: one per output sent, the single-answer
/// commands of a group all on one.
fn lines_sent(c: &pvrdma_engine::capture::HostCapture) -> usize {
    let sent = c.outputs.values().filter(|o| !o.command.starts_with("(not sent"));
    let (grouped, alone): (Vec<_>, Vec<_>) =
        sent.partition(|o| pvrdma_engine::catalogue::spec(&o.id).is_some_and(pvrdma_engine::catalogue::is_grouped));
    alone.len() + usize::from(!grouped.is_empty())
}

#[test]
fn every_command_sent_is_in_the_catalogue() {
    let hosts = load_scenario(None).expect("embedded scenario");
    let fleet = SimFleet::start(hosts, Duration::ZERO).expect("fleet");
    let run = collect_live(&fleet.live_options(live())).expect("run");
    assert!(run.captures.iter().any(|c| !c.outputs.is_empty()));
    let seen = fleet.commands_seen();
    assert!(!seen.is_empty());
    for cmd in &seen {
        assert!(
            pvrdma_engine::catalogue::is_catalogue_line(cmd),
            "sent a command outside the catalogue: {cmd:?}"
        );
    }
    // And each live host got every catalogue command exactly once: all of them, less the
    // per-adapter batches of a host whose listing names no adapter (not sent at all).
    let sent_per_capture: usize = run
        .captures
        .iter()
        .filter(|c| c.error.is_none())
        .map(|c| {
            assert_eq!(c.outputs.len() + c.missing.len(), CATALOGUE.len(), "{}", c.host);
            lines_sent(c)
        })
        .sum();
    assert_eq!(seen.len(), sent_per_capture);

    // With --probe, and only then, vmkping lines built by the probe are allowed too.
    let fleet = SimFleet::start(load_scenario(None).expect("embedded scenario"), Duration::ZERO).expect("fleet");
    let probing = LiveOptions {
        probe: Some(pvrdma_doctor::probe::ProbeOptions::default()),
        ..live()
    };
    let run = collect_live(&fleet.live_options(probing)).expect("run");
    let seen = fleet.commands_seen();
    let probes = seen
        .iter()
        .filter(|c| pvrdma_doctor::probe::parse_probe_command(c).is_some())
        .count();
    assert!(probes > 0, "the reachable hosts probed each other");
    for cmd in &seen {
        assert!(
            pvrdma_engine::catalogue::is_catalogue_line(cmd)
                || pvrdma_doctor::probe::parse_probe_command(cmd).is_some(),
            "sent a command outside the catalogue and the probe: {cmd:?}"
        );
    }
    let sent: usize = run.captures.iter().filter(|c| c.error.is_none()).map(lines_sent).sum();
    assert_eq!(seen.len(), sent + probes);
}

#[test]
fn demo_reports_scenario_hosts_with_their_outputs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/healthy-cluster");
    let opts = DemoOptions {
        scenario: Some(root.clone()),
        hosts: None,
        latency: Duration::from_millis(10),
    };
    let run = run_demo(&opts, live()).expect("demo");
    let names: Vec<&str> = run.captures.iter().map(|c| c.host.as_str()).collect();
    assert_eq!(names, ["esx01", "esx02"]);
    for c in &run.captures {
        assert!(c.error.is_none(), "{}: {:?}", c.host, c.error);
        for spec in CATALOGUE {
            let expected =
                std::fs::read_to_string(root.join(&c.host).join(format!("{}.txt", spec.id))).expect("sample");
            let got = &c.outputs[spec.id].stdout;
            if spec.id == pvrdma_engine::catalogue::VM_PORT_LIST {
                // Only the PVRDMA VMs, each section as captured, closed by its end marker.
                let got = pvrdma_parsers::parse_vm_port_list_batch(got).expect("batch");
                let want = pvrdma_parsers::parse_vm_port_list_batch(&expected).expect("sample");
                assert!(!got.is_empty());
                for s in &got {
                    assert_eq!(Some(s), want.iter().find(|w| w.world_id == s.world_id), "{}", c.host);
                }
            } else if spec.id == pvrdma_engine::catalogue::PVRDMA_PROPERTIES {
                let got = pvrdma_parsers::parse_pvrdma_properties_batch(got).expect("batch");
                let want = pvrdma_parsers::parse_pvrdma_properties_batch(&expected).expect("sample");
                assert_eq!(got, want, "{}", c.host);
            } else {
                assert_eq!(got, &expected, "{} {}", c.host, spec.id);
            }
        }
    }
}

#[test]
fn a_host_with_only_host_error_is_a_closed_port() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/healthy-cluster/esx01");
    let up = dir.path().join("esx01");
    std::fs::create_dir(&up).expect("mkdir");
    for e in std::fs::read_dir(&src).expect("read") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), up.join(e.file_name())).expect("copy");
    }
    let down = dir.path().join("esx09");
    std::fs::create_dir(&down).expect("mkdir");
    std::fs::write(
        down.join("host-error.json"),
        r#"{"kind":"unreachable","message":"powered off"}"#,
    )
    .expect("write");
    let opts = DemoOptions {
        scenario: Some(dir.path().to_path_buf()),
        hosts: None,
        latency: Duration::ZERO,
    };
    let run = run_demo(&opts, live()).expect("demo");
    assert!(run.captures[0].error.is_none(), "{:?}", run.captures[0].error);
    let err = run.captures[1].error.clone().expect("down host");
    assert_eq!(err.kind, ErrorKind::Unreachable, "{err:?}");
    assert!(err.message.starts_with("esx09:"), "{}", err.message);
}

#[test]
fn scaled_fleet_names_and_count() {
    let hosts = load_scenario(None).expect("embedded");
    let fleet = scale_fleet(hosts, Some(12));
    let names: Vec<&str> = fleet.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names.len(), 12);
    assert_eq!(names[0], "sim01");
    assert_eq!(names[11], "sim12");
}

#[test]
fn ctrl_c_still_prints_the_report_of_what_was_collected() {
    // Every simulated command takes 30 s, so once a host has logged in (said with -v) the
    // run is mid-collection, and Ctrl-C is already caught.
    let run = Doctor::new()
        .args(["demo", "--latency", "30s", "--no-progress", "--no-fold", "-v"])
        .spawn_until("logged in as", Duration::from_secs(60));
    run.interrupt();
    let out = run.wait(Duration::from_secs(20));
    let (stdout, stderr) = (&out.stdout, &out.stderr);
    assert!(stderr.contains("interrupted"), "{stderr}");
    for host in ["esx01", "esx02", "esx03"] {
        assert!(stdout.contains(host), "{host} missing from the report:\n{stdout}");
    }
    assert!(stdout.contains("Ctrl-C"), "{stdout}");
    // Hosts cut off are `interrupted`, not `unreachable`; the shell sees 128 + SIGINT.
    assert!(stdout.contains("esx01 · interrupted"), "{stdout}");
    assert_eq!(out.code, Some(130));
}

#[test]
fn an_endless_output_is_cut_at_the_cap_and_marked() {
    use pvrdma_engine::capture::OUTPUT_CAP;
    use pvrdma_engine::catalogue;
    let dir = tempfile::tempdir().expect("tempdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/healthy-cluster/esx01");
    let host = dir.path().join("esx01");
    std::fs::create_dir(&host).expect("mkdir");
    for e in std::fs::read_dir(&src).expect("read") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), host.join(e.file_name())).expect("copy");
    }
    let line = "x".repeat(1023) + "\n";
    std::fs::write(
        host.join(format!("{}.txt", catalogue::VM_PROCESS_LIST)),
        line.repeat(OUTPUT_CAP / 1024 + 64),
    )
    .expect("write big sample");
    let opts = DemoOptions {
        scenario: Some(dir.path().to_path_buf()),
        hosts: None,
        latency: Duration::ZERO,
    };
    let run = run_demo(&opts, live()).expect("demo");
    let c = &run.captures[0];
    let big = &c.outputs[catalogue::VM_PROCESS_LIST];
    assert!(big.truncated, "not marked truncated");
    assert_eq!(big.stdout.len(), OUTPUT_CAP);
    // The cap on one command leaves the others whole.
    let version = &c.outputs[catalogue::SYSTEM_VERSION];
    assert!(!version.truncated && version.exit_status == Some(0));
}

#[test]
fn the_demo_never_touches_the_users_agent() {
    // A socket standing in for the user's ssh-agent, counting who connects to it. The demo
    // runs as its own process with SSH_AUTH_SOCK set there: changing this process's
    // environment would reach every other test of this binary running at the same time.
    let dir = tempfile::tempdir().expect("tempdir");
    let sock = dir.path().join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).expect("bind agent socket");
    listener.set_nonblocking(true).expect("nonblocking");
    let out = Doctor::new()
        .args(["demo", "--no-progress", "--format", "json"])
        .env("SSH_AUTH_SOCK", &sock)
        .home(dir.path())
        .run();
    let report = out.json();
    let reached = report["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .any(|h| h["status"] != "unreachable");
    assert!(reached, "{}", out.stdout);
    assert!(listener.accept().is_err(), "the demo connected to the user's ssh-agent");
    let hosts = load_scenario(None).expect("embedded scenario");
    let fleet = SimFleet::start(hosts, Duration::ZERO).expect("fleet");
    let opts = fleet.live_options(live());
    let plan = pvrdma_doctor::live::plan_host(
        &pvrdma_doctor::hosts::parse_host_spec("esx01").expect("spec"),
        &opts,
        &pvrdma_ssh_config::SshConfig::empty(pvrdma_ssh_config::LocalContext::current(dir.path())),
        dir.path(),
    )
    .expect("plan");
    assert!(
        !plan
            .target
            .identity_files
            .iter()
            .any(|p| p.path.starts_with(dir.path().join(".ssh"))),
        "{:?}",
        plan.target.identity_files
    );
}

/// `demo --serve --ssh-dir`: the simulated hosts alone, and an exporter of its own in
/// front of them (`serve --config` with the exporter.yml written there), which can be
/// killed and started again while the hosts, and a scenario folder they read again every
/// second, go on.
#[test]
fn demo_hosts_exposed_over_ssh_serve_an_exporter_of_their_own_killable_alone() {
    use crate::serve::{exporter, get, Proc};
    let dir = tempfile::tempdir().expect("tempdir");
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/esxi80-mixed-fleet");
    for host in std::fs::read_dir(&sample).unwrap() {
        let host = host.unwrap();
        if host.path().is_dir() {
            std::fs::create_dir(fleet.join(host.file_name())).unwrap();
            for f in std::fs::read_dir(host.path()).unwrap() {
                let f = f.unwrap();
                std::fs::copy(f.path(), fleet.join(host.file_name()).join(f.file_name())).unwrap();
            }
        }
    }
    let ssh = dir.path().join("ssh");
    let log = dir.path().join("hosts.log");
    let child = Doctor::new()
        .args([
            "demo",
            "--serve",
            "--ssh-dir",
            ssh.to_str().unwrap(),
            "--scenario",
            fleet.to_str().unwrap(),
        ])
        .command()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start the demo hosts");
    let mut hosts = Proc { child, log };
    let config = ssh.join("exporter.yml");
    let start = std::time::Instant::now();
    while !config.is_file() {
        assert!(hosts.wait_exit(Duration::from_millis(100)).is_none(), "{}", hosts.log());
        assert!(start.elapsed() < Duration::from_secs(30), "{}", hosts.log());
    }
    std::thread::sleep(Duration::from_millis(200));
    let args = ["serve", "--config", config.to_str().unwrap()];
    for round in 0..2 {
        let (mut exp, addr) = exporter(dir.path(), &args);
        let (status, body) = get(&addr, "/probe?target=esx02");
        assert_eq!(status, 200, "{body}");
        assert!(
            body.contains(
                r#"pvrdma_adapter_verdict{host_name="esx02",vm_name="hpc-node02",adapter="0",verdict="tcp-fallback"} 1"#
            ),
            "round {round}: {body}"
        );
        let (_, body) = get(&addr, "/probe?target=esx03");
        assert!(
            body.contains(r#"pvrdma_host_read_failure_info{host_name="esx03",class="unreachable""#),
            "{body}"
        );
        let (_, body) = get(&addr, "/probe?target=demo");
        assert!(body.contains(r#"pvrdma_host_up{host_name="esx01"} 1"#), "{body}");
        exp.signal("-KILL");
        let _ = exp.wait_exit(Duration::from_secs(10));
        assert!(exp.child.try_wait().expect("wait").is_some(), "the exporter is gone");
        assert!(
            hosts.wait_exit(Duration::from_millis(10)).is_none(),
            "the hosts outlive their exporter: {}",
            hosts.log()
        );
        // Mended while no exporter runs: the hosts read the folder on their own.
        std::fs::copy(
            sample.join("esx01/esxcli_network_firewall_ruleset_list.txt"),
            fleet.join("esx02/esxcli_network_firewall_ruleset_list.txt"),
        )
        .unwrap();
        std::fs::write(
            fleet.join("esx02/vsish_pvrdma_properties.txt"),
            std::fs::read_to_string(fleet.join("esx02/vsish_pvrdma_properties.txt"))
                .unwrap()
                .replace("Physical HCA available:0", "Physical HCA available:1"),
        )
        .unwrap();
        if round == 0 {
            std::thread::sleep(Duration::from_millis(1500));
            let (mut exp, addr) = exporter(dir.path(), &args);
            let (_, body) = get(&addr, "/probe?target=esx02");
            assert!(body.contains(r#"verdict="hca"} 1"#), "the mend shows: {body}");
            exp.signal("-KILL");
            let _ = exp.wait_exit(Duration::from_secs(10));
            // Broken again for the next round.
            for f in [
                "esxcli_network_firewall_ruleset_list.txt",
                "vsish_pvrdma_properties.txt",
            ] {
                std::fs::copy(sample.join("esx02").join(f), fleet.join("esx02").join(f)).unwrap();
            }
            std::thread::sleep(Duration::from_millis(1500));
        }
    }
}
