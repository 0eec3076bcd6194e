//! `watch --vcenter`: the inventory read again every round over one session, so the
//! watch follows what DRS and the admins do between rounds: a chosen VM moved to another
//! host is diagnosed there (and said so), a host that left the cluster or went into
//! maintenance is no longer visited (and said why), a new one is.
use super::VcenterSetup;
use pvrdma_engine::capture::HostCapture;
use pvrdma_vsphere::{Client, Selected};
use std::collections::{BTreeMap, BTreeSet};

/// What changed in the inventory between two rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Move {
    /// A chosen VM runs on another host now.
    Vm { vm: String, from: String, to: String },
    /// A host joined the selection.
    HostAdded { host: String },
    /// A host left it: skipped now (maintenance, disconnected), or gone from the clusters.
    HostLeft { host: String, why: String },
}

impl Move {
    /// The watch's line for it (after the timestamp).
    pub(crate) fn line(&self) -> String {
        match self {
            Move::Vm { vm, from, to } => format!("{vm} moved from {from} to {to} (vCenter); now diagnosed on {to}"),
            Move::HostAdded { host } => format!("{host} joined the hosts vCenter selects; diagnosed from now on"),
            Move::HostLeft { host, why } => {
                format!("{host} left the hosts vCenter selects ({why}); no longer diagnosed")
            }
        }
    }

    /// Its JSON Lines event: name and fields.
    pub(crate) fn event(&self) -> (&'static str, serde_json::Value) {
        match self {
            Move::Vm { vm, from, to } => ("vm-moved", serde_json::json!({"vm": vm, "from": from, "to": to})),
            Move::HostAdded { host } => ("host-added", serde_json::json!({"host": host})),
            Move::HostLeft { host, why } => ("host-left", serde_json::json!({"host": host, "reason": why})),
        }
    }
}

/// Where the chosen hosts and VMs were at the last read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Placement {
    hosts: BTreeSet<String>,
    /// VM → the host it runs on.
    vms: BTreeMap<String, String>,
}

impl Placement {
    pub(crate) fn of(selected: &Selected) -> Placement {
        Placement {
            hosts: selected.hosts.iter().map(|h| h.name.clone()).collect(),
            vms: selected
                .vms
                .iter()
                .filter_map(|v| Some((v.name.clone(), v.host.clone()?)))
                .collect(),
        }
    }

    /// What changed from `self` to `now` (`skipped`: why a host is left out now).
    pub(crate) fn moves(&self, now: &Placement, skipped: &BTreeMap<String, String>) -> Vec<Move> {
        let mut moves: Vec<Move> = now
            .vms
            .iter()
            .filter_map(|(vm, to)| {
                let from = self.vms.get(vm)?;
                (from != to).then(|| Move::Vm {
                    vm: vm.clone(),
                    from: from.clone(),
                    to: to.clone(),
                })
            })
            .collect();
        moves.extend(self.hosts.difference(&now.hosts).map(|host| {
            Move::HostLeft {
                host: host.clone(),
                why: skipped
                    .get(host)
                    .cloned()
                    .unwrap_or_else(|| "no longer in the selection".to_string()),
            }
        }));
        moves.extend(
            now.hosts
                .difference(&self.hosts)
                .map(|host| Move::HostAdded { host: host.clone() }),
        );
        moves
    }
}

/// One vCenter session for the whole watch, renewed by the client when it expires.
pub(crate) struct Follower {
    setup: VcenterSetup,
    client: Client,
    last: Option<Placement>,
    /// The managed object id of each host the last reading selected.
    ids: BTreeMap<String, String>,
}

/// A round's reading: the hosts to visit, the VMs chosen, and what moved.
pub(crate) struct Reading {
    pub(crate) hosts: Vec<String>,
    /// The managed object ids of `hosts`, in the same order.
    host_ids: Vec<String>,
    pub(crate) vms: Option<Vec<String>>,
    pub(crate) moves: Vec<Move>,
    pub(crate) skipped: Vec<String>,
}

impl Follower {
    /// Reads the password and prepares the client (no connection yet).
    pub(crate) fn new(setup: VcenterSetup) -> anyhow::Result<Follower> {
        let client = Client::new(setup.config()?).map_err(super::VsphereError)?;
        Ok(Follower {
            setup,
            client,
            last: None,
            ids: BTreeMap::new(),
        })
    }

