//! The exporter's own verdict on a probe against a real OpenSSH server: a host that lets
//! the exporter in but whose every command hangs is not `pvrdma_up 1`, and the reason
//! names the timeout as it was given.
use crate::support::client::{alias, Client};
use crate::support::*;
use futures::future::LocalBoxFuture;
use pvrdma_doctor::live::LiveOptions;
use pvrdma_doctor::serve::config::Config;
use pvrdma_doctor::serve::exporter::Exporter;
use pvrdma_doctor::serve::scrape::{nothing_read, Collector, LiveCollector};
use pvrdma_engine::capture::HostCapture;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// The live collector, keeping a copy of the captures it returns.
struct Recording(Rc<RefCell<Vec<HostCapture>>>);

impl Collector for Recording {
    fn collect(&self, live: LiveOptions) -> LocalBoxFuture<'static, Vec<HostCapture>> {
        let seen = self.0.clone();
        Box::pin(async move {
            let captures = LiveCollector { before: None }.collect(live).await;
            seen.borrow_mut().extend(captures.iter().cloned());
            captures
        })
    }
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn a_probe_where_every_command_timed_out_is_up_0_and_a_failed_probe() {
    let client = Client::new();
    let mut o = SshdOptions::new(samples_host("healthy-cluster", "esx01"));
    client.authorize(&mut o);
    // Every command of the catalogue (the grouped ones included) never answers.
    o.hang = pvrdma_engine::catalogue::CATALOGUE
        .iter()
        .map(|s| s.id.to_string())
        .collect();
    let sshd = Sshd::start(o);
    client.trust(&sshd);
    client.write_config(&alias("hung", &sshd));
    let mut live = client.options(&["hung".to_string()]);
    live.command_timeout = Duration::from_millis(500);
    let config = Config::for_hosts(live, &["hung".to_string()], "all");
    let seen = Rc::new(RefCell::new(Vec::new()));
    let engine = Exporter::new(config, Box::new(Recording(seen.clone())));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let body = tokio::task::LocalSet::new().block_on(&rt, async {
        let start = tokio::time::Instant::now();
        engine
            .scrape("hung", None, start, start + Duration::from_secs(60))
            .await
            .expect("allowed")
    });
    assert!(body.contains("\npvrdma_host_up{host_name=\"hung\"} 0\n"), "{body}");
    assert!(body.contains("\npvrdma_up 0\n"), "nothing was read: {body}");
    assert!(
        !body.contains("status=\"pass\"} 1"),
        "no check can pass on nothing: {body}"
    );
    assert_eq!(engine.metrics.probe_failures.get(), 1, "{}", engine.render_metrics());
    assert_eq!(
        engine.metrics.probes_deadline_exceeded.get(),
        0,
        "the commands' timeouts, not the deadline"
    );
    // What is logged, and every output's reason, give the timeout as it was given.
    let captures = seen.borrow().clone();
    let outputs: Vec<_> = captures.iter().flat_map(|c| c.outputs.values()).collect();
    assert!(!outputs.is_empty(), "{captures:?}");
    for o in outputs {
        let why = o.cut_short().expect("nothing whole");
        assert_eq!(why, "did not finish within --command-timeout 500ms", "{}", o.id);
    }
    let logged = nothing_read(&captures);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(
        logged[0].starts_with("probe of hung: nothing read: none of its ")
            && logged[0].contains(" did not finish within --command-timeout 500ms"),
        "{}",
        logged[0]
    );
    drop(sshd);
}
