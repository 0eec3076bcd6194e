//! The vCenter options as an admin meets them the first time, against govmomi's vSphere
//! simulator: an unknown certificate refused before any password is asked for, with the
//! option that pins it whole on a line of its own; an address that is not vCenter's API
//! saying what to write instead; an empty user refused before connecting; a chosen VM
//! outside the chosen clusters named, never dropped in silence. Every run leaves vCenter
//! with no session open.
use crate::support::client::Doctor;
use crate::support::free_port;
use crate::support::vcsim::{ClusterSpec, DatacenterSpec, HostSpec, Spec, Vcsim, VmSpec};
use crate::tmux::{assert_fits, exit_code, in_80_columns, in_80_columns_typing};
use std::time::Duration;

/// A cluster `HPC`, a cluster `GPU` and a standalone host, each with a VM, and a VM
/// powered off.
fn inventory() -> Spec {
    Spec {
        datacenters: vec![DatacenterSpec {
            name: "Lab East".into(),
            folder: String::new(),
            clusters: vec![
                ClusterSpec {
                    name: "HPC".into(),
                    folder: String::new(),
                    hosts: vec![HostSpec::new("esx01"), HostSpec::new("esx02")],
                },
                ClusterSpec {
                    name: "GPU".into(),
                    folder: String::new(),
                    hosts: vec![HostSpec::new("gpu01")],
                },
            ],
            standalone: vec![HostSpec::new("solo01")],
        }],
        vms: vec![
            VmSpec::new("hpc-node01", "esx01", ""),
            VmSpec::new("gpu-job", "gpu01", ""),
            VmSpec::new("solo vm [1]", "solo01", ""),
            VmSpec::new("hpc-old", "esx02", "poweredOff"),
        ],
    }
}

/// `hosts` reading `sim` (the password from the environment), trusting what `args` say.
fn run(sim: &Vcsim, args: &[&str]) -> crate::support::client::Outcome {
    Doctor::new()
        .arg("hosts")
        .logging_in_to(sim)
        .args(args)
        .timeout(Duration::from_secs(120))
        .run()
}

#[test]
#[ignore = "needs the vSphere simulator and tmux: scripts/test.sh runs it"]
fn an_unknown_certificate_is_refused_before_the_password_prompt_with_its_pin_whole_on_a_line() {
    let mut sim = Vcsim::start(&inventory());
    let pin = format!("--vcenter-thumbprint {}", sim.thumbprint);
    // On a terminal, without a password anywhere: the refusal comes first, no prompt.
    let text = in_80_columns(&["hosts", "--vcenter", &sim.url, "--vcenter-user", &sim.user]);
    assert!(!text.contains("Password for"), "asked for a password first:\n{text}");
    assert_eq!(exit_code(&text), "2", "{text}");
    // The option, thumbprint included, is one line (the terminal folds it; `-J` joins it
    // back): a copy pastes whole. Everything else fits 80 columns.
    assert!(text.lines().any(|l| l.trim() == pin), "no line is the pin:\n{text}");
    let rest: String = text
        .lines()
        .filter(|l| l.trim() != pin)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_fits("an unknown certificate", &rest);
    assert!(rest.replace("\n    ", " ").contains("--vcenter-ca FILE"), "{text}");

    // A pin that no longer matches (a renewed certificate): the same layout with $COLUMNS.
    let old = "00:".repeat(31) + "00";
    let renewed = Doctor::new()
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", &sim.password)
        .env("COLUMNS", "80")
        .args(["hosts", "--vcenter", &sim.url, "--vcenter-user", &sim.user])
        .args(["--vcenter-thumbprint", &old])
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(renewed.code, Some(2), "{}", renewed.stderr);
    assert_eq!(
        renewed.stderr.lines().last(),
        Some(format!("    {pin}").as_str()),
        "{}",
        renewed.stderr
    );
    assert!(!renewed.stderr.contains(&sim.password));
    // What the refusal says to paste is accepted as it is.
    let pasted: Vec<&str> = pin.split(' ').collect();
    let pinned = run(&sim, &pasted);
    assert_eq!(pinned.code, Some(0), "{}", pinned.stderr);
    // Piped (a log): one line per message, the thumbprint once, at its end.
    let piped = run(&sim, &[]);
    assert_eq!(piped.code, Some(2), "{}", piped.stderr);
    assert_eq!(piped.stderr.lines().count(), 1, "{}", piped.stderr);
    assert!(piped.stderr.trim_end().ends_with(&pin), "{}", piped.stderr);
    assert_eq!(piped.stderr.matches(&sim.thumbprint).count(), 1, "{}", piped.stderr);
    assert_eq!(sim.sessions(), 0, "no run leaves a session open");
}

