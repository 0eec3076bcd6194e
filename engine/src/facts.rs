//! Pipeline stage: *parse*. Turns one host's raw outputs into typed facts.
//!
//! Every fact is a `Result`: a command that was not collected, that failed, or whose output
//! did not parse stays visible as a [`FactError`] with its reason, so the diagnosis can say
//! `unknown` and why instead of treating absent data as a pass.
//!
//! Only an output that ended cleanly is evidence ([`RawOutput::cut_short`]): one that timed
//! out, was cut at a size cap, lost its connection, was killed or never exited is
//! [`FactError::Incomplete`] before any parser sees it, so no check or verdict can rest on
//! half an answer, whichever check reads it. The batched loops are the one refinement:
//! each section carries its own end marker, so the sections that did end stay evidence
//! and the one that broke off (and any never reached) is unknown.
use crate::capture::{HostCapture, RawOutput};
use crate::catalogue as cat;
use pvrdma_parsers::{self as p, by_id};
use serde::Serialize;

/// Why a fact is not available.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FactError {
    /// The command was not run or produced nothing usable (host down, timeout, Ctrl-C...).
    NotCollected { command: String, reason: String },
    /// The command ran and reported an error.
    CommandFailed { command: String, reason: String },
    /// The release has no such command: esxcli answered that it does not know the
    /// namespace (such as `rdma device protocol list` on ESXi 6.5). Nothing is broken;
    /// the release just cannot tell.
    Unsupported { command: String, reason: String },
    /// The output did not parse: `error` says where and what was expected (told without
    /// the command's id, which `command` names as a user types it).
    Unparseable { command: String, error: p::ParseError },
    /// The output broke off (timeout, size cap, lost connection, ...): `reason` names the
    /// event, e.g. "did not finish within --command-timeout 60s".
    Incomplete { command: String, reason: String },
}

impl FactError {
    pub fn command(&self) -> &str {
        match self {
            FactError::NotCollected { command, .. }
            | FactError::CommandFailed { command, .. }
            | FactError::Unsupported { command, .. }
            | FactError::Unparseable { command, .. }
            | FactError::Incomplete { command, .. } => command,
        }
    }
}

impl std::fmt::Display for FactError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FactError::NotCollected { command, reason } => {
                write!(f, "`{command}` was not collected: {reason}")
            }
            FactError::CommandFailed { command, reason } | FactError::Unsupported { command, reason } => {
                write!(f, "`{command}` failed: {reason}")
            }
            FactError::Unparseable { command, error } => {
                write!(f, "`{command}` printed output that did not parse: {}", error.spot())
            }
            FactError::Incomplete { command, reason } => {
                write!(f, "`{command}` {reason}, so its output is incomplete")
            }
        }
    }
}

type Fact<T> = Result<T, FactError>;

/// A `.vmx` file from a vm-support bundle and what it says.
#[derive(Debug, Clone)]
pub struct VmxFact {
    pub path: String,
    pub config: Result<p::vmx::VmxConfig, p::ParseError>,
}

/// Everything the diagnosis knows about one host.
#[derive(Debug, Clone)]
pub struct HostFacts {
    pub version: Fact<p::SystemVersion>,
    pub rdma_devices: Fact<Vec<p::RdmaDevice>>,
    pub rdma_protocols: Fact<Vec<p::RdmaProtocols>>,
    pub rdma_vmknics: Fact<Vec<p::RdmaVmknic>>,
    pub nics: Fact<Vec<p::Nic>>,
    pub dvs: Fact<Vec<p::DvsSwitch>>,
    pub standard_switches: Fact<Vec<p::StandardSwitch>>,
    pub vmknics: Fact<Vec<p::VmkInterface>>,
    pub ipv4: Fact<Vec<p::Ipv4Interface>>,
    pub pvrdma_vmknic: Fact<p::AdvancedOption>,
    pub firewall: Fact<p::FirewallStatus>,
    pub rulesets: Fact<Vec<p::FirewallRuleset>>,
    pub vms: Fact<Vec<p::VmProcess>>,
    pub vm_ports: Fact<Vec<p::VmPorts>>,
    pub pvrdma_devices: Fact<Vec<p::PvrdmaDeviceId>>,
    pub pvrdma_properties: Fact<Vec<p::PvrdmaPropertiesSection>>,
    /// Why the properties batch stopped before its end (timeout, lost connection), so an
    /// adapter without a section is explained by that rather than by a stopped VM.
    pub pvrdma_properties_cut_short: Option<String>,
    pub nic_pause: Fact<Vec<p::NicPause>>,
    pub nic_dcb: Fact<Vec<p::DcbStatus>>,
    /// Records of record lists that did not parse (each costs only itself): why each, in
    /// [`HostFacts::record_errors`]; which outputs, in [`HostFacts::unparsed`].
    pub broken_records: Vec<p::ParseError>,
    /// The `.vmx` files of the host's VMs: from a vm-support bundle, or on a live host the
    /// PVRDMA lines `vmx_pvrdma_lines` read for each running VM (path = its Config File).
    pub vmx: Vec<VmxFact>,
    /// The live `.vmx` inventory as collected, including sections that could not be read.
    pub vmx_lines: Fact<Vec<p::VmxSection>>,
    /// Why the live `.vmx` inventory is not whole (it broke off, failed, or was not run
    /// although the host was asked for it): the VMs it did not cover are unknown. `None`
    /// when it completed, or when the capture never had one (bundles, older captures).
    pub vmx_inventory_problem: Option<String>,
}

