//! `--probe` against real OpenSSH sshds (one per simulated host, each with the fake ESXi
//! shell of tests/support and a fake `vmkping` on PATH): the probe runs on the collection's
//! login, under busybox sh, and its outputs are judged as the real ones would be.

use crate::support::client::{alias, Client};
use crate::support::*;
use pvrdma_doctor::live::{collect_live, LiveOptions};
use pvrdma_doctor::probe::ProbeOptions;
use pvrdma_engine::capture::HostCapture;
use pvrdma_engine::diagnose::diagnose;
use pvrdma_engine::diagnose::probe::ProbeStatus;
use std::time::Duration;

/// The real 3-reply capture (nested ESXi lab), addressed to `ip` with `bytes` of payload.
fn reply(ip: &str, bytes: u32) -> String {
    format!(
        "PING {ip} ({ip}): {bytes} data bytes\n\
         {n} bytes from {ip}: icmp_seq=0 ttl=64 time=0.243 ms\n\
         {n} bytes from {ip}: icmp_seq=1 ttl=64 time=0.260 ms\n\
         {n} bytes from {ip}: icmp_seq=2 ttl=64 time=0.262 ms\n\
         \n--- {ip} ping statistics ---\n\
         3 packets transmitted, 3 packets received, 0% packet loss\n\
         round-trip min/avg/max = 0.243/0.255/0.262 ms\n",
        n = bytes + 8
    )
}

/// The ESXi 9 capture of a don't-fragment payload larger than the vmknic MTU.
fn too_long(ip: &str, bytes: u32) -> String {
    format!(
        "PING {ip} ({ip}): {bytes} data bytes\n\
         sendto() failed (Message too long)\nsendto() failed (Message too long)\nsendto() failed (Message too long)\n\
         \n--- {ip} ping statistics ---\n\
         3 packets transmitted, 0 packets received, 100% packet loss\n"
    )
}

struct Fleet {
    client: Client,
    sshds: Vec<Sshd>,
}

/// healthy-cluster's esx01 (vmk1 10.10.10.11) and esx02 (10.10.10.12) on two sshds, with
/// the given vmkping answers, reached as `esx01`/`esx02` through an ssh config.
fn fleet(answers: [&[(&str, String)]; 2], hang: [bool; 2]) -> Fleet {
    let client = Client::new();
    let mut aliases = String::new();
    let mut sshds = Vec::new();
    for (i, host) in ["esx01", "esx02"].iter().enumerate() {
        let answers_dir = client.dir.path().join(format!("vmkping-{host}"));
        std::fs::create_dir(&answers_dir).expect("mkdir");
        for (name, text) in answers[i] {
            std::fs::write(answers_dir.join(name), text).expect("answer");
        }
        // The fake runs as the test user: it must read the answers.
        let mut perms = std::fs::metadata(client.dir.path()).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(client.dir.path(), perms.clone()).expect("chmod");
        std::fs::set_permissions(&answers_dir, perms).expect("chmod");
        let mut o = SshdOptions::new(samples_host("healthy-cluster", host));
        client.authorize(&mut o);
        o.vmkping = Some(answers_dir);
        if hang[i] {
            o.hang.push("vmkping".to_string());
        }
        let sshd = Sshd::start(o);
        aliases.push_str(&alias(host, &sshd));
        client.trust(&sshd);
        sshds.push(sshd);
    }
    client.write_config(&aliases);
    Fleet { client, sshds }
}

fn options(f: &Fleet, command_timeout: Duration) -> LiveOptions {
    LiveOptions {
        command_timeout,
        probe: Some(ProbeOptions::default()),
        ..f.client.options(&["esx01".to_string(), "esx02".to_string()])
    }
}

fn logins(sshd: &Sshd) -> usize {
    sshd.log().matches("Accepted publickey").count()
}

