//! Groups with `no_ssh: true`: their hosts' configuration is read from vCenter after each
//! inventory read, in the same session (one request for all of them, then one per page:
//! [`crate::source::follow::follow_every`]), and a probe judges the configuration last
//! read, without any SSH connection. A read that fails keeps the last configuration, as a
//! failed inventory read keeps the hosts.
use super::Fleet;
use crate::serve::config::Config;
use pvrdma_engine::capture::HostCapture;
use std::time::SystemTime;

/// One host's configuration as last read, and when.
#[derive(Debug, Clone)]
pub(super) struct ReadConfiguration {
    capture: HostCapture,
    pub(super) read_at: SystemTime,
    /// The `vcenters:` key it was read from: its refresh and timeout say when it is stale.
    pub(super) vcenter: String,
}

impl Fleet {
    /// The hosts whose configuration vCenter `vcenter` is to read: those of its groups
    /// with `no_ssh: true`, each once.
    pub fn api_hosts(&self, config: &Config, vcenter: &str) -> Vec<String> {
        let groups = self.groups.borrow();
        let mut names: Vec<String> = config
            .vcenter
            .groups
            .iter()
            .filter(|(_, g)| g.no_ssh && g.vcenter == vcenter)
            .filter_map(|(name, _)| groups.get(name)?.hosts.as_ref())
            .flatten()
            .map(|m| m.name.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Keeps a read of hosts' configuration from vCenter `vcenter` (by a follower of this
    /// generation).
    pub fn store_configuration(&self, generation: u64, vcenter: &str, captures: Vec<HostCapture>, now: SystemTime) {
        if generation != self.generation.get() {
            return;
        }
        let mut configs = self.configs.borrow_mut();
        for capture in captures {
            let read = ReadConfiguration {
                capture,
                read_at: now,
                vcenter: vcenter.to_string(),
            };
            configs.insert(read.capture.host.clone(), read);
        }
    }

    /// The configuration last read of each of `hosts` (a probe judged without SSH); an
    /// error when one of them has not been read yet (the probe answers 503).
    pub fn configuration(&self, hosts: &[String]) -> Result<Vec<HostCapture>, String> {
        let configs = self.configs.borrow();
        let missing: Vec<&str> = hosts
            .iter()
            .filter(|h| !configs.contains_key(*h))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "the configuration of {} has not been read from vCenter yet (it is read with the inventory, every refresh); see the exporter's log and pvrdma_doctor_vcenter_up",
                pvrdma_nodeset::fold(&missing)
            ));
        }
        Ok(hosts
            .iter()
            .filter_map(|h| configs.get(h).map(|c| c.capture.clone()))
            .collect())
    }

    /// When the configuration of `hosts` was read, the oldest first.
    pub fn configuration_read_at(&self, hosts: &[HostCapture]) -> Option<SystemTime> {
        let configs = self.configs.borrow();
        hosts
            .iter()
            .filter_map(|c| configs.get(&c.host).map(|r| r.read_at))
            .min()
    }
}
