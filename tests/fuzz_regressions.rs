//! Regression tests for what `cargo fuzz` found outside the parsers (a parser's go in
//! `parsers/tests/`). Each names the invariant the fuzzer broke; the
//! crashing input itself is kept in `fuzz/regressions/<target>/` and replayed by
//! `tests/fuzz_corpus.rs`.
use pvrdma_doctor::collect::{CaptureSource, ErrorKind, Failure, HostCapture, RawOutput};
use pvrdma_doctor::diagnose::{diagnose_host, Status};

const RULESETS: &str = "\
Name                         Enabled  Enable/Disable configurable  Allowed IP configurable
---------------------------  -------  ---------------------------  -----------------------
sshServer                       true                         true                     true
pvrdma                          true                         true                     true
";

fn output(id: &str, stdout: &str) -> RawOutput {
    RawOutput {
        stdout: stdout.to_string(),
        exit_status: Some(0),
        ..RawOutput::new(id, id)
    }
}

/// Found by the `diagnosis` target: with the pvrdma ruleset enabled, `firewall-pvrdma`
/// passed and cited `esxcli network firewall get` as its evidence although that command
/// had failed. The pass does not need the firewall state; it must not cite a failed
/// command, and it must still cite it when it was read.
#[test]
fn firewall_pass_does_not_cite_a_failed_firewall_get() {
    let mut capture = HostCapture::new("esx01", CaptureSource::Live);
    let mut failed = output("esxcli_network_firewall_get", "");
    failed.exit_status = None;
    failed.failure = Some(Failure::new(
        ErrorKind::Timeout,
        "did not finish within --command-timeout 60s",
    ));
    capture.outputs.insert(failed.id.clone(), failed);
    let rulesets = output("esxcli_network_firewall_ruleset_list", RULESETS);
    capture.outputs.insert(rulesets.id.clone(), rulesets);

    let check = |capture: &HostCapture| {
        diagnose_host(capture)
            .checks
            .into_iter()
            .find(|c| c.id == "firewall-pvrdma")
            .unwrap()
    };
    let c = check(&capture);
    assert_eq!(c.status, Status::Pass, "{c:?}");
    let cited: Vec<&str> = c.evidence.iter().map(|e| e.command).collect();
    assert_eq!(cited, ["esxcli_network_firewall_ruleset_list"]);

    let read = output(
        "esxcli_network_firewall_get",
        "   Default Action: DROP\n   Enabled: true\n   Loaded: true\n",
    );
    capture.outputs.insert(read.id.clone(), read);
    let c = check(&capture);
    assert_eq!(c.status, Status::Pass, "{c:?}");
    let cited: Vec<&str> = c.evidence.iter().map(|e| e.command).collect();
    assert_eq!(
        cited,
        ["esxcli_network_firewall_get", "esxcli_network_firewall_ruleset_list"]
    );
}
