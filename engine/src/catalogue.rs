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
//! count. The batches are POSIX `sh` because ESXi's login shell is busybox `sh`. Each
//! query's answer travels as its own tagged lines and ends with a line giving its exit
//! status, line count and size, so an answer that did not arrive whole (a hung or killed
//! query, a timeout, a size cap, a lost connection) is told from a whole one, and one
//! query's trouble costs only its own answer (see [`frame_functions`] and
//! `capture::frames`).

/// The shell functions every concurrent batch shares, after its `q` (the per-item query,
/// the item in `"$1"`); the command line ends with `b KEY...`.
///
/// `b` starts one job per key, `{ q KEY 2>&1; printf '\n%s' "$?"; } | f N KEY &` (N: the
/// key's 1-based position), at most 64 at once: it keeps the running jobs' process ids,
/// and when 64 run it waits for any child to end (a trapped `CHLD` interrupts `wait`, as
/// POSIX says; a `sleep 1` child bounds that wait in case the signal came just before it),
/// then counts the jobs still alive (`kill -0`). No job waits for another: a hung query
/// holds only its own slot, and the keys after it start as slots free up. `b` writes
/// `0:started N` (the first N jobs have started) before it waits for a slot and once all
/// have started, so the client can tell a query that printed nothing yet from one that
/// never started, without a write per job.
///
/// `f` frames one query's answer as it reads it, line by line: `N:begin KEY`, then one
/// record `N|LINE` per line of the answer (stderr included), then `N:end KEY exit S lines
/// L bytes B` (S: the query's exit status; L, B: the records and their size, newlines
/// included), or `N:cut KEY lines L bytes B` once the answer passes 256 KiB (the job stops
/// reading, so a flooding query dies of SIGPIPE and never holds more than a line in
/// memory). The records are kept (as `f`'s positional parameters) and printed whole, up
/// to 3800 characters per `printf`: a usual answer, its begin line included, leaves in
/// one write with its end line, a large one in pieces of whole records. Each write is an
/// SSH packet the client must read, decrypt and dispatch: the begin line once had a
/// write of its own (to tell a started query from one waiting for a slot; `b`'s
/// `0:started` lines tell that now), which doubled the packets of a batch and the
/// client's CPU. Nothing is written to the host's disk.
///
/// Why a finished answer cannot be lost, nor spliced into another unnoticed: every job
/// writes to the one stdout pipe of the session on its own, the moment its answer (or a
/// piece of it) is read, so no job's output waits for any other job: a hung query only
/// withholds its own end line. Each `printf` of at most 3800 characters is one write(2)
/// (busybox's stdio buffer is 4 KiB and ash flushes it after each builtin), and POSIX
/// makes a write of at most PIPE_BUF bytes to a pipe atomic (4096 on Linux): pieces of
/// concurrent jobs interleave as whole records, never inside one, and the client sorts
/// them back by their number. A single line too long for one write (or a PIPE_BUF
/// smaller than a piece) may be split, and another job's records can land inside it;
/// then some line of the stream is not a well-formed record, or a record lands in the
/// wrong answer, and the end line's count and size no longer match what arrived: the
/// client treats every answer such a line could belong to as damaged
/// (`capture::frames`). An answer is evidence only once its end line arrived and
/// matched.
macro_rules! frame_functions {
    () => {
        concat!(
            "f() { i=$1 k=$2; set -- \"$i:begin $k\"; n=0 z=0 w=$((${#i}+${#k}+8)) h= p=; ",
            "while IFS= read -r l; do ",
            "if [ -n \"$h\" ]; then r=\"$i|$p\"; if [ \"$w\" -gt 0 ] && [ $((w+${#r})) -gt 3800 ]; then printf '%s\\n' \"$@\"; set --; w=0; fi; ",
            "set -- \"$@\" \"$r\"; w=$((w+${#r}+1)) n=$((n+1)) z=$((z+${#p}+1)); fi; p=$l h=1; ",
            "if [ \"$z\" -gt 262144 ]; then printf '%s\\n' \"$@\" \"$i:cut $k lines $n bytes $z\"; return; fi; ",
            "done; ",
            "if [ -n \"$p\" ]; then set -- \"$@\" \"$i|$p\"; n=$((n+1)) z=$((z+${#p}+1)); fi; ",
            "printf '%s\\n' \"$@\" \"$i:end $k exit $l lines $n bytes $z\"; }; ",
            "b() { trap : CHLD; i=0 P= t= s=0; for k do i=$((i+1)); ",
            "while :; do c=0 Q=; for x in $P; do if kill -0 \"$x\" 2>/dev/null; then Q=\"$Q $x\" c=$((c+1)); fi; done; P=$Q; ",
            "[ \"$c\" -lt 64 ] && break; ",
            "[ \"$s\" -lt $((i-1)) ] && { s=$((i-1)); printf '0:started %s\\n' \"$s\"; }; ",
            "kill -0 \"$t\" 2>/dev/null || { sleep 1 </dev/null >/dev/null 2>&1 & t=$!; }; wait \"$t\"; done; ",
            "{ q \"$k\" 2>&1; printf '\\n%s' \"$?\"; } | f \"$i\" \"$k\" & P=\"$P $!\"; done; ",
            "printf '0:started %s\\n' \"$i\"; trap - CHLD; for x in $P; do wait \"$x\"; done; }; "
        )
    };
}

