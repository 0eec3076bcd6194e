//! The one registry of checks: each check's id string (a public contract for runbooks:
//! never change one), its family (the file that judges it), the check that must hold
//! before it can be judged, the function that judges it, its title (what `--list-checks`
//! prints) and when it passes (the README's check table). The diagnosis runs the checks
//! by walking this list: a check is judged because it is listed here, in this order.
//!
//! Adding a check: one entry in [`registry!`] below and its judge function in its
//! family's file; then regenerate the README's check table (`PVRDMA_UPDATE_README=1 cargo
//! test --test suite readme`) and add or review the golden report that shows it
//! (`docs/architecture.md`, "Adding a check").
use super::super::fleet::{checks as fleet, Fleet};
use super::super::{Check, Context};
use super::{device, firewall, lossless, mtu, roce, switch, vm_config, vmknic};

/// Which file judges a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// `checks/device.rs`: ESXi version and the RDMA device.
    Device,
    /// `checks/switch.rs`: the HCA uplink and its vDS.
    Switch,
    /// `checks/vmknic.rs`: the PVRDMA vmknic.
    Vmknic,
    /// `checks/firewall.rs`: the pvrdma firewall ruleset.
    Firewall,
    /// `checks/mtu.rs`: MTU along the path.
    Mtu,
    /// `checks/roce.rs`: RoCE versions.
    Roce,
    /// `checks/lossless.rs`: global pause or PFC on the HCA uplink.
    Lossless,
    /// `checks/vm_config.rs`: PVRDMA VMs' settings from their .vmx files.
    VmConfig,
    /// `fleet/checks.rs`: across hosts, from the diagnosed hosts and their adapter pairs.
    Fleet,
    /// `probe/judge.rs`: across hosts, judged from the `--probe` pings.
    Probe,
}

/// How the diagnosis judges a check: the function it calls, and on what.
#[derive(Clone, Copy)]
pub(in crate::diagnose) enum Judge {
    /// On every diagnosed host, from its facts.
    Host(fn(&Context) -> Check),
    /// On a host whose capture holds the facts the check reads; `None` on the others
    /// (the VM checks on a capture without any `.vmx` facts).
    HostWhenApplicable(fn(&Context) -> Option<Check>),
    /// Across hosts, once every host is diagnosed; `None` when there is nothing to
    /// compare (fewer than two hosts with a PVRDMA vmknic or with adapters, no probe).
    Fleet(fn(&Fleet) -> Option<Check>),
}

macro_rules! registry {
    (
        checks { $($variant:ident => $id:literal, $family:ident, $prerequisite:expr, $judge:expr, $title:expr, $passes:expr;)* }
        probe { $($pvariant:ident => $pid:literal, $pfamily:ident, $pprerequisite:expr, $pjudge:expr, $ptitle:expr, $ppasses:expr;)* }
    ) => {
        /// A check id. [`CheckId::id`] is the string in reports; the order of [`CheckId::ALL`]
        /// is the order of `--list-checks` and of the README's table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum CheckId {
            $($variant,)*
            $($pvariant,)*
        }

        impl CheckId {
            /// Every check, in the order `--list-checks` prints them.
            pub const ALL: &'static [CheckId] = &[$(CheckId::$variant,)* $(CheckId::$pvariant,)*];

            /// The id string (stable: a public contract).
            pub const fn id(self) -> &'static str {
                match self {
                    $(CheckId::$variant => $id,)*
                    $(CheckId::$pvariant => $pid,)*
                }
            }

            /// What the check verifies, as `--list-checks` prints it.
            pub const fn title(self) -> &'static str {
                match self {
                    $(CheckId::$variant => $title,)*
                    $(CheckId::$pvariant => $ptitle,)*
                }
            }

            /// When the check passes, in the words of the README's check table (Markdown).
            pub const fn passes_when(self) -> &'static str {
                match self {
                    $(CheckId::$variant => $passes,)*
                    $(CheckId::$pvariant => $ppasses,)*
                }
            }

            /// The family (file) that judges it.
            pub const fn family(self) -> Family {
                match self {
                    $(CheckId::$variant => Family::$family,)*
                    $(CheckId::$pvariant => Family::$pfamily,)*
                }
            }

            /// The check that must pass first: when it fails or is not applicable, this one
            /// is `not-applicable` with that reason.
            pub const fn prerequisite(self) -> Option<CheckId> {
                match self {
                    $(CheckId::$variant => $prerequisite,)*
                    $(CheckId::$pvariant => $pprerequisite,)*
                }
            }

            /// The function that judges it.
            pub(in crate::diagnose) fn judge(self) -> Judge {
                match self {
                    $(CheckId::$variant => $judge,)*
                    $(CheckId::$pvariant => $pjudge,)*
                }
            }
        }

        /// The public check ids, in report order, with what each one verifies (`--list-checks`
        /// under "Checks"); built from the same list as [`CheckId`]. The probe's check is
        /// listed in the probe's own section, with its commands.
        pub const CHECKS: &[(&str, &str)] = &[$(($id, $title),)*];
    };
}

