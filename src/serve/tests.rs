//! The exporter's load rules, with a stand-in collector on tokio's paused clock:
//! single flight, the global host cap, deadlines, the allow-list.
use super::config::Config;
use super::exporter::Exporter;
use super::metrics::Metrics;
use super::scrape::Collector;
use crate::live::LiveOptions;
use futures::future::LocalBoxFuture;
use pvrdma_engine::capture::{CaptureSource, ErrorKind, Failure, HostCapture, Outcome, RawOutput};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;
use tokio::time::Instant;

/// Answers after `delay` (a host in `slow` after its own) with the host's capture in
/// `captures` (else an empty one), or fails as timed out when the run's deadline comes
/// first, each host on its own; counts calls and the hosts collected at once.
#[derive(Default)]
struct Fake {
    delay: Duration,
    slow: Vec<(&'static str, Duration)>,
    captures: Vec<HostCapture>,
    calls: Cell<usize>,
    now: Cell<usize>,
    peak: Cell<usize>,
    seen: RefCell<Vec<LiveOptions>>,
}

struct FakeCollector(Rc<Fake>);

impl Collector for FakeCollector {
    fn collect(&self, live: LiveOptions) -> LocalBoxFuture<'static, Vec<HostCapture>> {
        let fake = self.0.clone();
        Box::pin(async move {
            fake.calls.set(fake.calls.get() + 1);
            fake.now.set(fake.now.get() + live.targets.len());
            fake.peak.set(fake.peak.get().max(fake.now.get()));
            fake.seen.borrow_mut().push(live.clone());
            let hosts = live.targets.iter().map(|t| {
                let delay = fake.slow.iter().find(|(h, _)| h == t).map_or(fake.delay, |(_, d)| *d);
                let (live, fake) = (&live, &fake);
                async move {
                    // Stopped by the run's deadline, which may move later while it runs.
                    let cut = async {
                        match &live.run_deadline {
                            Some(d) => crate::live::RunDeadline::passed(d.at.clone()).await,
                            None => tokio::time::sleep(live.run_timeout.unwrap_or(Duration::MAX)).await,
                        }
                    };
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {
                            let read = fake.captures.iter().find(|c| &c.host == t).cloned();
                            let read = read.unwrap_or_else(|| answered(t));
                            if let Some(hook) = &live.on_host_read {
                                (hook.0)(&read);
                            }
                            read
                        }
                        () = cut => HostCapture::failed(
                            t.clone(),
                            CaptureSource::Live,
                            Failure::deadline("cut", pvrdma_engine::capture::RunStage::Collecting, ""),
                        ),
                    }
                }
            });
            let captures = futures::future::join_all(hosts).await;
            fake.now.set(fake.now.get() - live.targets.len());
            captures
        })
    }
}

/// A host that answered: one command's output arrived whole (what makes a host read).
fn answered(host: &str) -> HostCapture {
    let mut c = HostCapture::new(host, CaptureSource::Live);
    let spec = &pvrdma_engine::catalogue::CATALOGUE[0];
    let mut out = RawOutput::new(spec.id, spec.command);
    out.exit_status = Some(0);
    out.outcome = Some(Outcome::Exited { code: 0 });
    c.outputs.insert(spec.id.to_string(), out);
    c
}

/// A host reached whose every command ran out of `--command-timeout 500ms`.
fn all_timed_out(host: &str) -> HostCapture {
    let mut c = HostCapture::new(host, CaptureSource::Live);
    for spec in pvrdma_engine::catalogue::CATALOGUE {
        let mut out = RawOutput::new(spec.id, spec.command);
        out.timeout_hit = true;
        out.outcome = Some(Outcome::TimedOut {
            timeout_secs: 0,
            timeout_ms: Some(500),
            after_ms: 500,
        });
        c.outputs.insert(spec.id.to_string(), out);
    }
    c
}

