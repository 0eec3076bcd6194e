//! A host prints an output this version cannot read: the report names the command as a
//! user types it, the line and what was expected, and the command that writes a redacted
//! bundle of that host; that command, run as printed, writes a bundle whose `analyze`
//! shows the same failure with the hosts gone.
use crate::support::client::Client;
use crate::support::*;

/// (command id, typed command, line, expected) of every output that did not parse.
fn unparsed(report: &serde_json::Value) -> Vec<(String, String, u64, String)> {
    report["hosts"][0]["unparsed_outputs"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|u| {
                    (
                        u["command"].as_str().unwrap_or_default().to_string(),
                        u["command_line"].as_str().unwrap_or_default().to_string(),
                        u["line"].as_u64().unwrap_or_default(),
                        u["expected"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn statuses(report: &serde_json::Value) -> Vec<(String, String)> {
    report["hosts"][0]["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| (c["id"].to_string(), c["status"].to_string()))
        .collect()
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn an_unreadable_output_says_what_to_send_and_the_bundle_reproduces_it() {
    let client = Client::new();
    let sshd = client.keyed_sshd(samples_host("broken-output", "esx01"));
    client.trust(&sshd);

    let human = client.doctor().against(&sshd).args(["--color", "never"]).run();
    assert_eq!(human.code, Some(3), "{}\n{}", human.stdout, human.stderr);
    let flat = human.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "not readable by this version: `esxcli rdma device list` (line 2: expected a dash row under the header)"
        ),
        "{}",
        human.stdout
    );
    assert!(
        flat.contains("replaces host names, addresses, MACs, VM names, UUIDs and datastore names by tokens"),
        "{}",
        human.stdout
    );
    assert!(!human.stdout.contains("esxcli_rdma_device_list"), "{}", human.stdout);

    let live = client.doctor().against(&sshd).args(["--format", "json"]).run().json();
    let failures = unparsed(&live);
    assert_eq!(
        failures,
        vec![(
            "esxcli_rdma_device_list".to_string(),
            "esxcli rdma device list".to_string(),
            2,
            "a dash row under the header".to_string()
        )]
    );
    let send = live["hosts"][0]["send_evidence"]
        .as_str()
        .expect("send_evidence")
        .to_string();
    // Whole on one line, after `send:` or, when too wide for it, on the next.
    let lines: Vec<&str> = human.stdout.lines().map(str::trim).collect();
    let at = lines.iter().position(|l| l.starts_with("send:")).expect("a send: line");
    let shown = match lines[at].trim_start_matches("send:").trim() {
        "" => lines.get(at + 1).copied().unwrap_or_default(),
        same_line => same_line,
    };
    assert_eq!(shown, send, "{}", human.stdout);
    assert!(send.starts_with("pvrdma-doctor --redact --bundle "), "{send}");

    // The printed line, run by a shell as the user would paste it.
    let work = tempfile::tempdir().unwrap();
    let bin = crate::support::client::Doctor::binary().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let ran = std::process::Command::new("sh")
        .arg("-c")
        .arg(&send)
        .current_dir(work.path())
        .env("PATH", path)
        .env("HOME", client.dir.path())
        .env_remove("SSH_AUTH_SOCK")
        .env_remove("PVRDMA_DOCTOR_PASSWORD")
        .output()
        .unwrap();
    assert_eq!(ran.status.code(), Some(3), "{}", String::from_utf8_lossy(&ran.stderr));
    let bundles: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with("-evidence.tar.gz"))
        .collect();
    assert_eq!(
        bundles.len(),
        1,
        "{:?}",
        std::fs::read_dir(work.path()).unwrap().collect::<Vec<_>>()
    );
    drop(sshd);

    // The host is gone: the redacted bundle alone shows the same failure and verdicts.
    let offline = crate::support::client::Doctor::new()
        .args(["analyze", "--format", "json"])
        .arg(&bundles[0])
        .run();
    assert_eq!(offline.code, Some(3), "{}", offline.stderr);
    let offline = offline.json();
    assert_eq!(unparsed(&offline), failures);
    assert_eq!(statuses(&offline), statuses(&live));
    // `analyze` is offline: no command to re-collect is offered there.
    assert!(offline["hosts"][0].get("send_evidence").is_none());
}
