//! The single list of read-only commands pvrdma-doctor sends to a host.
//!
//! Collection, support bundles, `--list-checks` and the parsers are all keyed by the ids
//! here: the id is also the file name of the command's output in a bundle or sample
//! directory. Nothing outside this list is ever sent to a host, which is what makes the
//! tool safe to point at production: every command here only reads.
//!
//! The per-adapter queries (`vm port list -w`, the vsish `properties` node) depend on the
//! vsish listing: they run only for the World IDs / adapter nodes it names (VMs without a
//! PVRDMA adapter are never queried), and are built by [`batch_command`] once the listing
//! is in (see `collect::schedule`). Each batch is one command line whose queries run
//! concurrently on the host, so its wall time is about one query's, whatever the VM
//! count. The batches are POSIX `sh` because ESXi's login shell is busybox `sh`. Every
//! section ends with `<== KEY exit N ==>` (N: the query's `$?`), so a section cut off by a
//! timeout, a size cap or a lost connection is told from a whole one (see
//! `pvrdma_parsers`' batch sections).

/// The shell functions of a concurrent batch whose per-item query is `$query` (with the
/// item in `"$1"`); the batch line ends with `p KEY...` (keys in reverse order).
///
/// `p k1 k2 k3` is the pipeline `s k3 | s k2 | s k1`: every stage starts its query at once
/// (the stages of a pipeline run concurrently), keeps the query's output in a variable,
/// then copies everything the stages before it printed (`cat`) and prints its own section
/// after it: `==> KEY <==`, the output (stderr included), `<== KEY exit N ==>` (the
/// agreed end marker, `N` the query's exit status). So the queries overlap in time while
/// the sections come out whole and in order; nothing is written to the host's disk. A
/// section without its end marker was cut off (timeout, output cap) and reads as unknown.
macro_rules! batch_functions {
    ($query:literal) => {
        concat!(
            "q() { ",
            $query,
            "; }; s() { o=$(q \"$1\" 2>&1); e=$?; cat; printf '==> %s <==\\n' \"$1\"; [ -z \"$o\" ] || printf '%s\\n' \"$o\"; printf '<== %s exit %s ==>\\n' \"$1\" \"$e\"; }; ",
            "p() { if [ $# -gt 1 ]; then k=$1; shift; p \"$@\" | s \"$k\"; else s \"$1\" </dev/null; fi; }; "
        )
    };
}

/// The `.vmx` inventory's functions: `s PATH...` reads its paths one after another (one
/// `grep` each: cheap, unlike `esxcli`), keeps their sections in a variable, copies what
/// the stages before it printed, then prints them. The command line chains a few such
/// stages (`s A B </dev/null | s C D | s E`): the stages run at once, the sections come
/// out whole and in order, and a host with hundreds of VMs forks about one process per
/// VM (the grep) instead of five (a pipeline stage, a command substitution and a `cat`
/// per key in [`batch_functions`]); ESXi's userworld forks are slow.
macro_rules! vmx_functions {
    () => {
        concat!(
            "q() { grep -iE '^[[:space:]]*(displayname|virtualhw[.]version|memsize|sched[.]mem[.][a-z0-9.]+|ethernet[0-9]+[.](virtualdev|present|addresstype|address|generatedaddress|networkname|dvs[.][a-z0-9.]+)|vrdma[0-9]*[.][a-z0-9.]+)[[:space:]]*=' \"$1\"; }; ",
            "l() { for k in \"$@\"; do printf '==> %s <==\\n' \"$k\"; q \"$k\" 2>&1; printf '<== %s exit %s ==>\\n' \"$k\" \"$?\"; done; }; ",
            "s() { o=$(l \"$@\"); cat; [ -z \"$o\" ] || printf '%s\\n' \"$o\"; }; "
        )
    };
}

/// Stages of the `.vmx` inventory that run at once (each reads its share of the paths in
/// turn).
const VMX_STAGES: usize = 8;

/// Queries of one batch that run at once on the host. More keys run in successive groups
/// of this size, so a host with hundreds of PVRDMA VMs is not asked to start hundreds of
/// `esxcli` processes together (each is a Python process in ESXi's shell resource pool).
const BATCH_FANOUT: usize = 64;