fn exporter(yaml: &str, delay: Duration) -> (Rc<Exporter>, Rc<Fake>) {
    let fake = Rc::new(Fake {
        delay,
        ..Fake::default()
    });
    let config = Config::parse(yaml).expect("valid test configuration");
    (Exporter::new(config, Box::new(FakeCollector(fake.clone()))), fake)
}

const CONFIG: &str = "limits:\n  max_concurrent_hosts: 2\ntargets: [\"esx[01-04]\"]\ngroups:\n  rack: \"esx[01-03]\"\n";

async fn scrape(e: &Rc<Exporter>, target: &str, budget: Duration) -> Result<String, super::scrape::Refused> {
    let start = Instant::now();
    e.scrape(target, None, start, start + budget).await
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    tokio::task::LocalSet::new().block_on(&rt, f)
}

#[test]
fn concurrent_scrapes_of_one_target_share_one_collection_and_nothing_is_kept() {
    run(async {
        let (e, fake) = exporter(CONFIG, Duration::from_secs(2));
        let answers = futures::future::join_all((0..5).map(|_| scrape(&e, "esx01", Duration::from_secs(10)))).await;
        assert_eq!(fake.calls.get(), 1, "five scrapes, one collection");
        for a in &answers {
            let text = a.as_ref().expect("allowed");
            assert!(text.contains("\npvrdma_up 1\n"), "{text}");
            assert!(text.contains("\npvrdma_host_up{host_name=\"esx01\"} "), "{text}");
        }
        assert_eq!(e.metrics.probes_shared.get(), 4);
        scrape(&e, "esx01", Duration::from_secs(10)).await.expect("allowed");
        assert_eq!(fake.calls.get(), 2, "a later scrape collects again");
        assert_eq!(e.metrics.probes_in_flight.get(), 0);
        assert_eq!(e.metrics.collections_in_flight.get(), 0);
    });
}

#[test]
fn a_target_off_the_allow_list_is_refused_without_collecting() {
    run(async {
        let (e, fake) = exporter(CONFIG, Duration::ZERO);
        for t in ["esx05", "esx[01-02]", "127.0.0.1", "root@esx01", ""] {
            let err = scrape(&e, t, Duration::from_secs(5)).await.unwrap_err();
            assert!(err.why.contains("allow-list"), "{t}: {}", err.why);
        }
        let err = e
            .scrape(
                "esx01",
                Some("nope"),
                Instant::now(),
                Instant::now() + Duration::from_secs(5),
            )
            .await
            .unwrap_err();
        assert!(err.why.contains("unknown module"), "{}", err.why);
        assert_eq!(fake.calls.get(), 0);
        assert_eq!(e.metrics.probes_rejected.get(), 6);
        assert_eq!(e.metrics.probes.get(), 0);
    });
}

#[test]
fn a_probe_past_its_deadline_answers_in_time_with_up_0_and_no_adapter() {
    run(async {
        let (e, fake) = exporter(CONFIG, Duration::from_secs(60));
        let start = Instant::now();
        let text = scrape(&e, "esx02", Duration::from_secs(3)).await.expect("allowed");
        assert!(start.elapsed() <= Duration::from_secs(3), "answered by the deadline");
        assert!(text.contains("\npvrdma_up 0\n"), "{text}");
        assert!(!text.contains("pvrdma_adapter_verdict{"), "{text}");
        let limit = fake.seen.borrow()[0].run_timeout.expect("the collection is bounded");
        assert!(limit < Duration::from_secs(3), "{limit:?}");
        assert_eq!(e.metrics.probe_failures.get(), 1);
    });
}

