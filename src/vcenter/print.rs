//! What a discovery says: the hosts it skipped and the VMs it found stopped (stderr lines),
//! `hosts --format json`, and the vSphere library's refusals in the command line's words.
use pvrdma_vsphere::{Endpoint, Inventory, Selected, Selection, SkipReason, Vocabulary};
use serde_json::{json, Value};

/// The command line's names for the settings a vSphere refusal's remedy points to.
const OPTIONS: Vocabulary = Vocabulary {
    ca_file: "--vcenter-ca FILE",
    pin_setting: "--vcenter-thumbprint",
    pin: |t| format!("--vcenter-thumbprint {t}"),
    timeout: "--vcenter-timeout",
    cluster: |path| format!("--cluster {}", shell_quoted(path)),
};

/// `text` as a POSIX shell reads it back as one word: bare when it holds nothing the
/// shell treats specially, else in single quotes.
fn shell_quoted(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:@%+=,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// An error of the vSphere library as the command line says it: its remedies name the
/// options (`--vcenter-ca`, `--vcenter-thumbprint`, `--vcenter-timeout`). The error itself
/// stays reachable (`downcast_ref`) for what the run decides from it.
#[derive(Debug)]
pub(crate) struct VsphereError(pub(crate) pvrdma_vsphere::Error);

impl std::fmt::Display for VsphereError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.worded(&OPTIONS))
    }
}

// No `source`: the message already says all of it, and `{:#}` would say it twice.
impl std::error::Error for VsphereError {}

/// A selection the library refused, in the command line's words.
pub(crate) fn selection_error(error: &pvrdma_vsphere::SelectError) -> anyhow::Error {
    anyhow::anyhow!(error.worded(&OPTIONS))
}

/// Where a host sits, as the vSphere Client shows it: `DATACENTER/CLUSTER`, or the
/// datacenter alone for a standalone host.
fn place(datacenter: &str, cluster: Option<&str>) -> String {
    match cluster {
        Some(c) => format!("{datacenter}/{c}"),
        None => format!("{datacenter}, standalone"),
    }
}

/// One line per host left out (with the option that takes it) and per chosen VM that is
/// not running (it has no adapter to diagnose).
pub(crate) fn skipped_lines(selected: &Selected) -> Vec<String> {
    let mut lines: Vec<String> = selected
        .skipped
        .iter()
        .map(|h| {
            let option = match h.reason {
                SkipReason::Maintenance => "--include-maintenance",
                SkipReason::Disconnected | SkipReason::NotResponding => "--include-disconnected",
            };
            format!(
                "skipped {} ({}): {} ({option} takes it)",
                h.name,
                place(&h.datacenter, h.cluster.as_deref()),
                h.reason
            )
        })
        .collect();
    lines.extend(selected.vms.iter().filter_map(|vm| {
        let host = vm.host.as_deref()?;
        let skipped = selected.skipped.iter().find(|h| h.name == host)?;
        Some(format!(
            "VM {} runs on {host}, which is skipped ({}): its adapters are not diagnosed",
            vm.name, skipped.reason
        ))
    }));
    lines.extend(selected.vms_not_running.iter().map(|vm| {
        format!(
            "VM {} is {}: it has no adapter to diagnose",
            vm.name,
            match vm.power_state {
                pvrdma_vsphere::PowerState::PoweredOff => "powered off".to_string(),
                pvrdma_vsphere::PowerState::Suspended => "suspended".to_string(),
                ref other => format!("not running ({other:?})"),
            }
        )
    }));
    lines
}

/// A chosen VM that `--cluster` left out: with both `--vm` and `--cluster` only the VMs
/// running in those clusters count, and one elsewhere must not vanish in silence (a run
/// that then selects nothing would not say why).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct OutsideVm {
    pub(crate) name: String,
    /// The host it runs on, and where that host sits; `None`: no host vCenter lists.
    pub(crate) host: Option<String>,
    pub(crate) datacenter: Option<String>,
    pub(crate) cluster: Option<String>,
}

