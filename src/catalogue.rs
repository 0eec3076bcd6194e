//! The single list of read-only commands pvrdma-doctor sends to a host.
//!
//! Collection, support bundles, `--list-checks` and the parsers are all keyed by the ids
//! here: the id is also the file name of the command's output in a bundle or sample
//! directory. Nothing outside this list is ever sent to a host, which is what makes the
//! tool safe to point at production: every command here only reads.
//!
//! The per-VM queries (`vm port list -w`, the vsish `properties` node) are batched into
//! one shell loop each, so the number of round trips per host is the same for 1 VM or 500.
//! The loops are POSIX `sh` because ESXi's login shell is busybox `sh`. Every iteration
//! prints `==> KEY <==` before its query's output and `<== KEY exit N ==>` after it (N: the
//! query's `$?`), so a section cut off by a timeout, a size cap or a lost connection is
//! told from a whole one (see `pvrdma_parsers`' batch sections).

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

pub const SYSTEM_VERSION: &str = "esxcli_system_version_get";
pub const RDMA_DEVICE_LIST: &str = "esxcli_rdma_device_list";
pub const RDMA_PROTOCOL_LIST: &str = "esxcli_rdma_device_protocol_list";
pub const RDMA_VMKNIC_LIST: &str = "esxcli_rdma_device_vmknic_list";
pub const NIC_LIST: &str = "esxcli_network_nic_list";
pub const DVS_LIST: &str = "esxcli_network_vswitch_dvs_vmware_list";
pub const STANDARD_SWITCH_LIST: &str = "esxcli_network_vswitch_standard_list";
pub const IP_INTERFACE_LIST: &str = "esxcli_network_ip_interface_list";
pub const IPV4_GET: &str = "esxcli_network_ip_interface_ipv4_get";
pub const PVRDMA_VMKNIC_OPTION: &str = "esxcli_system_settings_advanced_list_pvrdmavmknic";
pub const FIREWALL_GET: &str = "esxcli_network_firewall_get";
pub const FIREWALL_RULESET_LIST: &str = "esxcli_network_firewall_ruleset_list";
pub const VM_PROCESS_LIST: &str = "esxcli_vm_process_list";
pub const VM_PORT_LIST: &str = "esxcli_network_vm_port_list";
pub const PVRDMA_DEVICES_LS: &str = "vsish_pvrdma_devices_ls";
pub const PVRDMA_PROPERTIES: &str = "vsish_pvrdma_properties";
pub const NIC_PAUSE_PARAMS: &str = "esxcli_network_nic_pauseparams_list";
pub const NIC_DCB_STATUS: &str = "esxcli_network_nic_dcb_status_get";
pub const VMX_PVRDMA_LINES: &str = "vmx_pvrdma_lines";

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
        command: "for w in $(esxcli vm process list | sed -n 's/^ *World ID: *//p'); do echo \"==> $w <==\"; esxcli network vm port list -w \"$w\" 2>&1; echo \"<== $w exit $? ==>\"; done",
        why: "the switch, port group and uplink each VM MAC really uses (one batched query for all VMs)",
    },
    CommandSpec {
        id: PVRDMA_DEVICES_LS,
        command: "vsish -e ls /vmkModules/vrdma/pvrdmaDevices/",
        why: "one node <World ID>_<adapter index> per PVRDMA adapter of a running VM",
    },
    CommandSpec {
        id: PVRDMA_PROPERTIES,
        command: "for d in $(vsish -e ls /vmkModules/vrdma/pvrdmaDevices/ 2>/dev/null); do d=${d%/}; echo \"==> $d <==\"; vsish -e cat \"/vmkModules/vrdma/pvrdmaDevices/$d/properties\" 2>&1; echo \"<== $d exit $? ==>\"; done",
        why: "per adapter: 'Physical HCA available' (HCA or TCP fallback), MAC, RoCE version, MTU (one batched query for all adapters)",
    },
    CommandSpec {
        id: NIC_PAUSE_PARAMS,
        command: "esxcli network nic pauseParams list",
        why: "global pause (RX/TX) of the HCA uplink: RoCE needs a lossless network (pause or PFC)",
    },
    CommandSpec {
        id: NIC_DCB_STATUS,
        command: "for n in $(esxcli rdma device list 2>/dev/null | grep -o 'vmnic[0-9]*'); do echo \"==> $n <==\"; esxcli network nic dcb status get -n \"$n\" 2>&1; echo \"<== $n exit $? ==>\"; done",
        why: "DCB / PFC state of each RDMA uplink: RoCE needs a lossless network (pause or PFC) (one batched query)",
    },
    CommandSpec {
        id: VMX_PVRDMA_LINES,
        // `read -r` with an empty IFS keeps spaces, brackets and colons of the path intact;
        // grep only reads the file. grep exits 1 when no line matches (still a whole answer).
        command: "esxcli vm process list | sed -n 's/^ *Config File: //p' | while IFS= read -r f; do echo \"==> $f <==\"; grep -iE '^[[:space:]]*(displayname|virtualhw[.]version|memsize|sched[.]mem[.][a-z0-9.]+|ethernet[0-9]+[.](virtualdev|present|addresstype|address|generatedaddress|networkname|dvs[.][a-z0-9.]+)|vrdma[0-9]*[.][a-z0-9.]+)[[:space:]]*=' \"$f\" 2>&1; echo \"<== $f exit $? ==>\"; done",
        why: "per running VM, the PVRDMA lines of its .vmx (adapters, MACs, port groups, hardware version, memory reservation): lists PVRDMA VMs even when vsish fails",
    },
];

impl CommandSpec {
    /// Whether this is one of the shell loops that batch a per-VM query. Their output is
    /// a series of `==> KEY <==` sections, each with that iteration's own errors, so one
    /// failed iteration must not discard the others.
    pub fn is_batch(&self) -> bool {
        self.id == VM_PORT_LIST
            || self.id == PVRDMA_PROPERTIES
            || self.id == NIC_DCB_STATUS
            || self.id == VMX_PVRDMA_LINES
    }

    /// The command whose output a batched loop iterates over, when the loop runs it itself
    /// (quietly): if that command failed, the loop's empty output means "not run", not
    /// "nothing found".
    pub fn iterates_over(&self) -> Option<&'static str> {
        match self.id {
            VM_PORT_LIST | VMX_PVRDMA_LINES => Some(VM_PROCESS_LIST),
            PVRDMA_PROPERTIES => Some(PVRDMA_DEVICES_LS),
            NIC_DCB_STATUS => Some(RDMA_DEVICE_LIST),
            _ => None,
        }
    }

    /// How messages name the command: the command line, or for a batched loop the query
    /// it repeats (quoting a whole shell loop to a user helps nobody).
    pub fn label(&self) -> &'static str {
        match self.id {
            VM_PORT_LIST => "esxcli network vm port list -w <World ID> (batched over running VMs)",
            PVRDMA_PROPERTIES => "vsish -e cat /vmkModules/vrdma/pvrdmaDevices/<adapter>/properties (batched)",
            NIC_DCB_STATUS => "esxcli network nic dcb status get -n <RDMA uplink> (batched)",
            VMX_PVRDMA_LINES => "grep <PVRDMA keys> <Config File> (batched over running VMs' .vmx)",
            _ => self.command,
        }
    }
}

/// The spec with this id.
pub fn spec(id: &str) -> Option<&'static CommandSpec> {
    CATALOGUE.iter().find(|s| s.id == id)
}