#[test]
fn hosts_not_read_are_counted_by_class_apart_from_the_exporters_own_limits() {
    run(async {
        let fake = Rc::new(Fake {
            captures: vec![HostCapture::failed(
                "esx01",
                CaptureSource::Live,
                Failure::new(ErrorKind::Auth, "esx01: every authentication method was refused"),
            )],
            slow: vec![("esx02", Duration::from_secs(60))],
            ..Fake::default()
        });
        let config = Config::parse(CONFIG).expect("valid test configuration");
        let e = Exporter::new(config, Box::new(FakeCollector(fake.clone())));
        scrape(&e, "esx01", Duration::from_secs(5)).await.expect("allowed");
        scrape(&e, "esx01", Duration::from_secs(5)).await.expect("allowed");
        // The exporter's deadline cut this one: not the host's fault.
        scrape(&e, "esx02", Duration::from_secs(2)).await.expect("allowed");
        tokio::time::sleep(Duration::from_secs(1)).await;
        let text = e.metrics.render(0, 2, 16);
        assert!(
            text.contains("\npvrdma_doctor_hosts_not_read_total{class=\"auth\"} 2\n"),
            "{text}"
        );
        // Every class is there from the start, at 0 until a host fails that way.
        assert!(
            text.contains("\npvrdma_doctor_hosts_not_read_total{class=\"timeout\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("\npvrdma_doctor_hosts_not_collected_total{limit=\"deadline\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("\npvrdma_doctor_hosts_not_collected_total{limit=\"max_concurrent_hosts\"} 0\n"),
            "{text}"
        );
    });
}

/// The monitoring guide lists every class `pvrdma_doctor_hosts_not_read_total` shows from
/// the start, and only those.
#[test]
fn the_guide_lists_every_class_of_hosts_not_read() {
    let guide = include_str!("../../docs/monitoring-prometheus.md");
    let listed: Vec<&str> = guide
        .lines()
        .find_map(|l| l.split("`…_hosts_not_read_total{class}` (").nth(1))
        .and_then(|rest| rest.split(", each at 0").next())
        .expect("the /metrics row of the guide names the classes")
        .split('`')
        .skip(1)
        .step_by(2)
        .collect();
    let text = Metrics::new().render(0, 1, 1);
    let shown: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("pvrdma_doctor_hosts_not_read_total{class=\""))
        .map(|rest| rest.split('"').next().unwrap_or(rest))
        .collect();
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, shown, "{listed:?}");
}

#[test]
fn hosts_beyond_the_cap_wait_and_a_wait_past_the_deadline_is_answered() {
    run(async {
        let (e, fake) = exporter(CONFIG, Duration::from_secs(2));
        let start = Instant::now();
        let (a, b, c) = tokio::join!(
            scrape(&e, "esx01", Duration::from_secs(10)),
            scrape(&e, "esx02", Duration::from_secs(10)),
            scrape(&e, "esx03", Duration::from_secs(10)),
        );
        assert_eq!(fake.peak.get(), 2, "at most limits.max_concurrent_hosts at once");
        assert_eq!(start.elapsed(), Duration::from_secs(4), "the third waited for a slot");
        for t in [a, b, c] {
            assert!(t.expect("allowed").contains("\npvrdma_up 1\n"));
        }
        // Two slow probes hold both slots; a third with a short deadline gives up waiting.
        let (e, fake) = exporter(CONFIG, Duration::from_secs(20));
        let (_, _, late) = tokio::join!(
            scrape(&e, "esx01", Duration::from_secs(30)),
            scrape(&e, "esx02", Duration::from_secs(30)),
            async {
                tokio::time::sleep(Duration::from_millis(10)).await;
                let s = Instant::now();
                let t = scrape(&e, "esx03", Duration::from_secs(5)).await;
                (t, s.elapsed())
            },
        );
        let (text, took) = late;
        assert!(took <= Duration::from_secs(5), "{took:?}");
        assert!(text.expect("allowed").contains("\npvrdma_up 0\n"));
        assert_eq!(fake.calls.get(), 2, "the third never started a collection");
    });
}

#[test]
fn a_group_is_one_fleet_collection_with_host_names() {
    run(async {
        let (e, fake) = exporter(CONFIG, Duration::from_millis(100));
        let text = scrape(&e, "rack", Duration::from_secs(10))
            .await
            .expect("a group is allowed");
        assert_eq!(fake.calls.get(), 1);
        let seen = fake.seen.borrow();
        assert_eq!(seen[0].targets, ["esx01", "esx02", "esx03"]);
        assert_eq!(seen[0].parallel, 2, "bounded by the cap");
        for h in ["esx01", "esx02", "esx03"] {
            assert!(text.contains(&format!("host_name=\"{h}\"")), "{text}");
        }
        assert!(text.contains("\npvrdma_up 1\n"));
    });
}

