//! The adapter pairs between the picture's bands (each band a folded set of hosts), by
//! transport class, from the diagnosis' own counts: a host pair the transport summary
//! lists brings its counts; one it does not list has only `rdma` pairs (or, with an end
//! read without SSH, pairs whose configuration predicts the HCA), so its count is the
//! product of the two hosts' adapters. Linear in the listed pairs, never in the square of
//! the hosts.
//!
//! A pair with an end read only through the vSphere API was not observed: its class is
//! what the configuration predicts (each adapter's `predicted`), drawn apart from an
//! observed one.
use crate::diagnose::{Diagnosis, HostDiagnosis, Verdict};
use std::collections::{BTreeMap, HashMap};

/// Adapter-pair counts between two bands (or within one: between its different hosts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub rdma: u64,
    pub tcp: u64,
    pub blocked: u64,
    pub unknown: u64,
    /// Not observed: the configuration predicts the HCA at both ends.
    pub predicted_rdma: u64,
    /// Not observed: the configuration predicts a TCP fallback at an end.
    pub predicted_tcp: u64,
}

/// Pairs between different VMs of one host (memcpy), summed per band.
pub(super) type Memcpy = Vec<u64>;

/// What each host contributes: its band, its adapters, whether it was read without SSH.
struct HostPart {
    band: Option<usize>,
    adapters: u64,
    configuration_only: bool,
}

/// The counts per band pair `(i, j)`, `i <= j`, and the memcpy pairs per band. `band_of`
/// maps a host to its band; hosts without one (not drawn) are left out.
pub(super) fn band_pairs(
    d: &Diagnosis,
    band_of: &HashMap<&str, usize>,
    bands: usize,
) -> (BTreeMap<(usize, usize), Counts>, Memcpy) {
    let parts: Vec<HostPart> = d
        .hosts
        .iter()
        .map(|h| HostPart {
            band: band_of.get(h.host.as_str()).copied(),
            adapters: h.vms.iter().map(|v| v.adapters.len() as u64).sum(),
            configuration_only: h.configuration_only,
        })
        .collect();
    let mut out = unlisted(&parts, bands);
    let mut memcpy = vec![0u64; bands];
    let index: HashMap<&str, usize> = d.hosts.iter().enumerate().map(|(i, h)| (h.host.as_str(), i)).collect();
    for pair in &d.transport.host_pairs {
        let (Some(&a), Some(&b)) = (index.get(pair.a()), index.get(pair.b())) else {
            continue;
        };
        let (Some(ba), Some(bb)) = (parts[a].band, parts[b].band) else {
            continue;
        };
        if a == b {
            memcpy[ba] += pair.pairs.memcpy;
            continue;
        }
        let c = out.entry((ba.min(bb), ba.max(bb))).or_default();
        // Take out what `unlisted` assumed for this host pair, put in what it is.
        let assumed = parts[a].adapters * parts[b].adapters;
        if parts[a].configuration_only || parts[b].configuration_only {
            c.predicted_rdma = c.predicted_rdma.saturating_sub(assumed);
            let split = predicted(&d.hosts[a], &d.hosts[b], &pair.pairs);
            c.predicted_rdma += split.predicted_rdma;
            c.predicted_tcp += split.predicted_tcp;
            c.unknown += split.unknown;
        } else {
            c.rdma = c.rdma.saturating_sub(assumed);
            c.unknown += pair.pairs.unknown;
        }
        c.rdma += pair.pairs.rdma;
        c.tcp += pair.pairs.tcp;
        c.blocked += pair.pairs.blocked;
    }
    (out, memcpy)
}

/// The pairs between the bands' hosts as if the transport summary listed no host pair:
/// `rdma` between observed hosts, predicted `rdma` with an end read without SSH.
fn unlisted(parts: &[HostPart], bands: usize) -> BTreeMap<(usize, usize), Counts> {
    // Per band: adapters on observed hosts and on configuration-only hosts, and the sums
    // of squares (a host's pairs with itself are not between hosts).
    let mut observed = vec![0u64; bands];
    let mut configured = vec![0u64; bands];
    let mut squares = vec![0u64; bands];
    let mut observed_squares = vec![0u64; bands];
    for p in parts {
        let Some(b) = p.band else { continue };
        squares[b] += p.adapters * p.adapters;
        if p.configuration_only {
            configured[b] += p.adapters;
        } else {
            observed[b] += p.adapters;
            observed_squares[b] += p.adapters * p.adapters;
        }
    }
    let mut out = BTreeMap::new();
    for i in 0..bands {
        for j in i..bands {
            let (all, seen) = if i == j {
                let n = observed[i] + configured[i];
                (
                    (n * n - squares[i]) / 2,
                    (observed[i] * observed[i] - observed_squares[i]) / 2,
                )
            } else {
                (
                    (observed[i] + configured[i]) * (observed[j] + configured[j]),
                    observed[i] * observed[j],
                )
            };
            if all > 0 {
                out.insert(
                    (i, j),
                    Counts {
                        rdma: seen,
                        predicted_rdma: all - seen,
                        ..Counts::default()
                    },
                );
            }
        }
    }
    out
}

/// A host's adapters as the configuration sees them: on the HCA (observed or predicted),
/// predicted to fall back, observed to fall back.
fn predictions(h: &HostDiagnosis) -> (u64, u64, u64) {
    let (mut hca, mut predicted_tcp, mut tcp) = (0, 0, 0);
    for a in h.vms.iter().flat_map(|v| &v.adapters) {
        match (a.verdict, a.predicted) {
            (Verdict::Hca, _) | (Verdict::Unknown, Some(Verdict::Hca)) => hca += 1,
            (Verdict::Unknown, Some(Verdict::TcpFallback)) => predicted_tcp += 1,
            (Verdict::TcpFallback, _) => tcp += 1,
            _ => {}
        }
    }
    (hca, predicted_tcp, tcp)
}

