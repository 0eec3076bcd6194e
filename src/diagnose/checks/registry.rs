//! The one registry of check ids: each check's id string (a public contract for runbooks:
//! never change one), its title (what `--list-checks` prints), its family (the file under
//! `checks/` that judges it) and the check that must hold before it can be judged.
//!
//! Adding a check: one entry in [`registry!`] below and the function in its family's file;
//! the README's check table is generated from it (`PVRDMA_UPDATE_README=1 cargo test --test
//! readme`).

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
    /// `lossless.rs`: global pause or PFC on the HCA uplink.
    Lossless,
    /// `vm_config.rs`: PVRDMA VMs' settings from their .vmx files.
    VmConfig,
    /// `fleet.rs` (and `checks/vmknic.rs` for `vmknic-subnets`): across hosts.
    Fleet,
    /// `probe/`: across hosts, judged from the `--probe` pings.
    Probe,
}

macro_rules! registry {
    (
        checks { $($variant:ident => $id:literal, $family:ident, $prerequisite:expr, $title:expr, $passes:expr;)* }
        probe { $($pvariant:ident => $pid:literal, $pfamily:ident, $pprerequisite:expr, $ptitle:expr, $ppasses:expr;)* }
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
            pub(crate) const fn title(self) -> &'static str {
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
            pub(crate) const fn prerequisite(self) -> Option<CheckId> {
                match self {
                    $(CheckId::$variant => $prerequisite,)*
                    $(CheckId::$pvariant => $pprerequisite,)*
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
        EsxiVersion => "esxi-version", Device, None, "ESXi is 6.5 or later (PVRDMA's minimum)",
            "ESXi is 6.5 or later";
        RdmaDevicePresent => "rdma-device-present", Device, None,
            "a physical RDMA device (vmrdmaN) is registered",
            "`esxcli rdma device list` lists a device";
        RdmaDeviceActive => "rdma-device-active", Device, Some(RdmaDevicePresent),
            "the RDMA device's port is Active",
            "that device's `State` is `Active`";
        RdmaUplinkOnDvs => "rdma-uplink-on-dvs", Switch, Some(RdmaDevicePresent),
            "the RDMA device's paired uplink is an uplink of a vSphere Distributed Switch",
            "its `Paired Uplink` is an uplink of a vSphere Distributed Switch";
        DvsSingleUplink => "dvs-single-uplink", Switch, Some(RdmaUplinkOnDvs),
            "the HCA is the only uplink of that vDS (PVRDMA does not support NIC teaming)",
            "it is the only uplink of that vDS (PVRDMA does not support teaming)";
        PvrdmaVmknicTagged => "pvrdma-vmknic-tagged", Vmknic, None,
            "/Net/PVRDMAVmknic names a VMkernel adapter",
            "`/Net/PVRDMAVmknic` names a vmknic";
        PvrdmaVmknicValid => "pvrdma-vmknic-valid", Vmknic, Some(PvrdmaVmknicTagged),
            "the tagged vmknic exists, is enabled and has an IPv4 address",
            "that vmknic exists, is enabled and has an IPv4 address; the summary says where it sits, judged against every vDS whose single uplink is an HCA. PVRDMA uses the vmknic for control traffic only, and the VMware and Mellanox setup guides tag the management `vmk0` on a standard vSwitch, so its location never fails the check";
        FirewallPvrdma => "firewall-pvrdma", Firewall, None,
            "the firewall is off, or its pvrdma ruleset is enabled",
            "the firewall is off, or its `pvrdma` ruleset is enabled";
        MtuConsistent => "mtu-consistent", Mtu, Some(RdmaUplinkOnDvs),
            "vDS, vmknic and uplink NIC agree on the Ethernet MTU",
            "on every vDS carrying an HCA, vDS and uplink NIC have the same MTU, and so does the tagged vmknic when it sits on that vDS (fails when the vmknic's is larger); a vmknic elsewhere is not on the RDMA path";
        RoceSupported => "roce-supported", Roce, Some(RdmaDevicePresent),
            "the RDMA device supports RoCE v1 or v2, and every adapter uses a version it supports",
            "the device supports RoCE v1 or v2, and every adapter uses a version it supports";
        LosslessNetwork => "lossless-network", Lossless, Some(RdmaDevicePresent),
            "the HCA uplink has global pause or PFC on (RoCE needs a lossless network); warns at most",
            "the HCA uplink has global pause (RX and TX, `esxcli network nic pauseParams list`) or PFC on a priority (`esxcli network nic dcb status get -n <vmnic>`); warns otherwise (the switch side is not visible, and no public capture of the DCB output exists), never fails";
        VmHardwareVersion => "vm-hardware-version", VmConfig, None,
            "PVRDMA VMs (.vmx) have virtual hardware 13 or later",
            "every PVRDMA VM's `.vmx` has `virtualHW.version` 13 or later";
        VmMemoryReserved => "vm-memory-reserved", VmConfig, None,
            "PVRDMA VMs reserve all guest memory (sched.mem.pin, or sched.mem.min = memSize)",
            r#"every PVRDMA VM reserves all guest memory: `sched.mem.pin = "TRUE"` or `sched.mem.min` ≥ `memSize`"#;
        VmPvrdmaAdapterCount => "vm-pvrdma-adapter-count", VmConfig, None,
            "PVRDMA adapters per VM within the release's limit (10 from 7.0.2, 1 before)",
            "no VM has more PVRDMA adapters than its release allows: ten from ESXi 7.0.2, one before";
        VmNativeEndpoints => "vm-native-endpoints", VmConfig, None,
            "adapters requesting native endpoints have hardware 18+ on ESXi 7.0 U1+, and vsish agrees",
            r#"an adapter with `vrdmaN.nativeEndpointSupport = "TRUE"` has hardware 18+ on ESXi 7.0 U1+ (fails otherwise); warns when vsish's `Native endpoints supported` says `0` for it"#;
        VmknicSubnets => "vmknic-subnets", Fleet, None,
            "across hosts: the tagged vmknics share one IPv4 subnet (else routing and RoCE v2 are needed)",
            "the tagged vmknics of all hosts share one IPv4 subnet (warns otherwise: routing needed, RoCE v2 only; fails if an adapter uses RoCE v1)";
        VmknicIpv4Unique => "vmknic-ipv4-unique", Fleet, None,
            "across hosts: no two PVRDMA vmknics share an IPv4 address",
            "no two hosts' PVRDMA vmknics have the same IPv4 address";
        PvrdmaSameVds => "pvrdma-same-vds", Fleet, None,
            "across hosts: the PVRDMA ports of adapters on the HCA sit on one vDS (name and UUID)",
            r#"the PVRDMA ports of adapters on the HCA sit on one vDS (name and `VDS ID`), as the docs require ("connected to the same vSphere Distributed Switch")"#;
        RoceVersionPair => "roce-version-pair", Fleet, None,
            "across hosts: both ends of a pair use the same RoCE version (warns otherwise)",
            "both ends of every pair use the same RoCE version; a v1/v2 mismatch warns, and says that VMware's PVRDMA documentation does not describe its symptom";
    }
    probe {
        VmknicReachability => "vmknic-reachability", Probe, None,
            "the PVRDMA vmknics of all hosts reach each other, jumbo frames included (fails on unreachable, warns on mtu or lost packets)",
            "every probed pair of PVRDMA vmknics answers the plain and the jumbo don't-fragment ping (fails on `unreachable`, warns on `mtu` or loss)";
    }
}

impl CheckId {
    /// The registered check with this id string.
    pub(crate) fn from_id(id: &str) -> Option<CheckId> {
        CheckId::ALL.iter().copied().find(|c| c.id() == id)
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
    fn prerequisites_come_first_in_the_list() {
        for c in CheckId::ALL {
            if let Some(pre) = c.prerequisite() {
                assert!(pre < *c, "{} before {}", pre.id(), c.id());
            }
        }
    }
}