#[test]
fn the_deadline_comes_from_the_scrape_timeout_header() {
    let (e, _) = exporter("limits:\n  default_timeout: 7s\n  max_timeout: 60s\n", Duration::ZERO);
    let start = Instant::now();
    assert_eq!(e.deadline(start, Some("10")) - start, Duration::from_millis(9500));
    assert_eq!(e.deadline(start, Some("2.5")) - start, Duration::from_secs(2));
    assert_eq!(e.deadline(start, None) - start, Duration::from_secs(7));
    assert_eq!(e.deadline(start, Some("junk")) - start, Duration::from_secs(7));
    assert_eq!(e.deadline(start, Some("-3")) - start, Duration::from_secs(7));
    assert_eq!(e.deadline(start, Some("3600")) - start, Duration::from_secs(60));
    assert_eq!(e.deadline(start, Some("0.2")) - start, Duration::from_millis(100));
}

#[test]
fn a_short_deadline_never_turns_a_joined_longer_scrape_into_up_0() {
    run(async {
        // The host takes 3 s. A scrape with 1 s starts the collection, one with 15 s joins
        // it: the first is answered at its deadline with up 0, the second gets the host.
        let (e, fake) = exporter(CONFIG, Duration::from_secs(3));
        let start = Instant::now();
        let (short, long) = tokio::join!(
            async {
                let t = scrape(&e, "esx01", Duration::from_secs(1)).await;
                (t, start.elapsed())
            },
            async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let t = scrape(&e, "esx01", Duration::from_secs(15)).await;
                (t, start.elapsed())
            },
        );
        assert_eq!(fake.calls.get(), 1, "one collection for both");
        let (text, took) = short;
        assert!(text.expect("allowed").contains("\npvrdma_up 0\n"));
        assert!(took <= Duration::from_secs(1), "answered by its own deadline: {took:?}");
        let (text, took) = long;
        let text = text.expect("allowed");
        assert!(text.contains("\npvrdma_up 1\n"), "{text}");
        assert_eq!(
            took,
            Duration::from_secs(3),
            "the collection ran on for the later deadline"
        );
        assert_eq!(e.metrics.probes_shared.get(), 1);
        assert_eq!(e.metrics.probe_failures.get(), 1);

        // The other order: the long scrape starts it, a short one joins; the short one
        // cannot cut it either.
        let (e, fake) = exporter(CONFIG, Duration::from_secs(3));
        let (long, short) = tokio::join!(scrape(&e, "esx02", Duration::from_secs(15)), async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            scrape(&e, "esx02", Duration::from_secs(1)).await
        });
        assert_eq!(fake.calls.get(), 1);
        assert!(long.expect("allowed").contains("\npvrdma_up 1\n"));
        assert!(short.expect("allowed").contains("\npvrdma_up 0\n"));
    });
}

