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

mod sections;
mod vsphere;

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

/// Declares [`HostFacts`] from one line per catalogue command, `field: T = ROW` (`ROW`:
/// its row of the parser table, `T`: what that parser returns), `[batch]` before the
/// field of a concurrent batch. Everything the facts do per command comes from that line:
/// the field, its parsing in [`build`], its place in [`HostFacts::unparsed`] and, for a
/// batch, the marking of its cut-off sections (its section type must implement
/// `facts::sections::Section`, or the line does not compile). A catalogue command without a line, or a
/// batch declared without `[batch]`, fails `every_catalogue_command_has_one_fact_line`,
/// which names it. The fields after `HostFacts` are derived ones, filled in by [`build`].
macro_rules! host_facts {
    (
        commands { $($(#[$doc:meta])* $([$batch:ident])? $field:ident: $t:ty = $row:ident,)* }
        $(#[$sdoc:meta])*
        pub struct HostFacts { $($(#[$xdoc:meta])* pub $xfield:ident: $xt:ty,)* }
    ) => {
        $(#[$sdoc])*
        #[derive(Debug, Clone)]
        pub struct HostFacts {
            $($(#[$doc])* pub $field: Fact<$t>,)*
            $($(#[$xdoc])* pub $xfield: $xt,)*
        }

        /// Each command's fact as its parser-table row parses it, the derived fields empty.
        fn parse_all(capture: &HostCapture) -> HostFacts {
            HostFacts {
                $($field: fact(capture, by_id::$row),)*
                $($xfield: Default::default(),)*
            }
        }

        impl HostFacts {
            /// The parse error of each command whose output did not parse.
            fn unparseable_outputs(&self) -> Vec<&p::ParseError> {
                [$(unparseable(&self.$field)),*].into_iter().flatten().collect()
            }
        }

        /// Each fact line's catalogue id and whether it is declared a batch.
        #[cfg(test)]
        const FACT_LINES: &[(&str, bool)] = &[$((by_id::$row.id, host_facts!(@batch $($batch)?))),*];

        /// Marks the cut-off sections of every batch (see [`sections::mark_cut`]).
        fn mark_cut_sections(facts: &mut HostFacts, capture: &HostCapture) {
            $(host_facts!(@mark $($batch)? facts.$field, capture, $row);)*
        }
    };
    (@batch batch) => { true };
    (@batch) => { false };
    (@mark batch $fact:expr, $capture:ident, $row:ident) => {
        sections::mark_cut(&mut $fact, $capture, by_id::$row.id)
    };
    (@mark $fact:expr, $capture:ident, $row:ident) => {};
}

host_facts! {
    commands {
        version: p::SystemVersion = SYSTEM_VERSION,
        rdma_devices: Vec<p::RdmaDevice> = RDMA_DEVICE_LIST,
        rdma_protocols: Vec<p::RdmaProtocols> = RDMA_PROTOCOL_LIST,
        rdma_vmknics: Vec<p::RdmaVmknic> = RDMA_VMKNIC_LIST,
        nics: Vec<p::Nic> = NIC_LIST,
        dvs: Vec<p::DvsSwitch> = DVS_LIST,
        standard_switches: Vec<p::StandardSwitch> = STANDARD_SWITCH_LIST,
        vmknics: Vec<p::VmkInterface> = IP_INTERFACE_LIST,
        ipv4: Vec<p::Ipv4Interface> = IPV4_GET,
        pvrdma_vmknic: p::AdvancedOption = PVRDMA_VMKNIC_OPTION,
        firewall: p::FirewallStatus = FIREWALL_GET,
        rulesets: Vec<p::FirewallRuleset> = FIREWALL_RULESET_LIST,
        /// Read record by record: a record that does not parse costs only itself (why,
        /// in [`HostFacts::record_errors`]).
        vms: p::VmProcessList = VM_PROCESS_RECORDS,
        [batch] vm_ports: Vec<p::VmPorts> = VM_PORT_LIST,
        pvrdma_devices: Vec<p::PvrdmaDeviceId> = PVRDMA_DEVICES_LS,
        [batch] pvrdma_properties: Vec<p::PvrdmaPropertiesSection> = PVRDMA_PROPERTIES,
        nic_pause: Vec<p::NicPause> = NIC_PAUSE_PARAMS,
        [batch] nic_dcb: Vec<p::DcbStatus> = NIC_DCB_STATUS,
        /// The packet, drop and error counters of each RDMA uplink.
        [batch] nic_stats: Vec<p::NicStatsSection> = NIC_STATS,
        /// The live `.vmx` inventory as collected, including sections that could not be read.
        [batch] vmx_lines: Vec<p::VmxSection> = VMX_PVRDMA_LINES,
    }
    /// Everything the diagnosis knows about one host: one fact per catalogue command, then
    /// what [`build`] derives from them.
    pub struct HostFacts {
        /// Why the properties batch stopped before its end (timeout, lost connection), so an
        /// adapter without a section is explained by that rather than by a stopped VM.
        pub pvrdma_properties_cut_short: Option<String>,
        /// The `.vmx` files of the host's VMs: from a vm-support bundle, or on a live host the
        /// PVRDMA lines `vmx_pvrdma_lines` read for each running VM (path = its Config File).
        pub vmx: Vec<VmxFact>,
        /// Why the live `.vmx` inventory is not whole (it broke off, failed, or was not run
        /// although the host was asked for it): the VMs it did not cover are unknown. `None`
        /// when it completed, or when the capture never had one (bundles, older captures).
        pub vmx_inventory_problem: Option<String>,
        /// Read through the vSphere API without the host's own observation: the
        /// configuration checks are judged, the adapters' transport is not seen.
        pub configuration_only: bool,
        /// The running VMs' configuration as the vSphere API gave it, on a
        /// configuration-only host (their `.vmx` settings are also in `vmx`).
        pub api_vms: Vec<p::VmConfigRows>,
    }
}

/// Parses every output of one host.
pub fn build(capture: &HostCapture) -> HostFacts {
    let mut facts = parse_all(capture);
    facts.pvrdma_properties_cut_short = capture.outputs.get(cat::PVRDMA_PROPERTIES).and_then(|o| {
        o.cut_short()
            .map(|event| format!("`{}` {event}", label(cat::PVRDMA_PROPERTIES)))
    });
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
    vsphere::fill(&mut facts, capture);
    facts
}

/// The parse error of a fact whose output did not parse.
fn unparseable<T>(fact: &Fact<T>) -> Option<&p::ParseError> {
    match fact {
        Err(FactError::Unparseable { error, .. }) => Some(error),
        _ => None,
    }
}

impl HostFacts {
    /// The running VMs of `esxcli vm process list` whose records parse (none when it
    /// could not be read).
    pub fn processes(&self) -> &[p::VmProcess] {
        self.vms.as_ref().map_or(&[], |list| &list.vms)
    }

    /// Records of record lists that did not parse (each costs only itself).
    fn broken_records(&self) -> &[p::ParseError] {
        self.vms.as_ref().map_or(&[], |list| &list.broken)
    }

    /// Why each record of a record list that did not parse was skipped.
    pub fn record_errors(&self) -> Vec<String> {
        self.broken_records()
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
        let mut all = self.unparseable_outputs();
        all.sort_by_key(|e| cat::CATALOGUE.iter().position(|s| s.id == e.command));
        // The API's one answer stands behind several facts: its error counts once.
        all.dedup();
        all.extend(self.broken_records());
        all.extend(self.vmx.iter().filter_map(|v| v.config.as_ref().err()));
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

fn fact<T>(capture: &HostCapture, parser: by_id::Parser<T>) -> Fact<T> {
    let (id, parse) = (parser.id, parser.parse);
    let spec = cat::spec(id);
    let command = spec.map_or_else(|| cat::display_label(id), |s| s.label()).to_string();
    let Some(output) = capture.outputs.get(id) else {
        let reason = match (capture.missing.get(id), &capture.error) {
            (Some(failure), _) => failure.message.clone(),
            (None, Some(error)) => error.message.clone(),
            (None, None) if capture.has_api_config() => vsphere::SSH_ONLY.to_string(),
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
    fn every_catalogue_command_has_one_fact_line() {
        for spec in cat::CATALOGUE {
            let lines: Vec<bool> = FACT_LINES
                .iter()
                .filter(|(id, _)| *id == spec.id)
                .map(|l| l.1)
                .collect();
            assert_eq!(
                lines.len(),
                1,
                "`{}` ({}) needs exactly one line in `host_facts!`",
                spec.label(),
                spec.id
            );
            assert_eq!(
                lines[0],
                spec.is_batch(),
                "`{}` ({}): its line in `host_facts!` must start with `[batch]` exactly when the catalogue frames it as a batch",
                spec.label(),
                spec.id
            );
        }
        for (id, _) in FACT_LINES {
            assert!(
                cat::spec(id).is_some(),
                "`host_facts!` has a line for {id}, which the catalogue does not send"
            );
        }
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