/// The chosen VMs outside the chosen clusters, in inventory order.
pub(crate) fn outside_clusters(inventory: &Inventory, selection: &Selection, selected: &Selected) -> Vec<OutsideVm> {
    if selection.clusters.is_empty() || selection.vms.is_empty() {
        return Vec::new();
    }
    let kept = |name: &str| {
        selected
            .vms
            .iter()
            .chain(&selected.vms_not_running)
            .any(|v| v.name == name)
    };
    inventory
        .vms
        .iter()
        .filter(|vm| selection.vms.iter().any(|p| p.matches(&vm.name)) && !kept(&vm.name))
        .map(|vm| {
            let host = vm
                .host
                .as_deref()
                .and_then(|id| inventory.hosts.iter().find(|h| h.id == id));
            OutsideVm {
                name: vm.name.clone(),
                host: host.map(|h| h.name.clone()),
                datacenter: host.map(|h| h.datacenter.clone()),
                cluster: host.and_then(|h| h.cluster.clone()),
            }
        })
        .collect()
}

/// The stderr line for a VM `--cluster` left out.
pub(crate) fn outside_line(vm: &OutsideVm, selection: &Selection) -> String {
    let clusters: Vec<String> = selection.clusters.iter().map(ToString::to_string).collect();
    let at = match (&vm.host, &vm.datacenter) {
        (Some(h), Some(dc)) => format!("runs on {h} ({})", place(dc, vm.cluster.as_deref())),
        _ => "runs on no host vCenter lists".to_string(),
    };
    format!(
        "VM {} {at}, outside --cluster {}: left out",
        vm.name,
        clusters.join(", ")
    )
}

/// A refused vCenter certificate on a terminal: the message wrapped, then the option that
/// pins the certificate on a line of its own, never broken. A SHA-256 thumbprint in the
/// colon form is 95 columns: wrapped like prose it would be cut into pieces that paste
/// back with the indent inside; a line the terminal folds copies whole. `None` for every
/// other error, and when stderr is not a terminal (the message then stays one line).
pub(crate) fn certificate_refusal(error: &anyhow::Error, width: Option<usize>) -> Option<String> {
    const PREFIX: &str = "pvrdma-doctor: error: ";
    let width = width?;
    let (prose, pin) = pin_apart(error)?;
    let mut out = pvrdma_engine::report::stderr_message(PREFIX, &prose, Some(width));
    out.push_str(&format!("    {pin}\n"));
    Some(out)
}

/// A refused vCenter certificate's message (`{error:#}`) without the option that ends it,
/// and that option (`--vcenter-thumbprint AA:BB:…`), for a caller that puts the option on
/// a line of its own; `None` for every other error.
pub(crate) fn pin_apart(error: &anyhow::Error) -> Option<(String, String)> {
    let pin = error
        .chain()
        .find_map(|e| e.downcast_ref::<VsphereError>())?
        .0
        .pin(&OPTIONS)?;
    let text = format!("{error:#}");
    let prose = text.strip_suffix(&pin)?.trim_end().to_string();
    Some((prose, pin))
}