#[test]
fn a_scrape_whose_deadline_comes_first_gets_the_hosts_read_by_then() {
    run(async {
        // A sample fleet: esx01 and esx02 readable, esx03 unreachable. esx02 takes 10 s, the
        // others 1 s. A group scrape with 3 s starts the collection, one with 15 s joins and
        // keeps it running: the first is answered at its deadline with esx01 as it was read
        // and only esx02 timed out (it used to get every host timed out).
        let fake = Rc::new(Fake {
            delay: Duration::from_secs(1),
            slow: vec![("esx02", Duration::from_secs(10))],
            captures: crate::collect::replay::read_dir(&sample("esxi80-mixed-fleet"), CaptureSource::Live)
                .expect("the sample reads"),
            ..Fake::default()
        });
        let e = Exporter::new(
            Config::parse(CONFIG).expect("valid test configuration"),
            Box::new(FakeCollector(fake.clone())),
        );
        let start = Instant::now();
        let (short, long) = tokio::join!(
            async {
                let t = scrape(&e, "rack", Duration::from_secs(3)).await;
                (t, start.elapsed())
            },
            async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                scrape(&e, "rack", Duration::from_secs(15)).await
            },
        );
        assert_eq!(fake.calls.get(), 1, "one collection for both");
        let value = |text: &str, series: &str| {
            let series = format!("\n{series} ");
            let at = text
                .find(&series)
                .unwrap_or_else(|| panic!("{series:?} missing: {text}"));
            text[at + series.len()..].chars().next()
        };
        let host_up = |text: &str, host: &str| value(text, &format!("pvrdma_host_up{{host_name=\"{host}\"}}"));
        let unreachable = |text: &str, host: &str| {
            value(
                text,
                &format!("pvrdma_host_status{{host_name=\"{host}\",status=\"unreachable\"}}"),
            )
        };
        let (text, took) = short;
        let text = text.expect("allowed");
        assert!(took <= Duration::from_secs(3), "answered by its own deadline: {took:?}");
        assert_eq!(value(&text, "pvrdma_up"), Some('0'), "{text}");
        assert_eq!(host_up(&text, "esx01"), Some('1'), "read by then: {text}");
        assert!(text.contains("\npvrdma_adapter_verdict{host_name=\"esx01\","), "{text}");
        assert_eq!(host_up(&text, "esx02"), Some('0'), "still collecting: {text}");
        assert!(
            !text.contains("\npvrdma_adapter_verdict{host_name=\"esx02\","),
            "{text}"
        );
        assert_eq!(unreachable(&text, "esx03"), Some('1'), "{text}");
        let text = long.expect("allowed");
        assert_eq!(host_up(&text, "esx01"), Some('1'), "{text}");
        assert_eq!(host_up(&text, "esx02"), Some('1'), "{text}");
        assert_eq!(unreachable(&text, "esx03"), Some('1'), "{text}");
    });
}

#[test]
fn a_timed_out_host_names_the_scrape_timeout_not_a_cli_option() {
    run(async {
        let (e, fake) = exporter(CONFIG, Duration::from_secs(60));
        let text = scrape(&e, "esx03", Duration::from_secs(2)).await.expect("allowed");
        assert!(text.contains("\npvrdma_up 0\n"));
        let seen = fake.seen.borrow();
        let deadline = seen[0].run_deadline.as_ref().expect("a movable deadline");
        let reason = format!("{} {}", deadline.what, deadline.advice);
        assert!(reason.contains("scrape_timeout"), "{reason}");
        assert!(reason.contains("X-Prometheus-Scrape-Timeout-Seconds"), "{reason}");
        assert!(!reason.contains("--timeout"), "serve reads no --timeout: {reason}");
    });
}

fn sample(scenario: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(scenario)
}

/// Answers with a sample scenario's captures of the hosts asked for.
struct SampleCollector(&'static str);

impl Collector for SampleCollector {
    fn collect(&self, live: LiveOptions) -> LocalBoxFuture<'static, Vec<HostCapture>> {
        let dir = sample(self.0);
        Box::pin(async move {
            let all = crate::collect::replay::read_dir(&dir, CaptureSource::Live).expect("the sample reads");
            all.into_iter().filter(|c| live.targets.contains(&c.host)).collect()
        })
    }
}

