//! Loading a scenario (from disk or embedded) and scaling it to a fleet.
use super::*;

/// Reads a scenario from disk, or the embedded default.
pub fn load_scenario(dir: Option<&Path>) -> anyhow::Result<Vec<SimHost>> {
    load_scenario_from(dir, EMBEDDED_FILES)
}

/// Reads a scenario from disk, or the embedded one of `demo --probe` (hosts whose paths
/// are healthy, too small for jumbo frames, and cut off; see samples/probe-paths).
pub fn load_probe_scenario(dir: Option<&Path>) -> anyhow::Result<Vec<SimHost>> {
    load_scenario_from(dir, EMBEDDED_PROBE_FILES)
}

pub(super) fn load_scenario_from(dir: Option<&Path>, embedded: &[(&str, &str, &str)]) -> anyhow::Result<Vec<SimHost>> {
    let mut hosts: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    match dir {
        None => {
            anyhow::ensure!(
                !embedded.is_empty(),
                "this build has no embedded demo scenario; pass --scenario samples/<scenario>"
            );
            for (host, file, content) in embedded {
                hosts
                    .entry((*host).to_string())
                    .or_default()
                    .insert((*file).to_string(), (*content).to_string());
            }
        }
        Some(root) => {
            let dirs = crate::collect::replay::host_dirs(root)
                .with_context(|| format!("cannot read scenario {}", root.display()))?;
            for (name, dir) in dirs {
                hosts.insert(name, crate::collect::replay::read_files(&dir)?);
            }
        }
    }
    anyhow::ensure!(
        !hosts.is_empty(),
        "the scenario holds no host directories (expected <scenario>/<host>/<command-id>.txt)"
    );
    Ok(hosts.into_iter().map(|(name, files)| SimHost { name, files }).collect())
}

/// Cycles the scenario's hosts to `n` hosts named `sim001`...; `None` keeps them as is.
pub fn scale_fleet(hosts: Vec<SimHost>, n: Option<usize>) -> Vec<SimHost> {
    let Some(n) = n else { return hosts };
    if hosts.is_empty() {
        return hosts;
    }
    let width = n.to_string().len().max(2);
    (0..n)
        .filter_map(|i| {
            hosts.get(i % hosts.len()).map(|h| {
                let mut files = h.files.clone();
                // Copies of a host must not share its vmknic addresses: two hosts with one
                // PVRDMA vmknic address cannot reach each other (vmknic-ipv4-unique).
                let round = i / hosts.len();
                if round > 0 {
                    if let Some(text) = files.get_mut(IPV4_FILE) {
                        *text = renumber_ipv4(text, round * hosts.len());
                    }
                }
                SimHost {
                    name: format!("sim{:0width$}", i + 1),
                    files,
                }
            })
        })
        .collect()
}

pub(super) const IPV4_FILE: &str = "esxcli_network_ip_interface_ipv4_get.txt";

/// Moves the last octet of every IPv4 address in the `IPv4 Address` column of an
/// `ip interface ipv4 get` table up by `by` (wrapping within 1..=254), keeping the column
/// boundaries: a longer address takes spaces from the gap after it.
pub(super) fn renumber_ipv4(text: &str, by: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let mut fields = line.split_whitespace();
        let (Some(_), Some(addr)) = (fields.next(), fields.next()) else {
            out.push_str(line);
            continue;
        };
        let parsed: Option<std::net::Ipv4Addr> = addr.parse().ok();
        let (Some(ip), true) = (parsed, n >= 2) else {
            out.push_str(line);
            continue;
        };
        let [a, b, c, d] = ip.octets();
        let last = (usize::from(d).saturating_sub(1) + by) % 254 + 1;
        let new = format!("{a}.{b}.{c}.{last}");
        let Some(at) = line.find(addr) else {
            out.push_str(line);
            continue;
        };
        let after = &line[at + addr.len()..];
        let grow = new.len().saturating_sub(addr.len());
        let spaces = after.len() - after.trim_start_matches(' ').len();
        if spaces < grow + 2 {
            out.push_str(line);
            continue;
        }
        out.push_str(&line[..at]);
        out.push_str(&new);
        out.push_str(&" ".repeat(addr.len() + spaces - new.len()));
        out.push_str(&after[spaces..]);
    }
    out
}

#[cfg(test)]
mod renumber_tests {
    use super::*;

    #[test]
    fn scaled_copies_get_their_own_vmknic_addresses_in_the_same_columns() {
        let text = "Name  IPv4 Address  IPv4 Netmask   IPv4 Broadcast  Address Type  Gateway   DHCP DNS\n----  ------------  -------------  --------------  ------------  --------  --------\nvmk0  10.0.0.11     255.255.255.0  10.0.0.255      STATIC        10.0.0.1     false\nvmk1  10.10.10.11   255.255.255.0  10.10.10.255    STATIC        0.0.0.0      false\n";
        let moved = renumber_ipv4(text, 100);
        let rows = pvrdma_parsers::parse_ip_interface_ipv4_get(&moved).expect("still a table");
        let addresses: Vec<_> = rows.iter().map(|r| r.address.clone().unwrap_or_default()).collect();
        assert_eq!(addresses, ["10.0.0.111", "10.10.10.111"]);
        assert_eq!(rows[1].netmask.as_deref(), Some("255.255.255.0"));
        let hosts = vec![SimHost {
            name: "esx01".into(),
            files: [(IPV4_FILE.to_string(), text.to_string())].into_iter().collect(),
        }];
        let fleet = scale_fleet(hosts, Some(3));
        let files: Vec<&String> = fleet.iter().filter_map(|h| h.files.get(IPV4_FILE)).collect();
        assert_eq!(files[0], text, "the first copy is the scenario itself");
        assert!(files[1].contains("10.10.10.12 ") && files[2].contains("10.10.10.13 "));
    }
}
