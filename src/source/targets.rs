//! What the exporter's probe target means, as a host source: a group of its configuration
//! (node sets, or the hosts a vCenter group has now), diagnosed as one fleet, or one host
//! alone; how those hosts are read (over SSH, or judged from the configuration last read
//! from vCenter for `no_ssh` groups); and which of their VMs are reported (a `vm:` group's
//! chosen VMs, as `--vm` narrows a run, or every VM). The exporter answers the questions a
//! decision needs about its configuration and its vCenter reads ([`Offer`]) and does what
//! the decision says; it decides nothing about how hosts are found.
use super::Via;
use pvrdma_engine::capture::VmChoice;

/// A group's hosts now, or why it has none to probe.
pub(crate) type GroupHosts = Result<Vec<String>, String>;

/// A group the exporter has: of node sets (its members, over SSH, every VM), or of vCenter
/// (the hosts it has now, read as its `no_ssh` says, or why it has none to probe; its
/// chosen VMs when it has `vm:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) hosts: GroupHosts,
    pub(crate) via: Via,
    /// `None`: every VM of its hosts.
    pub(crate) vms: Option<VmChoice>,
}

/// How a vCenter group that has a host reads it, and which of its VMs it chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Having {
    pub(crate) via: Via,
    /// The group's chosen VMs running on that host; `None`: the group chooses no VM, so
    /// every VM of the host is its.
    pub(crate) vms: Option<Vec<String>>,
}

/// What the exporter offers to probe, as it stands now.
pub(crate) trait Offer {
    /// The group `name`; `None` when no group has that name.
    fn group(&self, name: &str) -> Option<Group>;
    /// Each vCenter group that has `host` now (empty: none has it).
    fn vcenter_groups_having(&self, host: &str) -> Vec<Having>;
    /// Whether the configuration lists `host` (`targets:`, a node-set group's members).
    fn listed(&self, host: &str) -> bool;
}

/// What a probe target means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Meaning {
    /// Hosts to probe, read `via`; `fleet`: a group's, diagnosed as one fleet; `vms`: the
    /// VMs reported, as `--vm` narrows a run (`None`: every VM).
    Hosts {
        hosts: Vec<String>,
        via: Via,
        fleet: bool,
        vms: Option<VmChoice>,
    },
    /// A vCenter group with no host to probe now (not read yet, or selecting none): why.
    Unavailable(String),
    /// Not on the allow-list: neither a group nor a host the configuration or a vCenter
    /// group has.
    NotAllowed,
}