#[test]
fn a_fleet_check_a_module_deselects_is_not_judged_and_makes_no_host_a_problem() {
    // Both hosts' PVRDMA port groups sit on different vDSes: `pvrdma-same-vds` fails and
    // is the only thing wrong with them.
    let scrape = |module: &str| {
        let yaml = format!(
            "targets: [\"esx[01-02]\"]\ngroups:\n  pair: {{ hosts: \"esx[01-02]\", module: m }}\nmodules:\n  m:\n{module}"
        );
        let config = Config::parse(&yaml).expect("valid test configuration");
        let e = Exporter::new(config, Box::new(SampleCollector("pvrdma-different-vds")));
        run(async move { scrape(&e, "pair", Duration::from_secs(10)).await.expect("allowed") })
    };
    let all = scrape("    user: root\n");
    assert!(
        all.contains("pvrdma_fleet_check_status{check=\"pvrdma-same-vds\",status=\"fail\"} 1\n"),
        "{all}"
    );
    assert!(
        all.contains("pvrdma_host_status{host_name=\"esx01\",status=\"problems\"} 1\n"),
        "{all}"
    );
    let without = scrape("    fleet_checks: [vmknic-subnets]\n");
    assert!(!without.contains("check=\"pvrdma-same-vds\""), "{without}");
    assert!(
        without.contains("pvrdma_fleet_check_status{check=\"vmknic-subnets\",status=\"pass\"} 1\n"),
        "{without}"
    );
    for host in ["esx01", "esx02"] {
        assert!(
            without.contains(&format!(
                "pvrdma_host_status{{host_name=\"{host}\",status=\"problems\"}} 0\n"
            )),
            "{without}"
        );
        assert!(
            without.contains(&format!("pvrdma_host_status{{host_name=\"{host}\",status=\"ok\"}} 1\n")),
            "{without}"
        );
    }
}

#[test]
fn a_web_file_mended_after_a_failed_reload_brings_the_reload_gauge_back() {
    run(async {
        let (e, _) = exporter(CONFIG, Duration::ZERO);
        let site = super::http::Site::new(e.clone(), None);
        let dir = tempfile::tempdir().expect("tempdir");
        let web = dir.path().join("web.yml");
        std::fs::write(&web, "basic_auth_users:\n  alice: not-a-bcrypt-hash\n").expect("write");
        super::reload(&site, None, Some(&web)).await;
        assert_eq!(
            e.metrics.config_reload_ok.get(),
            0,
            "a broken web file fails the reload"
        );
        std::fs::write(&web, "").expect("write");
        super::reload(&site, None, Some(&web)).await;
        assert_eq!(e.metrics.config_reload_ok.get(), 1, "the mended file reloads");
        assert!(site.web.borrow().is_some());
    });
}

#[test]
fn a_host_reached_of_which_nothing_was_read_is_up_0_counted_and_logged() {
    run(async {
        // esx01: every command timed out; esx02: one output whole, the rest timed out.
        let mut partly = all_timed_out("esx02");
        partly.outputs.extend(answered("esx02").outputs);
        let fake = Rc::new(Fake {
            delay: Duration::from_millis(100),
            captures: vec![all_timed_out("esx01"), partly],
            ..Fake::default()
        });
        let e = Exporter::new(
            Config::parse(CONFIG).expect("valid test configuration"),
            Box::new(FakeCollector(fake.clone())),
        );
        let text = scrape(&e, "esx01", Duration::from_secs(10)).await.expect("allowed");
        assert!(text.contains("\npvrdma_up 0\n"), "{text}");
        assert!(text.contains("\npvrdma_host_up{host_name=\"esx01\"} 0\n"), "{text}");
        assert_eq!(e.metrics.probe_failures.get(), 1, "counted as a failed probe");
        assert_eq!(
            e.metrics.probes_deadline_exceeded.get(),
            0,
            "answered before its deadline"
        );
        let text = scrape(&e, "esx02", Duration::from_secs(10)).await.expect("allowed");
        assert!(text.contains("\npvrdma_up 1\n"), "partly read is read: {text}");
        assert_eq!(e.metrics.probe_failures.get(), 1);
        // A group with one such host is not up either.
        let text = scrape(&e, "rack", Duration::from_secs(10)).await.expect("allowed");
        assert!(text.contains("\npvrdma_up 0\n"), "{text}");
        assert_eq!(e.metrics.probe_failures.get(), 2);
    });
    // The log line names the host, that nothing was read, and how each output ended.
    let lines = super::scrape::nothing_read(&[all_timed_out("esx01"), answered("esx02")]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let n = pvrdma_engine::catalogue::CATALOGUE.len();
    assert!(
        lines[0].starts_with(&format!(
            "probe of esx01: nothing read: none of its {n} command outputs arrived whole ({n} did not finish within --command-timeout 500ms)"
        )),
        "{}",
        lines[0]
    );
}

/// The VMs an exposition's adapter series name, sorted and once each.
fn adapter_vms(text: &str) -> Vec<String> {
    let mut vms: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("pvrdma_adapter_verdict{"))
        .filter_map(|l| l.split("vm_name=\"").nth(1)?.split('"').next().map(str::to_string))
        .collect();
    vms.sort();
    vms.dedup();
    vms
}

