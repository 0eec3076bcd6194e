//! The exporter's one output budget: probes in flight at the same time share it, an
//! output it cuts is recorded as cut (what depends on it is `unknown`, never a pass), and
//! a finished probe gives its bytes back. Real SSH to the demo's simulated hosts, whose
//! `esxcli network nic list` prints a flood.
use futures::future::LocalBoxFuture;
use pvrdma_doctor::demo::{start_fleet, DemoOptions};
use pvrdma_doctor::live::LiveOptions;
use pvrdma_doctor::serve::config::Config;
use pvrdma_doctor::serve::exporter::Exporter;
use pvrdma_doctor::serve::scrape::{Collector, LiveCollector};
use pvrdma_engine::capture::{Cap, HostCapture, Outcome};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

const MIB: usize = 1024 * 1024;

/// The live collector, keeping a copy of every capture it returns, and handing none back
/// until `gate` collections have finished: a probe's outputs (and the budget they hold)
/// are let go only when it is answered, so two probes held this way are in flight
/// together however the machine schedules them.
struct Recording(Rc<RefCell<Vec<HostCapture>>>, Rc<Gate>);

#[derive(Default)]
struct Gate {
    wanted: std::cell::Cell<usize>,
    done: std::cell::Cell<usize>,
    opened: tokio::sync::Notify,
}

impl Collector for Recording {
    fn collect(&self, live: LiveOptions) -> LocalBoxFuture<'static, Vec<HostCapture>> {
        let (seen, gate) = (self.0.clone(), self.1.clone());
        Box::pin(async move {
            let captures = LiveCollector { before: None }.collect(live).await;
            seen.borrow_mut().extend(captures.iter().cloned());
            gate.done.set(gate.done.get() + 1);
            gate.opened.notify_waiters();
            let _ = tokio::time::timeout(Duration::from_secs(60), async {
                loop {
                    let opened = gate.opened.notified();
                    if gate.done.get() >= gate.wanted.get() {
                        break;
                    }
                    opened.await;
                }
            })
            .await;
            captures
        })
    }
}

/// Two hosts of the healthy sample whose NIC list has about `flood` bytes of extra rows
/// (NICs that are down, one per row): a well-formed table, as a host with a flooding
/// output could print.
fn flooding_scenario(dir: &Path, flood: usize) -> Vec<String> {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/healthy-cluster");
    let mut names = Vec::new();
    for host in ["esx01", "esx02"] {
        let to = dir.join(host);
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(samples.join(host)).unwrap().flatten() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
        let list = to.join("esxcli_network_nic_list.txt");
        let mut text = std::fs::read_to_string(&list).unwrap();
        let mut n = 100;
        while text.len() < flood {
            text.push_str(&format!(
                "vmnic{n}  0000:d8:00.0  ixgben      Up            Down              0  Half    78:ac:44:01:b2:c5  1500  Intel(R) Ethernet Controller X550\n"
            ));
            n += 1;
        }
        std::fs::write(&list, text).unwrap();
        names.push(host.to_string());
    }
    names
}

fn cut_by(captures: &[HostCapture], host: &str, cap: Cap) -> usize {
    captures
        .iter()
        .filter(|c| c.host == host)
        .flat_map(|c| c.outputs.values())
        .filter(|o| matches!(o.outcome, Some(Outcome::Truncated { cap: c, .. }) if c == cap))
        .count()
}

/// The bytes the hosts sent that the captures keep. A batch's answers arrive as tagged
/// records and are sorted back into `==> KEY <==` ... `<== KEY exit N ==>` sections: those
/// two lines are written by the client, not received, so they are not counted.
fn kept(captures: &[HostCapture]) -> usize {
    let framing = |text: &str| -> usize {
        text.split_inclusive('\n')
            .filter(|l| {
                (l.starts_with("==> ") && l.trim_end().ends_with(" <=="))
                    || (l.starts_with("<== ") && l.trim_end().ends_with(" ==>"))
            })
            .map(str::len)
            .sum()
    };
    captures
        .iter()
        .flat_map(|c| c.outputs.values())
        .map(|o| o.stdout.len() + o.stderr.len() - framing(&o.stdout))
        .sum()
}