use CheckId::*;

registry! {
    checks {
        EsxiVersion => "esxi-version", Device, None, Judge::Host(device::check_version), "ESXi is 6.5 or later (PVRDMA's minimum)",
            "ESXi is 6.5 or later";
        RdmaDevicePresent => "rdma-device-present", Device, None, Judge::Host(device::check_device_present),
            "a physical RDMA device (vmrdmaN) is registered",
            "`esxcli rdma device list` lists a device";
        RdmaDeviceActive => "rdma-device-active", Device, Some(RdmaDevicePresent), Judge::Host(device::check_device_active),
            "the RDMA device's port is Active",
            "that device's `State` is `Active`";
        RdmaUplinkOnDvs => "rdma-uplink-on-dvs", Switch, Some(RdmaDevicePresent), Judge::Host(switch::check_uplink_on_dvs),
            "the RDMA device's paired uplink is an uplink of a vSphere Distributed Switch",
            "its `Paired Uplink` is an uplink of a vSphere Distributed Switch";
        DvsSingleUplink => "dvs-single-uplink", Switch, Some(RdmaUplinkOnDvs), Judge::Host(switch::check_single_uplink),
            "the HCA is the only uplink of that vDS (PVRDMA does not support NIC teaming)",
            "it is the only uplink of that vDS (PVRDMA does not support teaming)";
        PvrdmaVmknicTagged => "pvrdma-vmknic-tagged", Vmknic, None, Judge::Host(vmknic::check_vmknic_tagged),
            "/Net/PVRDMAVmknic names a VMkernel adapter",
            "`/Net/PVRDMAVmknic` names a vmknic";
        PvrdmaVmknicValid => "pvrdma-vmknic-valid", Vmknic, Some(PvrdmaVmknicTagged), Judge::Host(vmknic::check_vmknic_valid),
            "the tagged vmknic exists, is enabled and has an IPv4 address",
            "that vmknic exists, is enabled and has an IPv4 address; the summary says where it sits, judged against every vDS whose single uplink is an HCA. PVRDMA uses the vmknic for control traffic only, and VMware's paper \"Paravirtual RDMA for High Performance Computing\" tags the management `vmk0` on a standard vSwitch, so its location never fails the check";
        FirewallPvrdma => "firewall-pvrdma", Firewall, None, Judge::Host(firewall::check_firewall),
            "the firewall is off, or its pvrdma ruleset is enabled",
            "the firewall is off, or its `pvrdma` ruleset is enabled";
        MtuConsistent => "mtu-consistent", Mtu, Some(RdmaUplinkOnDvs), Judge::Host(mtu::check_mtu),
            "vDS, vmknic and uplink NIC agree on the Ethernet MTU",
            "on every vDS carrying an HCA, vDS and uplink NIC have the same MTU, and so does the tagged vmknic when it sits on that vDS (fails when the vmknic's is larger); a vmknic elsewhere is not on the RDMA path";
        RoceSupported => "roce-supported", Roce, Some(RdmaDevicePresent), Judge::Host(roce::check_roce),
            "the RDMA device supports RoCE v1 or v2, and every adapter uses a version it supports",
            "the device supports RoCE v1 or v2, and every adapter uses a version it supports";
        LosslessNetwork => "lossless-network", Lossless, Some(RdmaDevicePresent), Judge::Host(lossless::check_lossless),
            "the HCA uplink has global pause or PFC on (RoCE needs a lossless network); warns at most",
            "the HCA uplink has global pause (RX and TX, `esxcli network nic pauseParams list`) or PFC on a priority (`esxcli network nic dcb status get -n <vmnic>`); warns otherwise (the switch side is not visible, and no public capture of the DCB output exists), never fails";
        VmHardwareVersion => "vm-hardware-version", VmConfig, None, Judge::HostWhenApplicable(vm_config::check_hardware_version),
            "PVRDMA VMs (.vmx) have virtual hardware 13 or later",
            "every PVRDMA VM's `.vmx` has `virtualHW.version` 13 or later";
        VmMemoryReserved => "vm-memory-reserved", VmConfig, None, Judge::HostWhenApplicable(vm_config::check_memory_reserved),
            "PVRDMA VMs reserve all guest memory (sched.mem.pin, or sched.mem.min = memSize)",
            r#"every PVRDMA VM reserves all guest memory: `sched.mem.pin = "TRUE"` or `sched.mem.min` ≥ `memSize`"#;
        VmPvrdmaAdapterCount => "vm-pvrdma-adapter-count", VmConfig, None, Judge::HostWhenApplicable(vm_config::check_adapter_count),
            "PVRDMA adapters per VM within the release's limit (10 from 7.0.2, 1 before)",
            "no VM has more PVRDMA adapters than its release allows: ten from ESXi 7.0.2, one before";
        VmNativeEndpoints => "vm-native-endpoints", VmConfig, None, Judge::HostWhenApplicable(vm_config::check_native_endpoints),
            "adapters requesting native endpoints have hardware 18+ on ESXi 7.0 U1+, and vsish agrees",
            r#"an adapter with `vrdmaN.nativeEndpointSupport = "TRUE"` has hardware 18+ on ESXi 7.0 U1+ (fails otherwise); warns when vsish's `Native endpoints supported` says `0` for it"#;
        VmknicSubnets => "vmknic-subnets", Fleet, None, Judge::Fleet(fleet::vmknic_subnets),
            "across hosts: the tagged vmknics share one IPv4 subnet (else routing and RoCE v2 are needed)",
            "the tagged vmknics of all hosts share one IPv4 subnet (warns otherwise: routing needed, RoCE v2 only; fails if an adapter uses RoCE v1)";
        VmknicIpv4Unique => "vmknic-ipv4-unique", Fleet, None, Judge::Fleet(fleet::ipv4_unique),
            "across hosts: no two PVRDMA vmknics share an IPv4 address",
            "no two hosts' PVRDMA vmknics have the same IPv4 address";
        PvrdmaSameVds => "pvrdma-same-vds", Fleet, None, Judge::Fleet(fleet::same_vds),
            "across hosts: the PVRDMA ports of adapters on the HCA sit on one vDS (name and UUID)",
            r#"the PVRDMA ports of adapters on the HCA sit on one vDS (name and `VDS ID`), as the vSphere documentation requires ("connected to the same vSphere Distributed Switch")"#;
        RoceVersionPair => "roce-version-pair", Fleet, None, Judge::Fleet(fleet::roce_pair),
            "across hosts: both ends of a pair use the same RoCE version (warns otherwise)",
            "both ends of every pair use the same RoCE version; a v1/v2 mismatch warns, and says that the PVRDMA documentation does not describe its effect";
    }
    probe {
        VmknicReachability => "vmknic-reachability", Probe, None, Judge::Fleet(fleet::reachability),
            "the PVRDMA vmknics of all hosts reach each other, jumbo frames included (fails on unreachable, warns on mtu or lost packets)",
            "every probed pair of PVRDMA vmknics answers the plain and the jumbo don't-fragment ping (fails on `unreachable`, warns on `mtu` or loss)";
    }
}

