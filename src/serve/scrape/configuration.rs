//! Probes of the exporter's `no_ssh` vCenter groups: the configuration its follower last
//! read from vCenter, judged at once; no collection, no SSH connection.
use super::{render, Exporter, Outcome, Refused};
use crate::serve::config::Config;
use pvrdma_engine::capture::HostCapture;
use pvrdma_engine::report::prometheus::Scope;
use std::time::SystemTime;
use tokio::time::Instant;

impl Exporter {
    /// A probe of a `no_ssh` vCenter group (or of a host only such groups have): the
    /// configuration last read from vCenter, judged now; no SSH connection.
    pub(super) fn judge_configuration(
        &self,
        config: &Config,
        target: &str,
        module: Option<&str>,
        found: Result<Vec<HostCapture>, String>,
        start: Instant,
    ) -> Result<String, Refused> {
        let captures = found.map_err(|why| {
            self.vcenter.unavailable.inc();
            Refused(why)
        })?;
        let (_, module) = config.module_for(target, module).map_err(|e| {
            self.metrics.probes_rejected.inc();
            Refused(e)
        })?;
        self.metrics.probes.inc();
        let scope = if config.vcenter.groups.contains_key(target) {
            Scope::Fleet
        } else {
            Scope::SingleTarget
        };
        let outcome = Outcome {
            diagnosis: pvrdma_engine::diagnose::diagnose_selected(&captures, &module.fleet_checks),
            up: captures.iter().all(|c| c.error.is_none()),
            finished: self
                .vcenter
                .configuration_read_at(&captures)
                .unwrap_or_else(SystemTime::now),
        };
        if !outcome.up {
            self.metrics.probe_failures.inc();
        }
        Ok(render(&outcome, scope, start.elapsed()))
    }
}