/// What a probe of `target` means in what `offer` holds now. A group's name comes first;
/// a host alone is read over SSH unless every group having it reads it without SSH (a
/// host shared by SSH and `no_ssh` groups goes over SSH: SSH sees the transport), and
/// reported for the VMs its `vm:` groups chose when only such groups have it (a host
/// that is also listed, or in a group choosing no VM, is reported whole).
pub(crate) fn meaning(target: &str, offer: &impl Offer) -> Meaning {
    if let Some(group) = offer.group(target) {
        return match group.hosts {
            Ok(hosts) => Meaning::Hosts {
                hosts,
                via: group.via,
                fleet: true,
                vms: group.vms,
            },
            Err(why) => Meaning::Unavailable(why),
        };
    }
    let listed = offer.listed(target);
    let having = offer.vcenter_groups_having(target);
    if !listed && having.is_empty() {
        return Meaning::NotAllowed;
    }
    let via = match having.is_empty() || having.iter().any(|h| h.via == Via::Ssh) {
        true => Via::Ssh,
        false => Via::Api,
    };
    let vms = match listed || having.iter().any(|h| h.vms.is_none()) {
        true => None,
        false => {
            let mut vms: Vec<String> = having.into_iter().flat_map(|h| h.vms.unwrap_or_default()).collect();
            vms.sort();
            vms.dedup();
            Some(VmChoice {
                vms,
                left_out: Vec::new(),
            })
        }
    };
    Meaning::Hosts {
        hosts: vec![target.to_string()],
        via,
        fleet: false,
        vms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Groups by name (`vcenter`: a vCenter group; `vms`: its chosen VMs by host), and the
    /// hosts listed.
    #[derive(Default)]
    struct Offered {
        groups: BTreeMap<&'static str, Offering>,
        listed: Vec<&'static str>,
    }

    struct Offering {
        group: Group,
        vcenter: bool,
        /// Chosen VMs by host, for a `vm:` group.
        placed: Option<Vec<(&'static str, &'static str)>>,
    }

    impl Offer for Offered {
        fn group(&self, name: &str) -> Option<Group> {
            self.groups.get(name).map(|o| o.group.clone())
        }
        fn vcenter_groups_having(&self, host: &str) -> Vec<Having> {
            self.groups
                .values()
                .filter(|o| o.vcenter && o.group.hosts.as_ref().is_ok_and(|h| h.iter().any(|n| n == host)))
                .map(|o| Having {
                    via: o.group.via,
                    vms: o.placed.as_ref().map(|p| {
                        p.iter()
                            .filter(|(_, h)| *h == host)
                            .map(|(vm, _)| vm.to_string())
                            .collect()
                    }),
                })
                .collect()
        }
        fn listed(&self, host: &str) -> bool {
            self.listed.contains(&host)
        }
    }

    fn hosts(names: &[&str]) -> GroupHosts {
        Ok(names.iter().map(|n| n.to_string()).collect())
    }

    fn offering(hosts: GroupHosts, via: Via, vcenter: bool) -> Offering {
        Offering {
            group: Group { hosts, via, vms: None },
            vcenter,
            placed: None,
        }
    }

    fn host(h: &str, via: Via, vms: Option<&[&str]>) -> Meaning {
        Meaning::Hosts {
            hosts: vec![h.to_string()],
            via,
            fleet: false,
            vms: vms.map(|v| VmChoice {
                vms: v.iter().map(|n| n.to_string()).collect(),
                left_out: Vec::new(),
            }),
        }
    }

    #[test]
    fn a_group_a_host_and_the_way_each_is_read() {
        let mut o = Offered {
            listed: vec!["esx01", "static09"],
            ..Offered::default()
        };
        o.groups.insert("rack1", offering(hosts(&["esx01"]), Via::Ssh, false));
        o.groups
            .insert("hpc", offering(hosts(&["esx02", "esx03"]), Via::Ssh, true));
        o.groups
            .insert("quiet", offering(hosts(&["esx03", "esx04"]), Via::Api, true));
        o.groups
            .insert("new", offering(Err("not read yet".into()), Via::Api, true));
        assert_eq!(
            meaning("quiet", &o),
            Meaning::Hosts {
                hosts: vec!["esx03".into(), "esx04".into()],
                via: Via::Api,
                fleet: true,
                vms: None,
            }
        );
        assert_eq!(meaning("new", &o), Meaning::Unavailable("not read yet".into()));
        assert_eq!(meaning("esx01", &o), host("esx01", Via::Ssh, None));
        // Shared by an SSH group and a no_ssh one: over SSH; only no_ssh groups: without.
        assert_eq!(meaning("esx03", &o), host("esx03", Via::Ssh, None));
        assert_eq!(meaning("esx04", &o), host("esx04", Via::Api, None));
        assert_eq!(meaning("esx99", &o), Meaning::NotAllowed);
    }

    /// A `vm:` group reports its chosen VMs, as `--vm` does; so does a host of it probed
    /// alone, unless something else wants the whole host.
    #[test]
    fn a_vm_group_and_its_hosts_report_the_chosen_vms() {
        let chosen = VmChoice {
            vms: vec!["mpi-a".into(), "mpi-b".into()],
            left_out: Vec::new(),
        };
        let mut o = Offered {
            listed: vec!["esx01"],
            ..Offered::default()
        };
        let mut mpi = offering(hosts(&["esx01", "esx02", "esx03"]), Via::Ssh, true);
        mpi.group.vms = Some(chosen.clone());
        mpi.placed = Some(vec![("mpi-a", "esx01"), ("mpi-b", "esx02"), ("mpi-c", "esx03")]);
        let mut solver = offering(hosts(&["esx02"]), Via::Api, true);
        solver.group.vms = Some(VmChoice::default());
        solver.placed = Some(vec![("cfd-1", "esx02")]);
        o.groups.insert("mpi", mpi);
        o.groups.insert("solver", solver);
        o.groups.insert("all", offering(hosts(&["esx03"]), Via::Ssh, true));
        assert_eq!(
            meaning("mpi", &o),
            Meaning::Hosts {
                hosts: vec!["esx01".into(), "esx02".into(), "esx03".into()],
                via: Via::Ssh,
                fleet: true,
                vms: Some(chosen),
            }
        );
        // Listed as a target: the whole host.
        assert_eq!(meaning("esx01", &o), host("esx01", Via::Ssh, None));
        // Two vm: groups have it: the VMs either chose there.
        assert_eq!(meaning("esx02", &o), host("esx02", Via::Ssh, Some(&["cfd-1", "mpi-b"])));
        // Also in a group that chooses no VM: the whole host.
        assert_eq!(meaning("esx03", &o), host("esx03", Via::Ssh, None));
    }
}
