//! What a host's PVRDMA path is made of, as values: each RDMA device with its state, the
//! uplink it is paired with (link, speed, MTU) and the vDS holding that uplink, and the
//! switch the PVRDMA vmknic sits on. The checks judge these facts and cite them as
//! evidence; the HTML report's picture draws them. Not part of the JSON report, whose
//! consumers read the checks.
use super::Context;
use crate::capture::HostCapture;
use crate::catalogue as cat;
use pvrdma_parsers as p;

/// One host's RDMA devices, and where its PVRDMA vmknic is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostTopology {
    /// The RDMA devices in the order esxcli lists them.
    pub devices: Vec<RdmaPath>,
    /// Why the devices are not known (`esxcli rdma device list` failed or was not read);
    /// `devices` is then empty without meaning "none".
    pub devices_unknown: Option<String>,
    /// The switch the PVRDMA vmknic is on (its vDS, else its portset), when known.
    pub vmknic_switch: Option<String>,
}

/// An RDMA device and the way out of the host it gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RdmaPath {
    /// `vmrdma0`.
    pub device: String,
    /// Its driver (`nmlx5_rdma`).
    pub driver: String,
    /// Its port state as esxcli names it (`Active`, `Down`, ...).
    pub state: String,
    /// The state carries traffic (`Active`, deferred or not).
    pub active: bool,
    /// The device PVRDMA uses, the one the host checks judge.
    pub in_use: bool,
    /// The uplink it is paired with; `None` when it has none.
    pub uplink: Option<UplinkView>,
    /// The vDS whose uplink that is; `None` when no vDS holds it.
    pub switch: Option<SwitchView>,
}

/// A physical uplink (`vmnicN`) as the NIC list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UplinkView {
    pub name: String,
    /// `Up`, `Down`.
    pub link: Option<String>,
    /// Mbit/s.
    pub speed_mbps: Option<u64>,
    /// Its own Ethernet MTU.
    pub mtu: Option<u32>,
    /// Why link, speed or MTU are not known: the NIC list could not be read, or the host
    /// was read through the vSphere API, which gives no NIC's own MTU or link.
    pub unknown_why: Option<String>,
}

/// A vSphere Distributed Switch as the host sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchView {
    pub name: String,
    pub mtu: Option<u32>,
    pub uplinks: Vec<String>,
}

/// Why an uplink's own MTU and link state are unknown on a host read through the API.
pub const API_GIVES_NO_NIC_MTU: &str =
    "the vSphere API gives no NIC's own MTU or link state (only SSH shows them); its vDS sets the MTU";

/// The topology of a diagnosed host.
pub(super) fn of(ctx: &Context, capture: &HostCapture) -> HostTopology {
    let facts = ctx.facts;
    let devices = match &facts.rdma_devices {
        Ok(devices) => devices,
        Err(e) => {
            return HostTopology {
                devices_unknown: Some(e.to_string()),
                vmknic_switch: vmknic_switch(ctx),
                ..HostTopology::default()
            }
        }
    };
    // The API's NIC rows carry the vDS MTU, not the NIC's: drawn as unknown.
    let nics_from_api = capture.has_api_config() && !capture.outputs.contains_key(cat::NIC_LIST);
    let switches: &[p::DvsSwitch] = facts.dvs.as_deref().unwrap_or(&[]);
    let paths = devices
        .iter()
        .map(|d| {
            let uplink = d.paired_uplink.as_deref().map(|name| uplink(ctx, name, nics_from_api));
            let switch = d.paired_uplink.as_deref().and_then(|u| {
                switches
                    .iter()
                    .find(|s| s.uplinks.iter().any(|x| x == u))
                    .map(|s| SwitchView {
                        name: s.name.clone(),
                        mtu: s.mtu,
                        uplinks: s.uplinks.clone(),
                    })
            });
            RdmaPath {
                device: d.name.clone(),
                driver: d.driver.clone(),
                state: state_name(&d.state),
                active: d.state.is_active(),
                in_use: ctx.device.is_some_and(|u| std::ptr::eq(u, d)),
                uplink,
                switch,
            }
        })
        .collect();
    HostTopology {
        devices: paths,
        devices_unknown: None,
        vmknic_switch: vmknic_switch(ctx),
    }
}

fn uplink(ctx: &Context, name: &str, from_api: bool) -> UplinkView {
    let unknown = |why: String| UplinkView {
        name: name.to_string(),
        link: None,
        speed_mbps: None,
        mtu: None,
        unknown_why: Some(why),
    };
    if from_api {
        return unknown(API_GIVES_NO_NIC_MTU.to_string());
    }
    match &ctx.facts.nics {
        Err(e) => unknown(format!("`{}`: {e}", cat::display_label(cat::NIC_LIST))),
        Ok(nics) => match nics.iter().find(|n| n.name == name) {
            None => unknown(format!("`{}` does not list it", cat::display_label(cat::NIC_LIST))),
            Some(n) => UplinkView {
                name: name.to_string(),
                link: n.link_status.clone(),
                speed_mbps: n.speed,
                mtu: n.mtu,
                unknown_why: None,
            },
        },
    }
}

fn vmknic_switch(ctx: &Context) -> Option<String> {
    let name = ctx.tagged_vmknic.as_deref()?;
    let vmk = ctx.facts.vmknics.as_ref().ok()?.iter().find(|v| v.name == name)?;
    vmk.vds_name.clone().or_else(|| vmk.portset.clone())
}

/// A port state as esxcli prints it.
fn state_name(state: &p::PortState) -> String {
    match state {
        p::PortState::Active => "Active".to_string(),
        p::PortState::ActiveDefer => "Active (deferred)".to_string(),
        p::PortState::Down => "Down".to_string(),
        p::PortState::Init => "Init".to_string(),
        p::PortState::Armed => "Armed".to_string(),
        p::PortState::Nop => "Nop".to_string(),
        p::PortState::Other(s) => s.clone(),
    }
}