/// The functions of a concurrent batch whose per-item query is `$query` (with the item
/// in `"$1"`): `q`, then [`frame_functions`].
macro_rules! batch_functions {
    ($query:literal) => {
        concat!("q() { ", $query, "; }; ", frame_functions!())
    };
}

/// The `.vmx` inventory's functions: a `grep` of the PVRDMA lines of one `.vmx` as `q`,
/// run for every path like any batch (a `.vmx` on a datastore whose paths are down can
/// hang its read: that costs only its own VM).
macro_rules! vmx_functions {
    () => {
        batch_functions!("grep -iE '^[[:space:]]*(displayname|virtualhw[.]version|memsize|sched[.]mem[.][a-z0-9.]+|ethernet[0-9]+[.](virtualdev|present|addresstype|address|generatedaddress|networkname|dvs[.][a-z0-9.]+)|vrdma[0-9]*[.][a-z0-9.]+)[[:space:]]*=' \"$1\"")
    };
}

/// Queries of one batch that run at once on the host (the `64` of [`frame_functions`]).
/// More keys start as earlier ones end, so a host with hundreds of PVRDMA VMs is not
/// asked to start hundreds of `esxcli` processes together (each is a Python process in
/// ESXi's shell resource pool), and a hung query holds only its own slot.
pub const BATCH_FANOUT: usize = 64;

/// The most a query's answer may print before the host stops reading it (the `262144`
/// of [`frame_functions`]): far above any real answer (a few KiB), far below the
/// per-command cap, so a flooding query cannot crowd the other answers out.
pub const SECTION_CAP: usize = 256 * 1024;

/// One read-only command: a row of [`CATALOGUE`], the one registry of what is sent to a
/// host. Its parser is the [`by_id`] entry of the same name; the collection schedules it
/// from [`CommandSpec::framing`] and [`CommandSpec::quick`], the facts read its framing,
/// and the simulated hosts answer it from a capture file named by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// Stable id: file name in bundles and samples, evidence key in reports.
    pub id: &'static str,
    /// The exact command line sent to the host's shell (a batch: its functions, then
    /// `b` and a placeholder for the keys).
    pub command: &'static str,
    /// Why the doctor needs it.
    pub why: &'static str,
    /// How its answer comes back, and for a batch what it is built from.
    pub framing: Framing,
    /// Answers in milliseconds on a real host (vsish reads, greps of `.vmx` files), unlike
    /// `esxcli`, which takes about a second per call: it starts as soon as it can.
    pub quick: bool,
}

/// How a command's answer comes back: a property of the command, never read from its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One answer, sent as written.
    Whole,
    /// A concurrent batch: one query per key, each answer framed on the host and sorted by
    /// the client into a `==> KEY <==` section with its end marker, so one query's trouble
    /// costs only its own section.
    Batch(Batch),
}

/// A [`Batch`] whose message label is its typed query with the note on how it is sent
/// (`(batched)`, `(batched over the PVRDMA VMs)`), so neither is ever read back out of
/// the other.
macro_rules! batch {
    ($keys:expr, $typed:literal, $over:literal, $item:literal) => {
        Batch {
            keys: $keys,
            typed: $typed,
            label: concat!($typed, " (batched", $over, ")"),
            item: $item,
        }
    };
}

