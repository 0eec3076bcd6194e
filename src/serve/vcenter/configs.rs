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
    read_at: SystemTime,
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

    /// Keeps a read of hosts' configuration (from a follower of this generation).
    pub fn store_configuration(&self, generation: u64, captures: Vec<HostCapture>, now: SystemTime) {
        if generation != self.generation.get() {
            return;
        }
        let mut configs = self.configs.borrow_mut();
        for capture in captures {
            configs.insert(capture.host.clone(), ReadConfiguration { capture, read_at: now });
        }
    }

    /// The hosts a probe of `target` judges from their configuration when it is a
    /// `no_ssh` group, or a host only such groups have (`None` when it is neither); an
    /// error when one of them has not been read yet (the probe answers 503).
    pub fn configuration_hosts(&self, config: &Config, target: &str) -> Option<Result<Vec<String>, String>> {
        let groups = &config.vcenter.groups;
        let hosts: Vec<String> = match groups.get(target) {
            Some(g) if g.no_ssh => match self.members(target)? {
                Ok(hosts) => hosts,
                Err(why) => return Some(Err(why)),
            },
            Some(_) => return None,
            None => {
                // A host probed alone goes over SSH if any group that has it does.
                let having: Vec<bool> = groups
                    .iter()
                    .filter(|(name, _)| {
                        self.members(name)
                            .and_then(Result::ok)
                            .is_some_and(|m| m.iter().any(|h| h == target))
                    })
                    .map(|(_, g)| g.no_ssh)
                    .collect();
                if having.is_empty() || having.iter().any(|no_ssh| !no_ssh) {
                    return None;
                }
                vec![target.to_string()]
            }
        };
        let configs = self.configs.borrow();
        let missing: Vec<&str> = hosts
            .iter()
            .filter(|h| !configs.contains_key(*h))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Some(Err(format!(
                "the configuration of {} has not been read from vCenter yet (it is read with the inventory, every refresh); see the exporter's log and pvrdma_doctor_vcenter_up",
                pvrdma_nodeset::fold(&missing)
            )));
        }
        Some(Ok(hosts))
    }

    /// What a probe of `target` judges (see [`Fleet::configuration_hosts`]): the
    /// configuration last read of each of its hosts.
    pub fn configuration(&self, config: &Config, target: &str) -> Option<Result<Vec<HostCapture>, String>> {
        let hosts = match self.configuration_hosts(config, target)? {
            Ok(hosts) => hosts,
            Err(why) => return Some(Err(why)),
        };
        let configs = self.configs.borrow();
        Some(Ok(hosts
            .iter()
            .filter_map(|h| configs.get(h).map(|c| c.capture.clone()))
            .collect()))
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
