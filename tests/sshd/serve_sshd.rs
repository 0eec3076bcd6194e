//! The exporter's own verdict on a probe against a real OpenSSH server: a host that lets
//! the exporter in but whose every command hangs is not `pvrdma_up 1`.
use crate::support::client::{alias, Client};
use crate::support::*;
use pvrdma_doctor::serve::config::Config;
use pvrdma_doctor::serve::probe::{Engine, LiveCollector};
use std::time::Duration;

#[test]
fn a_probe_where_every_command_timed_out_is_up_0_and_a_failed_probe() {
    if !crate::support::real_tools("a real OpenSSH sshd") {
        return;
    }
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
    let engine = Engine::new(config, Box::new(LiveCollector { before: None }));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let body = tokio::task::LocalSet::new().block_on(&rt, async {
        let start = tokio::time::Instant::now();
        engine
            .probe("hung", None, start, start + Duration::from_secs(60))
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
    drop(sshd);
}