/// What a concurrent batch asks and what it is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// Where its keys come from.
    pub keys: Keys,
    /// The query it repeats as a user types it on the host
    /// (`esxcli network nic dcb status get -n <RDMA uplink>`).
    pub typed: &'static str,
    /// How messages name it: the typed query and how it is sent (quoting a whole shell
    /// loop helps nobody). Written by [`batch!`] from the typed query, never by hand.
    pub label: &'static str,
    /// How a message names one query, before its key: "vsish properties of".
    pub item: &'static str,
}

/// Where a batch takes its keys: the command it waits for ([`Keys::needs`]) and how a key
/// is read from that command's output ([`Keys::read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// The World IDs of the PVRDMA adapter listing (`vsish -e ls ...`), once each.
    AdapterWorlds,
    /// The adapter nodes `<World ID>_<adapter index>` of the PVRDMA adapter listing.
    AdapterNodes,
    /// The paired uplinks of `esxcli rdma device list`, once each.
    RdmaUplinks,
    /// The Config File (`.vmx` path) of each running VM of `esxcli vm process list`, as
    /// one single-quoted shell word each.
    ConfigFiles,
}

impl Keys {
    /// The command whose output the keys are read from (the batch waits for it).
    pub fn needs(self) -> &'static str {
        match self {
            Keys::AdapterWorlds | Keys::AdapterNodes => PVRDMA_DEVICES_LS,
            Keys::RdmaUplinks => RDMA_DEVICE_LIST,
            Keys::ConfigFiles => VM_PROCESS_LIST,
        }
    }

    /// The keys in the output of [`Keys::needs`], in the order they are asked.
    pub fn read(self, output: &str) -> Result<Vec<String>, pvrdma_parsers::ParseError> {
        use pvrdma_parsers as p;
        let mut keys: Vec<String> = match self {
            Keys::AdapterWorlds => {
                let mut wids: Vec<u64> = p::parse_pvrdma_device_ls(output)?.iter().map(|d| d.world_id).collect();
                wids.sort_unstable();
                wids.dedup();
                wids.iter().map(u64::to_string).collect()
            }
            Keys::AdapterNodes => p::parse_pvrdma_device_ls(output)?
                .iter()
                .map(|d| format!("{}_{}", d.world_id, d.index))
                .collect(),
            Keys::RdmaUplinks => {
                let mut uplinks: Vec<String> = p::parse_rdma_device_list(output)?
                    .into_iter()
                    .filter_map(|d| d.paired_uplink)
                    .collect();
                uplinks.sort();
                uplinks
            }
            Keys::ConfigFiles => {
                return Ok(p::parse_vm_process_records(output)?
                    .vms
                    .into_iter()
                    .filter_map(|v| v.config_file)
                    .collect())
            }
        };
        keys.dedup();
        Ok(keys)
    }

    /// What a message says the batch is built from, after "it".
    pub fn built_from(self) -> &'static str {
        match self {
            Keys::AdapterWorlds | Keys::AdapterNodes => {
                "is built from the PVRDMA adapter listing (`vsish -e ls /vmkModules/vrdma/pvrdmaDevices/`)"
            }
            Keys::RdmaUplinks => "asks each RDMA uplink of `esxcli rdma device list`",
            Keys::ConfigFiles => "reads the .vmx of each running VM of `esxcli vm process list`",
        }
    }

    /// Why nothing is sent when the source names no key.
    pub fn none(self) -> &'static str {
        match self {
            Keys::AdapterWorlds | Keys::AdapterNodes => "the vsish listing names no PVRDMA adapter",
            Keys::RdmaUplinks => "`esxcli rdma device list` names no RDMA uplink",
            Keys::ConfigFiles => "`esxcli vm process list` names no running VM",
        }
    }

    /// Why the batch is not sent when a key cannot reach a shell, after "which".
    pub fn unsafe_key(self) -> &'static str {
        match self {
            Keys::AdapterWorlds | Keys::AdapterNodes => "named items that cannot be queried",
            Keys::RdmaUplinks => "names an uplink that cannot be queried",
            Keys::ConfigFiles => "names a Config File that cannot be one shell word",
        }
    }
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
pub const NIC_STATS: &str = by_id::NIC_STATS.id;
pub const VMX_PVRDMA_LINES: &str = by_id::VMX_PVRDMA_LINES.id;