/// Parses every output of one host.
pub fn build(capture: &HostCapture) -> HostFacts {
    let processes = fact(capture, by_id::VM_PROCESS_RECORDS);
    let broken_records = processes.as_ref().map(|l| l.broken.clone()).unwrap_or_default();
    let mut facts = HostFacts {
        broken_records,
        version: fact(capture, by_id::SYSTEM_VERSION),
        rdma_devices: fact(capture, by_id::RDMA_DEVICE_LIST),
        rdma_protocols: fact(capture, by_id::RDMA_PROTOCOL_LIST),
        rdma_vmknics: fact(capture, by_id::RDMA_VMKNIC_LIST),
        nics: fact(capture, by_id::NIC_LIST),
        dvs: fact(capture, by_id::DVS_LIST),
        standard_switches: fact(capture, by_id::STANDARD_SWITCH_LIST),
        vmknics: fact(capture, by_id::IP_INTERFACE_LIST),
        ipv4: fact(capture, by_id::IPV4_GET),
        pvrdma_vmknic: fact(capture, by_id::PVRDMA_VMKNIC_OPTION),
        firewall: fact(capture, by_id::FIREWALL_GET),
        rulesets: fact(capture, by_id::FIREWALL_RULESET_LIST),
        vms: processes.map(|list| list.vms),
        vm_ports: fact(capture, by_id::VM_PORT_LIST),
        pvrdma_devices: fact(capture, by_id::PVRDMA_DEVICES_LS),
        pvrdma_properties: fact(capture, by_id::PVRDMA_PROPERTIES),
        pvrdma_properties_cut_short: capture.outputs.get(cat::PVRDMA_PROPERTIES).and_then(|o| {
            o.cut_short()
                .map(|event| format!("`{}` {event}", label(cat::PVRDMA_PROPERTIES)))
        }),
        nic_pause: fact(capture, by_id::NIC_PAUSE_PARAMS),
        nic_dcb: fact(capture, by_id::NIC_DCB_STATUS),
        vmx: Vec::new(),
        vmx_lines: fact(capture, by_id::VMX_PVRDMA_LINES),
        vmx_inventory_problem: None,
    };
    facts.vm_ports = after_source(facts.vm_ports, &facts.pvrdma_devices, capture, cat::VM_PORT_LIST);
    facts.vmx_lines = after_source(facts.vmx_lines, &facts.vms, capture, cat::VMX_PVRDMA_LINES);
    mark_cut_sections(&mut facts, capture);
    facts.vmx_inventory_problem = vmx_inventory_problem(&facts.vmx_lines, capture);
    facts.vmx = capture
        .vmx_files
        .iter()
        .map(|f| VmxFact {
            path: f.path.clone(),
            config: p::vmx::parse_vmx(&f.content),
        })
        .collect();
    if let Ok(sections) = &facts.vmx_lines {
        facts.vmx.extend(sections.iter().filter_map(|s| {
            Some(VmxFact {
                path: s.config_file.clone(),
                config: Ok(s.config.clone().ok()?),
            })
        }));
    }
    facts
}