#[test]
#[ignore = "needs the vSphere simulator and tmux: scripts/test.sh runs it"]
fn an_address_that_is_not_vcenters_api_says_what_to_write_instead() {
    // Nothing listens: said before the prompt, as unknown (3), with what to check.
    let port = free_port().to_string();
    let closed = format!("127.0.0.1:{port}");
    let text = in_80_columns(&["hosts", "--vcenter", &closed, "--vcenter-user", "monitor@vsphere.local"]);
    assert!(!text.contains("Password for"), "{text}");
    assert_eq!(exit_code(&text), "3", "{text}");
    assert_fits("a closed port", &text);
    assert!(
        text.replace("\n    ", " ").contains("check the host and port"),
        "{text}"
    );

    // The web client's path instead of the API's.
    let mut sim = Vcsim::start(&inventory());
    let ui = sim.url.replace("/sdk", "/ui");
    let wrong = Doctor::new()
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", &sim.password)
        .args(["hosts", "--vcenter", &ui, "--vcenter-user", &sim.user, "--vcenter-ca"])
        .arg(&sim.ca)
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(wrong.code, Some(2), "{}", wrong.stderr);
    assert!(wrong.stderr.contains("HTTP 404"), "{}", wrong.stderr);
    assert!(wrong.stderr.contains("vCenter serves it at /sdk"), "{}", wrong.stderr);

    // A fault on vCenter's side is not the admin's usage error: unknown (3), as an
    // unreachable vCenter is, and the session is logged out all the same.
    sim.fail_next_read();
    let ca = sim.ca.display().to_string();
    let fault = run(&sim, &["--vcenter-ca", &ca]);
    assert_eq!(fault.code, Some(3), "{}", fault.stderr);
    assert!(
        fault.stderr.contains(&format!(
            "vCenter {} answered with the fault SystemError",
            sim.address()
        )),
        "{}",
        fault.stderr
    );
    assert_eq!(sim.sessions(), 0);
}

/// A password variable that is set but empty (a script's secret that did not arrive) is
/// said to be empty, not to be missing.
#[test]
fn an_empty_password_variable_is_said_to_be_empty() {
    for (value, said) in [
        (
            Some(""),
            "PVRDMA_DOCTOR_VCENTER_PASSWORD is set but empty: put the password in it,",
        ),
        (None, ": set PVRDMA_DOCTOR_VCENTER_PASSWORD,"),
    ] {
        let doctor = Doctor::new().args([
            "hosts",
            "--vcenter",
            "127.0.0.1:1",
            "--vcenter-user",
            "monitor@vsphere.local",
        ]);
        let doctor = match value {
            Some(v) => doctor.env("PVRDMA_DOCTOR_VCENTER_PASSWORD", v),
            None => doctor.env_remove("PVRDMA_DOCTOR_VCENTER_PASSWORD"),
        };
        let out = doctor.timeout(Duration::from_secs(60)).run();
        assert_eq!(out.code, Some(2), "{}", out.stderr);
        let text = out.stderr.replace("\n    ", " ");
        assert!(
            text.contains("no password for monitor@vsphere.local on vCenter 127.0.0.1:1"),
            "{text}"
        );
        assert!(text.contains(said), "{text}");
    }
}

