//! The exporter's vCenter sources: `vcenters:` (where each vCenter is, as whom the
//! exporter logs in, which certificate it trusts, how often it reads the inventory again)
//! and the groups whose hosts a vCenter gives instead of a node set
//! (`groups: NAME: {vcenter: lab, cluster: "Lab East/HPC"}`).
//!
//! Everything is checked when the file is read, without connecting: the address, the
//! trust (a CA file or a pinned SHA-256 thumbprint, never both), the password (read from
//! its file or environment variable now, so a file that cannot be read is a
//! configuration error, not a failure at the first refresh), the clusters and VM patterns.
use super::{DurationText, NodeSets};
use pvrdma_vsphere::{ClusterRef, Endpoint, Selection, Thumbprint, Trust, VmPattern, Vocabulary};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How often a vCenter's inventory is read again when its `refresh:` is not set.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(300);

/// The shortest `refresh:` accepted: each read walks the whole inventory.
const MIN_REFRESH: Duration = Duration::from_secs(1);

/// How long one vSphere API request may take when `timeout:` is not set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The exporter's names for the settings a vSphere refusal's remedy points to: the keys of
/// its `vcenters:` entry, not the command line's options, which the exporter does not take.
pub const KEYS: Vocabulary = Vocabulary {
    ca_file: "`ca: FILE` in its vcenters: entry",
    pin_setting: "`thumbprint:`",
    pin: |t| format!("thumbprint: \"{t}\""),
    timeout: "`timeout:` in its vcenters: entry",
    cluster: |path| format!("cluster: {}", yaml_quoted(path)),
};

/// `text` as a YAML double-quoted scalar, which holds any cluster name.
fn yaml_quoted(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `vcenters:` and the groups they feed, validated.
#[derive(Debug, Clone, Default)]
pub struct VcenterConfig {
    pub vcenters: BTreeMap<String, Vcenter>,
    /// The groups whose hosts come from a vCenter (the others are in `Config::groups`).
    pub groups: BTreeMap<String, VcenterGroup>,
}

/// One `vcenters:` entry.
#[derive(Debug, Clone)]
pub struct Vcenter {
    pub endpoint: Endpoint,
    pub trust: Trust,
    pub user: String,
    /// Read when the file was loaded; never shown (`Debug` redacts it).
    pub password: SecretString,
    /// Where the password came from, for `--check-config`: `the file F`, `$VAR`.
    pub password_from: String,
    /// How often the inventory is read again.
    pub refresh: Duration,
    /// The limit on each vSphere API request.
    pub timeout: Duration,
}

impl Vcenter {
    /// What the vSphere client needs.
    pub fn client_config(&self) -> pvrdma_vsphere::Config {
        pvrdma_vsphere::Config {
            endpoint: self.endpoint.clone(),
            trust: self.trust.clone(),
            user: self.user.clone(),
            password: self.password.clone(),
            timeout: self.timeout,
            page_size: pvrdma_vsphere::Config::DEFAULT_PAGE_SIZE,
        }
    }

    /// Whether `other` reaches the same vCenter as the same user with the same password:
    /// a reload keeps the hosts read through it.
    pub fn same_source(&self, other: &Vcenter) -> bool {
        self.endpoint == other.endpoint
            && self.trust == other.trust
            && self.user == other.user
            && self.password.expose_secret() == other.password.expose_secret()
    }

    /// How its certificate is trusted, in words.
    fn trust_text(&self) -> String {
        match &self.trust {
            Trust::System => "a certificate the system's roots sign".to_string(),
            Trust::Ca(path) => format!("a certificate the CA in {} signs", path.display()),
            Trust::Pinned(t) => format!("exactly the certificate with SHA-256 thumbprint {t}"),
        }
    }
}

/// A group whose hosts a vCenter gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VcenterGroup {
    /// The `vcenters:` entry it reads.
    pub vcenter: String,
    pub selection: Selection,
    /// The module used when the probe names none.
    pub module: Option<String>,
    /// `no_ssh: true`: its hosts are judged from their configuration as vCenter gives it,
    /// read with the inventory; no SSH connection is made to them.
    pub no_ssh: bool,
}

