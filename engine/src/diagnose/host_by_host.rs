//! A diagnosis made host by host, each host judged the moment its capture is whole: a
//! front end that reads a fleet in pages (vCenter's property collector) keeps each host's
//! judgement, not its answers, so what it holds grows with the report, not with the
//! answers read.
use super::{fleet_diagnosis_with, probe, scope, Diagnosis, HostDiagnosis, KnownHost, Selection};
use crate::capture::HostCapture;
use std::collections::BTreeSet;

/// The hosts judged so far, and what a VM-first run's scope found of its VMs.
#[derive(Debug, Default)]
pub struct HostByHost {
    selection: Selection,
    hosts: Vec<HostDiagnosis>,
    /// The chosen VMs found running on a host judged.
    found: BTreeSet<String>,
    /// The hosts whose VM list could not be read.
    unread: Vec<String>,
}

impl HostByHost {
    /// Judges the checks across hosts `selection` keeps, and only its VMs when it names
    /// some, once every host is in.
    pub fn new(selection: Selection) -> HostByHost {
        HostByHost {
            selection,
            ..HostByHost::default()
        }
    }

    /// Judges one host; its capture is no longer needed afterwards.
    pub fn add(&mut self, capture: &HostCapture) {
        let known = self.selection.diagnose_host(capture);
        self.add_known(known);
    }

    /// Takes a host judged already, by [`Selection::diagnose_host`] with the same
    /// selection.
    pub(super) fn add_known(&mut self, known: KnownHost) {
        match known.running {
            Some(names) => self.found.extend(names),
            None => self.unread.push(known.diagnosis.host.clone()),
        }
        self.hosts.push(known.diagnosis);
    }

    pub(super) fn hosts(&self) -> &[HostDiagnosis] {
        &self.hosts
    }

    /// Puts the hosts in the order of `names` (the order the run was given its hosts in,
    /// which reports keep), those not named after them in the order they came.
    pub fn order_by(&mut self, names: &[String]) {
        let place: std::collections::BTreeMap<&str, usize> =
            names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
        self.hosts
            .sort_by_key(|h| place.get(h.host.as_str()).copied().unwrap_or(usize::MAX));
    }

    /// The diagnosis of every host added: the checks across hosts and the transport
    /// between them judged now.
    pub fn finish(self) -> Diagnosis {
        self.finish_with(Vec::new())
    }

    /// [`HostByHost::finish`] with the path probe's results, when it ran.
    pub(super) fn finish_with(self, probes: Vec<probe::Probe>) -> Diagnosis {
        let HostByHost {
            selection,
            hosts,
            found,
            unread,
        } = self;
        let mut diagnosis = fleet_diagnosis_with(hosts, probes, &selection);
        diagnosis.vm_scope = selection
            .vms
            .as_ref()
            .map(|names| scope::vm_scope(names, &selection.vms_left_out, &found, unread));
        diagnosis
    }
}