#[test]
fn an_empty_vcenter_user_is_refused_before_connecting() {
    for env in [false, true] {
        let mut doctor =
            Doctor::new()
                .env_remove("PVRDMA_DOCTOR_VCENTER_PASSWORD")
                .args(["hosts", "--vcenter", "127.0.0.1:1"]);
        doctor = if env {
            doctor.env("PVRDMA_DOCTOR_VCENTER_USER", "  ")
        } else {
            doctor.args(["--vcenter-user", ""])
        };
        let out = doctor.timeout(Duration::from_secs(60)).run();
        assert_eq!(out.code, Some(2), "{}", out.stderr);
        assert!(out.stderr.contains("the vCenter user is empty"), "{}", out.stderr);
        assert!(!out.stderr.contains("cannot connect"), "{}", out.stderr);
    }
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_chosen_vm_outside_the_chosen_clusters_is_named_with_where_it_runs() {
    let mut sim = Vcsim::start(&inventory());
    let ca = sim.ca.display().to_string();
    let out = run(
        &sim,
        &[
            "--vcenter-ca",
            &ca,
            "--vm",
            "solo vm [1]",
            "--vm",
            "gpu-*",
            "--cluster",
            "HPC",
        ],
    );
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "", "{}", out.stdout);
    for said in [
        "VM solo vm [1] runs on solo01 (Lab East, standalone), outside --cluster HPC",
        "VM gpu-job runs on gpu01 (Lab East/GPU), outside --cluster HPC",
        &format!("vCenter {} has no host to diagnose", sim.address()),
    ] {
        assert!(out.stderr.contains(said), "{said}:\n{}", out.stderr);
    }
    // The JSON document lists them too, with where they run.
    let json = run(
        &sim,
        &[
            "--vcenter-ca",
            &ca,
            "--vm",
            "solo vm [1]",
            "--cluster",
            "HPC",
            "--format",
            "json",
        ],
    );
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("hosts JSON");
    assert_eq!(
        doc["vms_outside_clusters"],
        serde_json::json!([{"name": "solo vm [1]", "host": "solo01", "datacenter": "Lab East", "cluster": null}]),
        "{doc}"
    );
    // In the clusters: selected, nothing said about it.
    let inside = run(
        &sim,
        &[
            "--vcenter-ca",
            &ca,
            "--vm",
            "hpc-node01",
            "--vm",
            "gpu-*",
            "--cluster",
            "HPC",
        ],
    );
    assert_eq!(inside.code, Some(0), "{}", inside.stderr);
    assert_eq!(inside.stdout.trim(), "esx01");
    assert!(inside.stderr.contains("VM gpu-job runs on gpu01"), "{}", inside.stderr);
    assert!(!inside.stderr.contains("hpc-node01"), "{}", inside.stderr);
    // A configuration-only run reads the inventory its own way: the same line.
    let api = Doctor::new()
        .reading(&sim)
        .args(["--no-ssh", "--vm", "*", "--cluster", "GPU"])
        .timeout(Duration::from_secs(120))
        .run();
    assert!(
        api.stderr
            .contains("VM solo vm [1] runs on solo01 (Lab East, standalone), outside --cluster GPU"),
        "{}",
        api.stderr
    );
    assert_eq!(sim.sessions(), 0);
}

/// `hosts --help` says where the password comes from and what the exit codes mean, and
/// the codes it states are the ones a run gives (here: vCenter unreachable is 3, an
/// argument vCenter cannot take is 2).
#[test]
fn hosts_help_states_the_password_sources_and_exit_codes_it_keeps() {
    let help = Doctor::new().args(["hosts", "--help"]).run();
    assert_eq!(help.code, Some(0));
    let text = help.stdout.replace('\n', " ");
    for said in [
        "PVRDMA_DOCTOR_VCENTER_PASSWORD",
        "--vcenter-password-file",
        "asked only once vCenter's certificate is trusted",
        "3 when none is (all skipped) or vCenter cannot be read",
        "2 on a usage, login or certificate error",
    ] {
        assert!(text.contains(said), "{said}: {}", help.stdout);
    }
    // `hosts` logs in to no ESXi host: its -v says what it does show.
    assert!(!text.contains("SSH negotiation"), "{}", help.stdout);
    assert!(text.contains("which vCenter is read"), "{}", help.stdout);
    let closed = format!("127.0.0.1:{}", free_port());
    let unreachable = Doctor::new()
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", "x")
        .args(["hosts", "--vcenter", &closed, "--vcenter-user", "monitor@vsphere.local"])
        .timeout(Duration::from_secs(60))
        .run();
    assert_eq!(unreachable.code, Some(3), "{}", unreachable.stderr);
    let http = Doctor::new()
        .args([
            "hosts",
            "--vcenter",
            "http://vc01/sdk",
            "--vcenter-user",
            "monitor@vsphere.local",
        ])
        .run();
    assert_eq!(http.code, Some(2), "{}", http.stderr);
    assert!(http.stderr.contains("plain http is refused"), "{}", http.stderr);
}