impl VcenterGroup {
    /// What the group selects, in words (`--check-config`, logs).
    pub fn describe(&self) -> String {
        let s = &self.selection;
        let mut what = Vec::new();
        if !s.clusters.is_empty() {
            let c: Vec<String> = s.clusters.iter().map(ClusterRef::to_string).collect();
            what.push(format!("cluster {}", c.join(", ")));
        }
        if !s.vms.is_empty() {
            let v: Vec<&str> = s.vms.iter().map(VmPattern::as_str).collect();
            what.push(format!("the hosts running VM {}", v.join(", ")));
        }
        if what.is_empty() {
            what.push("every host".to_string());
        }
        let mut taken = vec!["connected"];
        if s.include_disconnected {
            taken = vec!["connected or not"];
        }
        taken.push(if s.include_maintenance {
            "in maintenance mode or not"
        } else {
            "not in maintenance mode"
        });
        let how = if self.no_ssh {
            "; judged from vCenter's vSphere API, without SSH"
        } else {
            ""
        };
        format!("{} ({}){how}", what.join(", "), taken.join(", "))
    }
}

/// One `vcenters:` entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVcenter {
    url: String,
    user: String,
    password_file: Option<PathBuf>,
    password_env: Option<String>,
    ca: Option<PathBuf>,
    thumbprint: Option<String>,
    refresh: Option<DurationText>,
    timeout: Option<DurationText>,
}

impl RawVcenter {
    pub(super) fn validate(self) -> anyhow::Result<Vcenter> {
        let endpoint = Endpoint::parse(&self.url).map_err(|e| anyhow::anyhow!("url: {e}"))?;
        anyhow::ensure!(
            !self.user.trim().is_empty(),
            "user: the vCenter account is empty (e.g. monitor@vsphere.local)"
        );
        let trust = match (self.ca, self.thumbprint) {
            (Some(_), Some(_)) => anyhow::bail!(
                "ca and thumbprint are both set: give the CA that signs vCenter's certificate, or pin that certificate's thumbprint, not both"
            ),
            (Some(ca), None) => {
                anyhow::ensure!(ca.is_file(), "ca: {} is not a readable file", ca.display());
                Trust::Ca(ca)
            }
            (None, Some(t)) => Trust::Pinned(Thumbprint::parse(&t).map_err(|e| anyhow::anyhow!("thumbprint: `{}` is {e}", e.text()))?),
            (None, None) => Trust::System,
        };
        let (password, password_from) = match (self.password_file, self.password_env) {
            (Some(_), Some(_)) => anyhow::bail!("password_file and password_env are both set: give one"),
            (None, None) => anyhow::bail!(
                "no password: give password_file: FILE (its first line) or password_env: VARIABLE (never the password itself in this file)"
            ),
            (Some(file), None) => {
                let password = crate::vcenter::read_password(&endpoint, &self.user, Some(&file), None)
                    .map_err(|e| anyhow::anyhow!("password_file: {e:#}"))?;
                (password, format!("the file {}", file.display()))
            }
            (None, Some(var)) => {
                let value = std::env::var(&var).unwrap_or_default();
                anyhow::ensure!(
                    !value.is_empty(),
                    "password_env: the environment variable {var} is not set or empty"
                );
                (SecretString::from(value), format!("${var}"))
            }
        };
        let refresh = self.refresh.map_or(DEFAULT_REFRESH, |d| d.0);
        anyhow::ensure!(
            refresh >= MIN_REFRESH,
            "refresh: {} is shorter than {}: every read walks the whole inventory",
            humantime::format_duration(refresh),
            humantime::format_duration(MIN_REFRESH)
        );
        let timeout = self.timeout.map_or(DEFAULT_TIMEOUT, |d| d.0);
        anyhow::ensure!(!timeout.is_zero(), "timeout: must be above zero");
        let vcenter = Vcenter {
            endpoint,
            trust,
            user: self.user,
            password,
            password_from,
            refresh,
            timeout,
        };
        // Reads the CA file as the client will (no connection): a file that is not PEM
        // certificates is named now.
        pvrdma_vsphere::Client::new(vcenter.client_config()).map_err(|e| anyhow::anyhow!(e.worded(&KEYS)))?;
        Ok(vcenter)
    }
}

/// A group: a node set, a list of them, or a map (`hosts:` and `module:`, or a vCenter
/// group's keys). Read by hand rather than as an untagged enum so that a mistake inside
/// the map is named, not reported as "did not match any variant".
#[derive(Debug)]
pub(super) enum RawGroup {
    Hosts(NodeSets),
    Full(RawGroupFields),
}

