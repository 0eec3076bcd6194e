//! `pvrdma-doctor serve`: a Prometheus multi-target exporter, as blackbox_exporter and
//! snmp_exporter are ("Understanding and using the multi-target exporter pattern",
//! prometheus.io). Prometheus asks `/probe?target=esx01`; the exporter diagnoses that
//! host right then, over SSH, with the checks of a live run, and answers with its
//! metrics. A group of the configuration (`/probe?target=rack1`) is diagnosed as one
//! fleet, so the fleet checks and the path probe have a home.
//!
//! The server runs on one thread, like a live run: a probe spends its time waiting for
//! esxcli, and every host of every probe is driven from the same event loop.
//!
//! Signals: SIGHUP reloads the configuration and the web configuration (a broken file
//! keeps the one in force, says so on stderr and in
//! `pvrdma_doctor_config_last_reload_successful`); every changed key is applied, except
//! those read at start only, which are refused by name on stderr and in
//! `pvrdma_doctor_config_reload_refused`. SIGTERM and SIGINT drain (see [`http`]) and exit.
pub mod auth;
pub mod config;
pub mod exporter;
pub mod http;
mod landing;
pub mod metrics;
pub mod scrape;
pub mod vcenter;
pub mod web;

use anyhow::Context;
use config::Config;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What `serve` (or `demo --serve`) runs with.
pub struct ServeOptions {
    pub config: Config,
    /// The file SIGHUP reloads (`None`: the demo's built-in configuration).
    pub config_path: Option<PathBuf>,
    /// `--listen`, else the configuration's, else [`config::DEFAULT_LISTEN`].
    pub listen: Option<String>,
    pub web: Option<web::WebConfig>,
    /// Runs before every collection: the demo reads its scenario directory again there,
    /// so an edited file shows at the next scrape.
    pub before_collect: Option<scrape::BeforeCollect>,
    /// The web configuration file SIGHUP reloads too.
    pub web_path: Option<PathBuf>,
}

/// `pvrdma-doctor serve --config FILE [--listen ADDR] [--web.config.file FILE]
/// [--check-config]`.
pub fn run_serve(
    config_path: &Path,
    listen: Option<String>,
    web_config: Option<&Path>,
    check_only: bool,
) -> anyhow::Result<u8> {
    let config = Config::load(config_path)?;
    let web = web_config.map(web::WebConfig::load).transpose()?;
    if check_only {
        print!(
            "{}",
            check_report(config_path, &config, web_config, crate::terminal::stdout_width())
        );
        return Ok(pvrdma_engine::exit::HEALTHY);
    }
    run(ServeOptions {
        config,
        config_path: Some(config_path.to_path_buf()),
        before_collect: None,
        listen,
        web,
        web_path: web_config.map(Path::to_path_buf),
    })?;
    Ok(pvrdma_engine::exit::HEALTHY)
}

/// What `--check-config` prints: the summary, then one paragraph per vCenter and group,
/// wrapped to `width` as the reports are, without ever cutting a URL, a path or a
/// thumbprint (one longer than a line stands whole on its own).
pub fn check_report(config_path: &Path, config: &Config, web_config: Option<&Path>, width: usize) -> String {
    use pvrdma_engine::report::wrap_whole_words;
    let summary = format!("{}: valid: {}", config_path.display(), config.summary());
    let mut out = wrap_whole_words("", 4, &summary, width);
    for line in config.vcenter.lines() {
        out.push_str(&wrap_whole_words("  ", 6, &line, width));
    }
    if let Some(p) = web_config {
        out.push_str(&wrap_whole_words("", 4, &format!("{}: valid", p.display()), width));
    }
    out
}

/// `pvrdma-doctor demo --serve`: the exporter in front of the demo's simulated hosts; the
/// allow-list is those hosts, one by one and as the group `demo`.
pub fn run_demo(
    demo: &crate::demo::DemoOptions,
    base: crate::live::LiveOptions,
    listen: Option<String>,
    web_config: Option<&Path>,
) -> anyhow::Result<u8> {
    let web = web_config.map(web::WebConfig::load).transpose()?;
    let fleet = crate::demo::start_fleet(demo, base.probe.is_some())?;
    let names = fleet.host_names();
    let live = fleet.live_options(base);
    let config = Config::for_hosts(live, &names, "demo");
    eprintln!(
        "pvrdma-doctor: demo: {} simulated ESXi hosts ({}) on 127.0.0.1; the exporter serves them alone and as the group \"demo\"",
        names.len(),
        pvrdma_nodeset::fold(&names)
    );
    let before_collect = demo.scenario.as_deref().map(|dir| {
        eprintln!(
            "pvrdma-doctor: demo: {} is read again before every probe: edit a host's files there to break or mend it",
            dir.display()
        );
        let reloader = fleet.reloader(dir);
        Box::new(move || reloader.reload_and_tell()) as scrape::BeforeCollect
    });
    run(ServeOptions {
        config,
        config_path: None,
        listen,
        web,
        before_collect,
        web_path: web_config.map(Path::to_path_buf),
    })?;
    drop(fleet);
    Ok(pvrdma_engine::exit::HEALTHY)
}