/// Every command, in the order a report lists them.
pub static CATALOGUE: &[CommandSpec] = &[
    CommandSpec {
        id: SYSTEM_VERSION,
        command: "esxcli system version get",
        why: "ESXi release: PVRDMA needs 6.5+, native endpoints 7.0 U1+, async mode 8.0+",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: RDMA_DEVICE_LIST,
        command: "esxcli rdma device list",
        why: "is a physical RDMA device (vmrdmaN) registered, Active, and paired with which uplink",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: RDMA_PROTOCOL_LIST,
        command: "esxcli rdma device protocol list",
        why: "which RoCE versions the RDMA device supports",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: RDMA_VMKNIC_LIST,
        command: "esxcli rdma device vmknic list",
        why: "which vmknic each RDMA device is bound to",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: NIC_LIST,
        command: "esxcli network nic list",
        why: "link state and Ethernet MTU of the RDMA device's uplink",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: DVS_LIST,
        command: "esxcli network vswitch dvs vmware list",
        why: "the RDMA uplink must be the one and only uplink of the vDS; vDS MTU",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: STANDARD_SWITCH_LIST,
        command: "esxcli network vswitch standard list",
        why: "finds an RDMA uplink or a PVRDMA port left on a standard vSwitch, where PVRDMA cannot use it",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: IP_INTERFACE_LIST,
        command: "esxcli network ip interface list",
        why: "the PVRDMA vmknic exists, is enabled, and its MTU",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: IPV4_GET,
        command: "esxcli network ip interface ipv4 get",
        why: "the PVRDMA vmknic has an IPv4 address",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: PVRDMA_VMKNIC_OPTION,
        command: "esxcli system settings advanced list -o /Net/PVRDMAVmknic",
        why: "which vmknic is tagged for PVRDMA (empty by default)",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: FIREWALL_GET,
        command: "esxcli network firewall get",
        why: "whether the ESXi firewall is enabled at all",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: FIREWALL_RULESET_LIST,
        command: "esxcli network firewall ruleset list",
        why: "the pvrdma ruleset must be enabled (it is disabled by default on ESXi 8.0)",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: VM_PROCESS_LIST,
        command: "esxcli vm process list",
        why: "running VMs: World ID, display name, config file",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: VM_PORT_LIST,
        command: concat!(batch_functions!("esxcli network vm port list -w \"$1\""), "b ", "<World ID>..."),
        why: "the switch, port group and uplink each PVRDMA VM's MAC really uses (one concurrent batch over the World IDs of the vsish listing)",
        framing: Framing::Batch(batch!(Keys::AdapterWorlds, "esxcli network vm port list -w <World ID>", " over the PVRDMA VMs", "the port list of World ID")),
        quick: false,
    },
    CommandSpec {
        id: PVRDMA_DEVICES_LS,
        command: "vsish -e ls /vmkModules/vrdma/pvrdmaDevices/",
        why: "one node <World ID>_<adapter index> per PVRDMA adapter of a running VM",
        framing: Framing::Whole,
        quick: true,
    },
    CommandSpec {
        id: PVRDMA_PROPERTIES,
        command: concat!(
            batch_functions!("vsish -e cat \"/vmkModules/vrdma/pvrdmaDevices/$1/properties\""),
            "b ",
            "<World ID>_<adapter index>..."
        ),
        why: "per adapter: 'Physical HCA available' (HCA or TCP fallback), MAC, RoCE version, MTU (one concurrent batch over the adapters of the vsish listing)",
        framing: Framing::Batch(batch!(Keys::AdapterNodes, "vsish -e cat /vmkModules/vrdma/pvrdmaDevices/<adapter>/properties", "", "vsish properties of")),
        quick: true,
    },
    CommandSpec {
        id: NIC_PAUSE_PARAMS,
        command: "esxcli network nic pauseParams list",
        why: "global pause (RX/TX) of the HCA uplink: RoCE needs a lossless network (pause or PFC)",
        framing: Framing::Whole,
        quick: false,
    },
    CommandSpec {
        id: NIC_DCB_STATUS,
        command: concat!(
            batch_functions!("esxcli network nic dcb status get -n \"$1\""),
            "b ",
            "<RDMA uplink>..."
        ),
        why: "DCB / PFC state of each RDMA uplink of `esxcli rdma device list`: RoCE needs a lossless network (pause or PFC) (one concurrent batch over the uplinks)",
        framing: Framing::Batch(batch!(Keys::RdmaUplinks, "esxcli network nic dcb status get -n <RDMA uplink>", "", "the DCB status of")),
        quick: false,
    },
    CommandSpec {
        id: NIC_STATS,
        command: concat!(batch_functions!("esxcli network nic stats get -n \"$1\""), "b ", "<RDMA uplink>..."),
        why: "packet, drop and error counters of each RDMA uplink of `esxcli rdma device list`: RoCE retransmits after every dropped or damaged frame (one concurrent batch over the uplinks)",
        framing: Framing::Batch(batch!(Keys::RdmaUplinks, "esxcli network nic stats get -n <RDMA uplink>", "", "the NIC statistics of")),
        quick: false,
    },
    CommandSpec {
        id: VMX_PVRDMA_LINES,
        // The paths are the Config Files of the `vm process list` already collected, each
        // one single-quoted shell word, so spaces, brackets and colons reach grep intact.
        // grep only reads the file, and exits 1 when no line matches (a whole answer).
        command: concat!(vmx_functions!(), "b <Config File>..."),
        why: "per running VM, the PVRDMA lines of its .vmx (adapters, MACs, port groups, hardware version, memory reservation): lists PVRDMA VMs even when vsish fails",
        framing: Framing::Batch(batch!(Keys::ConfigFiles, "grep <PVRDMA keys> <Config File>", " over running VMs' .vmx", "the .vmx lines of")),
        quick: true,
    },
];

