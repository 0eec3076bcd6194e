//! The exporter's YAML configuration: modules (how to log in), the allow-list of targets
//! (node sets) and groups (node sets diagnosed as one fleet), limits and the listen address.
//!
//! Credentials come only from this file (key files, an environment variable naming the
//! password, the ssh-agent): a `/probe` URL names a target and a module, nothing else.
//! Groups may also take their hosts from vCenter ([`vcenter`]).
use crate::live::LiveOptions;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use vcenter::RawGroup;

/// The module used when a probe names none (and a group names none).
pub const DEFAULT_MODULE: &str = "default";

/// The default listen address: loopback only, so nothing is exposed until the admin says
/// so. The port lies outside 9100-9999, whose every number Prometheus' "Default port
/// allocations" wiki page had given to an exporter by mid-2023.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:39155";

/// Most names one allow-list entry or group may expand to (a typo such as `esx[1-99999]`
/// must not make a list of 10^5 names).
const MAX_TARGETS: usize = 10_000;

pub mod vcenter;

/// The keys the running server reads at start only: a reload that changes them keeps
/// the value in force and says so (log line, `pvrdma_doctor_config_reload_refused`).
pub const RESTART_ONLY: [&str; 2] = ["listen", "limits.max_concurrent_hosts"];

/// The configuration in force, shared by whoever reads it while serving (the probes, the
/// vCenter followers): a reload replaces it for all of them at once.
#[derive(Debug)]
pub struct InForce(std::cell::RefCell<std::sync::Arc<Config>>);

impl InForce {
    pub fn new(config: Config) -> InForce {
        InForce(std::cell::RefCell::new(std::sync::Arc::new(config)))
    }

    /// The configuration in force now.
    pub fn get(&self) -> std::sync::Arc<Config> {
        self.0.borrow().clone()
    }

    /// Puts `config` in force.
    pub fn set(&self, config: Config) {
        *self.0.borrow_mut() = std::sync::Arc::new(config);
    }
}

/// A whole configuration, validated.
#[derive(Debug, Clone)]
pub struct Config {
    /// `listen:`; the command line's `--listen` wins.
    pub listen: Option<SocketAddr>,
    pub limits: Limits,
    pub modules: BTreeMap<String, Module>,
    /// Every host a `/probe?target=` may name (the `targets:` entries and the groups'
    /// members), expanded.
    pub hosts: BTreeSet<String>,
    pub groups: BTreeMap<String, Group>,
    /// `vcenters:` and the groups whose hosts they give (read while serving).
    pub vcenter: vcenter::VcenterConfig,
}

/// Load limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Hosts collected at once, all probes together; beyond it probes wait (bounded by
    /// their deadline).
    pub max_concurrent_hosts: usize,
    /// Subtracted from Prometheus' `X-Prometheus-Scrape-Timeout-Seconds`, so the answer
    /// arrives before Prometheus gives up.
    pub timeout_offset: Duration,
    /// The deadline of a request without that header.
    pub default_timeout: Duration,
    /// No probe runs longer than this, whatever the header says.
    pub max_timeout: Duration,
    /// HTTP connections open at once; more wait in the kernel's accept queue.
    pub max_connections: usize,
    /// Most command output held at once, every probe in flight together (each host also
    /// keeps at most its module's per-host budget); past it outputs are cut and marked
    /// cut, so what depends on them is `unknown`.
    pub output_budget: usize,
}

/// The default `limits.output_budget`: with the other shipped limits the exporter stays
/// under 256 MiB of memory however much the hosts print (see docs/benchmarks.md), while
/// 64 hosts of hundreds of VMs (well under 1 MiB each) fit many times over.
pub const DEFAULT_OUTPUT_BUDGET: usize = 96 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_concurrent_hosts: 64,
            timeout_offset: Duration::from_millis(500),
            default_timeout: Duration::from_secs(10),
            max_timeout: Duration::from_secs(300),
            max_connections: 512,
            output_budget: DEFAULT_OUTPUT_BUDGET,
        }
    }
}

