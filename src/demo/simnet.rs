//! The simulated physical network behind `pvrdma-doctor demo`: answers the `--probe`
//! vmkping command lines of the simulated hosts from the scenario's data, so the demo can
//! show a healthy path, an MTU problem and an unreachable vmknic.
//!
//! Each host's vmknics (name, IPv4 address, MTU, enabled) come from its
//! `esxcli_network_ip_interface_list.txt` and `esxcli_network_ip_interface_ipv4_get.txt`;
//! what no esxcli output shows, the physical switch port, comes from an optional
//! `demo-network.conf` in the host's folder (`switch-port-mtu N`, `vlan N`; `#` comments).
//! A ping reaches a peer when some up host owns the address on an enabled vmknic and both
//! switch ports are in the same VLAN; a don't-fragment ping also needs its frame (the
//! payload plus 28 header bytes) to fit the sender's vmknic MTU (else `sendto() failed
//! (Message too long)`, as on a real host), both switch ports and the receiving vmknic
//! (else it is silently lost).
//!
//! The output follows the real vmkping captures quoted in `parsers/src/vmkping.rs`; the
//! round-trip times are made up (deterministic, so demo runs compare).
use crate::demo::simhost::SimHost;
use crate::probe::parse_probe_command;
use pvrdma_engine::diagnose::probe::{COUNT, HEADERS};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::Ipv4Addr;

/// File in a scenario host folder describing its physical switch port.
const NETWORK_FILE: &str = "demo-network.conf";

#[derive(Debug, Clone)]
struct Vmknic {
    ip: Option<Ipv4Addr>,
    mtu: u32,
    enabled: bool,
}

#[derive(Debug, Clone)]
struct Node {
    up: bool,
    vmknics: BTreeMap<String, Vmknic>,
    port_mtu: Option<u32>,
    vlan: u32,
}

/// A problem a simulated switch port plants, and the probe status that shows it.
pub(crate) struct PlantedPort {
    pub(crate) host: String,
    pub(crate) line: String,
    pub(crate) short: String,
    pub(crate) status: pvrdma_engine::diagnose::probe::ProbeStatus,
}

/// Every simulated host's network view.
#[derive(Debug, Clone, Default)]
pub(crate) struct SimNet {
    nodes: BTreeMap<String, Node>,
}

impl SimNet {
    pub(crate) fn new(hosts: &[SimHost]) -> SimNet {
        let mut nodes = BTreeMap::new();
        for h in hosts {
            let file = |id: &str| h.stdout(id);
            let mut vmknics = BTreeMap::new();
            for v in pvrdma_parsers::parse_ip_interface_list(file(pvrdma_engine::catalogue::IP_INTERFACE_LIST))
                .unwrap_or_default()
            {
                vmknics.insert(
                    v.name.clone(),
                    Vmknic {
                        ip: None,
                        mtu: v.mtu.unwrap_or(1500),
                        enabled: v.enabled.unwrap_or(true),
                    },
                );
            }
            for row in pvrdma_parsers::parse_ip_interface_ipv4_get(file(pvrdma_engine::catalogue::IPV4_GET))
                .unwrap_or_default()
            {
                if let Some(v) = vmknics.get_mut(&row.name) {
                    v.ip = row.address.as_deref().and_then(|a| a.trim().parse().ok());
                }
            }
            let mut port_mtu = None;
            let mut vlan = 0;
            for line in h.files.get(NETWORK_FILE).map(String::as_str).unwrap_or("").lines() {
                let line = line.split('#').next().unwrap_or("").trim();
                let mut words = line.split_whitespace();
                match (words.next(), words.next().and_then(|w| w.parse::<u32>().ok())) {
                    (Some("switch-port-mtu"), Some(n)) => port_mtu = Some(n),
                    (Some("vlan"), Some(n)) => vlan = n,
                    _ => {}
                }
            }
            nodes.insert(
                h.name.clone(),
                Node {
                    up: !h.is_down(),
                    vmknics,
                    port_mtu,
                    vlan,
                },
            );
        }
        SimNet { nodes }
    }

