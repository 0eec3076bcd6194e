//! The vCenter options' limits and refusals, against govmomi's vSphere simulator: a
//! vCenter slower than `--vcenter-timeout` ends the run as unknown, naming the vCenter
//! and the option, with its session logged out; a bad `--vcenter-thumbprint` is said once;
//! vCenter's own self-signed certificate given as `--vcenter-ca` is trusted.
use crate::support::client::Doctor;
use crate::support::vcsim::{HostSpec, Spec, Vcsim, VmSpec};
use std::time::Duration;

fn inventory() -> Spec {
    Spec::one_cluster(
        "Lab",
        "HPC",
        vec![HostSpec::new("esx01")],
        vec![VmSpec::new("hpc-node01", "esx01", "")],
    )
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_vcenter_slower_than_vcenter_timeout_ends_the_run_as_unknown_and_logs_out() {
    let mut sim = Vcsim::start(&inventory());
    // (what, the subcommand, its other arguments)
    let runs: [(&str, &[&str], &[&str]); 3] = [
        ("hosts", &["hosts"], &[]),
        ("the diagnosis", &[], &["--format", "nagios"]),
        ("watch", &["watch"], &["--count", "1", "--interval", "1s"]),
    ];
    for (what, command, args) in runs {
        // The inventory read answers after 10 s; the run waits 1 s for it.
        sim.delay_next_read(10);
        let out = Doctor::new()
            .args(command)
            .reading(&sim)
            .args(args)
            .args(["--vcenter-timeout", "1s"])
            .timeout(Duration::from_secs(120))
            .run();
        assert_eq!(out.code, Some(3), "{what}: {}{}", out.stdout, out.stderr);
        let said = format!("{}{}", out.stdout, out.stderr).replace('\n', " ");
        let label = sim.address();
        assert!(
            said.contains(&format!(
                "vCenter {label} did not answer RetrievePropertiesEx within 1s"
            )),
            "{what}: {said}"
        );
        assert!(
            said.contains("give it more time with --vcenter-timeout"),
            "{what}: {said}"
        );
        assert_eq!(sim.sessions(), 0, "{what}: the session is logged out after the timeout");
    }
}

#[test]
fn a_bad_thumbprint_is_named_once_and_a_zero_vcenter_timeout_is_refused() {
    let out = Doctor::new()
        .args(["hosts", "--vcenter", "vc01", "--vcenter-user", "u"])
        .args(["--vcenter-thumbprint", "AB:CD"])
        .run();
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    let text = out.stderr.replace('\n', " ");
    assert_eq!(text.matches("AB:CD").count(), 1, "{text}");
    assert!(text.contains("not a SHA-256 thumbprint"), "{text}");
    let zero = Doctor::new()
        .args([
            "hosts",
            "--vcenter",
            "vc01",
            "--vcenter-user",
            "u",
            "--vcenter-timeout",
            "0s",
        ])
        .run();
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    assert!(zero.stderr.contains("must be above zero"), "{}", zero.stderr);
}

/// A vCenter that kept the certificate it made itself: the admin gives that certificate
/// as `--vcenter-ca`, as to curl's `--cacert`, and the run reads the inventory.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_self_signed_vcenter_certificate_given_as_the_ca_file_is_trusted() {
    let mut sim = Vcsim::start_self_signed(&inventory());
    let out = Doctor::new()
        .args(["hosts"])
        .reading(&sim)
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("esx01"), "{}", out.stdout);
    assert_eq!(sim.sessions(), 0);
}
