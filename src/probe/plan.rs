//! Which peers each host probes, and the validated command lines that probe them.
use super::*;

use pvrdma_engine::diagnose::probe::{is_vmknic_name, Endpoint, CHECK_ID, COUNT, HEADERS, WAIT_SECONDS};

/// The peers of every host, by host name: all others, or with `sample` the next K hosts
/// on a ring of the sorted names. Sorting makes the choice independent of argument order,
/// so two runs over the same fleet probe the same pairs and a baseline compares them.
pub(crate) fn plan(hosts: &[String], sample: Option<usize>) -> BTreeMap<String, Vec<String>> {
    let mut ring: Vec<&String> = hosts.iter().collect();
    ring.sort();
    ring.dedup();
    let n = ring.len();
    let k = sample.unwrap_or(n).min(n.saturating_sub(1));
    let mut out = BTreeMap::new();
    for (i, host) in ring.iter().enumerate() {
        let peers = (1..=k)
            .filter_map(|step| ring.get((i + step) % n).map(|p| (*p).clone()))
            .collect();
        out.insert((*host).clone(), peers);
    }
    out
}

/// The one command line that probes `to` from `from`: the plain ping, then (when the MTU
/// is known) the don't-fragment ping that fills the MTU, each framed with the end markers.
pub(crate) fn probe_command(from: &Endpoint, to: Ipv4Addr) -> String {
    let vmk = &from.vmknic;
    let mut line = format!(
        "echo '==> plain <=='; vmkping -I {vmk} -c {COUNT} -W {WAIT_SECONDS} {to} 2>&1; echo \"<== plain exit $? ==>\""
    );
    if let Some(mtu) = from.mtu {
        let size = mtu.saturating_sub(HEADERS);
        line.push_str(&format!(
            "; echo '==> jumbo <=='; vmkping -I {vmk} -d -s {size} -c {COUNT} -W {WAIT_SECONDS} {to} 2>&1; echo \"<== jumbo exit $? ==>\""
        ));
    }
    line
}

/// What a probe command line asks for: (vmknic, target, jumbo payload size). `None` for
/// anything that is not exactly a line [`probe_command`] builds, so the demo server and
/// the tests can tell a probe from any other command.
pub fn parse_probe_command(line: &str) -> Option<(String, Ipv4Addr, Option<u32>)> {
    let rest = line.split_once("vmkping -I ")?.1;
    let (vmk, rest) = rest.split_once(' ')?;
    let target = rest.split_once(" 2>&1")?.0.rsplit(' ').next()?;
    let ip: Ipv4Addr = target.parse().ok()?;
    let size = match line.split_once(" -d -s ") {
        Some((_, r)) => Some(r.split(' ').next()?.parse::<u32>().ok()?),
        None => None,
    };
    let mtu = match size {
        Some(s) => Some(s.checked_add(HEADERS)?),
        None => None,
    };
    let from = Endpoint {
        vmknic: vmk.to_string(),
        ip: Ipv4Addr::UNSPECIFIED,
        mtu,
    };
    (is_vmknic_name(vmk) && probe_command(&from, ip) == line).then(|| (vmk.to_string(), ip, size))
}

/// The probe's entry of `--list-checks`.
pub(crate) fn listing() -> pvrdma_engine::report::ProbeListing {
    pvrdma_engine::report::ProbeListing {
        heading: format!("Path probe (only with --probe; sends {COUNT} ICMP echo requests per ping, changes nothing):"),
        id: PROBE_ID,
        commands: [
            format!("vmkping -I <vmk> -c {COUNT} -W {WAIT_SECONDS} <peer ip>"),
            format!("vmkping -I <vmk> -d -s <MTU-{HEADERS}> -c {COUNT} -W {WAIT_SECONDS} <peer ip>"),
        ],
        why: "from each host's PVRDMA vmknic to every other host's (or K of them with --probe-sample K), \
              plain and with don't-fragment at the vmknic MTU, in one framed command line per pair"
            .to_string(),
        check_id: CHECK_ID,
        check_title: pvrdma_engine::diagnose::CheckId::VmknicReachability.title(),
    }
}