/// One read-only command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// Stable id: file name in bundles and samples, evidence key in reports.
    pub id: &'static str,
    /// The exact command line sent to the host's shell.
    pub command: &'static str,
    /// Why the doctor needs it.
    pub why: &'static str,
}

// The ids come from the parser table, where each is written once next to its parser.
use pvrdma_parsers::by_id;

pub const SYSTEM_VERSION: &str = by_id::SYSTEM_VERSION.id;
pub const RDMA_DEVICE_LIST: &str = by_id::RDMA_DEVICE_LIST.id;
pub const RDMA_PROTOCOL_LIST: &str = by_id::RDMA_PROTOCOL_LIST.id;
pub const RDMA_VMKNIC_LIST: &str = by_id::RDMA_VMKNIC_LIST.id;
pub const NIC_LIST: &str = by_id::NIC_LIST.id;
pub const DVS_LIST: &str = by_id::DVS_LIST.id;
pub const STANDARD_SWITCH_LIST: &str = by_id::STANDARD_SWITCH_LIST.id;
pub const IP_INTERFACE_LIST: &str = by_id::IP_INTERFACE_LIST.id;
pub const IPV4_GET: &str = by_id::IPV4_GET.id;
pub const PVRDMA_VMKNIC_OPTION: &str = by_id::PVRDMA_VMKNIC_OPTION.id;
pub const FIREWALL_GET: &str = by_id::FIREWALL_GET.id;
pub const FIREWALL_RULESET_LIST: &str = by_id::FIREWALL_RULESET_LIST.id;
pub const VM_PROCESS_LIST: &str = by_id::VM_PROCESS_LIST.id;
pub const VM_PORT_LIST: &str = by_id::VM_PORT_LIST.id;
pub const PVRDMA_DEVICES_LS: &str = by_id::PVRDMA_DEVICES_LS.id;
pub const PVRDMA_PROPERTIES: &str = by_id::PVRDMA_PROPERTIES.id;
pub const NIC_PAUSE_PARAMS: &str = by_id::NIC_PAUSE_PARAMS.id;
pub const NIC_DCB_STATUS: &str = by_id::NIC_DCB_STATUS.id;
pub const VMX_PVRDMA_LINES: &str = by_id::VMX_PVRDMA_LINES.id;

