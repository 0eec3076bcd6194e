//! The one follower of vCenter: its inventory read again every round over one session
//! ([`Follower`]), for `watch --vcenter` and for each vCenter the exporter's groups read.
//! So a watch and an exporter follow what DRS and the admins do between rounds: a chosen
//! VM moved to another host is diagnosed there (and said so), a host that left the
//! cluster or went into maintenance is no longer visited (and said why), a new one is.
//!
//! The session is kept between reads (the client logs in again once when vCenter expired
//! it) and logged out when the follower closes: vCenter limits how many are open. Each
//! selection followed (a watch's, an exporter group's) keeps where its hosts and VMs were
//! ([`Followed`]), so every reading says what moved. Errors come back as the vSphere
//! client's: each front end words them in its own options.
use super::Reading;
use crate::vcenter::Discovery;
use pvrdma_engine::capture::HostCapture;
use pvrdma_vsphere::{Client, Inventory, SelectError, Selected, Selection};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};
use tokio::sync::watch;

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

/// One vCenter session kept across rounds, renewed by the client when it expires.
pub(crate) struct Follower {
    client: Client,
    /// Each host of the last inventory read and its managed object id, in inventory order.
    hosts: Vec<(String, String)>,
}

/// One read of the inventory, and when.
pub(crate) struct Snapshot {
    pub(crate) inventory: Inventory,
    pub(crate) read_at: SystemTime,
}

impl Follower {
    /// Prepares the client (reading a CA file): no connection yet. `config` carries the
    /// password, read by the run before.
    pub(crate) fn new(config: pvrdma_vsphere::Config) -> Result<Follower, pvrdma_vsphere::Error> {
        Ok(Follower {
            client: Client::new(config)?,
            hosts: Vec::new(),
        })
    }

    /// How messages name the vCenter.
    pub(crate) fn label(&self) -> String {
        self.client.endpoint().label()
    }

    /// Reads the inventory in the kept session (logging in first when there is none).
    pub(crate) async fn read(&mut self) -> Result<Snapshot, pvrdma_vsphere::Error> {
        let inventory = self.client.inventory().await?;
        self.hosts = inventory.hosts.iter().map(|h| (h.name.clone(), h.id.clone())).collect();
        Ok(Snapshot {
            inventory,
            read_at: SystemTime::now(),
        })
    }

    /// The managed object ids of the named hosts of the last read, in inventory order.
    fn ids(&self, names: &[String]) -> Vec<String> {
        self.hosts
            .iter()
            .filter(|(name, _)| names.contains(name))
            .map(|(_, id)| id.clone())
            .collect()
    }

    /// The configuration of `hosts` (names of the last read), read in the kept session:
    /// one capture per host, in the order given.
    pub(crate) async fn configuration(&mut self, hosts: &[String]) -> Result<Vec<HostCapture>, pvrdma_vsphere::Error> {
        let clock = std::time::Instant::now();
        let configs = self.client.host_configs(&self.ids(hosts)).await?;
        let elapsed = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(crate::vcenter::api_captures(hosts, configs, elapsed))
    }

    /// Hosts whose SSH refused this round are judged from their configuration instead,
    /// read in the kept session, as a one-shot run judges them (see
    /// [`crate::vcenter::complete_refused`]): each keeps its SSH error. `word` says a
    /// failed read in the front end's terms.
    pub(crate) async fn complete_refused(
        &mut self,
        captures: &mut [HostCapture],
        word: impl FnOnce(pvrdma_vsphere::Error) -> anyhow::Error,
    ) {
        let refused = crate::vcenter::refused(captures);
        if refused.is_empty() {
            return;
        }
        let clock = std::time::Instant::now();
        let read = self.client.host_configs(&self.ids(&refused)).await.map_err(word);
        if read.is_ok() {
            tracing::info!(
                "read the configuration of {} from vCenter {}, SSH having refused them, in {} ms",
                pvrdma_nodeset::fold(&refused),
                self.label(),
                clock.elapsed().as_millis()
            );
        }
        crate::vcenter::add_configuration(captures, &refused, read, clock);
    }

    /// A call was cut short (the front end stopped waiting): its connection is dropped,
    /// the session kept for the logout.
    pub(crate) fn cut(&mut self) {
        self.client.reset_connection();
    }

    /// Logs the session out; `None` when none was open.
    pub(crate) async fn close(&mut self) -> Option<Result<(), pvrdma_vsphere::Error>> {
        if !self.client.has_session() {
            return None;
        }
        Some(self.client.logout().await)
    }
}

