//! `lossless-network`: "RoCE requires a network that is configured for lossless traffic"
//! (VMware vSphere documentation, "Remote Direct Memory Access for Virtual Machines"):
//! global pause or PFC on the HCA uplink. Only the host side is visible (the
//! physical switch must agree), and the DCB output format has no public capture, so this
//! check warns at most; it never fails.
use super::super::{check, ev, not_checked, with_advice, Check, CheckId, Context, Status};
use crate::catalogue as cat;

const ID: CheckId = CheckId::LosslessNetwork;

pub(in crate::diagnose) fn check_lossless(ctx: &Context) -> Check {
    let f = ctx.facts;
    // The uplinks PVRDMA uses: those of HCAs on a vDS, else every HCA's uplink.
    let mut uplinks: Vec<&str> = Vec::new();
    let devices: Vec<&pvrdma_parsers::RdmaDevice> = if ctx.rdma_switches.is_empty() {
        f.rdma_devices.as_deref().unwrap_or(&[]).iter().collect()
    } else {
        ctx.rdma_switches.iter().map(|(d, _)| *d).collect()
    };
    for d in devices {
        if let Some(u) = d.paired_uplink.as_deref() {
            if !uplinks.contains(&u) {
                uplinks.push(u);
            }
        }
    }
    if uplinks.is_empty() {
        return not_checked(ID, "no RDMA device with a paired uplink (see rdma-device-present)");
    }
    let evidence = vec![
        ev(cat::NIC_PAUSE_PARAMS, "Pause RX, Pause TX"),
        ev(cat::NIC_DCB_STATUS, "PFC Enabled, PFC Configuration"),
    ];
    let (mut lossless, mut lossy, mut unknown) = (Vec::new(), Vec::new(), Vec::new());
    for u in &uplinks {
        let pause = match &f.nic_pause {
            Ok(rows) => match rows.iter().find(|r| r.nic == *u) {
                Some(r) => match (r.rx, r.tx) {
                    (Some(true), Some(true)) => Ok(true),
                    (Some(_), Some(_)) => Ok(false),
                    _ => Err("Pause RX/TX not stated".to_string()),
                },
                None => Err("not in pauseParams list".to_string()),
            },
            Err(e) => Err(e.to_string()),
        };
        let pfc = match &f.nic_dcb {
            Ok(sections) => match sections.iter().find(|s| s.nic == *u) {
                Some(s) => match &s.state {
                    Ok(state) => match state.pfc_enabled {
                        Some(true) if !state.pfc_priorities.is_empty() => Ok(Some(state.pfc_priorities.clone())),
                        Some(true) => Err("PFC enabled on no stated priority".to_string()),
                        Some(false) => Ok(None),
                        None => Err("PFC Enabled not stated".to_string()),
                    },
                    Err(e) => Err(e.clone()),
                },
                None => Err("no DCB section for it".to_string()),
            },
            Err(e) => Err(e.to_string()),
        };
        match (pause, pfc) {
            (_, Ok(Some(prios))) => {
                let list: Vec<String> = prios.iter().map(u8::to_string).collect();
                lossless.push(format!("{u}: PFC on priority {}", list.join(", ")));
            }
            (Ok(true), _) => lossless.push(format!("{u}: global pause RX and TX on")),
            (Ok(false), Ok(None)) => lossy.push(format!("{u}: no global pause (RX/TX) and PFC disabled")),
            (Ok(false), Err(e)) => unknown.push(format!("{u}: no global pause; PFC state unknown ({e})")),
            (Err(e), Ok(None)) => unknown.push(format!("{u}: PFC disabled; pause state unknown ({e})")),
            (Err(a), Err(b)) => unknown.push(format!("{u}: pause unknown ({a}); PFC unknown ({b})")),
        }
    }
    let known = lossless.join("; ");
    if !lossy.is_empty() {
        let mut summary = format!(
            "{}: RoCE needs a lossless network (global pause or PFC); the physical switch is not visible from the host",
            lossy.join("; ")
        );
        if !known.is_empty() {
            summary.push_str(&format!("; {known}"));
        }
        return with_advice(
            check(ID, Status::Warn, summary, evidence),
            "configure PFC (DCB, e.g. priority 3) or global pause on the HCA and on its switch ports per the NIC vendor's guide (Mellanox: esxcli system module parameters set -m nmlx5_core -p \"pfctx=0x08 pfcrx=0x08\", then reboot)",
        );
    }
    if !unknown.is_empty() {
        let mut summary = unknown.join("; ");
        if !known.is_empty() {
            summary.push_str(&format!("; {known}"));
        }
        return check(ID, Status::Unknown, summary, evidence);
    }
    check(
        ID,
        Status::Pass,
        format!("{known} (host side; the switch must match)"),
        evidence,
    )
}
