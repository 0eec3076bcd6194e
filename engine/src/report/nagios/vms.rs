//! A VM-first run's chosen VMs that were not diagnosed: each makes the check UNKNOWN, as
//! a host nobody could read does, since its adapters may well be falling back.
use super::{Culprit, Part, Problem, State};
use crate::diagnose::Diagnosis;

/// `hpc-node07: VM not diagnosed`, and one long-output line per VM saying why.
pub(super) fn not_diagnosed(d: &Diagnosis, parts: &mut Vec<Part>, problems: &mut Vec<Problem>) {
    let Some(scope) = &d.vm_scope else {
        return;
    };
    if scope.not_diagnosed.is_empty() {
        return;
    }
    for vm in &scope.not_diagnosed {
        let why = scope.why_not_diagnosed(vm).unwrap_or_default();
        problems.push(Problem {
            state: State::Unknown,
            line: format!("VM {vm}: not diagnosed: {why}"),
        });
    }
    let culprits = scope.not_diagnosed.iter().map(|vm| Culprit::vm(vm)).collect();
    parts.push(Part::new(State::Unknown, "VM not diagnosed".to_string(), culprits));
}
