//! `demo --serve --ssh-dir DIR`: the simulated hosts alone, reachable over SSH from
//! another process, so `serve --config DIR/exporter.yml` runs in front of them as it
//! would in front of real hosts (and can be killed and restarted on its own).
use super::*;

impl SimFleet {
    /// Writes into `dir` what a client needs to reach the simulated hosts: `ssh_config`
    /// (each host name to its port on 127.0.0.1), `known_hosts`, the client key
    /// `id_demo`, and an `exporter.yml` for `serve --config` whose allow-list is the
    /// hosts, one by one and as the group `demo`.
    pub fn write_client_files(&self, dir: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let dir = dir
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", dir.display()))?;
        let key = std::fs::read(self.dir.path().join("id_demo"))?;
        write_private(&dir.join("id_demo"), &key)?;
        std::fs::copy(self.dir.path().join("known_hosts"), dir.join("known_hosts"))
            .with_context(|| format!("cannot write {}", dir.join("known_hosts").display()))?;
        let mut ssh_config = String::new();
        for (name, port) in &self.hosts {
            ssh_config.push_str(&format!(
                "Host {name}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile {}\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile none\n\n",
                dir.join("id_demo").display(),
                dir.join("known_hosts").display()
            ));
        }
        std::fs::write(dir.join("ssh_config"), ssh_config)?;
        let names = self.host_names();
        let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
        let exporter = format!(
            "# Written by `pvrdma-doctor demo --serve --ssh-dir`: the exporter's configuration for\n\
             # the demo's simulated hosts, valid while that demo runs (their ports change at\n\
             # each start). Run: pvrdma-doctor serve --config {config}\n\
             modules:\n  default:\n    ssh_config: {ssh_config:?}\n    identity_files: [{key:?}]\n    known_hosts: {known:?}\n    ssh_agent: false\n\
             targets: [{targets}]\n\
             groups:\n  demo: {group:?}\n",
            config = dir.join("exporter.yml").display(),
            ssh_config = dir.join("ssh_config").display().to_string(),
            key = dir.join("id_demo").display().to_string(),
            known = dir.join("known_hosts").display().to_string(),
            targets = quoted.join(", "),
            group = pvrdma_nodeset::fold(&names),
        );
        std::fs::write(dir.join("exporter.yml"), exporter)?;
        Ok(())
    }
}

/// Runs the simulated hosts of `opts` until SIGTERM or SIGINT, their client files in
/// `dir`; with a scenario folder, its files are read again every second (no exporter of
/// this process reloads them before its probes).
pub fn serve_hosts(opts: &DemoOptions, probe: bool, dir: &Path) -> anyhow::Result<()> {
    let fleet = start_fleet(opts, probe)?;
    fleet.write_client_files(dir)?;
    let names = fleet.host_names();
    eprintln!(
        "pvrdma-doctor: demo: {} simulated ESXi hosts ({}) listen on 127.0.0.1; to reach them: {}/ssh_config; run the exporter in front of them with `pvrdma-doctor serve --config {}/exporter.yml`",
        names.len(),
        pvrdma_nodeset::fold(&names),
        dir.display(),
        dir.display()
    );
    let runtime = crate::live::runtime()?;
    let reloader = opts.scenario.as_deref().map(|d| {
        eprintln!(
            "pvrdma-doctor: demo: {} is read again every second: edit a host's files there to break or mend it",
            d.display()
        );
        fleet.reloader(d)
    });
    runtime.block_on(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = term.recv() => break,
                _ = int.recv() => break,
                _ = tick.tick() => {
                    if let Some(r) = &reloader {
                        r.reload_and_tell();
                    }
                }
            }
        }
        anyhow::Ok(())
    })?;
    drop(fleet);
    Ok(())
}