/// Runs the server until SIGTERM or SIGINT.
pub fn run(opts: ServeOptions) -> anyhow::Result<()> {
    let listen = opts
        .listen
        .clone()
        .or_else(|| opts.config.listen.map(|a| a.to_string()))
        .unwrap_or_else(|| config::DEFAULT_LISTEN.to_string());
    let runtime = crate::live::runtime()?;
    let local = tokio::task::LocalSet::new();
    let result = local.block_on(&runtime, serve_until_signal(opts, &listen));
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    result
}

async fn serve_until_signal(opts: ServeOptions, listen: &str) -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    // The descriptors the hosts' connections need, as a live run raises them.
    crate::live::fanout_limit(usize::MAX);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    let scheme = if opts.web.as_ref().is_some_and(|w| w.tls.is_some()) {
        "https"
    } else {
        "http"
    };
    let exporter = exporter::Exporter::new(
        opts.config,
        Box::new(scrape::LiveCollector {
            before: opts.before_collect,
        }),
    );
    eprintln!(
        "pvrdma-doctor: serving on {scheme}://{addr}/ ({}); /probe?target=NAME, /metrics",
        exporter.config().summary()
    );
    let site = Rc::new(http::Site::new(exporter.clone(), opts.web));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    let mut hup = signal(SignalKind::hangup()).context("cannot watch SIGHUP")?;
    let server = tokio::task::spawn_local(http::serve(listener, site.clone(), stop_rx));
    let mut followers = vcenter::Followers::start(exporter.vcenter.clone(), exporter.config_in_force());
    loop {
        tokio::select! {
            _ = term.recv() => break,
            _ = int.recv() => break,
            _ = hup.recv() => {
                reload(&site, opts.config_path.as_deref(), opts.web_path.as_deref()).await;
                followers.restart();
            }
        }
    }
    eprintln!(
        "pvrdma-doctor: stopping: new connections refused, /-/ready answers 503; finishing the {} request(s) in flight (each by its deadline)",
        site.conns.serving()
    );
    let _ = stop_tx.send(true);
    let (_, ()) = tokio::join!(server, followers.stop());
    eprintln!("pvrdma-doctor: stopped");
    Ok(())
}

/// SIGHUP: reads the configuration (and the web configuration) again; a broken file
/// leaves the one in force. Every key that changed is either applied or refused by name.
/// The web configuration is read off the server's thread: loading it hashes a password at
/// the users' highest bcrypt cost (up to a second), which would stall every request.
async fn reload(site: &http::Site, path: Option<&Path>, web_path: Option<&Path>) {
    let exporter = &site.exporter;
    let mut ok = true;
    match path {
        None => eprintln!("pvrdma-doctor: SIGHUP: the demo's configuration is built in; nothing to reload"),
        Some(path) => match Config::load(path) {
            Ok(config) => {
                let summary = config.summary();
                let report = exporter.replace_config(config);
                for a in &report.applied {
                    eprintln!("pvrdma-doctor: reload: applied {a}");
                }
                for r in &report.refused {
                    eprintln!("pvrdma-doctor: reload: NOT applied (needs a restart): {r}");
                }
                eprintln!("pvrdma-doctor: reloaded {}: {summary}", path.display());
            }
            Err(e) => {
                ok = false;
                eprintln!("pvrdma-doctor: reload FAILED, the previous configuration stays in force: {e:#}");
            }
        },
    }
    if let Some(web_path) = web_path {
        let file = web_path.to_path_buf();
        let loaded = tokio::task::spawn_blocking(move || web::WebConfig::load(&file))
            .await
            .unwrap_or_else(|e| Err(anyhow::anyhow!("reading the web configuration stopped: {e}")));
        match loaded {
            Ok(w) => {
                let old = site.web.borrow().clone();
                if let (Some(new), Some(old)) = (&w.auth, old.as_ref().and_then(|o| o.auth.as_ref())) {
                    // The passwords checked stay checked, for the users whose hash is the same.
                    new.remember_from(old);
                }
                *site.web.borrow_mut() = Some(Rc::new(w));
                eprintln!(
                    "pvrdma-doctor: reloaded {}: applied to new connections (TLS) and requests (users)",
                    web_path.display()
                );
            }
            Err(e) => {
                ok = false;
                eprintln!("pvrdma-doctor: reload FAILED, the previous web configuration stays in force: {e:#}");
            }
        }
    }
    // Set either way: a web file mended after a failed reload (the demo has no other file)
    // must bring the gauge back.
    exporter.metrics.config_reload_ok.set(u64::from(ok));
}

#[cfg(test)]
mod tests;
