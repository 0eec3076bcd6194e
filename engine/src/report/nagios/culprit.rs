//! Who a part of the status line names, as short as the line needs.

/// Who a status-line part names: a host, an adapter of a VM on a host, or a VM.
pub(super) struct Culprit {
    /// The host's name; a VM's for a VM.
    host: String,
    /// `hpc-node02#0`: the VM's name and the adapter's index.
    adapter: Option<String>,
    /// A VM's name: never cut to a first label as a host's is.
    vm: bool,
}

impl Culprit {
    pub(super) fn host(host: String) -> Culprit {
        Culprit {
            host,
            adapter: None,
            vm: false,
        }
    }

    pub(super) fn adapter(host: &str, vm: &str, index: impl std::fmt::Display) -> Culprit {
        Culprit {
            host: host.to_string(),
            adapter: Some(format!("{vm}#{index}")),
            vm: false,
        }
    }

    pub(super) fn vm(name: &str) -> Culprit {
        Culprit {
            host: name.to_string(),
            adapter: None,
            vm: true,
        }
    }

    /// `esx02.lab.example.com hpc-node02#0`; `short`: the host name cut to its first DNS
    /// label (an IP address stays whole), `esx02 hpc-node02#0`.
    pub(super) fn name(&self, short: bool) -> String {
        let host = if short && !self.vm && self.host.parse::<std::net::IpAddr>().is_err() {
            self.host
                .split('.')
                .next()
                .filter(|l| !l.is_empty())
                .unwrap_or(&self.host)
        } else {
            &self.host
        };
        match &self.adapter {
            Some(a) => format!("{host} {a}"),
            None => host.to_string(),
        }
    }
}