/// Every command, in the order a report lists them.
pub static CATALOGUE: &[CommandSpec] = &[
    CommandSpec {
        id: SYSTEM_VERSION,
        command: "esxcli system version get",
        why: "ESXi release: PVRDMA needs 6.5+, native endpoints 7.0 U1+, async mode 8.0+",
    },
    CommandSpec {
        id: RDMA_DEVICE_LIST,
        command: "esxcli rdma device list",
        why: "is a physical RDMA device (vmrdmaN) registered, Active, and paired with which uplink",
    },
    CommandSpec {
        id: RDMA_PROTOCOL_LIST,
        command: "esxcli rdma device protocol list",
        why: "which RoCE versions the RDMA device supports",
    },
    CommandSpec {
        id: RDMA_VMKNIC_LIST,
        command: "esxcli rdma device vmknic list",
        why: "which vmknic each RDMA device is bound to",
    },
    CommandSpec {
        id: NIC_LIST,
        command: "esxcli network nic list",
        why: "link state and Ethernet MTU of the RDMA device's uplink",
    },
    CommandSpec {
        id: DVS_LIST,
        command: "esxcli network vswitch dvs vmware list",
        why: "the RDMA uplink must be the one and only uplink of the vDS; vDS MTU",
    },
    CommandSpec {
        id: STANDARD_SWITCH_LIST,
        command: "esxcli network vswitch standard list",
        why: "finds an RDMA uplink or a PVRDMA port left on a standard vSwitch, where PVRDMA cannot use it",
    },
    CommandSpec {
        id: IP_INTERFACE_LIST,
        command: "esxcli network ip interface list",
        why: "the PVRDMA vmknic exists, is enabled, and its MTU",
    },
    CommandSpec {
        id: IPV4_GET,
        command: "esxcli network ip interface ipv4 get",
        why: "the PVRDMA vmknic has an IPv4 address",
    },
    CommandSpec {
        id: PVRDMA_VMKNIC_OPTION,
        command: "esxcli system settings advanced list -o /Net/PVRDMAVmknic",
        why: "which vmknic is tagged for PVRDMA (empty by default)",
    },
    CommandSpec {
        id: FIREWALL_GET,
        command: "esxcli network firewall get",
        why: "whether the ESXi firewall is enabled at all",
    },
    CommandSpec {
        id: FIREWALL_RULESET_LIST,
        command: "esxcli network firewall ruleset list",
        why: "the pvrdma ruleset must be enabled (it is disabled by default on ESXi 8.0)",
    },
    CommandSpec {
        id: VM_PROCESS_LIST,
        command: "esxcli vm process list",
        why: "running VMs: World ID, display name, config file",
    },
    CommandSpec {
        id: VM_PORT_LIST,
        command: concat!(batch_functions!("esxcli network vm port list -w \"$1\""), "p ", "<World ID>..."),
        why: "the switch, port group and uplink each PVRDMA VM's MAC really uses (one concurrent batch over the World IDs of the vsish listing)",
    },
    CommandSpec {
        id: PVRDMA_DEVICES_LS,
        command: "vsish -e ls /vmkModules/vrdma/pvrdmaDevices/",
        why: "one node <World ID>_<adapter index> per PVRDMA adapter of a running VM",
    },
    CommandSpec {
        id: PVRDMA_PROPERTIES,
        command: concat!(
            batch_functions!("vsish -e cat \"/vmkModules/vrdma/pvrdmaDevices/$1/properties\""),
            "p ",
            "<World ID>_<adapter index>..."
        ),
        why: "per adapter: 'Physical HCA available' (HCA or TCP fallback), MAC, RoCE version, MTU (one concurrent batch over the adapters of the vsish listing)",
    },
    CommandSpec {
        id: NIC_PAUSE_PARAMS,
        command: "esxcli network nic pauseParams list",
        why: "global pause (RX/TX) of the HCA uplink: RoCE needs a lossless network (pause or PFC)",
    },
    CommandSpec {
        id: NIC_DCB_STATUS,
        command: concat!(
            batch_functions!("esxcli network nic dcb status get -n \"$1\""),
            "p ",
            "<RDMA uplink>..."
        ),
        why: "DCB / PFC state of each RDMA uplink of `esxcli rdma device list`: RoCE needs a lossless network (pause or PFC) (one concurrent batch over the uplinks)",
    },
    CommandSpec {
        id: VMX_PVRDMA_LINES,
        // The paths are the Config Files of the `vm process list` already collected, each
        // one single-quoted shell word, so spaces, brackets and colons reach grep intact.
        // grep only reads the file, and exits 1 when no line matches (a whole answer).
        command: concat!(vmx_functions!(), "s <Config File>... </dev/null | s <Config File>..."),
        why: "per running VM, the PVRDMA lines of its .vmx (adapters, MACs, port groups, hardware version, memory reservation): lists PVRDMA VMs even when vsish fails",
    },
];

impl CommandSpec {
    /// Whether this is one of the shell loops that batch a per-VM query. Their output is
    /// a series of `==> KEY <==` sections, each with that iteration's own errors, so one
    /// failed iteration must not discard the others.
    /// Whether this batch is built from a listing collected before it (the vsish adapter
    /// listing: one item per PVRDMA World ID or adapter; the RDMA device list: one item per
    /// RDMA uplink) rather than sent as it is written.
    pub fn is_listing_batch(&self) -> bool {
        self.id == VM_PORT_LIST || self.id == PVRDMA_PROPERTIES || self.id == NIC_DCB_STATUS
    }

    pub fn is_batch(&self) -> bool {
        self.id == VM_PORT_LIST
            || self.id == PVRDMA_PROPERTIES
            || self.id == NIC_DCB_STATUS
            || self.id == VMX_PVRDMA_LINES
    }

    /// How messages name the command: the command line, or for a batched loop the query
    /// it repeats (quoting a whole shell loop to a user helps nobody).
    pub fn label(&self) -> &'static str {
        match self.id {
            VM_PORT_LIST => "esxcli network vm port list -w <World ID> (batched over the PVRDMA VMs)",
            PVRDMA_PROPERTIES => "vsish -e cat /vmkModules/vrdma/pvrdmaDevices/<adapter>/properties (batched)",
            NIC_DCB_STATUS => "esxcli network nic dcb status get -n <RDMA uplink> (batched)",
            VMX_PVRDMA_LINES => "grep <PVRDMA keys> <Config File> (batched over running VMs' .vmx)",
            _ => self.command,
        }
    }
}