/// A `vm:` group read over SSH reports its chosen VMs' adapters and the pairs between
/// them, as `--vm` narrows a run; a host of it probed alone, the chosen VM on it.
#[test]
fn a_vm_group_probed_over_ssh_reports_only_its_chosen_vms() {
    use pvrdma_vsphere::{ConnectionState, Host, Inventory, PowerState, Vm};
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("pw"), "pw\n").expect("password file");
    let yaml = format!(
        "vcenters:\n  lab: {{url: vc01, user: u, password_file: {}/pw}}\ngroups:\n  mpi: {{vcenter: lab, vm: [hpc-node01, hpc-node02]}}\n",
        dir.path().display()
    );
    let config = Config::parse(&yaml).expect("valid test configuration");
    let e = Exporter::new(config.clone(), Box::new(SampleCollector("three-vms-one-host")));
    // vCenter places the sample's VMs where their hosts run them.
    let host = |name: &str| Host {
        id: format!("host-{name}"),
        name: name.into(),
        datacenter: "Lab".into(),
        cluster: Some("HPC".into()),
        cluster_path: Some("/Lab/host/HPC".into()),
        connection_state: ConnectionState::Connected,
        in_maintenance: false,
    };
    let vm = |name: &str, on: &str| Vm {
        id: format!("vm-{name}"),
        name: name.into(),
        host: Some(format!("host-{on}")),
        power_state: PowerState::PoweredOn,
    };
    let inventory = Inventory {
        hosts: vec![host("esx01"), host("esx02"), host("esx03")],
        vms: vec![
            vm("hpc-node01", "esx01"),
            vm("hpc-node04", "esx01"),
            vm("hpc-node05", "esx01"),
            vm("hpc-node02", "esx02"),
            vm("hpc-node03", "esx03"),
        ],
    };
    let generation = e.vcenter.sync(&config);
    let read = crate::source::follow::Snapshot {
        inventory,
        read_at: std::time::SystemTime::now(),
    };
    e.vcenter.apply(&config, generation, "lab", Ok(&read), read.read_at);
    run(async move {
        let group = scrape(&e, "mpi", Duration::from_secs(10)).await.expect("allowed");
        assert_eq!(adapter_vms(&group), ["hpc-node01", "hpc-node02"], "{group}");
        for vm in ["hpc-node01", "hpc-node02"] {
            assert!(
                group.contains(&format!("\npvrdma_vm_diagnosed{{vm_name=\"{vm}\"}} 1\n")),
                "{group}"
            );
        }
        // One adapter each on two hosts: one pair between them.
        let pairs: u64 = group
            .lines()
            .filter(|l| l.starts_with("pvrdma_adapter_pairs{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum();
        assert_eq!(pairs, 1, "{group}");
        let alone = scrape(&e, "esx01", Duration::from_secs(10)).await.expect("allowed");
        assert_eq!(adapter_vms(&alone), ["hpc-node01"], "{alone}");
        let refused = scrape(&e, "esx03", Duration::from_secs(10)).await.unwrap_err();
        assert!(
            refused.why.contains("allow-list") && !refused.unavailable,
            "esx03 runs no chosen VM, so it is not the group's: {}",
            refused.why
        );
    });
}
