//! The fleet as vCenter knows it, reduced to what host discovery needs: each ESXi host
//! with its datacenter, cluster and state, and each VM with the host it runs on.
//! Names are as the user sees them in the vSphere Client (the API's escapes decoded).
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Inventory {
    pub hosts: Vec<Host>,
    pub vms: Vec<Vm>,
}

impl Inventory {
    /// The managed object ids of the hosts named `names` (what the configuration read
    /// asks for), in inventory order; a name vCenter does not have is left out.
    pub fn host_ids<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let names: std::collections::HashSet<&str> = names.into_iter().collect();
        self.hosts
            .iter()
            .filter(|h| names.contains(h.name.as_str()))
            .map(|h| h.id.clone())
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Host {
    /// The managed object reference's value, e.g. `host-21`: unique in one vCenter.
    pub id: String,
    pub name: String,
    pub datacenter: String,
    /// `None`: a standalone host (a plain compute resource, not a cluster).
    pub cluster: Option<String>,
    /// The cluster's inventory path as `govc find` prints it, e.g.
    /// `/Region A/Lab East/host/Row 1/HPC`: datacenter folders, the datacenter, its host
    /// folders and the cluster, each name as the API sends it (so a `/` inside a name stays
    /// `%2f`). Unique in one vCenter, where `DATACENTER/NAME` need not be: names are unique
    /// only within their folder. `None` with `cluster`, or when a parent was not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_path: Option<String>,
    pub connection_state: ConnectionState,
    pub in_maintenance: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vm {
    pub id: String,
    pub name: String,
    /// The id of the host it is registered on (`runtime.host`); `None` when vCenter has none.
    pub host: Option<String>,
    pub power_state: PowerState,
}

/// `HostSystem.runtime.connectionState` (vSphere API reference, `HostSystemConnectionState`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConnectionState {
    Connected,
    Disconnected,
    NotResponding,
    /// A value a later vSphere release may add, kept as sent.
    Other(String),
}

impl ConnectionState {
    pub fn from_api(s: &str) -> ConnectionState {
        match s {
            "connected" => ConnectionState::Connected,
            "disconnected" => ConnectionState::Disconnected,
            "notResponding" => ConnectionState::NotResponding,
            other => ConnectionState::Other(other.to_string()),
        }
    }

    /// The API's own spelling.
    pub fn as_str(&self) -> &str {
        match self {
            ConnectionState::Connected => "connected",
            ConnectionState::Disconnected => "disconnected",
            ConnectionState::NotResponding => "notResponding",
            ConnectionState::Other(s) => s,
        }
    }
}

impl std::fmt::Display for ConnectionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ConnectionState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// `VirtualMachine.runtime.powerState` (`VirtualMachinePowerState`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PowerState {
    PoweredOn,
    PoweredOff,
    Suspended,
    Other(String),
}

impl PowerState {
    pub fn from_api(s: &str) -> PowerState {
        match s {
            "poweredOn" => PowerState::PoweredOn,
            "poweredOff" => PowerState::PoweredOff,
            "suspended" => PowerState::Suspended,
            other => PowerState::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            PowerState::PoweredOn => "poweredOn",
            PowerState::PoweredOff => "poweredOff",
            PowerState::Suspended => "suspended",
            PowerState::Other(s) => s,
        }
    }
}

impl std::fmt::Display for PowerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for PowerState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// An inventory name as the user typed it: the API escapes `%`, `/` and `\` in entity
/// names as `%25`, `%2f` and `%5c` (vSphere API reference, `ManagedEntity.name`); any
/// other `%` sequence is left as sent.
pub fn decode_name(raw: &str) -> String {
    if !raw.contains('%') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let seq = rest.get(at..at + 3).unwrap_or("");
        let decoded = match seq.to_ascii_lowercase().as_str() {
            "%25" => Some('%'),
            "%2f" => Some('/'),
            "%5c" => Some('\\'),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[at + 3..];
            }
            None => {
                out.push('%');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_names_decoded_once() {
        assert_eq!(decode_name("Lab East%2fHPC"), "Lab East/HPC");
        assert_eq!(decode_name("100%25 done %5Cx %2F"), "100% done \\x /");
        // `%252f` is a literal "%2f" typed by the user: decoded once only.
        assert_eq!(decode_name("a%252fb"), "a%2fb");
        assert_eq!(decode_name("50% [x]: y %"), "50% [x]: y %");
        assert_eq!(decode_name("%2"), "%2");
        assert_eq!(decode_name("é%2fü"), "é/ü");
    }

    #[test]
    fn states_serialize_as_the_api_spells_them() {
        let h = Host {
            id: "host-21".into(),
            name: "esx01".into(),
            datacenter: "DC".into(),
            cluster: None,
            cluster_path: None,
            connection_state: ConnectionState::NotResponding,
            in_maintenance: false,
        };
        let json = serde_json::to_value(&h).unwrap();
        assert_eq!(json["connection_state"], "notResponding");
        assert_eq!(json["cluster"], serde_json::Value::Null);
        for s in ["connected", "disconnected", "notResponding", "unknownFuture"] {
            assert_eq!(ConnectionState::from_api(s).as_str(), s);
        }
        for s in ["poweredOn", "poweredOff", "suspended", "x"] {
            assert_eq!(PowerState::from_api(s).as_str(), s);
        }
        assert_eq!(PowerState::from_api("poweredOn"), PowerState::PoweredOn);
    }
}