/// The command line of the batch `id` (one of the [`CommandSpec::is_listing_batch`] ids)
/// over `keys` (World IDs for the port list, `<World ID>_<index>` nodes for the
/// properties, uplink names such as `vmnic2` for DCB): the spec's functions, then one
/// `p ...` pipeline per group of [`BATCH_FANOUT`] keys. `None` for another id, no key, or
/// a key that is not ASCII letters, digits and `_` (keys come from a parsed listing;
/// anything else must never reach a shell).
pub fn batch_command(id: &str, keys: &[String]) -> Option<String> {
    let spec = spec(id).filter(|s| s.is_listing_batch())?;
    let functions = batch_functions_of(spec)?;
    let valid = |k: &String| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if keys.is_empty() || !keys.iter().all(valid) {
        return None;
    }
    Some(batch_line(functions, keys))
}

/// `functions` then one `p ...` call per group of [`BATCH_FANOUT`] shell words, each
/// group's words in reverse (`p` prints its last argument first).
fn batch_line(functions: &str, words: &[String]) -> String {
    let mut line = String::with_capacity(functions.len() + words.iter().map(|w| w.len() + 1).sum::<usize>() + 8);
    line.push_str(functions);
    for (n, group) in words.chunks(BATCH_FANOUT).enumerate() {
        if n > 0 {
            line.push_str("; ");
        }
        line.push('p');
        for word in group.iter().rev() {
            line.push(' ');
            line.push_str(word);
        }
    }
    line
}

/// The keys a batch command line was built for, in output order (the inverse of
/// [`batch_command`]), with the batch's id; `None` for any other command line.
pub fn batch_keys(command: &str) -> Option<(&'static str, Vec<String>)> {
    if let Some(paths) = vmx_lines_keys(command) {
        return Some((VMX_PVRDMA_LINES, paths));
    }
    CATALOGUE.iter().filter(|s| s.is_listing_batch()).find_map(|spec| {
        let functions = batch_functions_of(spec)?;
        let calls = command.strip_prefix(functions)?;
        let mut keys = Vec::new();
        for call in calls.split("; ") {
            let mut group: Vec<String> = call.strip_prefix("p ")?.split(' ').map(str::to_string).collect();
            group.reverse();
            keys.extend(group);
        }
        Some((spec.id, keys))
    })
}

/// The functions of a batch spec's command line (everything before its `p ...` calls).
fn batch_functions_of(spec: &CommandSpec) -> Option<&'static str> {
    spec.command.rsplit_once("p ").map(|(f, _)| f)
}

/// POSIX-sh single quotes: the text as one word, whatever it holds (spaces, brackets,
/// colons, `$`); an embedded `'` is closed, escaped and reopened.
fn sh_single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The `.vmx` inventory for these Config File paths, taken from the `vm process list`
/// the host already answered (so it is not run a second time): [`vmx_functions`], then up
/// to [`VMX_STAGES`] pipeline stages of quoted paths. `None` when a path cannot be one
/// shell word (a newline).
pub fn vmx_lines_command(paths: &[String]) -> Option<String> {
    if paths.is_empty() || paths.iter().any(|p| p.is_empty() || p.contains(['\n', '\0'])) {
        return None;
    }
    let mut line = vmx_functions!().to_string();
    for (n, stage) in paths.chunks(paths.len().div_ceil(VMX_STAGES)).enumerate() {
        line.push_str(if n == 0 { "s" } else { " | s" });
        for path in stage {
            line.push(' ');
            line.push_str(&sh_single_quote(path));
        }
        if n == 0 {
            line.push_str(" </dev/null");
        }
    }
    Some(line)
}