/// The `unknown` pairs of a host pair with an end read without SSH, split by what the
/// configuration predicts: the HCA at both ends (less the pairs a check across hosts
/// blocks, which are counted as blocked), a fallback at an end, or nothing.
fn predicted(a: &HostDiagnosis, b: &HostDiagnosis, listed: &crate::diagnose::TransportCounts) -> Counts {
    let (hca_a, ptcp_a, tcp_a) = predictions(a);
    let (hca_b, ptcp_b, tcp_b) = predictions(b);
    let n_a: u64 = a.vms.iter().map(|v| v.adapters.len() as u64).sum();
    let n_b: u64 = b.vms.iter().map(|v| v.adapters.len() as u64).sum();
    let unknown = listed.unknown;
    let rdma = (hca_a * hca_b)
        .saturating_sub(listed.blocked + listed.rdma)
        .min(unknown);
    // A pair with an end predicted to fall back, whose other end is not an observed
    // fallback (that pair is `tcp` already).
    let fallback = ptcp_a * (n_b - tcp_b) + (n_a - tcp_a) * ptcp_b - ptcp_a * ptcp_b;
    let tcp = fallback.min(unknown - rdma);
    Counts {
        predicted_rdma: rdma,
        predicted_tcp: tcp,
        unknown: unknown - rdma - tcp,
        ..Counts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::fixtures::{adapter, host};
    use crate::diagnose::HostStatus;

    fn bands_of<'a>(d: &'a Diagnosis, bands: &[&[&'a str]]) -> HashMap<&'a str, usize> {
        let mut m = HashMap::new();
        for (i, hosts) in bands.iter().enumerate() {
            for h in *hosts {
                let name = d.hosts.iter().find(|x| x.host == *h).map(|x| x.host.as_str()).unwrap();
                m.insert(name, i);
            }
        }
        m
    }

    #[test]
    fn counts_between_bands_match_the_pair_count_of_the_diagnosis() {
        // Three healthy hosts of two adapters each, and one falling back: the engine
        // counts every pair; the bands must account for each of them exactly once.
        let hosts = vec![
            host(
                "esx01",
                HostStatus::Ok,
                vec![
                    ("a", vec![adapter(0, Verdict::Hca)]),
                    ("b", vec![adapter(0, Verdict::Hca)]),
                ],
            ),
            host(
                "esx02",
                HostStatus::Ok,
                vec![
                    ("c", vec![adapter(0, Verdict::Hca)]),
                    ("d", vec![adapter(0, Verdict::Hca)]),
                ],
            ),
            host(
                "esx03",
                HostStatus::Ok,
                vec![
                    ("e", vec![adapter(0, Verdict::Hca)]),
                    ("f", vec![adapter(0, Verdict::Hca)]),
                ],
            ),
            host(
                "esx04",
                HostStatus::Problems,
                vec![("g", vec![adapter(0, Verdict::TcpFallback)])],
            ),
        ];
        let d = crate::diagnose::fleet_diagnosis(hosts);
        let map = bands_of(&d, &[&["esx01", "esx02", "esx03"], &["esx04"]]);
        let (pairs, memcpy) = band_pairs(&d, &map, 2);
        let within = pairs[&(0, 0)];
        assert_eq!((within.rdma, within.tcp), (12, 0), "{within:?}");
        let across = pairs[&(0, 1)];
        assert_eq!((across.rdma, across.tcp), (0, 6), "{across:?}");
        assert!(!pairs.contains_key(&(1, 1)));
        assert_eq!(memcpy, vec![3, 0]);
        let t = d.transport.totals;
        let drawn: u64 = pairs
            .values()
            .map(|c| c.rdma + c.tcp + c.blocked + c.unknown)
            .sum::<u64>()
            + memcpy.iter().sum::<u64>();
        assert_eq!(drawn, t.total());
    }

    #[test]
    fn pairs_with_an_end_read_without_ssh_are_predicted_not_observed() {
        let predicted_hca = || crate::diagnose::Adapter {
            predicted: Some(Verdict::Hca),
            ..adapter(0, Verdict::Unknown)
        };
        let predicted_tcp = || crate::diagnose::Adapter {
            predicted: Some(Verdict::TcpFallback),
            ..adapter(0, Verdict::Unknown)
        };
        let mut api = host("esx02", HostStatus::Incomplete, vec![("b", vec![predicted_hca()])]);
        api.configuration_only = true;
        let mut bad = host("esx03", HostStatus::Incomplete, vec![("c", vec![predicted_tcp()])]);
        bad.configuration_only = true;
        let hosts = vec![
            host("esx01", HostStatus::Ok, vec![("a", vec![adapter(0, Verdict::Hca)])]),
            api,
            bad,
        ];
        let d = crate::diagnose::fleet_diagnosis(hosts);
        let map = bands_of(&d, &[&["esx01"], &["esx02"], &["esx03"]]);
        let (pairs, _) = band_pairs(&d, &map, 3);
        assert_eq!(
            pairs[&(0, 1)],
            Counts {
                predicted_rdma: 1,
                ..Counts::default()
            }
        );
        assert_eq!(
            pairs[&(0, 2)],
            Counts {
                predicted_tcp: 1,
                ..Counts::default()
            }
        );
        assert_eq!(
            pairs[&(1, 2)],
            Counts {
                predicted_tcp: 1,
                ..Counts::default()
            }
        );
    }
}