#[test]
fn probes_in_flight_share_one_output_budget_and_a_cut_output_is_unknown_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let names = flooding_scenario(dir.path(), 3 * MIB);
    let fleet = start_fleet(
        &DemoOptions {
            scenario: Some(dir.path().to_path_buf()),
            hosts: None,
            latency: Duration::from_millis(300),
        },
        false,
    )
    .unwrap();
    let live = fleet.live_options(LiveOptions {
        connect_timeout: Some(Duration::from_secs(20)),
        command_timeout: Duration::from_secs(30),
        ..LiveOptions::default()
    });
    let mut config = Config::for_hosts(live, &names, "both");
    // Each host's flood fits alone (3 MiB, its per-host budget is 32 MiB); two at once
    // do not.
    config.limits.output_budget = 4 * MIB;
    let seen = Rc::new(RefCell::new(Vec::new()));
    let gate = Rc::new(Gate::default());
    gate.wanted.set(2);
    let exporter = Exporter::new(config, Box::new(Recording(seen.clone(), gate.clone())));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let probe = |target: &'static str| {
        let exporter = exporter.clone();
        async move {
            let start = tokio::time::Instant::now();
            exporter
                .scrape(target, None, start, start + Duration::from_secs(60))
                .await
                .unwrap()
        }
    };
    let (one, two) =
        tokio::task::LocalSet::new().block_on(&rt, async { futures::join!(probe("esx01"), probe("esx02")) });
    let together = seen.borrow().clone();
    assert_eq!(together.len(), 2, "{together:?}");
    // The budget counts the bytes received; what the client writes around them while
    // sorting a batch's answers back (a section's end when its answer was cut, ...) is a
    // few bytes per answer: 64 KiB of slack, against the megabytes a flood would add.
    assert!(
        kept(&together) <= 4 * MIB + 64 * 1024,
        "the two probes kept {} bytes, more than the process budget",
        kept(&together)
    );
    let cut = cut_by(&together, "esx01", Cap::ProcessBudget) + cut_by(&together, "esx02", Cap::ProcessBudget);
    assert!(cut >= 1, "no output was cut by the shared budget");
    // Whichever host lost its NIC list: its NIC-based checks are unknown, never a pass
    // (more unknown checks than the same host collected whole, below).
    let unknown = |body: &str| {
        body.lines()
            .filter(|l| l.starts_with("pvrdma_check_status{") && l.contains("status=\"unknown\"} 1"))
            .count()
    };
    let mut unknown_when_cut = Vec::new();
    for (host, body) in [("esx01", &one), ("esx02", &two)] {
        if cut_by(&together, host, Cap::ProcessBudget) > 0 {
            unknown_when_cut.push((host, unknown(body)));
            let failure = together
                .iter()
                .filter(|c| c.host == host)
                .flat_map(|c| c.outputs.values())
                .find_map(|o| o.failure.as_ref().filter(|_| o.truncated))
                .expect("the cut output carries its failure");
            assert!(failure.message.contains("limits.output_budget"), "{}", failure.message);
        }
    }
    let metrics = exporter.render_metrics();
    let counted: usize = metrics
        .lines()
        .find_map(|l| l.strip_prefix("pvrdma_doctor_outputs_cut_total "))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert_eq!(counted, cut, "{metrics}");
    // Both answered: their bytes are back, so one host alone fits again.
    seen.borrow_mut().clear();
    gate.wanted.set(0);
    for host in ["esx01", "esx02"] {
        seen.borrow_mut().clear();
        let body = tokio::task::LocalSet::new().block_on(&rt, probe(if host == "esx01" { "esx01" } else { "esx02" }));
        let alone = seen.borrow().clone();
        assert_eq!(cut_by(&alone, host, Cap::ProcessBudget), 0, "{alone:?}");
        assert!(kept(&alone) > 3 * MIB, "the whole flood is kept: {}", kept(&alone));
        if let Some((_, when_cut)) = unknown_when_cut.iter().find(|(h, _)| *h == host) {
            assert!(
                *when_cut > unknown(&body),
                "{host}: {when_cut} checks unknown with its NIC list cut, {} whole",
                unknown(&body)
            );
        }
    }
    drop(fleet);
}
