//! From the report to the fix, end to end: faults planted on some hosts of govmomi's
//! vSphere simulator, the `--no-ssh` plan applied by the real `ansible-playbook`
//! (community.vmware, pyVmomi), and the fleet diagnosed again: every faulty host's check
//! passes, the healthy host is untouched, a second apply and a `--check` run change
//! nothing, and writing the plan changed nothing. A fix that needs a choice stays a
//! comment. The plan `analyze` makes of the run's bundle is the one applied.
use crate::plan::VENV;
use crate::support::client::Doctor;
use crate::support::vcsim::{HostSpec, PvrdmaSpec, Spec, Vcsim, VmSpec, VmknicSpec, DVS_UUID};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn configured(name: &str, last: u8, change: impl FnOnce(&mut PvrdmaSpec)) -> HostSpec {
    let mut pvrdma = PvrdmaSpec::healthy(last);
    change(&mut pvrdma);
    HostSpec {
        pvrdma: Some(pvrdma),
        ..HostSpec::new(name)
    }
}

fn vm(name: &str, host: &str, reserved: bool) -> VmSpec {
    VmSpec {
        hw_version: "vmx-19".into(),
        reserved_mb: if reserved { 32 } else { 0 },
        locked_to_max: reserved,
        vrdma: vec!["rocev2".into()],
        dvs: DVS_UUID.into(),
        ..VmSpec::new(name, host, "")
    }
}

/// esx01 healthy; esx02 with the ruleset off; esx03 with Net.PVRDMAVmknic empty and one
/// vmknic on the HCA's vDS; esx04 whose VM does not reserve its memory; esx05 with the
/// option empty and two vmknics on that vDS (a choice).
fn fleet() -> Spec {
    Spec::one_cluster(
        "Lab East",
        "HPC",
        vec![
            configured("esx01", 11, |_| {}),
            configured("esx02", 12, |p| p.firewall = false),
            configured("esx03", 13, |p| p.vmknic.clear()),
            configured("esx04", 14, |_| {}),
            configured("esx05", 15, |p| {
                p.vmknic.clear();
                p.vmknics.push(VmknicSpec {
                    device: "vmk2".into(),
                    ip: "192.168.51.15".into(),
                    netmask: "255.255.255.0".into(),
                    mtu: 9000,
                    dvs: DVS_UUID.into(),
                });
            }),
        ],
        vec![
            vm("hpc-node01", "esx01", true),
            vm("hpc-node02", "esx02", true),
            vm("hpc-node03", "esx03", true),
            vm("hpc-node04", "esx04", false),
            vm("hpc-node05", "esx05", true),
        ],
    )
}

fn doctor(sim: &Vcsim, extra: &[&str]) -> (String, Option<i32>) {
    let out = Doctor::new()
        .reading(sim)
        .args(["--no-ssh", "--cluster", "HPC"])
        .args(extra)
        .timeout(Duration::from_secs(120))
        .run();
    assert!(matches!(out.code, Some(0..=4)), "{}\n{}", out.stdout, out.stderr);
    (out.stdout, out.code)
}