/// The exporter takes no `--vcenter-*` option: its log names the keys of the
/// configuration's `vcenters:` entry that trust the certificate, ending with the pin to
/// paste there.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn the_exporter_says_which_configuration_key_trusts_an_unknown_certificate() {
    let mut sim = Vcsim::start(&inventory());
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("exporter.yml");
    std::fs::write(
        &config,
        format!(
            "vcenters:\n  lab: {{url: \"{}\", user: \"{}\", password_env: PVRDMA_TEST_VC_PW}}\ngroups:\n  hpc: {{vcenter: lab, cluster: HPC}}\n",
            sim.url, sim.user
        ),
    )
    .expect("configuration");
    let (running, addr) = crate::serve_vcenter::serving(&sim, &config, "the inventory cannot be read");
    let (status, why) = crate::serve::get(&addr, "/probe?target=hpc");
    running.interrupt();
    let out = running.wait(Duration::from_secs(60));
    assert_eq!(status, 503, "{why}");
    let pin = format!("thumbprint: \"{}\"", sim.thumbprint);
    for text in [&out.stderr, &why] {
        assert!(text.contains(&pin), "{text}");
        assert!(text.contains("`ca: FILE` in its vcenters: entry"), "{text}");
        assert!(!text.contains("--vcenter"), "{text}");
    }
    assert_eq!(sim.sessions(), 0);
}

/// A watch with nothing to watch ends at once as a one-shot run does, with exit code 3:
/// never a "watching 0 hosts" that passes; a vCenter that cannot be read is 3 too.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_watch_with_no_host_to_watch_or_no_vcenter_says_so_and_exits_3() {
    let mut sim = Vcsim::start(&inventory());
    for extra in [&["--no-ssh"][..], &[]] {
        let out = Doctor::new()
            .reading(&sim)
            .args(["watch", "--vm", "hpc-old", "--count", "1", "--interval", "1s"])
            .args(extra)
            .timeout(Duration::from_secs(120))
            .run();
        assert_eq!(out.code, Some(3), "{extra:?}: {}\n{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("VM hpc-old is powered off"), "{}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("vCenter {} has no host to diagnose", sim.address())),
            "{extra:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("no hosts given"), "{}", out.stderr);
        assert!(!out.stdout.contains("watching 0 hosts"), "{}", out.stdout);
    }
    let closed = format!("127.0.0.1:{}", free_port());
    let unreachable = Doctor::new()
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", &sim.password)
        .args([
            "watch",
            "--vcenter",
            &closed,
            "--vcenter-user",
            &sim.user,
            "--count",
            "1",
        ])
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(unreachable.code, Some(3), "{}", unreachable.stderr);
    assert!(
        unreachable.stderr.contains("cannot connect to vCenter"),
        "{}",
        unreachable.stderr
    );
    assert_eq!(sim.sessions(), 0);
}