impl HostFacts {
    /// Why each record of a record list that did not parse was skipped.
    pub fn record_errors(&self) -> Vec<String> {
        self.broken_records
            .iter()
            .map(|e| {
                format!(
                    "a record of `esxcli vm process list` did not parse and was skipped: {}",
                    e.spot()
                )
            })
            .collect()
    }
    /// Every parse error of this host's outputs, in catalogue order: whole outputs that did
    /// not parse, then records skipped from a record list, then `.vmx` files. Whatever
    /// the host printed that this version cannot read, so the report can say what to send.
    pub fn unparsed(&self) -> Vec<&p::ParseError> {
        // Destructured field by field: a new fact cannot be forgotten here.
        let HostFacts {
            version,
            rdma_devices,
            rdma_protocols,
            rdma_vmknics,
            nics,
            dvs,
            standard_switches,
            vmknics,
            ipv4,
            pvrdma_vmknic,
            firewall,
            rulesets,
            vms,
            vm_ports,
            pvrdma_devices,
            pvrdma_properties,
            pvrdma_properties_cut_short: _,
            nic_pause,
            nic_dcb,
            broken_records,
            vmx,
            vmx_lines,
            vmx_inventory_problem: _,
        } = self;
        fn error<T>(fact: &Fact<T>) -> Option<&p::ParseError> {
            match fact {
                Err(FactError::Unparseable { error, .. }) => Some(error),
                _ => None,
            }
        }
        let facts = [
            error(version),
            error(rdma_devices),
            error(rdma_protocols),
            error(rdma_vmknics),
            error(nics),
            error(dvs),
            error(standard_switches),
            error(vmknics),
            error(ipv4),
            error(pvrdma_vmknic),
            error(firewall),
            error(rulesets),
            error(vms),
            error(vm_ports),
            error(pvrdma_devices),
            error(pvrdma_properties),
            error(nic_pause),
            error(nic_dcb),
            error(vmx_lines),
        ];
        let mut all: Vec<&p::ParseError> = facts.into_iter().flatten().collect();
        all.sort_by_key(|e| cat::CATALOGUE.iter().position(|s| s.id == e.command));
        all.extend(broken_records);
        all.extend(vmx.iter().filter_map(|v| v.config.as_ref().err()));
        all
    }
}

/// Why the live `.vmx` inventory does not cover every running VM it was asked about, if
/// it does not: the output broke off (a VM after the cut has no section at all, so the
/// sections alone cannot tell), it could not be used, or the command was not run.
fn vmx_inventory_problem(lines: &Fact<Vec<p::VmxSection>>, capture: &HostCapture) -> Option<String> {
    let id = cat::VMX_PVRDMA_LINES;
    // A vm-support bundle carries the `.vmx` files themselves: the inventory is not needed.
    if !capture.vmx_files.is_empty() {
        return None;
    }
    let Some(output) = capture.outputs.get(id) else {
        return capture.missing.get(id).map(|f| f.message.clone());
    };
    if let Some(event) = output.cut_short() {
        return Some(format!("`{}` {event}", label(id)));
    }
    // Whatever the capture's source, a recorded failure or cut means the sections that
    // did arrive may not be all of them.
    if let Some(f) = &output.failure {
        return Some(format!("`{}` failed: {}", label(id), f.message));
    }
    if output.truncated || output.timeout_hit {
        return Some(format!("`{}` was cut off before its end", label(id)));
    }
    if let Some(first) = output.unfinished.first() {
        let more = match output.unfinished.len() {
            1 => String::new(),
            n => format!(" ({} more answers are not whole)", n - 1),
        };
        return Some(format!(
            "{} {}{more}",
            cat::batch_item_label(id, &first.key),
            first.reason
        ));
    }
    let sections = match lines {
        Ok(sections) => sections,
        Err(e) => return Some(e.to_string()),
    };
    // Every path the command line asked for must have its section.
    let asked = cat::batch_keys(&output.command)
        .filter(|(batch, _)| *batch == id)
        .map(|(_, paths)| paths)
        .unwrap_or_default();
    let unanswered: Vec<&String> = asked
        .iter()
        .filter(|path| !sections.iter().any(|s| &s.config_file == *path))
        .collect();
    match unanswered.as_slice() {
        [] => None,
        [one] => Some(format!("`{}` printed no section for {one}", label(id))),
        [first, rest @ ..] => Some(format!(
            "`{}` printed no section for {first} and {} more",
            label(id),
            rest.len()
        )),
    }
}

/// How messages name a catalogue command.
fn label(id: &str) -> &str {
    cat::spec(id).map_or(id, |s| s.label())
}

/// A batched loop runs its source command itself (quietly). When that command failed and
/// the loop printed no section, the loop did not run: say so, rather than "no sections".
fn after_source<T, U>(batch: Fact<Vec<T>>, source: &Fact<U>, capture: &HostCapture, id: &str) -> Fact<Vec<T>> {
    let (Ok(sections), Err(source_error)) = (&batch, source) else {
        return batch;
    };
    if !sections.is_empty() || !capture.outputs.contains_key(id) {
        return batch;
    }
    Err(FactError::NotCollected {
        command: label(id).to_string(),
        reason: format!("it loops over the output of a command that failed: {source_error}"),
    })
}