impl<'de> Deserialize<'de> for RawGroup {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawGroup;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a node set, a list of node sets, or a map with hosts: or vcenter:")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawGroup, E> {
                Ok(RawGroup::Hosts(NodeSets::One(v.to_string())))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<RawGroup, A::Error> {
                Vec::<String>::deserialize(SeqAccessDeserializer::new(seq)).map(|v| RawGroup::Hosts(NodeSets::Many(v)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RawGroup, A::Error> {
                RawGroupFields::deserialize(MapAccessDeserializer::new(map)).map(RawGroup::Full)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// A group written as a map: a static group (`hosts:`) or a vCenter group (`vcenter:`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGroupFields {
    pub(super) hosts: Option<NodeSets>,
    pub(super) module: Option<String>,
    vcenter: Option<String>,
    cluster: Option<NodeSets>,
    vm: Option<NodeSets>,
    include_maintenance: Option<bool>,
    include_disconnected: Option<bool>,
    no_ssh: Option<bool>,
}

impl RawGroupFields {
    /// `Ok(None)`: a static group (its `hosts:` are read by the caller); `Ok(Some)`: a
    /// vCenter group, checked against the `vcenters:` defined.
    pub(super) fn vcenter_group(&self, vcenters: &BTreeMap<String, Vcenter>) -> anyhow::Result<Option<VcenterGroup>> {
        let Some(vc) = &self.vcenter else {
            let vcenter_key = [
                ("cluster", self.cluster.is_some()),
                ("vm", self.vm.is_some()),
                ("include_maintenance", self.include_maintenance.is_some()),
                ("include_disconnected", self.include_disconnected.is_some()),
                ("no_ssh", self.no_ssh.is_some()),
            ]
            .into_iter()
            .find(|(_, set)| *set);
            if let Some((key, _)) = vcenter_key {
                anyhow::bail!("{key}: is for a group read from vCenter: add vcenter: NAME");
            }
            anyhow::ensure!(self.hosts.is_some(), "neither hosts: nor vcenter: is set");
            return Ok(None);
        };
        anyhow::ensure!(
            self.hosts.is_none(),
            "hosts: and vcenter: are both set: a group's hosts come from its node sets or from vCenter"
        );
        if !vcenters.contains_key(vc) {
            let known: Vec<&str> = vcenters.keys().map(String::as_str).collect();
            anyhow::bail!(
                "vcenter: {vc:?} is not defined under vcenters: ({})",
                match known.is_empty() {
                    true => "there are none".to_string(),
                    false => format!("they are: {}", known.join(", ")),
                }
            );
        }
        fn list(sets: &Option<NodeSets>) -> Vec<&str> {
            sets.as_ref().map(NodeSets::list).unwrap_or_default()
        }
        let clusters = list(&self.cluster)
            .into_iter()
            .map(|c| ClusterRef::parse(c).map_err(|e| anyhow::anyhow!("cluster: {e}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let vms = list(&self.vm)
            .into_iter()
            .map(|v| VmPattern::parse(v).map_err(|e| anyhow::anyhow!("vm: {e}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Some(VcenterGroup {
            vcenter: vc.clone(),
            selection: Selection {
                clusters,
                vms,
                include_maintenance: self.include_maintenance.unwrap_or(false),
                include_disconnected: self.include_disconnected.unwrap_or(false),
            },
            module: self.module.clone(),
            no_ssh: self.no_ssh.unwrap_or(false),
        }))
    }
}

impl VcenterConfig {
    /// The vCenters some group reads: those the server connects to.
    pub fn followed(&self) -> impl Iterator<Item = (&String, &Vcenter)> {
        self.vcenters
            .iter()
            .filter(|(name, _)| self.groups.values().any(|g| &g.vcenter == *name))
    }

    /// `--check-config`'s lines: each vCenter and each group it feeds, as read (nothing
    /// is connected to at check time).
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, vc) in &self.vcenters {
            let groups: Vec<&str> = self
                .groups
                .iter()
                .filter(|(_, g)| &g.vcenter == name)
                .map(|(n, _)| n.as_str())
                .collect();
            out.push(format!(
                "vcenter {name}: {} as {} (password from {}), trusting {}; inventory read at start and every {}, each request within {}; {}",
                vc.endpoint,
                vc.user,
                vc.password_from,
                vc.trust_text(),
                humantime::format_duration(vc.refresh),
                humantime::format_duration(vc.timeout),
                match groups.is_empty() {
                    true => "no group reads it, so it is not connected to".to_string(),
                    false => format!("group(s) {}", groups.join(", ")),
                }
            ));
        }
        for (name, g) in &self.groups {
            out.push(format!(
                "group {name}: from vcenter {}: {}{}; its hosts are read when the exporter starts (not by --check-config)",
                g.vcenter,
                g.describe(),
                g.module.as_ref().map(|m| format!(", module {m}")).unwrap_or_default()
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests;
