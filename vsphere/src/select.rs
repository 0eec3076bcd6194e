//! Which hosts a run is about: those of named clusters, or those the named VMs run on,
//! minus the hosts that cannot be diagnosed now (maintenance mode, disconnected, not
//! responding) unless asked for on purpose. Pure: works on an [`Inventory`] already read.
//!
//! A selector that names nothing is an error, never an empty selection: a typo in a
//! cluster or VM name must not make a monitoring run pass on zero hosts.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use crate::error::Vocabulary;
use crate::inventory::{ConnectionState, Host, Inventory, PowerState};

/// A cluster as an admin names it: the cluster's `NAME`, `DATACENTER/NAME`, or its inventory path
/// as `govc find` prints it (`/Lab East/host/Row 1/HPC`, with or without the leading `/`).
/// Nothing is split: the text is compared with each cluster's three spellings, so names
/// holding a `/` (a datacenter `Lab/East`) still match.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterRef(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("an empty cluster name selects nothing: write NAME, DATACENTER/NAME or the inventory path")]
    EmptyCluster,
    #[error("an empty VM pattern selects nothing")]
    EmptyVmPattern,
}

impl ClusterRef {
    pub fn parse(text: &str) -> Result<ClusterRef, SelectorError> {
        if text.trim_matches('/').is_empty() {
            return Err(SelectorError::EmptyCluster);
        }
        Ok(ClusterRef(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this names the cluster of `h` (never a standalone host).
    fn names(&self, h: &Host) -> bool {
        let Some(cluster) = &h.cluster else {
            return false;
        };
        let text = self.0.as_str();
        if text == cluster
            || text
                .strip_prefix(h.datacenter.as_str())
                .and_then(|r| r.strip_prefix('/'))
                == Some(cluster)
        {
            return true;
        }
        h.cluster_path
            .as_deref()
            .is_some_and(|path| path.trim_start_matches('/') == text.trim_start_matches('/'))
    }
}

impl fmt::Display for ClusterRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A VM pattern: an exact VM name, or a glob where only `*` (any run of characters)
/// and `?` (one character) are wildcards. Brackets, spaces, colons and everything else
/// are literal, because VM names contain them (`hpc [test] 07`, `node:1`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VmPattern(String);

impl VmPattern {
    pub fn parse(text: &str) -> Result<VmPattern, SelectorError> {
        if text.is_empty() {
            return Err(SelectorError::EmptyVmPattern);
        }
        Ok(VmPattern(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn matches(&self, name: &str) -> bool {
        let pattern: Vec<char> = self.0.chars().collect();
        let name: Vec<char> = name.chars().collect();
        // Iterative glob with one backtrack point: linear enough for names, no recursion.
        let (mut p, mut n) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while n < name.len() {
            match pattern.get(p) {
                Some('*') => {
                    star = Some((p, n));
                    p += 1;
                }
                Some(&c) if c == '?' || c == name[n] => {
                    p += 1;
                    n += 1;
                }
                _ => match star {
                    Some((sp, sn)) => {
                        p = sp + 1;
                        n = sn + 1;
                        star = Some((sp, sn + 1));
                    }
                    None => return false,
                },
            }
        }
        pattern[p..].iter().all(|&c| c == '*')
    }
}

impl fmt::Display for VmPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What to select. The default is every host that can be diagnosed now: connected and
/// not in maintenance mode.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    pub clusters: Vec<ClusterRef>,
    pub vms: Vec<VmPattern>,
    /// Also select hosts in maintenance mode.
    pub include_maintenance: bool,
    /// Also select disconnected and not-responding hosts.
    pub include_disconnected: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Selected {
    pub hosts: Vec<SelectedHost>,
    pub skipped: Vec<SkippedHost>,
    /// The powered-on VMs matched (also those on skipped hosts), ordered by name.
    pub vms: Vec<SelectedVm>,
    /// Matched VMs that are powered off or suspended: they run on no host.
    pub vms_not_running: Vec<SelectedVm>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelectedHost {
    pub name: String,
    pub datacenter: String,
    pub cluster: Option<String>,
    /// The cluster's inventory path (see [`Host::cluster_path`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_path: Option<String>,
    pub connection_state: ConnectionState,
    pub in_maintenance: bool,
    /// The selected VMs running on it, by name; empty when no VM was asked for.
    pub vms: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedHost {
    pub name: String,
    pub datacenter: String,
    pub cluster: Option<String>,
    /// The cluster's inventory path (see [`Host::cluster_path`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_path: Option<String>,
    pub connection_state: ConnectionState,
    pub in_maintenance: bool,
    pub reason: SkipReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SkipReason {
    Maintenance,
    Disconnected,
    NotResponding,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SkipReason::Maintenance => "in maintenance mode",
            SkipReason::Disconnected => "disconnected",
            SkipReason::NotResponding => "not responding",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelectedVm {
    pub name: String,
    /// The name of the host it is registered on.
    pub host: Option<String>,
    pub power_state: PowerState,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// `name` matches clusters at each of `paths` (DATACENTER/NAME, else the inventory
    /// path): the remedy names one of them.
    #[error("{}", ambiguous_cluster(name, paths, &Vocabulary::NEUTRAL))]
    AmbiguousCluster { name: String, paths: Vec<String> },
    #[error("no cluster `{cluster}` with hosts in this vCenter (a cluster is NAME, DATACENTER/NAME or its inventory path); {}", known_list(known))]
    NoSuchCluster { cluster: String, known: Vec<String> },
    #[error(
        "no VM matches `{pattern}` (names are case-sensitive; `*` and `?` are the only wildcards){}",
        near_list(near)
    )]
    NoVmMatched {
        pattern: String,
        /// VM names the user may have meant, at most [`NEAR_SHOWN`].
        near: Vec<String>,
    },
}

impl SelectError {
    /// The message with its remedy in the front end's `words`: an ambiguous cluster
    /// ends with the setting that names the first of its places.
    pub fn worded(&self, words: &Vocabulary) -> String {
        match self {
            SelectError::AmbiguousCluster { name, paths } => ambiguous_cluster(name, paths, words),
            other => other.to_string(),
        }
    }
}

fn ambiguous_cluster(name: &str, paths: &[String], words: &Vocabulary) -> String {
    format!(
        "cluster `{name}` is in more than one place ({}): write DATACENTER/NAME or the inventory path, e.g. {}",
        paths.join(", "),
        (words.cluster)(paths.first().map(String::as_str).unwrap_or_default())
    )
}

const NEAR_SHOWN: usize = 5;

fn near_list(near: &[String]) -> String {
    match near.is_empty() {
        true => String::new(),
        false => format!("; did you mean: {}?", near.join(", ")),
    }
}

/// The VM names `pattern` nearly matches: the same glob with case ignored, or for an
/// exact name, the names fewest characters off (typed `hpc-node7` for `hpc-node07`).
fn near_names<'a>(pattern: &VmPattern, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let folded = VmPattern(pattern.0.to_lowercase());
    let typed: Vec<char> = pattern.0.chars().collect();
    let wildcard = typed.iter().any(|&c| c == '*' || c == '?');
    let budget = (typed.len() / 4).clamp(1, 3);
    let mut near: Vec<(usize, &str)> = names
        .filter_map(|name| {
            if folded.matches(&name.to_lowercase()) {
                return Some((0, name));
            }
            if wildcard {
                return None;
            }
            let d = edit_distance(&typed, &name.chars().collect::<Vec<_>>(), budget)?;
            Some((d, name))
        })
        .collect();
    near.sort();
    near.dedup();
    // Only the closest: `hpc-node1` means hpc-node01, not every name two edits away.
    let closest = near.first().map_or(0, |&(d, _)| d);
    near.into_iter()
        .take_while(|&(d, _)| d == closest)
        .take(NEAR_SHOWN)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// Levenshtein distance between `a` and `b` when it is at most `max`, else `None`.
fn edit_distance(a: &[char], b: &[char], max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        if cur.iter().min().is_some_and(|&m| m > max) {
            return None;
        }
        prev = cur;
    }
    prev.last().copied().filter(|&d| d <= max)
}

const KNOWN_SHOWN: usize = 10;

fn known_list(known: &[String]) -> String {
    match known.len() {
        0 => "it has no clusters".to_string(),
        n if n <= KNOWN_SHOWN => format!("its clusters: {}", known.join(", ")),
        n => format!(
            "its clusters: {}, and {} more",
            known[..KNOWN_SHOWN].join(", "),
            n - KNOWN_SHOWN
        ),
    }
}

/// `DATACENTER/CLUSTER`, as the cluster is named to the user.
fn cluster_path(h: &Host) -> Option<String> {
    h.cluster.as_ref().map(|c| format!("{}/{c}", h.datacenter))
}

/// What tells one cluster from every other: its inventory path, or when vCenter's answer
/// did not give one, `DATACENTER/CLUSTER`.
fn cluster_identity(h: &Host) -> Option<String> {
    h.cluster_path.clone().or_else(|| cluster_path(h))
}

/// Applies `sel` to `inv`: see the module documentation and [`Selection`].
pub fn select(inv: &Inventory, sel: &Selection) -> Result<Selected, SelectError> {
    let hosts_by_id: BTreeMap<&str, &Host> = inv.hosts.iter().map(|h| (h.id.as_str(), h)).collect();
    let in_scope = cluster_scope(inv, &sel.clusters)?;
    let host_in_scope = |h: &Host| match &in_scope {
        None => true,
        Some(clusters) => cluster_identity(h).is_some_and(|c| clusters.contains(&c)),
    };

    // VM selection: every pattern must match some VM of the inventory.
    let mut matched: BTreeSet<usize> = BTreeSet::new();
    for pattern in &sel.vms {
        let mut any = false;
        for (i, vm) in inv.vms.iter().enumerate() {
            if pattern.matches(&vm.name) {
                any = true;
                matched.insert(i);
            }
        }
        if !any {
            return Err(SelectError::NoVmMatched {
                pattern: pattern.as_str().to_string(),
                near: near_names(pattern, inv.vms.iter().map(|v| v.name.as_str())),
            });
        }
    }
    let mut vms = Vec::new();
    let mut vms_not_running = Vec::new();
    let mut vm_hosts: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for vm in matched.iter().filter_map(|&i| inv.vms.get(i)) {
        let host = vm.host.as_deref().and_then(|id| hosts_by_id.get(id).copied());
        if in_scope.is_some() && !host.is_some_and(host_in_scope) {
            continue;
        }
        let entry = SelectedVm {
            name: vm.name.clone(),
            host: host.map(|h| h.name.clone()),
            power_state: vm.power_state.clone(),
        };
        match (&vm.power_state, host) {
            (PowerState::PoweredOn, Some(h)) => {
                vm_hosts.entry(h.id.as_str()).or_default().push(vm.name.clone());
                vms.push(entry);
            }
            (PowerState::PoweredOn, None) => vms.push(entry),
            _ => vms_not_running.push(entry),
        }
    }

    let mut hosts = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = BTreeSet::new();
    for h in &inv.hosts {
        let chosen = if sel.vms.is_empty() {
            host_in_scope(h)
        } else {
            vm_hosts.contains_key(h.id.as_str())
        };
        if !chosen || !seen.insert(h.id.as_str()) {
            continue;
        }
        if let Some(reason) = skip_reason(h, sel) {
            skipped.push(SkippedHost {
                name: h.name.clone(),
                datacenter: h.datacenter.clone(),
                cluster: h.cluster.clone(),
                cluster_path: h.cluster_path.clone(),
                connection_state: h.connection_state.clone(),
                in_maintenance: h.in_maintenance,
                reason,
            });
            continue;
        }
        let mut on_it = vm_hosts.get(h.id.as_str()).cloned().unwrap_or_default();
        on_it.sort();
        on_it.dedup();
        hosts.push(SelectedHost {
            name: h.name.clone(),
            datacenter: h.datacenter.clone(),
            cluster: h.cluster.clone(),
            cluster_path: h.cluster_path.clone(),
            connection_state: h.connection_state.clone(),
            in_maintenance: h.in_maintenance,
            vms: on_it,
        });
    }
    hosts.sort_by(|a, b| (&a.name, &a.datacenter).cmp(&(&b.name, &b.datacenter)));
    skipped.sort_by(|a, b| (&a.name, &a.datacenter).cmp(&(&b.name, &b.datacenter)));
    let by_name = |a: &SelectedVm, b: &SelectedVm| (&a.name, &a.host).cmp(&(&b.name, &b.host));
    vms.sort_by(by_name);
    vms_not_running.sort_by(by_name);
    Ok(Selected {
        hosts,
        skipped,
        vms,
        vms_not_running,
    })
}

/// The clusters (by [`cluster_identity`]) the selection restricts to; `None`: no restriction.
fn cluster_scope(inv: &Inventory, clusters: &[ClusterRef]) -> Result<Option<BTreeSet<String>>, SelectError> {
    if clusters.is_empty() {
        return Ok(None);
    }
    let mut scope = BTreeSet::new();
    for want in clusters {
        // identity -> how the user would tell it from the others
        let mut found: BTreeMap<String, &Host> = BTreeMap::new();
        for h in inv.hosts.iter().filter(|h| want.names(h)) {
            if let Some(id) = cluster_identity(h) {
                found.entry(id).or_insert(h);
            }
        }
        match found.len() {
            0 => {
                let known: BTreeSet<String> = inv.hosts.iter().filter_map(cluster_path).collect();
                return Err(SelectError::NoSuchCluster {
                    cluster: want.to_string(),
                    known: known.into_iter().collect(),
                });
            }
            1 => scope.extend(found.into_keys()),
            _ => {
                // Each as DATACENTER/NAME where that tells it apart, else by its whole path.
                let paths = found
                    .iter()
                    .map(|(id, h)| match cluster_path(h) {
                        Some(short)
                            if found
                                .values()
                                .filter(|o| cluster_path(o).as_ref() == Some(&short))
                                .count()
                                == 1 =>
                        {
                            short
                        }
                        _ => id.clone(),
                    })
                    .collect();
                return Err(SelectError::AmbiguousCluster {
                    name: want.to_string(),
                    paths,
                });
            }
        }
    }
    Ok(Some(scope))
}

fn skip_reason(h: &Host, sel: &Selection) -> Option<SkipReason> {
    let state = match h.connection_state {
        ConnectionState::Disconnected => Some(SkipReason::Disconnected),
        ConnectionState::NotResponding => Some(SkipReason::NotResponding),
        ConnectionState::Connected | ConnectionState::Other(_) => None,
    };
    if let Some(reason) = state.filter(|_| !sel.include_disconnected) {
        return Some(reason);
    }
    (h.in_maintenance && !sel.include_maintenance).then_some(SkipReason::Maintenance)
}

#[cfg(test)]
#[path = "select_tests.rs"]
mod tests;
