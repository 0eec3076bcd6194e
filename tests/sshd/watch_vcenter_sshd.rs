//! `watch --vcenter` with a host whose SSH service is closed: each round judges it from
//! vCenter's vSphere API (read in the watch's one session), as a one-shot run does, and a
//! host whose SSH goes away between rounds is said as the watch says any change.
use crate::support::vcsim::Vcsim;
use crate::vcenter_sshd::{host_of, one_ssh_closed, verdicts};
use serde_json::Value;
use std::time::Duration;

#[test]
#[ignore = "needs the vSphere simulator and sshd: scripts/test.sh runs it"]
fn watch_judges_a_host_whose_ssh_is_closed_from_vcenter_and_says_when_another_loses_ssh() {
    let (esx01, client, spec) = one_ssh_closed();
    let mut sim = Vcsim::start(&spec);
    let watch = |sim: &Vcsim, rounds: &str| {
        client
            .doctor()
            .reading(sim)
            .arg("watch")
            .args([
                "--cluster",
                "HPC",
                "--format",
                "json",
                "--count",
                rounds,
                "--interval",
                "20s",
            ])
            .args(["--connect-timeout", "20s", "-v"])
    };

    // One round: esx01 read over SSH, esx02 judged from vCenter beside it.
    let out = watch(&sim, "1").timeout(Duration::from_secs(180)).run();
    assert_eq!(out.code, Some(3), "esx02's SSH is still a gap: {}", out.stderr);
    let events = out.json_lines();
    let report = &events
        .iter()
        .find(|e| e["event"] == "report")
        .unwrap_or_else(|| panic!("no report event in {}", out.stdout))["report"];
    let esx01_before = host_of(report, "esx01");
    assert!(esx01_before.get("configuration_only").is_none(), "{esx01_before:#}");
    let observed = verdicts(&esx01_before);
    assert!(
        !observed.is_empty() && observed.iter().all(|v| v == "hca"),
        "{esx01_before:#}"
    );
    let esx02 = host_of(report, "esx02");
    assert_eq!(esx02["configuration_only"], true, "{esx02:#}");
    assert_eq!(esx02["error"]["kind"], "unreachable", "{esx02:#}");
    assert_eq!(verdicts(&esx02), ["unknown"], "predicted from vCenter: {esx02:#}");
    assert_eq!(sim.sessions(), 0, "the watch's session is logged out at its end");

    // Two rounds, esx01's SSH service stopping between them: round 2 judges esx01 from
    // vCenter as esx02 is, and says so as changes (its status becomes esx02's, the SSH
    // error as the reason; its adapter is no longer observed).
    let running = watch(&sim, "2")
        // Said once round 1 has read esx02's configuration, after its SSH collection.
        .spawn_until("SSH having refused them", Duration::from_secs(120));
    drop(esx01);
    let out = running.wait(Duration::from_secs(240));
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    let events = out.json_lines();
    let changes: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "change" && e["round"] == 2 && e["host"] == "esx01")
        .collect();
    let status = changes
        .iter()
        .find(|c| c["kind"] == "host")
        .unwrap_or_else(|| panic!("no host change for esx01 in {}", out.stdout));
    assert_eq!(
        (&status["from"], &status["to"]),
        (&esx01_before["status"], &esx02["status"]),
        "{status:#}"
    );
    assert!(
        status["reason"].as_str().is_some_and(|r| r.contains("cannot connect")),
        "the SSH error: {status:#}"
    );
    let adapter = changes
        .iter()
        .find(|c| c["kind"] == "adapter")
        .unwrap_or_else(|| panic!("no adapter change for esx01 in {}", out.stdout));
    assert_eq!(
        (&adapter["from"], &adapter["to"]),
        (&Value::from("hca"), &Value::from("unknown"))
    );
    assert!(
        events.iter().any(|e| e["event"] == "stop" && e["round"] == 2),
        "{}",
        out.stdout
    );
    assert_eq!(sim.sessions(), 0, "the watch's one session is logged out at its end");
}
