//! How old what a vCenter group answers from is. A read that fails keeps the hosts (and,
//! for a `no_ssh` group, the configuration) read last, so probes go on answering: over SSH
//! on hosts that may have left the group since, or, without SSH, from a configuration that
//! may have changed since. A read older than its vCenter's `refresh` plus its `timeout`
//! (when the next read should have ended) is stale, and said so: per group in `/metrics`
//! (`pvrdma_doctor_vcenter_group_read_age_seconds`, `pvrdma_doctor_vcenter_group_stale`),
//! and in the answer of a probe judged from the configuration (`pvrdma_vcenter_read_stale`).
//! `pvrdma_up` keeps its meaning: every host of the target was read, here from vCenter.
use super::{Fleet, GroupState};
use crate::serve::config::Config;
use pvrdma_engine::capture::HostCapture;
use std::time::{Duration, SystemTime};

/// How old the read a group answers from is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Freshness {
    /// When it was read; `None` before a read gave the group its hosts (and, for a
    /// `no_ssh` group, their configuration).
    pub(super) read_at: Option<SystemTime>,
    pub(super) stale: bool,
}

impl Fleet {
    /// How old the read vCenter group `name` answers from is at `now`: its hosts'
    /// configuration (the oldest) for a `no_ssh` group, else the inventory read that gave
    /// its hosts. Stale once older than its vCenter's refresh plus timeout; before any
    /// read, once a read of its vCenter failed or `timeout` passed since it was followed.
    pub(super) fn freshness(&self, config: &Config, name: &str, g: &GroupState, now: SystemTime) -> Freshness {
        let no_ssh = config.vcenter.groups.get(name).is_some_and(|c| c.no_ssh);
        let read_at = match (no_ssh, &g.hosts) {
            (true, Some(hosts)) => {
                let configs = self.configs.borrow();
                let each: Option<Vec<SystemTime>> =
                    hosts.iter().map(|m| configs.get(&m.name).map(|c| c.read_at)).collect();
                each.and_then(|at| at.into_iter().min())
                    .or(g.read_at.filter(|_| hosts.is_empty()))
            }
            _ => g.read_at,
        };
        let (refresh, timeout) = self.limits(&g.vcenter);
        let stale = match read_at {
            Some(at) => age(at, now) > refresh + timeout,
            None => g.why.is_some() || age(g.since, now) > timeout,
        };
        Freshness { read_at, stale }
    }

    /// Whether any of the configurations a probe judged (`captures`) is older than the
    /// refresh plus timeout of the vCenter it was read from at `now`.
    pub fn configuration_stale(&self, captures: &[HostCapture], now: SystemTime) -> bool {
        let configs = self.configs.borrow();
        captures.iter().filter_map(|c| configs.get(&c.host)).any(|read| {
            let (refresh, timeout) = self.limits(&read.vcenter);
            age(read.read_at, now) > refresh + timeout
        })
    }

    /// The `refresh:` and `timeout:` of vCenter `vcenter` (zero when it is no longer
    /// followed: what it read is as old as it is).
    fn limits(&self, vcenter: &str) -> (Duration, Duration) {
        self.vcenters
            .borrow()
            .get(vcenter)
            .map_or((Duration::ZERO, Duration::ZERO), |v| {
                (v.source.refresh, v.source.timeout)
            })
    }
}

/// How long before `now` `at` was (zero for a clock that went back).
pub(super) fn age(at: SystemTime, now: SystemTime) -> Duration {
    now.duration_since(at).unwrap_or_default()
}