/// Every host's check statuses, in order.
fn statuses(sim: &Vcsim) -> Vec<(String, String, String)> {
    let (text, _) = doctor(sim, &["--format", "json"]);
    let report: Value = serde_json::from_str(&text).expect("JSON report");
    let mut out = Vec::new();
    for h in report["hosts"].as_array().expect("hosts") {
        for c in h["checks"].as_array().expect("checks") {
            out.push((
                h["host"].as_str().unwrap_or_default().to_string(),
                c["id"].as_str().unwrap_or_default().to_string(),
                c["status"].as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    out
}

fn status<'a>(all: &'a [(String, String, String)], host: &str, id: &str) -> &'a str {
    all.iter()
        .find(|(h, c, _)| h == host && c == id)
        .map(|(_, _, s)| s.as_str())
        .unwrap_or_else(|| panic!("no {id} on {host}"))
}

/// `ansible-playbook` on `plan` against `sim`, bounded; returns the recap's `changed=`
/// counts by host.
fn apply(sim: &Vcsim, plan: &Path, check: bool) -> Vec<(String, u32)> {
    let mut cmd = Command::new("timeout");
    cmd.arg("600").arg(format!("{VENV}/bin/ansible-playbook"));
    if check {
        cmd.arg("--check");
    }
    let out = cmd
        .arg(plan)
        .env("VMWARE_USER", &sim.user)
        .env("VMWARE_PASSWORD", &sim.password)
        .env("SSL_CERT_FILE", &sim.ca)
        .env("ANSIBLE_LOCALHOST_WARNING", "false")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("ansible-playbook runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    text.lines()
        .skip_while(|l| !l.starts_with("PLAY RECAP"))
        .filter_map(|l| {
            let (host, rest) = l.split_once(" : ")?;
            let changed = rest.split_whitespace().find_map(|w| w.strip_prefix("changed="))?;
            Some((host.trim().to_string(), changed.parse().ok()?))
        })
        .collect()
}

#[test]
#[ignore = "needs the vSphere simulator and ansible-playbook with community.vmware (scripts/install-test-deps.sh): scripts/test.sh runs it"]
fn the_no_ssh_plan_applied_by_ansible_fixes_the_faulty_hosts_and_nothing_else() {
    let sim = Vcsim::start(&fleet());
    let dir = tempfile::tempdir().expect("tempdir");
    let before = statuses(&sim);
    for (host, id) in [
        ("esx02", "firewall-pvrdma"),
        ("esx03", "pvrdma-vmknic-tagged"),
        ("esx04", "vm-memory-reserved"),
        ("esx05", "pvrdma-vmknic-tagged"),
    ] {
        assert_eq!(status(&before, host, id), "fail", "{host} {id}: {before:?}");
    }

    let bundle = dir.path().join("run.tgz");
    let (live, _) = doctor(
        &sim,
        &["--format", "ansible", "--bundle", bundle.to_str().expect("path")],
    );
    assert_eq!(statuses(&sim), before, "writing the plan changed nothing");
    assert!(!live.contains(&sim.password), "the password is never in a plan");
    // Two vmknics on the HCA's vDS: the choice is a comment, not a task.
    assert!(live.contains("BY HAND on esx05, pvrdma-vmknic-tagged"), "{live}");
    assert!(live.contains("which vmknic carries PVRDMA: vmk1 and vmk2"), "{live}");
    assert!(!live.contains("pvrdma-doctor-esx05"), "{live}");
    assert!(
        !live.contains("pvrdma-doctor-esx01"),
        "the healthy host has no task\n{live}"
    );

    // The plan `analyze` makes of the run's bundle says the same changes.
    let analyzed = Doctor::new()
        .args(["analyze", "--format", "ansible"])
        .arg(&bundle)
        .timeout(Duration::from_secs(120))
        .run()
        .stdout;
    let body = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with("# Made "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&analyzed), body(&live), "analyze of the bundle plans the same");
    let plan = dir.path().join("plan.yml");
    std::fs::write(&plan, &analyzed).expect("write the plan");

    let first = apply(&sim, &plan, false);
    for host in ["esx02", "esx03", "esx04"] {
        let changed = first
            .iter()
            .find(|(h, _)| h == &format!("pvrdma-doctor-{host}"))
            .map(|(_, n)| *n);
        assert!(changed.is_some_and(|n| n > 0), "{host}: {first:?}");
    }
    assert!(
        first
            .iter()
            .all(|(h, _)| !h.ends_with("esx01") && !h.ends_with("esx05")),
        "{first:?}"
    );

    let after = statuses(&sim);
    for (host, id) in [
        ("esx02", "firewall-pvrdma"),
        ("esx03", "pvrdma-vmknic-tagged"),
        ("esx03", "pvrdma-vmknic-valid"),
        ("esx04", "vm-memory-reserved"),
    ] {
        assert_eq!(status(&after, host, id), "pass", "{host} {id}: {after:?}");
    }
    assert_eq!(
        status(&after, "esx05", "pvrdma-vmknic-tagged"),
        "fail",
        "the choice is left to the admin"
    );
    let untouched = |all: &[(String, String, String)]| -> Vec<(String, String, String)> {
        all.iter().filter(|(h, _, _)| h == "esx01").cloned().collect()
    };
    assert_eq!(untouched(&after), untouched(&before), "the healthy host is untouched");

    // Idempotent: applied again, and in check mode, nothing changes.
    let live_plan = dir.path().join("live.yml");
    std::fs::write(&live_plan, &live).expect("write the plan");
    for check in [false, true] {
        let again = apply(&sim, &live_plan, check);
        assert!(!again.is_empty(), "a recap");
        assert!(again.iter().all(|(_, n)| *n == 0), "check mode {check}: {again:?}");
    }
}