/// Whether a batch's sections must carry end markers to count as whole: on a live run,
/// whose command line prints them. Captures read back (sample directories, bundles, older
/// ones among them) may come from loops without markers, which only ever ended cleanly
/// (a cut output is refused by its outcome anyway); there a section needs a marker only
/// when another one has one.
fn markers_required(capture: &HostCapture, id: &str) -> bool {
    let Some(output) = capture.outputs.get(id) else {
        return false;
    };
    // A batch's answers carry end markers (the client sorts the framed answers into
    // sections and ends each with its marker).
    let printed = cat::spec(id).is_some_and(|s| s.is_batch());
    let trusted_command = capture.source == crate::capture::CaptureSource::Live;
    let none_marked = !output.stdout.lines().any(|l| p::batch_end_marker(l).is_some());
    printed && trusted_command && none_marked
}

/// Names the event that cut a batch in the reason of the section it cut, and treats every
/// section of a batch whose markers are required but absent as cut. A section the live
/// collection found unfinished (hung, killed, cut on the host, damaged) is cut whatever
/// it holds, and says so by its key.
fn mark_cut_sections(facts: &mut HostFacts, capture: &HostCapture) {
    let with_event = |id: &str, why: &str| match capture.outputs.get(id).and_then(RawOutput::cut_short) {
        Some(event) => format!("`{}` {event}: {why}", label(id)),
        None => format!("`{}`: {why}", label(id)),
    };
    let unfinished = |id: &str, key: &str| {
        let u = capture.outputs.get(id)?.unfinished.iter().find(|u| u.key == key)?;
        Some(format!("{} {}", cat::batch_item_label(id, key), u.reason))
    };
    let unmarked = |key: String| {
        format!("its section has no end marker (`<== {key} exit N ==>`): the output was cut off inside it")
    };
    let all = markers_required(capture, cat::PVRDMA_PROPERTIES);
    if let Ok(sections) = &mut facts.pvrdma_properties {
        for s in sections.iter_mut() {
            let key = format!("{}_{}", s.device.world_id, s.device.index);
            let own = unfinished(cat::PVRDMA_PROPERTIES, &key);
            if !(s.cut_off || all || own.is_some()) {
                continue;
            }
            let why = match &s.properties {
                Err(why) if s.cut_off => why.clone(),
                _ => unmarked(key),
            };
            s.cut_off = true;
            s.properties = Err(own.unwrap_or_else(|| with_event(cat::PVRDMA_PROPERTIES, &why)));
        }
    }
    let all = markers_required(capture, cat::VM_PORT_LIST);
    if let Ok(sections) = &mut facts.vm_ports {
        for s in sections.iter_mut() {
            let own = unfinished(cat::VM_PORT_LIST, &s.world_id.to_string());
            if !(s.cut_off || all || own.is_some()) {
                continue;
            }
            let why = match &s.error {
                Some(why) if s.cut_off => why.clone(),
                _ => unmarked(s.world_id.to_string()),
            };
            s.cut_off = true;
            s.ports.clear();
            s.error = Some(own.unwrap_or_else(|| with_event(cat::VM_PORT_LIST, &why)));
        }
    }
    let all = markers_required(capture, cat::VMX_PVRDMA_LINES);
    if let Ok(sections) = &mut facts.vmx_lines {
        for s in sections.iter_mut() {
            let own = unfinished(cat::VMX_PVRDMA_LINES, &s.config_file);
            if !(s.cut_off || all || own.is_some()) {
                continue;
            }
            let why = match &s.config {
                Err(why) if s.cut_off => why.clone(),
                _ => unmarked(s.config_file.clone()),
            };
            s.cut_off = true;
            s.config = Err(own.unwrap_or_else(|| with_event(cat::VMX_PVRDMA_LINES, &why)));
        }
    }
    if let Ok(uplinks) = &mut facts.nic_dcb {
        for d in uplinks.iter_mut() {
            if let Some(own) = unfinished(cat::NIC_DCB_STATUS, &d.nic) {
                d.state = Err(own);
            }
        }
    }
}

