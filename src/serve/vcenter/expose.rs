//! What the exporter shows of its vCenter groups: `/sd`, Prometheus' HTTP service
//! discovery ("HTTP SD", `http_sd_config` in the Prometheus configuration documentation),
//! and the `pvrdma_doctor_vcenter_*` series of `/metrics`.
//!
//! `/sd` answers a JSON list of target groups, `{"targets": [...], "labels": {...}}`: one
//! per vCenter group, datacenter and cluster, with the labels
//!
//! - `__meta_vcenter_name`: the `vcenters:` entry (`lab`);
//! - `__meta_vcenter_datacenter`, `__meta_vcenter_cluster` (empty for a standalone host);
//! - `__meta_vcenter_cluster_path`: the cluster's inventory path as `govc find` prints
//!   it (`/Lab East/host/Row 1/HPC`), for sites whose cluster names repeat in folders;
//! - `__meta_pvrdma_group`: the group;
//! - `__meta_pvrdma_module`: the group's module, when it names one.
//!
//! `__meta_` labels are dropped after relabeling, so a scrape job keeps what it wants of
//! them (docs/monitoring-prometheus.md has the recipe).
use super::super::config::Config;
use super::Fleet;
use pvrdma_engine::report::exposition::Family;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

impl Fleet {
    /// The `/sd` body for the vCenter group `group`, or every vCenter group; an error
    /// (HTTP 404) for a name that is not one. A group never read yet has no entry.
    pub fn sd(&self, config: &Config, group: Option<&str>) -> Result<String, String> {
        if let Some(g) = group {
            if !config.vcenter.groups.contains_key(g) {
                let known: Vec<&str> = config.vcenter.groups.keys().map(String::as_str).collect();
                return Err(format!(
                    "{g:?} is not a group read from vCenter (those are: {})",
                    match known.is_empty() {
                        true => "none".to_string(),
                        false => known.join(", "),
                    }
                ));
            }
        }
        let groups = self.groups.borrow();
        let mut entries = Vec::new();
        for (name, g) in groups
            .iter()
            .filter(|(n, _)| group.is_none_or(|want| want == n.as_str()))
        {
            let Some(hosts) = &g.hosts else {
                continue;
            };
            let mut places: BTreeMap<(&str, &str, &str), Vec<&str>> = BTreeMap::new();
            for m in hosts {
                let place = (
                    m.datacenter.as_str(),
                    m.cluster.as_deref().unwrap_or(""),
                    m.cluster_path.as_deref().unwrap_or(""),
                );
                places.entry(place).or_default().push(&m.name);
            }
            let module = config.vcenter.groups.get(name).and_then(|c| c.module.as_deref());
            for ((datacenter, cluster, path), targets) in places {
                let mut labels = Map::new();
                labels.insert("__meta_vcenter_name".into(), json!(g.vcenter));
                labels.insert("__meta_vcenter_datacenter".into(), json!(datacenter));
                labels.insert("__meta_vcenter_cluster".into(), json!(cluster));
                labels.insert("__meta_vcenter_cluster_path".into(), json!(path));
                labels.insert("__meta_pvrdma_group".into(), json!(name));
                if let Some(m) = module {
                    labels.insert("__meta_pvrdma_module".into(), json!(m));
                }
                entries.push(json!({"targets": targets, "labels": labels}));
            }
        }
        Ok(Json::Array(entries).to_string())
    }

    /// The `pvrdma_doctor_vcenter_*` families at `now` (nothing without vCenter groups).
    pub fn render(&self, config: &Config, out: &mut String, now: SystemTime) {
        let vcenters = self.vcenters.borrow();
        if vcenters.is_empty() {
            return;
        }
        let mut up = Family::new(
            "pvrdma_doctor_vcenter_up",
            "1 when the last read of this vCenter's inventory succeeded, else 0 (its groups keep the hosts read last).",
        );
        let mut last = Family::new(
            "pvrdma_doctor_vcenter_last_success_timestamp_seconds",
            "Unix time of the last successful read of this vCenter's inventory; 0 before the first.",
        );
        let mut reads = Family::counter(
            "pvrdma_doctor_vcenter_reads_total",
            "Reads of this vCenter's inventory, failed ones included.",
        );
        let mut failures = Family::counter(
            "pvrdma_doctor_vcenter_read_failures_total",
            "Reads of this vCenter's inventory that failed (connection, certificate, login, timeout, fault).",
        );
        for (name, vc) in vcenters.iter() {
            let l = || vec![("vcenter", name.clone())];
            up.add(l(), if vc.up { "1" } else { "0" });
            let at = vc
                .last_success
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0.0, |d| d.as_secs_f64());
            last.add(l(), format!("{at:.3}"));
            reads.add(l(), vc.reads.to_string());
            failures.add(l(), vc.failures.to_string());
        }
        let mut hosts = Family::new(
            "pvrdma_doctor_vcenter_group_hosts",
            "Hosts this vCenter group has now (the last ones read when its vCenter cannot be read); 0 before the first read.",
        );
        let mut current = Family::new(
            "pvrdma_doctor_vcenter_group_current",
            "1 when the last read of its vCenter gave this group's hosts, 0 when they are older or there are none yet.",
        );
        let mut age = Family::new(
            "pvrdma_doctor_vcenter_group_read_age_seconds",
            "Seconds since the read this group's probes answer from: its hosts' configuration (the oldest) for a no_ssh group, else the inventory read that gave its hosts; absent before the first.",
        );
        let mut stale = Family::new(
            "pvrdma_doctor_vcenter_group_stale",
            "1 when the read this group's probes answer from is older than its vCenter's refresh plus timeout (vCenter could not be read since), or when no read has given it its hosts and the first failed or outlasted the timeout; else 0.",
        );
        for (name, g) in self.groups.borrow().iter() {
            let l = || vec![("group", name.clone()), ("vcenter", g.vcenter.clone())];
            hosts.add(l(), g.hosts.as_ref().map_or(0, Vec::len).to_string());
            current.add(l(), if g.current { "1" } else { "0" });
            let fresh = self.freshness(config, name, g, now);
            if let Some(at) = fresh.read_at {
                age.add(l(), format!("{:.3}", super::freshness::age(at, now).as_secs_f64()));
            }
            stale.add(l(), if fresh.stale { "1" } else { "0" });
        }
        let mut unavailable = Family::counter(
            "pvrdma_doctor_vcenter_probes_unavailable_total",
            "Probes of a vCenter group answered HTTP 503 because it had no host to probe (none read yet, or none selected).",
        );
        unavailable.add(Vec::new(), self.unavailable.get().to_string());
        for f in [up, last, reads, failures, hosts, current, age, stale, unavailable] {
            f.write(out);
        }
    }
}