fn probe_of<'a>(c: &'a [HostCapture], host: &str) -> &'a pvrdma_engine::capture::ProbeCapture {
    c.iter()
        .find(|c| c.host == host)
        .and_then(|c| c.probe.as_ref())
        .expect("probe capture")
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn probe_runs_plain_and_jumbo_vmkping_on_the_collection_login() {
    let f = fleet(
        [
            // esx01 → esx02: plain replies, the jumbo one is refused: mtu.
            &[
                ("10.10.10.12.plain.txt", reply("10.10.10.12", 56)),
                ("10.10.10.12.jumbo.txt", too_long("10.10.10.12", 8972)),
            ],
            // esx02 → esx01: both reply: ok.
            &[
                ("10.10.10.11.plain.txt", reply("10.10.10.11", 56)),
                ("10.10.10.11.jumbo.txt", reply("10.10.10.11", 8972)),
            ],
        ],
        [false, false],
    );
    let run = collect_live(&options(&f, Duration::from_secs(20))).expect("run");
    for c in &run.captures {
        assert!(c.error.is_none(), "{}: {:?}", c.host, c.error);
    }
    let d = diagnose(&run.captures);
    let status = |from: &str| d.probes.iter().find(|p| p.from == from).map(|p| p.status);
    assert_eq!(status("esx01"), Some(ProbeStatus::Mtu), "{:?}", d.probes);
    assert_eq!(status("esx02"), Some(ProbeStatus::Ok), "{:?}", d.probes);
    // The vmknic, the don't-fragment flag and the MTU-28 size reached vmkping intact.
    let [a, b] = [&f.sshds[0], &f.sshds[1]];
    assert_eq!(a.vmkping_calls(), ["vmk1 - - 10.10.10.12", "vmk1 d 8972 10.10.10.12"]);
    assert_eq!(b.vmkping_calls(), ["vmk1 - - 10.10.10.11", "vmk1 d 8972 10.10.10.11"]);
    // One login per host: the probe reused the collection's connection.
    assert_eq!((logins(a), logins(b)), (1, 1), "{}\n{}", a.log(), b.log());
    // The framed output, end markers included, is what the bundle will hold.
    let out = &probe_of(&run.captures, "esx01").outputs["esx02"];
    assert!(
        out.stdout.starts_with("==> plain <==\nPING 10.10.10.12"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("<== jumbo exit 0 ==>"), "{}", out.stdout);
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn a_silent_peer_is_unreachable() {
    let f = fleet([&[], &[]], [false, false]);
    let run = collect_live(&options(&f, Duration::from_secs(20))).expect("run");
    let d = diagnose(&run.captures);
    assert_eq!(d.probes.len(), 2);
    for p in &d.probes {
        assert_eq!(p.status, ProbeStatus::Unreachable, "{p:?}");
        assert_eq!(p.losses.map(|l| (l.sent, l.received)), Some((3, 0)));
    }
    assert_eq!(d.exit_code(), 1, "an unreachable pair fails the run");
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn a_hanging_vmkping_times_out_as_unknown_and_the_other_host_still_probes() {
    let f = fleet(
        [
            &[],
            &[
                ("10.10.10.11.plain.txt", reply("10.10.10.11", 56)),
                ("10.10.10.11.jumbo.txt", reply("10.10.10.11", 8972)),
            ],
        ],
        [true, false],
    );
    let run = collect_live(&options(&f, Duration::from_secs(3))).expect("run");
    let d = diagnose(&run.captures);
    let one = d.probes.iter().find(|p| p.from == "esx01").expect("esx01 probe");
    assert_eq!(one.status, ProbeStatus::Unknown, "{one:?}");
    assert!(one.detail.contains("command-timeout"), "{}", one.detail);
    let two = d.probes.iter().find(|p| p.from == "esx02").expect("esx02 probe");
    assert_eq!(two.status, ProbeStatus::Ok, "{two:?}");
    let raw = &probe_of(&run.captures, "esx01").outputs["esx02"];
    assert!(raw.timeout_hit);
    assert_eq!(d.exit_code(), 3, "unknown, nothing failed");
}