/// A password file every user can read is used, with a warning that says how to close it;
/// one readable by its owner alone (or its group) is used in silence.
#[test]
fn a_password_file_others_can_read_is_warned_about() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("vcenter.pw");
    std::fs::write(&file, "Secret-42\n").expect("password file");
    let closed = format!("127.0.0.1:{}", free_port());
    for (mode, warned) in [(0o644, true), (0o640, false), (0o600, false)] {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let out = Doctor::new()
            .env_remove("PVRDMA_DOCTOR_VCENTER_PASSWORD")
            .args(["hosts", "--vcenter", &closed, "--vcenter-user", "monitor@vsphere.local"])
            .arg("--vcenter-password-file")
            .arg(&file)
            .timeout(Duration::from_secs(60))
            .run();
        assert_eq!(out.code, Some(3), "{}", out.stderr);
        let said = out.stderr.contains(&format!("chmod 600 {}", file.display()));
        assert_eq!(said, warned, "mode {mode:o}: {}", out.stderr);
        assert!(!out.stderr.contains("Secret-42"), "{}", out.stderr);
    }
}

/// A refused login says where the password was read from (a stale variable left in a
/// shell is the usual cause), in `hosts`, the configuration-only diagnosis and `watch`,
/// and never shows the password itself.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_refused_login_says_where_the_password_was_read_from() {
    let mut sim = Vcsim::start(&inventory());
    let stale = "Stale-Password-7";
    let from_env = "(read from the environment variable PVRDMA_DOCTOR_VCENTER_PASSWORD)";
    for job in [&["hosts"][..], &["--no-ssh"], &["watch", "--count", "1"]] {
        let out = Doctor::new()
            .reading(&sim)
            .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", stale)
            .args(job)
            .timeout(Duration::from_secs(120))
            .run();
        assert_eq!(out.code, Some(2), "{job:?}: {}", out.stderr);
        assert!(out.stderr.contains("wrong user or password"), "{job:?}: {}", out.stderr);
        assert!(out.stderr.contains(from_env), "{job:?}: {}", out.stderr);
        assert!(!out.stderr.contains(stale) && !out.stdout.contains(stale), "{job:?}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("vcenter.pw");
    std::fs::write(&file, format!("{stale}\n")).expect("password file");
    let out = Doctor::new()
        .reading(&sim)
        .arg("hosts")
        .arg("--vcenter-password-file")
        .arg(&file)
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("(read from the file {})", file.display())),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains(stale));
    assert_eq!(sim.sessions(), 0);
}

/// The prompt on a terminal: the password typed there logs in; an empty line is refused
/// before anything is sent, never reported as vCenter refusing a login.
#[test]
#[ignore = "needs the vSphere simulator and tmux: scripts/test.sh runs it"]
fn the_password_is_asked_on_a_terminal_and_an_empty_answer_is_not_sent() {
    let mut sim = Vcsim::start(&inventory());
    let ca = sim.ca.display().to_string();
    let args = [
        "hosts",
        "--vcenter",
        &sim.url,
        "--vcenter-user",
        &sim.user,
        "--vcenter-ca",
        &ca,
        "--cluster",
        "GPU",
    ];
    let prompt = "(not echoed):";
    let typed = in_80_columns_typing(&args, Some((prompt, &sim.password)));
    assert_eq!(exit_code(&typed), "0", "{typed}");
    assert!(
        typed.contains(&format!("Password for {} on vCenter", sim.user)),
        "{typed}"
    );
    assert!(typed.lines().any(|l| l == "gpu01"), "{typed}");
    assert!(!typed.contains(&sim.password), "the password was echoed:\n{typed}");
    let empty = in_80_columns_typing(&args, Some((prompt, "")));
    assert_eq!(exit_code(&empty), "2", "{empty}");
    assert!(empty.replace("\n    ", " ").contains("no password typed"), "{empty}");
    assert!(!empty.contains("refused the login"), "{empty}");
    assert_eq!(sim.sessions(), 0);
}