fn fact<T>(capture: &HostCapture, parser: by_id::Parser<T>) -> Fact<T> {
    let (id, parse) = (parser.id, parser.parse);
    let spec = cat::spec(id);
    let command = spec.map_or(id, |s| s.label()).to_string();
    let Some(output) = capture.outputs.get(id) else {
        let reason = match (capture.missing.get(id), &capture.error) {
            (Some(failure), _) => failure.message.clone(),
            (None, Some(error)) => error.message.clone(),
            (None, None) => match capture.source {
                crate::capture::CaptureSource::VmSupport => "this vm-support bundle does not contain it".to_string(),
                _ => "no output was captured for it".to_string(),
            },
        };
        return Err(FactError::NotCollected { command, reason });
    };
    let is_batch = spec.is_some_and(|s| s.is_batch());
    // Half an answer is no answer. A batch whose iterations print end markers is the
    // exception: its ended sections stand, its cut one is marked by the parser.
    if let Some(event) = output.cut_short() {
        let marked = output.stdout.lines().any(|l| p::batch_end_marker(l).is_some());
        if !(is_batch && marked) {
            return Err(FactError::Incomplete { command, reason: event });
        }
    }
    // A batch's sections carry their own errors; the loop's exit status only tells that
    // some iteration failed (often the last one), so read the sections whatever it says.
    // What a timeout cut short shows up as adapters without a section.
    let batch_with_output = is_batch && !output.stdout.trim().is_empty();
    if let (false, Some(reason)) = (batch_with_output, command_error(output)) {
        return Err(if output.failure.is_some() && output.stdout.trim().is_empty() {
            FactError::NotCollected { command, reason }
        } else if reason.contains(UNKNOWN_COMMAND) {
            FactError::Unsupported { command, reason }
        } else {
            FactError::CommandFailed { command, reason }
        });
    }
    parse(&output.stdout).map_err(|error| FactError::Unparseable { command, error })
}

/// What esxcli prints for a namespace the release does not have
/// (`Error: Unknown command or namespace rdma device protocol list`); read here once, so
/// the checks see [`FactError::Unsupported`].
const UNKNOWN_COMMAND: &str = "Unknown command or namespace";

/// The error a command reported instead of output, if any. ESXi's esxcli prints
/// `Error: ...` lines and exits non-zero; busybox prints `-sh: esxcli: not found`.
fn command_error(output: &RawOutput) -> Option<String> {
    if let (Some(failure), None) = (&output.failure, output.cut_short()) {
        return Some(failure.message.clone());
    }
    let first_error_line = |text: &str| {
        text.lines()
            .map(str::trim)
            .find(|l| l.starts_with("Error:") || l.ends_with(": not found") || l.contains("VSISH"))
            .map(str::to_string)
    };
    let first_line = |text: &str| text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
    match output.exit_status {
        Some(0) => None,
        // A command sharing a channel with others brings its stderr in its stdout: the
        // first line there says why when no line reads as an error.
        Some(code) => Some(format!(
            "exit status {code}: {}",
            first_error_line(&output.stdout)
                .or_else(|| first_line(&output.stderr))
                .or_else(|| first_line(&output.stdout))
                .unwrap_or_else(|| "no error message".to_string())
        )),
        // OpenSSH always sends an exit status; without one, trust the output unless it
        // reads as an error.
        None => first_error_line(&output.stdout).or_else(|| first_error_line(&output.stderr)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::CaptureSource;

    fn answered(stdout: &str, exit: u32) -> HostCapture {
        let mut capture = HostCapture::new("esx01", CaptureSource::Live);
        let id = cat::RDMA_PROTOCOL_LIST;
        let mut output = RawOutput::new(id, "esxcli rdma device protocol list");
        output.stdout = stdout.to_string();
        output.exit_status = Some(exit);
        capture.outputs.insert(id.to_string(), output);
        capture
    }

    #[test]
    fn a_namespace_the_release_lacks_is_unsupported_and_any_other_error_a_failure() {
        let old = build(&answered(
            "Error: Unknown command or namespace rdma device protocol list\n",
            1,
        ));
        assert!(
            matches!(&old.rdma_protocols, Err(FactError::Unsupported { .. })),
            "{:?}",
            old.rdma_protocols
        );
        let broken = build(&answered("Error: Unable to connect to the hostd service\n", 1));
        assert!(
            matches!(&broken.rdma_protocols, Err(FactError::CommandFailed { .. })),
            "{:?}",
            broken.rdma_protocols
        );
    }

    #[test]
    fn a_failed_command_is_told_by_its_first_line_when_none_reads_as_an_error() {
        let capture = answered("\nConnection to hostd lost\n", 1);
        let output = &capture.outputs[cat::RDMA_PROTOCOL_LIST];
        assert_eq!(
            command_error(output).as_deref(),
            Some("exit status 1: Connection to hostd lost")
        );
    }
}