/// `hosts --format json`: the selected hosts, the skipped ones with why, and the VMs
/// (`vms_outside_clusters`: the chosen VMs `--cluster` left out).
pub(crate) fn hosts_json(endpoint: &Endpoint, found: &super::Discovery) -> Value {
    let selected = &found.selected;
    let host = |name: &str,
                datacenter: &str,
                cluster: Option<&str>,
                state: &pvrdma_vsphere::ConnectionState,
                maintenance: bool| {
        json!({
            "name": name,
            "datacenter": datacenter,
            "cluster": cluster,
            "connection_state": state,
            "in_maintenance": maintenance,
        })
    };
    let vm = |v: &pvrdma_vsphere::SelectedVm| json!({"name": v.name, "host": v.host, "power_state": v.power_state});
    json!({
        "schema": "pvrdma-doctor/hosts/v1",
        "vcenter": endpoint.to_string(),
        "nodeset": pvrdma_nodeset::fold(&selected.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>()),
        "selected": selected.hosts.iter().map(|h| {
            let mut v = host(&h.name, &h.datacenter, h.cluster.as_deref(), &h.connection_state, h.in_maintenance);
            v["cluster_path"] = json!(h.cluster_path);
            v["vms"] = json!(h.vms);
            v
        }).collect::<Vec<_>>(),
        "skipped": selected.skipped.iter().map(|h| {
            let mut v = host(&h.name, &h.datacenter, h.cluster.as_deref(), &h.connection_state, h.in_maintenance);
            v["cluster_path"] = json!(h.cluster_path);
            v["reason"] = json!(h.reason.to_string());
            v
        }).collect::<Vec<_>>(),
        "vms": selected.vms.iter().map(vm).collect::<Vec<_>>(),
        "vms_not_running": selected.vms_not_running.iter().map(vm).collect::<Vec<_>>(),
        "vms_outside_clusters": found.outside,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pvrdma_vsphere::{CertificateProblem, Error, Stage, Thumbprint};
    use std::time::Duration;

    const GOT: Thumbprint = Thumbprint([0xab; 32]);

    #[test]
    fn a_refused_certificate_names_the_options_and_ends_with_the_one_that_pins_it() {
        let unknown = VsphereError(Error::UnknownCertificate {
            endpoint: "vc01".into(),
            thumbprint: GOT,
            problem: CertificateProblem::UnknownIssuer { ca_file: None },
        });
        assert_eq!(
            unknown.to_string(),
            format!(
                "the certificate of vCenter vc01 is not trusted (it is signed by a CA this system does not trust). If \
                 it is vCenter's certificate (compare its SHA-256 thumbprint, at the end of this message, with the one \
                 the vSphere Client or the appliance shows), give the CA that signed it (the VMCA root from the vCenter \
                 landing page) with --vcenter-ca FILE, or pin its SHA-256 thumbprint: --vcenter-thumbprint {GOT}"
            )
        );
        let mismatch = VsphereError(Error::ThumbprintMismatch {
            endpoint: "vc01".into(),
            expected: Thumbprint([0x11; 32]),
            got: GOT,
        });
        assert_eq!(
            mismatch.to_string(),
            format!(
                "the certificate of vCenter vc01 is not the one pinned with --vcenter-thumbprint. If vCenter's \
                 certificate was renewed, compare its SHA-256 thumbprint, at the end of this message, with the one the \
                 vSphere Client or the appliance shows, and pin it: --vcenter-thumbprint {GOT}"
            )
        );
        // On a terminal, the option that pins it goes on a line of its own, whole.
        for refusal in [unknown, mismatch] {
            let error = anyhow::Error::new(refusal).context("vCenter vc01");
            let text = certificate_refusal(&error, Some(80)).expect("a certificate refusal");
            assert!(text.ends_with(&format!("\n    --vcenter-thumbprint {GOT}\n")), "{text}");
            assert_eq!(certificate_refusal(&error, None), None);
        }
    }

    #[test]
    fn a_timeout_names_the_option_that_raises_the_limit() {
        let timeout = |stage| {
            VsphereError(Error::Timeout {
                endpoint: "vc01".into(),
                stage,
                limit: Duration::from_millis(1500),
            })
            .to_string()
        };
        assert_eq!(
            timeout(Stage::Call("RetrievePropertiesEx")),
            "vCenter vc01 did not answer RetrievePropertiesEx within 1500ms, the limit --vcenter-timeout sets: a \
             loaded vCenter or a large inventory can take longer; give it more time with --vcenter-timeout"
        );
        assert_eq!(
            timeout(Stage::Handshake),
            "vCenter vc01 did not answer in time (TLS handshake, within 1500ms, the limit --vcenter-timeout sets): \
             check that the address and port are vCenter's (its API is served over HTTPS, port 443 unless the address \
             names another) and that no firewall drops the traffic"
        );
    }

    #[test]
    fn the_suggested_cluster_path_can_be_pasted_into_a_shell() {
        let ambiguous = pvrdma_vsphere::SelectError::AmbiguousCluster {
            name: "HPC".into(),
            paths: vec!["Lab East/HPC".into(), "Lab West/HPC".into()],
        };
        assert_eq!(
            selection_error(&ambiguous).to_string(),
            "cluster `HPC` is in more than one place (Lab East/HPC, Lab West/HPC): write DATACENTER/NAME or the \
             inventory path, e.g. --cluster 'Lab East/HPC'"
        );
        assert_eq!(shell_quoted("Lab-East/HPC"), "Lab-East/HPC");
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted(""), "''");
    }
}