impl CommandSpec {
    /// The batch this command is, if it is one.
    pub fn batch(&self) -> Option<Batch> {
        match self.framing {
            Framing::Batch(b) => Some(b),
            Framing::Whole => None,
        }
    }

    /// Whether this batch is built from a listing collected before it (the vsish adapter
    /// listing: one item per PVRDMA World ID or adapter; the RDMA device list: one item per
    /// RDMA uplink) rather than from quoted paths.
    pub fn is_listing_batch(&self) -> bool {
        self.batch().is_some_and(|b| b.keys != Keys::ConfigFiles)
    }

    /// Whether this is one of the concurrent batches. Their output is a series of
    /// `==> KEY <==` sections, each with that query's own errors, so one failed query
    /// must not discard the others.
    pub fn is_batch(&self) -> bool {
        self.batch().is_some()
    }

    /// The query a batch repeats, as its command line writes it, the key in `"$1"`
    /// (`esxcli network nic dcb status get -n "$1"`): what a simulated host answers.
    pub fn query(&self) -> Option<&'static str> {
        self.batch()?;
        let functions = command_line::batch_functions_of(self)?;
        functions
            .strip_prefix("q() { ")?
            .split_once("; }; ")
            .map(|(query, _)| query)
    }

    /// The command whose output this one is built from, if any.
    pub fn needs(&self) -> Option<&'static str> {
        self.batch().map(|b| b.keys.needs())
    }

    /// How messages name the command: the command line, or for a batch the query it
    /// repeats.
    pub fn label(&self) -> &'static str {
        self.batch().map_or(self.command, |b| b.label)
    }

    /// The command as a user types it on the host: [`CommandSpec::label`] without the
    /// note on how a batch sends it (`esxcli network nic dcb status get -n <RDMA uplink>`).
    pub fn typed_label(&self) -> &'static str {
        self.batch().map_or(self.command, |b| b.typed)
    }
}

/// The spec with this id.
pub fn spec(id: &str) -> Option<&'static CommandSpec> {
    CATALOGUE.iter().find(|s| s.id == id)
}

mod command_line;
mod group;
mod vsphere;
pub use command_line::*;
pub use group::*;
pub use vsphere::*;

#[cfg(test)]
mod tests;