    /// Reads the inventory and selects from it. An error leaves the last placement as it
    /// was, so the caller can go on with the hosts it had.
    pub(crate) async fn read(&mut self) -> anyhow::Result<Reading> {
        let inventory = self.client.inventory().await.map_err(|e| self.setup.explain(e))?;
        let found = super::Discovery::select(&self.setup, &inventory)?;
        let selected = &found.selected;
        let now = Placement::of(selected);
        let skipped_why: BTreeMap<String, String> = selected
            .skipped
            .iter()
            .map(|h| (h.name.clone(), h.reason.to_string()))
            .collect();
        let moves = self
            .last
            .as_ref()
            .map(|l| l.moves(&now, &skipped_why))
            .unwrap_or_default();
        let reading = Reading {
            hosts: selected.hosts.iter().map(|h| h.name.clone()).collect(),
            host_ids: inventory.host_ids(selected.hosts.iter().map(|h| h.name.as_str())),
            vms: self.setup.vm_first().then(|| super::scope_vms(selected)),
            moves,
            skipped: found.lines(),
        };
        self.last = Some(now);
        // By name from the inventory itself: `host_ids` is in inventory order, not in the
        // order of `hosts`, so the two lists are not paired.
        let chosen: std::collections::BTreeSet<&str> = reading.hosts.iter().map(String::as_str).collect();
        self.ids = inventory
            .hosts
            .iter()
            .filter(|h| chosen.contains(h.name.as_str()))
            .map(|h| (h.name.clone(), h.id.clone()))
            .collect();
        Ok(reading)
    }

    /// Whether the hosts are judged from the vSphere API alone (`--no-ssh`).
    pub(crate) fn no_ssh(&self) -> bool {
        self.setup.no_ssh
    }

    /// `--no-ssh`: the configuration of the hosts `reading` selected, read in the kept
    /// session, one capture per host.
    pub(crate) async fn configuration(&mut self, reading: &Reading) -> anyhow::Result<Vec<HostCapture>> {
        let clock = std::time::Instant::now();
        let configs = self
            .client
            .host_configs(&reading.host_ids)
            .await
            .map_err(super::VsphereError)?;
        let elapsed = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
        tracing::info!(
            "read the configuration of {} host(s) from vCenter {} in {elapsed} ms",
            reading.hosts.len(),
            self.setup.endpoint.label()
        );
        Ok(super::api::captures(&reading.hosts, configs, elapsed))
    }

    /// Hosts whose SSH refused this round are judged from their configuration instead,
    /// read in the kept session, as a one-shot run judges them (see
    /// [`super::complete_refused`]): each keeps its SSH error.
    pub(crate) async fn complete_refused(&mut self, captures: &mut [HostCapture]) {
        let refused = super::api::refused(captures);
        if refused.is_empty() {
            return;
        }
        let clock = std::time::Instant::now();
        let ids: Vec<String> = refused.iter().filter_map(|h| self.ids.get(h).cloned()).collect();
        let read = self.client.host_configs(&ids).await.map_err(|e| self.setup.explain(e));
        if read.is_ok() {
            tracing::info!(
                "read the configuration of {} from vCenter {}, SSH having refused them, in {} ms",
                pvrdma_nodeset::fold(&refused),
                self.setup.endpoint.label(),
                clock.elapsed().as_millis()
            );
        }
        super::api::add_configuration(captures, &refused, read, clock);
    }

    /// Logs the session out (the watch is ending).
    pub(crate) async fn close(&mut self) {
        if let Err(e) = self.client.logout().await {
            eprintln!(
                "pvrdma-doctor: could not log out of vCenter {}: {}",
                self.setup.endpoint.label(),
                super::VsphereError(e)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placement(hosts: &[&str], vms: &[(&str, &str)]) -> Placement {
        Placement {
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            vms: vms.iter().map(|(v, h)| (v.to_string(), h.to_string())).collect(),
        }
    }

    #[test]
    fn a_moved_vm_and_hosts_that_came_and_went_are_each_one_move() {
        let before = placement(&["esx01", "esx02"], &[("hpc-node07", "esx01"), ("hpc-node08", "esx02")]);
        let after = placement(&["esx02", "esx03"], &[("hpc-node07", "esx03"), ("hpc-node08", "esx02")]);
        let skipped = BTreeMap::from([("esx01".to_string(), "in maintenance mode".to_string())]);
        let moves = before.moves(&after, &skipped);
        assert_eq!(
            moves,
            [
                Move::Vm {
                    vm: "hpc-node07".into(),
                    from: "esx01".into(),
                    to: "esx03".into()
                },
                Move::HostLeft {
                    host: "esx01".into(),
                    why: "in maintenance mode".into()
                },
                Move::HostAdded { host: "esx03".into() },
            ]
        );
        assert_eq!(
            moves[0].line(),
            "hpc-node07 moved from esx01 to esx03 (vCenter); now diagnosed on esx03"
        );
        assert!(after.moves(&after, &BTreeMap::new()).is_empty());
    }
}