/// How to log in to a target and what to check.
#[derive(Clone)]
pub struct Module {
    /// The live-run settings (targets, deadline and parallelism are set per probe).
    pub live: LiveOptions,
    /// The checks across hosts the diagnosis judges (`fleet_checks:`; all by default).
    pub fleet_checks: pvrdma_engine::diagnose::Selection,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("user", &self.live.login_user)
            .field("fleet_checks", &self.fleet_checks)
            .finish_non_exhaustive()
    }
}

/// A group: hosts diagnosed together as one fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Host names, expanded, in written order without duplicates.
    pub members: Vec<String>,
    /// The module used when the probe names none.
    pub module: Option<String>,
}

impl Config {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read the configuration {}: {e}", path.display()))?;
        Config::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e:#}", path.display()))
    }

    /// Parses and validates a configuration text.
    pub fn parse(text: &str) -> anyhow::Result<Config> {
        let raw: RawConfig = if text.trim().is_empty() {
            RawConfig::default()
        } else {
            serde_norway::from_str(text).map_err(|e| anyhow::anyhow!("{e}"))?
        };
        raw.validate()
    }

    /// A configuration built in code (the demo): one `default` module, `hosts` allowed
    /// one by one and as the group `group`.
    pub fn for_hosts(live: LiveOptions, hosts: &[String], group: &str) -> Config {
        let mut groups = BTreeMap::new();
        groups.insert(
            group.to_string(),
            Group {
                members: hosts.to_vec(),
                module: None,
            },
        );
        let mut modules = BTreeMap::new();
        modules.insert(
            DEFAULT_MODULE.to_string(),
            Module {
                live,
                fleet_checks: pvrdma_engine::diagnose::Selection::default(),
            },
        );
        Config {
            listen: None,
            limits: Limits::default(),
            modules,
            hosts: hosts.iter().cloned().collect(),
            groups,
            vcenter: vcenter::VcenterConfig::default(),
        }
    }

    /// The module a probe of `target` uses: the one named in the URL, else the group's,
    /// else `default`.
    pub fn module_for(&self, target: &str, asked: Option<&str>) -> Result<(&str, &Module), String> {
        let name = asked
            .or_else(|| self.groups.get(target).and_then(|g| g.module.as_deref()))
            .or_else(|| self.vcenter.groups.get(target).and_then(|g| g.module.as_deref()))
            .unwrap_or(DEFAULT_MODULE);
        self.modules
            .get_key_value(name)
            .map(|(k, m)| (k.as_str(), m))
            .ok_or_else(|| {
                let known: Vec<&str> = self.modules.keys().map(String::as_str).collect();
                format!("unknown module {name:?} (the configuration has: {})", known.join(", "))
            })
    }

    /// One line for `--check-config` and the reload log. The groups of node sets and the
    /// groups vCenter feeds are counted apart: `0 group(s)` beside `3 group(s)` read as a
    /// contradiction.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "{} module(s), {} host(s) allowed, {} node-set group(s)",
            self.modules.len(),
            self.hosts.len(),
            self.groups.len()
        );
        if !self.vcenter.vcenters.is_empty() {
            line.push_str(&format!(
                ", {} vCenter(s) feeding {} vCenter group(s)",
                self.vcenter.vcenters.len(),
                self.vcenter.groups.len()
            ));
        }
        line
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    listen: Option<String>,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    modules: BTreeMap<String, RawModule>,
    #[serde(default)]
    targets: Vec<String>,
    #[serde(default)]
    groups: BTreeMap<String, RawGroup>,
    #[serde(default)]
    vcenters: BTreeMap<String, vcenter::RawVcenter>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    max_concurrent_hosts: Option<usize>,
    timeout_offset: Option<DurationText>,
    default_timeout: Option<DurationText>,
    max_timeout: Option<DurationText>,
    max_connections: Option<usize>,
    output_budget: Option<SizeText>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModule {
    /// Login user (default: the ssh_config `User`, else root).
    user: Option<String>,
    #[serde(default)]
    identity_files: Vec<PathBuf>,
    /// A known_hosts file (`UserKnownHostsFile`).
    known_hosts: Option<PathBuf>,
    /// An ssh_config file read instead of ~/.ssh/config and /etc/ssh/ssh_config.
    ssh_config: Option<PathBuf>,
    port: Option<u16>,
    /// ProxyJump hosts, as `-J`.
    jump: Option<String>,
    /// `Key=Value` ssh_config options, as `-o`.
    #[serde(default)]
    ssh_options: Vec<String>,
    /// Offer the ssh-agent's keys and ~/.ssh/id_* (default true).
    ssh_agent: Option<bool>,
    /// The environment variable holding the hosts' password.
    password_env: Option<String>,
    connect_timeout: Option<DurationText>,
    command_timeout: Option<DurationText>,
    /// Ping between the hosts' PVRDMA vmknics (group probes).
    #[serde(default)]
    probe: bool,
    probe_sample: Option<usize>,
    /// Fleet check ids reported (default: all).
    fleet_checks: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum NodeSets {
    One(String),
    Many(Vec<String>),
}

impl NodeSets {
    fn list(&self) -> Vec<&str> {
        match self {
            NodeSets::One(s) => vec![s.as_str()],
            NodeSets::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

/// `10s`, `500ms`, `2m`, or a number of seconds.
#[derive(Debug, Clone, Copy)]
struct DurationText(Duration);

/// A size: `128MiB`, `512KiB`, `1GiB`, or a number of bytes.
#[derive(Debug)]
struct SizeText(usize);

impl<'de> Deserialize<'de> for SizeText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Bytes(u64),
            Text(String),
        }
        let text = match Either::deserialize(d)? {
            Either::Bytes(n) => n.to_string(),
            Either::Text(t) => t,
        };
        crate::cli::parse_size(&text)
            .map(SizeText)
            .map_err(serde::de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Seconds(f64),
            Text(String),
        }
        match Either::deserialize(d)? {
            Either::Seconds(s) => Duration::try_from_secs_f64(s)
                .map(DurationText)
                .map_err(|e| serde::de::Error::custom(format!("{s}: {e}"))),
            Either::Text(t) => humantime::parse_duration(t.trim())
                .map(DurationText)
                .map_err(|e| serde::de::Error::custom(format!("{t:?} is not a duration such as 10s or 500ms: {e}"))),
        }
    }
}

impl RawConfig {
    fn validate(self) -> anyhow::Result<Config> {
        let listen = self
            .listen
            .as_deref()
            .map(|l| {
                l.parse::<SocketAddr>()
                    .map_err(|e| anyhow::anyhow!("listen: {l:?} is not an address such as 127.0.0.1:39155 ({e})"))
            })
            .transpose()?;
        let limits = self.limits.validate()?;
        let mut modules = BTreeMap::new();
        for (name, raw) in self.modules {
            let module = raw.validate().map_err(|e| anyhow::anyhow!("module {name:?}: {e:#}"))?;
            modules.insert(name, module);
        }
        if !modules.contains_key(DEFAULT_MODULE) {
            let module = RawModule::default().validate()?;
            modules.insert(DEFAULT_MODULE.to_string(), module);
        }
        let mut hosts = BTreeSet::new();
        for entry in &self.targets {
            for name in expand(entry).map_err(|e| anyhow::anyhow!("targets: {e}"))? {
                hosts.insert(name);
            }
        }
        let mut vc = vcenter::VcenterConfig::default();
        for (name, raw) in self.vcenters {
            let v = raw.validate().map_err(|e| anyhow::anyhow!("vcenter {name:?}: {e:#}"))?;
            vc.vcenters.insert(name, v);
        }
        let mut groups = BTreeMap::new();
        for (name, raw) in self.groups {
            check_name(&name).map_err(|e| anyhow::anyhow!("group {name:?}: {e}"))?;
            let (sets, module) = match raw {
                RawGroup::Hosts(s) => (s, None),
                RawGroup::Full(fields) => match fields.vcenter_group(&vc.vcenters) {
                    Err(e) => anyhow::bail!("group {name:?}: {e:#}"),
                    Ok(None) => (fields.hosts.unwrap_or(NodeSets::Many(Vec::new())), fields.module),
                    Ok(Some(g)) => {
                        if let Some(m) = &g.module {
                            anyhow::ensure!(
                                modules.contains_key(m),
                                "group {name:?}: module {m:?} is not defined under modules:"
                            );
                        }
                        vc.groups.insert(name, g);
                        continue;
                    }
                },
            };
            if let Some(m) = &module {
                anyhow::ensure!(
                    modules.contains_key(m),
                    "group {name:?}: module {m:?} is not defined under modules:"
                );
            }
            let mut members: Vec<String> = Vec::new();
            for set in sets.list() {
                for host in expand(set).map_err(|e| anyhow::anyhow!("group {name:?}: {e}"))? {
                    if !members.contains(&host) {
                        members.push(host);
                    }
                }
            }
            anyhow::ensure!(
                members.len() <= MAX_TARGETS,
                "group {name:?}: {} hosts, more than {MAX_TARGETS}",
                members.len()
            );
            anyhow::ensure!(!members.is_empty(), "group {name:?} has no hosts");
            hosts.extend(members.iter().cloned());
            groups.insert(name, Group { members, module });
        }
        for name in groups.keys().chain(vc.groups.keys()) {
            anyhow::ensure!(
                !hosts.contains(name),
                "{name:?} is both a group and a host: a probe could not tell which is meant"
            );
        }
        Ok(Config {
            listen,
            limits,
            modules,
            hosts,
            groups,
            vcenter: vc,
        })
    }
}

impl RawLimits {
    fn validate(self) -> anyhow::Result<Limits> {
        let d = Limits::default();
        let limits = Limits {
            max_concurrent_hosts: self.max_concurrent_hosts.unwrap_or(d.max_concurrent_hosts),
            timeout_offset: self.timeout_offset.map_or(d.timeout_offset, |t| t.0),
            default_timeout: self.default_timeout.map_or(d.default_timeout, |t| t.0),
            max_timeout: self.max_timeout.map_or(d.max_timeout, |t| t.0),
            max_connections: self.max_connections.unwrap_or(d.max_connections),
            output_budget: self.output_budget.map_or(d.output_budget, |s| s.0),
        };
        anyhow::ensure!(
            (1..=4096).contains(&limits.max_concurrent_hosts),
            "limits.max_concurrent_hosts: {} is not from 1 to 4096",
            limits.max_concurrent_hosts
        );
        anyhow::ensure!(
            (1..=65_536).contains(&limits.max_connections),
            "limits.max_connections: {} is not from 1 to 65536",
            limits.max_connections
        );
        anyhow::ensure!(
            !limits.default_timeout.is_zero() && limits.default_timeout <= limits.max_timeout,
            "limits.default_timeout must be above zero and at most limits.max_timeout"
        );
        Ok(limits)
    }
}

impl RawModule {
    fn validate(self) -> anyhow::Result<Module> {
        let mut options = self.ssh_options.clone();
        if let Some(k) = &self.known_hosts {
            options.push(format!("UserKnownHostsFile={}", k.display()));
        }
        // The module's user, port and jump hosts stand where `-l`, `-p` and `-J` would,
        // before its `-o` options: the first value given wins, as on the command line.
        use pvrdma_ssh_config::CliOption;
        let mut items = Vec::new();
        if let Some(u) = &self.user {
            items.push(CliOption::Login(u.clone()));
        }
        if let Some(p) = self.port {
            items.push(CliOption::Port(p.to_string()));
        }
        if let Some(j) = &self.jump {
            items.push(CliOption::Jump(j.clone()));
        }
        items.extend(options.iter().map(|o| CliOption::Option(o.clone())));
        let ssh_options = pvrdma_ssh_config::CommandLineOptions::ordered(items.into_iter().enumerate().collect())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        crate::live::check_identity_files(&self.identity_files)?;
        if let Some(f) = &self.ssh_config {
            anyhow::ensure!(f.is_file(), "ssh_config {} is not a readable file", f.display());
        }
        let password = match &self.password_env {
            None => None,
            Some(var) => {
                let value = std::env::var(var)
                    .map_err(|_| anyhow::anyhow!("password_env: the environment variable {var} is not set"))?;
                Some(secrecy::SecretString::from(value))
            }
        };
        let mut fleet_checks = pvrdma_engine::diagnose::Selection::default();
        if let Some(ids) = &self.fleet_checks {
            let mut keep = Vec::new();
            for id in ids {
                let check = pvrdma_engine::diagnose::CheckId::from_id(id).filter(|c| c.across_hosts());
                let Some(check) = check else {
                    anyhow::bail!(
                        "fleet_checks: {id:?} is not a fleet check (they are: {})",
                        fleet_check_ids().join(", ")
                    );
                };
                keep.push(check);
            }
            fleet_checks = pvrdma_engine::diagnose::Selection::only_fleet(keep);
        }
        anyhow::ensure!(
            self.probe || self.probe_sample.is_none(),
            "probe_sample needs probe: true"
        );
        anyhow::ensure!(self.probe_sample != Some(0), "probe_sample: at least 1 peer");
        let defaults = LiveOptions::default();
        let live = LiveOptions {
            ssh_config: self.ssh_config,
            ssh_options,
            login_user: self.user,
            identity_files: self.identity_files,
            connect_timeout: self.connect_timeout.map(|t| t.0),
            connect_timeout_option: "the module's connect_timeout",
            command_timeout: self.command_timeout.map_or(defaults.command_timeout, |t| t.0),
            password,
            progress: false,
            only_given_keys: !self.ssh_agent.unwrap_or(true),
            probe: self.probe.then_some(crate::probe::ProbeOptions {
                sample: self.probe_sample,
            }),
            ..defaults
        };
        Ok(Module { live, fleet_checks })
    }
}

/// The ids a module's `fleet_checks:` may name.
pub fn fleet_check_ids() -> Vec<&'static str> {
    use pvrdma_engine::diagnose::CheckId;
    CheckId::ALL
        .iter()
        .filter(|c| c.across_hosts())
        .map(|c| c.id())
        .collect()
}

/// A node set's names (ClusterShell groups such as `@esxi` resolved from ClusterShell's own
/// group configuration, as on the command line), each checked to be something a probe URL
/// can name.
fn expand(set: &str) -> anyhow::Result<Vec<String>> {
    let mut groups = crate::hosts::groups::GroupConfig::from_env();
    let names = pvrdma_nodeset::expand_with(set, &mut groups).map_err(|e| anyhow::anyhow!("{set:?}: {e}"))?;
    anyhow::ensure!(
        names.len() <= MAX_TARGETS,
        "{set:?} expands to {} names, more than {MAX_TARGETS}",
        names.len()
    );
    for n in &names {
        check_name(n).map_err(|e| anyhow::anyhow!("{set:?}: {e}"))?;
    }
    Ok(names)
}

/// A target or group name: non-empty, printable, no spaces, not `-` (stdin for the CLI).
pub(super) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "-" || name.len() > 255 {
        return Err(format!("{name:?} is not a host name"));
    }
    if name
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | '?' | '#' | '&'))
    {
        return Err(format!("{name:?} holds a space, a control character or one of / ? # &"));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