impl CheckId {
    /// The registered check with this id string.
    pub fn from_id(id: &str) -> Option<CheckId> {
        CheckId::ALL.iter().copied().find(|c| c.id() == id)
    }

    /// Whether it is judged across hosts (the report's `fleet_checks`), not per host.
    pub fn across_hosts(self) -> bool {
        matches!(self.family(), Family::Fleet | Family::Probe)
    }

    /// Whether only SSH can judge it: the vSphere API does not carry what it reads (flow
    /// control and PFC on the uplinks), so a configuration-only host leaves it `unknown`.
    pub fn needs_ssh(self) -> bool {
        self == CheckId::LosslessNetwork
    }
}

/// The id string, padded to the formatter's width (`{:<20}` lines up a check list).
impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.id())
    }
}

/// Compares with the id string (`c.id == "firewall-pvrdma"`), as a script reading the
/// report would.
impl PartialEq<str> for CheckId {
    fn eq(&self, other: &str) -> bool {
        self.id() == other
    }
}

impl PartialEq<&str> for CheckId {
    fn eq(&self, other: &&str) -> bool {
        self.id() == *other
    }
}

/// The id string: reports carry `"id": "firewall-pvrdma"`, as before the type existed.
impl serde::Serialize for CheckId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// A plain string in the report's schema, like the `&str` it replaced (the schema does
/// not list the ids: a new check must not make older reports invalid).
impl schemars::JsonSchema for CheckId {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CheckId".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <&str>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_listed_in_order() {
        let ids: Vec<&str> = CheckId::ALL.iter().map(|c| c.id()).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        assert_eq!(CHECKS.len() + 1, ids.len(), "every check but the probe's");
        for (c, (id, title)) in CheckId::ALL.iter().zip(CHECKS) {
            assert_eq!((c.id(), c.title()), (*id, *title));
            assert_eq!(CheckId::from_id(id), Some(*c));
        }
    }

    #[test]
    fn every_check_is_judged_where_its_family_says() {
        for c in CheckId::ALL {
            let across = matches!(c.judge(), Judge::Fleet(_));
            assert_eq!(across, c.across_hosts(), "{c}: judge and family disagree");
        }
    }

    #[test]
    fn the_id_is_the_string_in_text_and_json() {
        let c = CheckId::FirewallPvrdma;
        assert_eq!(format!("[{c:<17}]"), "[firewall-pvrdma  ]");
        assert_eq!(serde_json::to_value(c).ok(), Some(serde_json::json!("firewall-pvrdma")));
    }

    #[test]
    fn prerequisites_come_first_in_the_list() {
        for c in CheckId::ALL {
            if let Some(pre) = c.prerequisite() {
                assert!(pre < *c, "{} before {}", pre.id(), c.id());
            }
        }
    }
}
