//! What the exporter's probe target means, as a host source: a group of its configuration
//! (node sets, or the hosts a vCenter group has now), diagnosed as one fleet, or one host
//! alone; and how those hosts are read (over SSH, or judged from the configuration last
//! read from vCenter for `no_ssh` groups). The exporter answers the questions a decision
//! needs about its configuration and its vCenter reads ([`Offer`]) and does what the
//! decision says; it decides nothing about how hosts are found.
use super::Via;

/// A group's hosts now, or why it has none to probe.
pub(crate) type GroupHosts = Result<Vec<String>, String>;

/// What the exporter offers to probe, as it stands now.
pub(crate) trait Offer {
    /// The group `name` (of node sets: its members, over SSH; of vCenter: the hosts it
    /// has now, read as its `no_ssh` says, or why it has none to probe); `None` when no
    /// group has that name.
    fn group(&self, name: &str) -> Option<(GroupHosts, Via)>;
    /// How each vCenter group that has `host` now reads it (empty: none has it).
    fn vcenter_groups_having(&self, host: &str) -> Vec<Via>;
    /// Whether the configuration lists `host` (`targets:`, a node-set group's members).
    fn listed(&self, host: &str) -> bool;
}

/// What a probe target means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Meaning {
    /// Hosts to probe, read `via`; `fleet`: a group's, diagnosed as one fleet.
    Hosts { hosts: Vec<String>, via: Via, fleet: bool },
    /// A vCenter group with no host to probe now (not read yet, or selecting none): why.
    Unavailable(String),
    /// Not on the allow-list: neither a group nor a host the configuration or a vCenter
    /// group has.
    NotAllowed,
}

/// What a probe of `target` means in what `offer` holds now. A group's name comes first;
/// a host alone is read over SSH unless every group having it reads it without SSH (a
/// host shared by SSH and `no_ssh` groups goes over SSH: SSH sees the transport).
pub(crate) fn meaning(target: &str, offer: &impl Offer) -> Meaning {
    if let Some((hosts, via)) = offer.group(target) {
        return match hosts {
            Ok(hosts) => Meaning::Hosts {
                hosts,
                via,
                fleet: true,
            },
            Err(why) => Meaning::Unavailable(why),
        };
    }
    let having = offer.vcenter_groups_having(target);
    if !offer.listed(target) && having.is_empty() {
        return Meaning::NotAllowed;
    }
    let via = match having.is_empty() || having.contains(&Via::Ssh) {
        true => Via::Ssh,
        false => Via::Api,
    };
    Meaning::Hosts {
        hosts: vec![target.to_string()],
        via,
        fleet: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Groups by name (their hosts or why none, and how read; `vcenter`: a vCenter
    /// group), and the hosts listed.
    #[derive(Default)]
    struct Offered {
        groups: BTreeMap<&'static str, (GroupHosts, Via, bool)>,
        listed: Vec<&'static str>,
    }

    impl Offer for Offered {
        fn group(&self, name: &str) -> Option<(GroupHosts, Via)> {
            self.groups.get(name).map(|(h, via, _)| (h.clone(), *via))
        }
        fn vcenter_groups_having(&self, host: &str) -> Vec<Via> {
            self.groups
                .values()
                .filter(|(h, _, vcenter)| *vcenter && h.as_ref().is_ok_and(|h| h.iter().any(|n| n == host)))
                .map(|(_, via, _)| *via)
                .collect()
        }
        fn listed(&self, host: &str) -> bool {
            self.listed.contains(&host)
        }
    }

    fn hosts(names: &[&str]) -> GroupHosts {
        Ok(names.iter().map(|n| n.to_string()).collect())
    }

    #[test]
    fn a_group_a_host_and_the_way_each_is_read() {
        let mut o = Offered {
            listed: vec!["esx01", "static09"],
            ..Offered::default()
        };
        o.groups.insert("rack1", (hosts(&["esx01"]), Via::Ssh, false));
        o.groups.insert("hpc", (hosts(&["esx02", "esx03"]), Via::Ssh, true));
        o.groups.insert("quiet", (hosts(&["esx03", "esx04"]), Via::Api, true));
        o.groups.insert("new", (Err("not read yet".into()), Via::Api, true));
        let host = |h: &str, via| Meaning::Hosts {
            hosts: vec![h.to_string()],
            via,
            fleet: false,
        };
        assert_eq!(
            meaning("quiet", &o),
            Meaning::Hosts {
                hosts: vec!["esx03".into(), "esx04".into()],
                via: Via::Api,
                fleet: true
            }
        );
        assert_eq!(meaning("new", &o), Meaning::Unavailable("not read yet".into()));
        assert_eq!(meaning("esx01", &o), host("esx01", Via::Ssh));
        // Shared by an SSH group and a no_ssh one: over SSH; only no_ssh groups: without.
        assert_eq!(meaning("esx03", &o), host("esx03", Via::Ssh));
        assert_eq!(meaning("esx04", &o), host("esx04", Via::Api));
        assert_eq!(meaning("esx99", &o), Meaning::NotAllowed);
    }
}