/// As a monitoring plugin (whose stderr is silenced), a run that ends at vCenter still
/// prints its UNKNOWN status line with why: never an empty output.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn as_a_monitoring_plugin_a_run_that_ends_at_vcenter_says_why_on_stdout() {
    let mut sim = Vcsim::start(&inventory());
    let closed = format!("127.0.0.1:{}", free_port());
    let unreachable = Doctor::new()
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", &sim.password)
        .args(["--vcenter", &closed, "--vcenter-user", &sim.user, "--format", "nagios"])
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(unreachable.code, Some(3), "{}", unreachable.stdout);
    assert!(
        unreachable
            .stdout
            .starts_with(&format!("PVRDMA UNKNOWN - cannot connect to vCenter {closed}")),
        "{}",
        unreachable.stdout
    );
    for extra in [&[][..], &["--no-ssh"]] {
        let stopped = Doctor::new()
            .reading(&sim)
            .args(["--vm", "hpc-old", "--format", "nagios"])
            .args(extra)
            .timeout(Duration::from_secs(120))
            .run();
        assert_eq!(stopped.code, Some(3), "{extra:?}: {}", stopped.stdout);
        assert!(
            stopped.stdout.starts_with("PVRDMA UNKNOWN - vCenter "),
            "{extra:?}: {}",
            stopped.stdout
        );
        let text = stopped.stdout.replace('\n', " ");
        assert!(text.contains("has no host to diagnose"), "{text}");
        assert!(text.contains("VM hpc-old is powered off"), "{text}");
    }
    assert_eq!(sim.sessions(), 0);
}

/// A watch whose every host leaves the selection (the cluster's one host goes into
/// maintenance) goes on, says why the host left, and takes it back when it returns:
/// never "no hosts given" halfway through a watch.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_watch_whose_hosts_all_left_the_selection_goes_on_until_they_return() {
    let mut sim = Vcsim::start(&inventory());
    // No SSH server answers there: each round judges the host from vCenter's vSphere API
    // (configuration only), which is enough to follow the selection.
    let closed = free_port().to_string();
    let running = Doctor::new()
        .reading(&sim)
        .args([
            "watch",
            "--cluster",
            "GPU",
            "--vm",
            "*",
            "--interval",
            "2s",
            "--count",
            "3",
        ])
        .args(["-o", "HostName=127.0.0.1", "-p", &closed])
        .spawn_until("outside --cluster GPU", Duration::from_secs(120));
    // Rounds start at 0 s, 2 s and 4 s: the second sees the host in maintenance, the
    // third sees it back.
    sim.set_maintenance("gpu01", true);
    std::thread::sleep(Duration::from_secs(3));
    sim.set_maintenance("gpu01", false);
    let out = running.wait(Duration::from_secs(120));
    assert!(!out.stderr.contains("no hosts given"), "{}", out.stderr);
    // The simulator's host has the pvrdma ruleset disabled: a problem its configuration
    // shows, as a one-shot run of the same selection says.
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("configuration only: gpu01 judged from vCenter"),
        "{}",
        out.stdout
    );
    let stdout = out.stdout.replace("\n                       ", " ");
    assert!(
        stdout.contains("gpu01 left the hosts vCenter selects (in maintenance mode)"),
        "{stdout}"
    );
    assert!(stdout.contains("gpu01 joined the hosts vCenter selects"), "{stdout}");
    assert_eq!(sim.sessions(), 0);
}

/// PVRDMA_DOCTOR_VCENTER_USER exported in a profile names the account of the runs that
/// read vCenter, and leaves every other run alone; `--vcenter-user` typed without
/// `--vcenter` is still refused.
#[test]
fn a_vcenter_user_from_the_environment_leaves_runs_without_vcenter_alone() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/healthy-cluster");
    let exported = || Doctor::new().env("PVRDMA_DOCTOR_VCENTER_USER", "monitor@vsphere.local");
    let offline = exported().args(["analyze", sample]).run();
    assert_eq!(offline.code, Some(0), "{}", offline.stderr);
    let typed = Doctor::new()
        .env_remove("PVRDMA_DOCTOR_VCENTER_USER")
        .args(["analyze", sample, "--vcenter-user", "monitor@vsphere.local"])
        .run();
    assert_eq!(typed.code, Some(2), "{}", typed.stderr);
    // With --vcenter the variable is the account: the run gets as far as connecting.
    let closed = format!("127.0.0.1:{}", free_port());
    let read = exported()
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", "x")
        .args(["hosts", "--vcenter", &closed])
        .timeout(Duration::from_secs(60))
        .run();
    assert_eq!(read.code, Some(3), "{}", read.stderr);
    assert!(read.stderr.contains("cannot connect to vCenter"), "{}", read.stderr);
}