/// One selection followed from reading to reading: a watch's, an exporter group's.
#[derive(Debug)]
pub(crate) struct Followed {
    selection: Selection,
    /// Where its hosts and VMs were at its last reading.
    last: Option<Placement>,
}

impl Followed {
    pub(crate) fn new(selection: Selection) -> Followed {
        Followed { selection, last: None }
    }

    pub(crate) fn selection(&self) -> &Selection {
        &self.selection
    }

    /// What `snapshot` selects, and what moved since the last reading. An error leaves
    /// the last placement as it was, so the caller can go on with the hosts it had.
    pub(crate) fn reading(&mut self, vcenter: &str, snapshot: &Snapshot) -> Result<Reading, SelectError> {
        let found = Discovery::of(&snapshot.inventory, &self.selection)?;
        let now = Placement::of(&found.selected);
        let skipped_why: BTreeMap<String, String> = found
            .selected
            .skipped
            .iter()
            .map(|h| (h.name.clone(), h.reason.to_string()))
            .collect();
        let moves = self.last.as_ref().map(|l| l.moves(&now, &skipped_why));
        self.last = Some(now);
        Ok(Reading {
            vcenter: vcenter.to_string(),
            found,
            read_at: snapshot.read_at,
            moves,
        })
    }
}

/// What gives a stopping follower's call under way time to finish, and its logout: a
/// drain or a reload waits at most about twice this for a vCenter that stopped answering.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(5);

/// What an exporter's follower feeds with each read of its vCenter.
pub(crate) trait Feed {
    /// A read of the inventory, or why it failed (the follower could not even be set up,
    /// or the read failed). Returns the hosts whose configuration to read now, in the
    /// same session.
    fn inventory(&mut self, read: Result<&Snapshot, &pvrdma_vsphere::Error>) -> Vec<String>;
    /// The configuration of `hosts`, or why it could not be read.
    fn configuration(&mut self, hosts: &[String], read: Result<Vec<HostCapture>, pvrdma_vsphere::Error>);
    /// How the session ended once the follower was told to stop.
    fn closed(&mut self, logout: Logout);
}

/// How a stopped follower's session ended.
pub(crate) enum Logout {
    Done,
    Failed(pvrdma_vsphere::Error),
    /// No answer within [`STOP_GRACE`]: vCenter ends the session when it times out.
    NoAnswer,
}

/// An exporter group's rounds: reads vCenter's inventory now and every `refresh`, in
/// `follower`'s session, until `stop` turns true; hands each read to `feed`, then reads
/// the configuration of the hosts it names in the same session; then logs the session
/// out.
pub(crate) async fn follow_every(
    mut follower: Follower,
    refresh: Duration,
    mut stop: watch::Receiver<bool>,
    mut feed: impl Feed,
) {
    loop {
        let read = until_stopped(&mut follower, &mut stop, STOP_GRACE, async |f: &mut Follower| {
            f.read().await
        });
        let Some(read) = read.await else {
            break;
        };
        let hosts = feed.inventory(read.as_ref());
        if read.is_ok() && !hosts.is_empty() {
            let configuration = async |f: &mut Follower| f.configuration(&hosts).await;
            let Some(configs) = until_stopped(&mut follower, &mut stop, Duration::ZERO, configuration).await else {
                break;
            };
            feed.configuration(&hosts, configs);
        }
        tokio::select! {
            () = tokio::time::sleep(refresh) => {}
            () = stopped(&mut stop) => break,
        }
    }
    if let Some(logout) = tokio::time::timeout(STOP_GRACE, follower.close()).await.transpose() {
        feed.closed(match logout {
            Ok(Ok(())) => Logout::Done,
            Ok(Err(e)) => Logout::Failed(e),
            Err(_) => Logout::NoAnswer,
        });
    }
}

/// Runs `call` unless `stop` comes first; `None` then, once `call` had `grace` more to
/// finish: an inventory read cut in the middle of a login could leave a session open, so
/// it gets [`STOP_GRACE`], and the logout ends it.
async fn until_stopped<T>(
    follower: &mut Follower,
    stop: &mut watch::Receiver<bool>,
    grace: Duration,
    call: impl AsyncFnOnce(&mut Follower) -> T,
) -> Option<T> {
    let mut cut = false;
    let done = {
        let running = call(follower);
        tokio::pin!(running);
        tokio::select! {
            r = &mut running => Some(r),
            () = stopped(stop) => {
                cut = tokio::time::timeout(grace, &mut running).await.is_err();
                None
            }
        }
    };
    if cut {
        follower.cut();
    }
    done
}

/// Resolves when the follower is told to stop (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
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