    /// What the simulated switch ports plant that no esxcli output shows (for the demo's
    /// opening lines): a port whose MTU is smaller than its host's largest vmknic MTU, a
    /// port in another VLAN than most.
    pub(crate) fn planted_ports(hosts: &[SimHost]) -> Vec<PlantedPort> {
        let net = SimNet::new(hosts);
        let mut vlans: BTreeMap<u32, usize> = BTreeMap::new();
        for n in net.nodes.values().filter(|n| n.up) {
            *vlans.entry(n.vlan).or_default() += 1;
        }
        let usual = vlans.iter().max_by_key(|(_, count)| **count).map(|(v, _)| *v);
        let mut planted = Vec::new();
        for (name, n) in net.nodes.iter().filter(|(_, n)| n.up) {
            let largest = n.vmknics.values().filter(|v| v.enabled).map(|v| v.mtu).max();
            if let (Some(port), Some(vmk)) = (n.port_mtu, largest) {
                if port < vmk {
                    planted.push(PlantedPort {
                        host: name.clone(),
                        line: format!(
                            "{name}: its physical switch port has MTU {port}, smaller than its vmknic MTU {vmk} (no esxcli output shows it; the probe's jumbo ping finds it)"
                        ),
                        short: format!("{name}: switch port MTU {port}"),
                        status: pvrdma_engine::diagnose::probe::ProbeStatus::Mtu,
                    });
                }
            }
            if let Some(usual) = usual.filter(|u| *u != n.vlan) {
                planted.push(PlantedPort {
                    host: name.clone(),
                    line: format!(
                        "{name}: its physical switch port is in VLAN {}, the other hosts' in VLAN {usual} (no esxcli output shows it; the probe finds the vmknic unreachable)",
                        n.vlan
                    ),
                    short: format!("{name}: switch port in VLAN {}", n.vlan),
                    status: pvrdma_engine::diagnose::probe::ProbeStatus::Unreachable,
                });
            }
        }
        planted
    }

    /// The answer of host `from` to a probe command line: (stdout, stderr, exit status);
    /// `None` when the line is not a probe.
    pub(crate) fn answer(&self, from: &str, command: &str) -> Option<(String, String, u32)> {
        let (vmk, ip, size) = parse_probe_command(command)?;
        let mut out = String::new();
        for (key, payload) in [("plain", None), ("jumbo", size)] {
            if key == "jumbo" && payload.is_none() {
                continue;
            }
            let (text, code) = self.ping(from, &vmk, ip, payload);
            let _ = write!(out, "==> {key} <==\n{text}<== {key} exit {code} ==>\n");
        }
        // The last `echo` of the line succeeds, so the shell's status is 0.
        Some((out, String::new(), 0))
    }

    /// One vmkping: its output and exit status. `dont_fragment` = `Some(payload)`.
    fn ping(&self, from: &str, vmk: &str, ip: Ipv4Addr, dont_fragment: Option<u32>) -> (String, u32) {
        let Some(sender) = self.nodes.get(from) else {
            return (String::new(), 1);
        };
        let Some(own) = sender.vmknics.get(vmk) else {
            // Composed wording: no public capture of vmkping's unknown-interface error.
            return (format!("Unknown interface '{vmk}': Invalid argument\n"), 1);
        };
        let payload = dont_fragment.unwrap_or(56);
        let frame = payload.saturating_add(HEADERS);
        let mut out = format!("PING {ip} ({ip}): {payload} data bytes\n");
        let stats = |out: &mut String, received: u32| {
            let loss = (COUNT - received) * 100 / COUNT;
            let _ = write!(
                out,
                "\n--- {ip} ping statistics ---\n{COUNT} packets transmitted, {received} packets received, {loss}% packet loss\n"
            );
        };
        if dont_fragment.is_some() && frame > own.mtu {
            for _ in 0..COUNT {
                out.push_str("sendto() failed (Message too long)\n");
            }
            stats(&mut out, 0);
            return (out, 2);
        }
        let receiver = self.nodes.values().find_map(|n| {
            let v = n.vmknics.values().find(|v| v.enabled && v.ip == Some(ip))?;
            n.up.then_some((n, v))
        });
        let reaches = receiver.is_some_and(|(peer, v)| {
            let fits = dont_fragment.is_none()
                || [sender.port_mtu, peer.port_mtu, Some(v.mtu)]
                    .iter()
                    .flatten()
                    .all(|m| frame <= *m);
            own.enabled && peer.vlan == sender.vlan && fits
        });
        if !reaches {
            stats(&mut out, 0);
            return (out, 2);
        }
        // Deterministic made-up round trips: 0.1xx to 0.3xx ms, larger frames a bit slower.
        let seed = u32::from(ip) % 97 + frame / 100;
        let times: Vec<f64> = (0..COUNT)
            .map(|i| 0.12 + f64::from((seed + i * 37) % 180) / 1000.0)
            .collect();
        for (i, t) in times.iter().enumerate() {
            let _ = writeln!(
                out,
                "{} bytes from {ip}: icmp_seq={i} ttl=64 time={t:.3} ms",
                payload.saturating_add(8)
            );
        }
        stats(&mut out, COUNT);
        let min = times.iter().copied().fold(f64::INFINITY, f64::min);
        let max = times.iter().copied().fold(0.0, f64::max);
        let avg = times.iter().sum::<f64>() / f64::from(COUNT);
        let _ = writeln!(out, "round-trip min/avg/max = {min:.3}/{avg:.3}/{max:.3} ms");
        (out, 0)
    }
}