/// The paths of a [`vmx_lines_command`] line, in order; `None` for any other line.
fn vmx_lines_keys(command: &str) -> Option<Vec<String>> {
    let mut rest = command.strip_prefix(vmx_functions!())?;
    let mut keys = Vec::new();
    let mut first = true;
    loop {
        rest = rest.strip_prefix("s ")?;
        loop {
            // One word: single-quoted runs, joined by `\'` (an escaped quote).
            let mut word = String::new();
            let mut quoted = false;
            loop {
                if let Some(r) = rest.strip_prefix('\'') {
                    let end = r.find('\'')?;
                    word.push_str(r.get(..end)?);
                    rest = r.get(end + 1..)?;
                    quoted = true;
                } else if let Some(r) = rest.strip_prefix("\\'") {
                    word.push('\'');
                    rest = r;
                    quoted = true;
                } else {
                    break;
                }
            }
            if !quoted {
                return None;
            }
            keys.push(word);
            match rest.strip_prefix(' ') {
                Some(r) if r.starts_with('\'') || r.starts_with("\\'") => rest = r,
                _ => break,
            }
        }
        if first {
            rest = rest.strip_prefix(" </dev/null")?;
            first = false;
        }
        if rest.is_empty() {
            return Some(keys);
        }
        rest = rest.strip_prefix(" | ")?;
    }
}

/// The spec with this id.
pub fn spec(id: &str) -> Option<&'static CommandSpec> {
    CATALOGUE.iter().find(|s| s.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn batch_lines_group_keys_and_round_trip() {
        let line = batch_command(VM_PORT_LIST, &keys(&["11", "12", "13"])).expect("line");
        assert!(
            line.starts_with("q() { esxcli network vm port list -w \"$1\"; }; s() {"),
            "{line}"
        );
        assert!(line.ends_with("p 13 12 11"), "{line}");
        assert_eq!(batch_keys(&line), Some((VM_PORT_LIST, keys(&["11", "12", "13"]))));
        let many: Vec<String> = (0..BATCH_FANOUT + 2).map(|n| format!("{n}_0")).collect();
        let line = batch_command(PVRDMA_PROPERTIES, &many).expect("line");
        let calls = line.rsplit_once("fi; }; ").map(|(_, c)| c).expect("calls");
        assert_eq!(calls.matches("; p ").count(), 1, "two groups: {calls}");
        assert_eq!(batch_keys(&line), Some((PVRDMA_PROPERTIES, many)));
        let line = batch_command(NIC_DCB_STATUS, &keys(&["vmnic2", "vmnic3"])).expect("line");
        assert!(
            line.starts_with("q() { esxcli network nic dcb status get -n \"$1\"; };"),
            "{line}"
        );
        assert_eq!(batch_keys(&line), Some((NIC_DCB_STATUS, keys(&["vmnic2", "vmnic3"]))));
    }

    #[test]
    fn vmx_inventory_lines_keep_any_path_whole_and_round_trip() {
        let paths = keys(&[
            "/vmfs/volumes/ds 1/hpc [rack 4]/hpc [rack 4].vmx",
            "/vmfs/volumes/ds1/it's; p 'x'/a:b.vmx",
            "/vmfs/volumes/ds1/$(reboot)/`x`.vmx",
        ]);
        let line = vmx_lines_command(&paths).expect("line");
        assert!(line.starts_with("q() { grep -iE '^[[:space:]]*(displayname|"), "{line}");
        assert!(!line.contains("esxcli"), "the process list is not run again: {line}");
        assert_eq!(batch_keys(&line), Some((VMX_PVRDMA_LINES, paths.clone())));
        let many: Vec<String> = (0..BATCH_FANOUT + 3)
            .map(|n| format!("/vmfs/volumes/ds/vm{n}/vm{n}.vmx"))
            .collect();
        let line = vmx_lines_command(&many).expect("line");
        assert_eq!(batch_keys(&line), Some((VMX_PVRDMA_LINES, many)));
        assert_eq!(vmx_lines_command(&keys(&["/a\nb.vmx"])), None);
        assert_eq!(vmx_lines_command(&[]), None);
    }

    #[test]
    fn batch_lines_refuse_what_a_listing_cannot_hold() {
        assert_eq!(batch_command(VM_PORT_LIST, &[]), None);
        assert_eq!(batch_command(VM_PORT_LIST, &keys(&["1; reboot"])), None);
        assert_eq!(batch_command(VM_PORT_LIST, &keys(&["$(x)"])), None);
        assert_eq!(batch_command(NIC_DCB_STATUS, &keys(&["vmnic2 vmnic3"])), None);
        assert_eq!(batch_command(NIC_DCB_STATUS, &keys(&["vmnic-2"])), None);
        assert_eq!(batch_command(SYSTEM_VERSION, &keys(&["1"])), None);
        assert_eq!(batch_keys("esxcli system version get"), None);
    }
}
