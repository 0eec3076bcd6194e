//! How to fix a check: the remedy a report prints, the same fix in each tool sites change
//! hosts with (the vSphere Client, PowerCLI, govc, the ESXi shell's esxcli), and the
//! structured change a plan applies (`--format ansible`, `--format powercli`).
//!
//! A check attaches the typed changes ([`ConfigChange`]); once the host's checks are
//! judged, [`attach_forms`] writes every tool's form from them with the host's name, so
//! the report, the JSON and the plans all say one fix.
use super::{shell_quote, Check, Status};
use serde::Serialize;

/// How to fix a check, split so a script can run the command and a person reads the
/// advice; the same fix in every tool, and the changes a plan applies.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Remedy {
    /// One complete command line to run in the host's shell, exactly as printed: no
    /// placeholders, every value taken from the host shell-quoted. `None` when the fix is
    /// not a host command (vCenter, hardware) or a value is unknown.
    pub command: Option<String>,
    /// What to do besides (or instead of) the command, in prose: vCenter steps,
    /// alternatives, templates with placeholders in capitals.
    pub advice: Option<String>,
    /// The fix in each tool that can make it (`null` fields: that tool cannot); absent
    /// when no tool makes it (hardware, a vDS's own settings, an address to choose).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forms: Option<RemedyForms>,
    /// What must be decided before the fix is applied (which vmknic, a vDS uplink change,
    /// a VM to power off): the forms are then not safe to run as written, and a plan
    /// writes the fix as a comment for a person to apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The configuration changes the fix makes, in order, with the values they replace:
    /// what `--format ansible` and `--format powercli` apply.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ConfigChange>,
}

impl Remedy {
    /// The single-string form of JSON field `remedy` (v1): the command, then the advice.
    pub fn text(&self) -> String {
        match (&self.command, &self.advice) {
            (Some(c), Some(a)) => format!("{c}; {a}"),
            (Some(c), None) => c.clone(),
            (None, Some(a)) => a.clone(),
            (None, None) => String::new(),
        }
    }

    /// A fix made of changes (`command` is their esxcli line when esxcli can make each),
    /// with `advice` besides.
    pub(in crate::diagnose) fn of_changes(changes: Vec<ConfigChange>, advice: Option<String>) -> Remedy {
        let lines: Option<Vec<String>> = changes.iter().map(|c| c.setting.esxcli()).collect();
        Remedy {
            command: lines.filter(|l| !l.is_empty()).map(|l| l.join("; ")),
            advice,
            changes,
            ..Remedy::default()
        }
    }

    /// The one line a run can use: without SSH (`vcenter`), govc's (esxcli through
    /// vCenter), else PowerCLI's; over SSH the esxcli command. Then the advice.
    pub fn text_for(&self, vcenter: bool) -> String {
        let lead = match (&self.forms, vcenter) {
            (Some(f), true) => f.govc.clone().or_else(|| f.powercli.clone()),
            _ => self.command.clone(),
        };
        match (lead, &self.advice) {
            (Some(c), Some(a)) => format!("{c}; {a}"),
            (Some(c), None) => c,
            (None, _) => self.text(),
        }
    }
}

/// One fix in each tool an admin changes hosts with. Every line names the host (or VM)
/// as the run did, so it runs as printed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RemedyForms {
    /// Where to click in the vSphere Client.
    pub vsphere_client: Option<String>,
    /// A PowerCLI line (after `Connect-VIServer` to the vCenter or host).
    pub powercli: Option<String>,
    /// A govc line (`GOVC_URL` set to the vCenter or host); `govc host.esxcli` runs
    /// esxcli through the vSphere API, without SSH.
    pub govc: Option<String>,
    /// The esxcli line for the ESXi shell (SSH or the console).
    pub esxcli: Option<String>,
}

/// One configuration change on a host or one of its VMs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ConfigChange {
    /// What it changes: the host itself, or one of its VMs.
    pub target: ChangeTarget,
    /// What it sets.
    pub setting: Setting,
    /// The value it replaces, as the host reported it (`false`, an empty string), so the
    /// change can be reverted; `null` when not known.
    pub replaces: Option<String>,
}

/// The object a change is made on; `kind` says which (`host`, `vm`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[schemars(transform = describe_target_kind)]
pub enum ChangeTarget {
    /// The ESXi host the check belongs to.
    Host,
    /// One of its VMs.
    Vm {
        /// Its display name.
        name: String,
        /// Its managed object id in the vCenter (or host) the run read (`vm-84`), which
        /// no other VM shares; `null` when the run did not read it (over SSH).
        moid: Option<String>,
    },
}

/// What a change sets; `kind` says which, and the other fields are that kind's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[schemars(transform = describe_setting_kind)]
pub enum Setting {
    /// A firewall ruleset on or off (`HostFirewallSystem.EnableRuleset`).
    FirewallRuleset {
        /// Its key, e.g. `pvrdma`.
        ruleset: String,
        /// The state to set.
        enabled: bool,
    },
    /// An advanced option of the host (`OptionManager.UpdateOptions`).
    AdvancedOption {
        /// Its key as the API names it, e.g. `Net.PVRDMAVmknic`.
        key: String,
        /// The string value to set.
        value: String,
    },
    /// A VM reserves all its guest memory ("Reserve all guest memory (All locked)",
    /// `memoryReservationLockedToMax`).
    MemoryReservationLocked {
        /// The VM's memory in MB, when known (govc reserves that much).
        memory_mb: Option<u64>,
    },
    /// A host change only esxcli makes; without SSH it runs through the vSphere API
    /// (`govc host.esxcli`, PowerCLI's `Get-EsxCli -V2`).
    Esxcli {
        /// The namespace and command, e.g. `network ip interface set`.
        command: Vec<String>,
        /// Its options, in order.
        options: Vec<EsxcliOption>,
    },
}

fn describe_target_kind(schema: &mut schemars::Schema) {
    describe_kind(
        schema,
        "What the change is made on: `host` (the ESXi host itself) or `vm` (one of its VMs, named by `name` and `moid`).",
    )
}

fn describe_setting_kind(schema: &mut schemars::Schema) {
    describe_kind(
        schema,
        "What is set: `firewall-ruleset`, `advanced-option`, `memory-reservation-locked` or `esxcli` (a change only esxcli makes); the other fields are that kind's.",
    )
}

/// Describes the `kind` field serde adds to each variant of an internally tagged enum,
/// which the derive leaves without a description.
fn describe_kind(schema: &mut schemars::Schema, description: &str) {
    let Some(variants) = schema.get_mut("oneOf").and_then(|v| v.as_array_mut()) else {
        return;
    };
    for variant in variants {
        if let Some(kind) = variant.pointer_mut("/properties/kind").and_then(|k| k.as_object_mut()) {
            kind.insert("description".to_string(), description.into());
        }
    }
}

/// One option of an esxcli command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct EsxcliOption {
    /// Its long name, which `Get-EsxCli -V2` takes as the argument's key (`interfacename`).
    pub name: String,
    /// Its short flag, as printed on the command line (`-i`).
    pub flag: String,
    /// Its value.
    pub value: String,
}

impl EsxcliOption {
    pub(in crate::diagnose) fn new(name: &str, flag: &str, value: impl Into<String>) -> EsxcliOption {
        EsxcliOption {
            name: name.to_string(),
            flag: flag.to_string(),
            value: value.into(),
        }
    }
}

impl ConfigChange {
    /// This change in each tool, for host `host` (as the run named it).
    pub fn forms(&self, host: &str) -> RemedyForms {
        forms_of(host, self)
    }

    /// A change on the host itself.
    pub(in crate::diagnose) fn host(setting: Setting, replaces: Option<String>) -> ConfigChange {
        ConfigChange {
            target: ChangeTarget::Host,
            setting,
            replaces,
        }
    }

    /// `esxcli <command> <options>` on the host.
    pub(in crate::diagnose) fn esxcli(
        command: &str,
        options: Vec<EsxcliOption>,
        replaces: Option<String>,
    ) -> ConfigChange {
        ConfigChange::host(
            Setting::Esxcli {
                command: command.split(' ').map(str::to_string).collect(),
                options,
            },
            replaces,
        )
    }
}

impl Setting {
    /// The esxcli line that makes this change in the host's shell, when esxcli can.
    pub fn esxcli(&self) -> Option<String> {
        match self {
            Setting::FirewallRuleset { ruleset, enabled } => Some(format!(
                "esxcli network firewall ruleset set -e {enabled} -r {}",
                shell_quote(ruleset)
            )),
            Setting::AdvancedOption { key, value } => Some(format!(
                "esxcli system settings advanced set -o {} -s {}",
                shell_quote(&format!("/{}", key.replace('.', "/"))),
                shell_quote(value)
            )),
            Setting::MemoryReservationLocked { .. } => None,
            Setting::Esxcli { command, options } => Some(format!("esxcli {}", esxcli_words(command, options))),
        }
    }
}

/// `network ip interface set -e true -i vmk1`: the namespace and the shell-quoted options.
fn esxcli_words(command: &[String], options: &[EsxcliOption]) -> String {
    let mut words: Vec<String> = command.iter().map(|w| shell_quote(w)).collect();
    for o in options {
        words.push(o.flag.clone());
        words.push(shell_quote(&o.value));
    }
    words.join(" ")
}

/// Quotes a value for PowerShell: a single-quoted string, in which only the single quote
/// (and its typographic forms, which PowerShell reads as single quotes too) is doubled.
pub fn powershell_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}') {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// PowerCLI's expression for the host named `host`.
fn powercli_host(host: &str) -> String {
    format!("(Get-VMHost -Name {})", powershell_quote(host))
}

/// PowerCLI's expression for exactly one VM: by its managed object id, else by name on
/// its host, refusing to go on when that name is not one VM.
pub fn powercli_vm(host: &str, name: &str, moid: Option<&str>) -> String {
    match moid {
        Some(id) => format!("(Get-VM -Id {})", powershell_quote(&format!("VirtualMachine-{id}"))),
        None => format!(
            "(& {{ $vm = @(Get-VM -Name {} -Location {}); if ($vm.Count -ne 1) {{ throw ('not exactly one VM named ' + {} + ' on ' + {}) }}; $vm[0] }})",
            powershell_quote(name),
            powercli_host(host),
            powershell_quote(name),
            powershell_quote(host)
        ),
    }
}

/// A PowerShell value for an esxcli option's: booleans and numbers bare, else quoted.
fn powershell_value(value: &str) -> String {
    match value {
        "true" => "$true".to_string(),
        "false" => "$false".to_string(),
        v if !v.is_empty() && v.len() < 10 && v.chars().all(|c| c.is_ascii_digit()) => v.to_string(),
        v => powershell_quote(v),
    }
}

/// The change in each tool, for host `host`.
fn forms_of(host: &str, change: &ConfigChange) -> RemedyForms {
    let h = powercli_host(host);
    let govc_host = shell_quote(host);
    match (&change.target, &change.setting) {
        (ChangeTarget::Host, Setting::FirewallRuleset { ruleset, enabled }) => RemedyForms {
            vsphere_client: Some(format!(
                "select host {host} > Configure > System > Firewall > Edit, {} {ruleset}, OK",
                if *enabled { "tick" } else { "untick" }
            )),
            powercli: Some(format!(
                "Get-VMHostFirewallException -VMHost {h} | Where-Object {{ $_.ExtensionData.Key -eq {} }} | Set-VMHostFirewallException -Enabled ${enabled}",
                powershell_quote(ruleset)
            )),
            govc: change.setting.esxcli().map(|e| format!("govc host.esxcli -host {govc_host} {}", &e["esxcli ".len()..])),
            esxcli: change.setting.esxcli(),
        },
        (ChangeTarget::Host, Setting::AdvancedOption { key, value }) => RemedyForms {
            vsphere_client: Some(format!(
                "select host {host} > Configure > System > Advanced System Settings > Edit, set {key} to {}, OK",
                if value.is_empty() { "nothing (empty)" } else { value }
            )),
            powercli: Some(format!(
                "Get-AdvancedSetting -Entity {h} -Name {} | Set-AdvancedSetting -Value {} -Confirm:$false",
                powershell_quote(key),
                powershell_quote(value)
            )),
            govc: Some(format!(
                "govc host.option.set -host {govc_host} {} {}",
                shell_quote(key),
                shell_quote(value)
            )),
            esxcli: change.setting.esxcli(),
        },
        (ChangeTarget::Vm { name, moid }, Setting::MemoryReservationLocked { memory_mb }) => RemedyForms {
            vsphere_client: Some(format!(
                "select VM {name} > Edit Settings > Virtual Hardware > Memory, tick Reserve all guest memory (All locked), OK"
            )),
            powercli: Some(format!(
                "{}.ExtensionData.ReconfigVM((New-Object VMware.Vim.VirtualMachineConfigSpec -Property @{{ MemoryReservationLockedToMax = $true }}))",
                powercli_vm(host, name, moid.as_deref())
            )),
            // govc refuses a name that resolves to several VMs.
            govc: memory_mb.map(|mb| format!("govc vm.change -vm {} -mem.reservation {mb}", shell_quote(name))),
            esxcli: None,
        },
        (ChangeTarget::Host, Setting::Esxcli { command, options }) => {
            let args: Vec<String> = options
                .iter()
                .map(|o| format!("{} = {}", o.name, powershell_value(&o.value)))
                .collect();
            RemedyForms {
                vsphere_client: esxcli_in_the_client(host, command, options),
                powercli: Some(format!(
                    "(Get-EsxCli -VMHost {h} -V2).{}.Invoke(@{{ {} }})",
                    command.join("."),
                    args.join("; ")
                )),
                govc: Some(format!(
                    "govc host.esxcli -host {govc_host} {}",
                    esxcli_words(command, options)
                )),
                esxcli: change.setting.esxcli(),
            }
        }
        // A VM change other than memory, or a host setting on a VM: nothing is written so.
        _ => RemedyForms::default(),
    }
}

/// Where the vSphere Client makes the change an esxcli command makes, for the commands
/// it has a page for (a vmknic's MTU, a standard switch's uplinks); enabling a disabled
/// vmknic has none.
fn esxcli_in_the_client(host: &str, command: &[String], options: &[EsxcliOption]) -> Option<String> {
    let option = |name: &str| options.iter().find(|o| o.name == name).map(|o| o.value.as_str());
    match command.join(" ").as_str() {
        "network ip interface set" if option("enabled").is_none() => {
            let (vmk, mtu) = (option("interfacename")?, option("mtu")?);
            Some(format!(
                "select host {host} > Configure > Networking > VMkernel adapters > {vmk} > Edit > NIC settings, MTU {mtu}, OK"
            ))
        }
        "network vswitch standard uplink remove" => {
            let (uplink, switch) = (option("uplinkname")?, option("vswitchname")?);
            Some(format!(
                "select host {host} > Configure > Networking > Virtual switches > {switch} > Manage Physical Adapters, remove {uplink}, OK"
            ))
        }
        _ => None,
    }
}

/// Joins the forms of several changes: each tool's lines one after the other (`; `), the
/// Client's steps with `; then `; a tool that cannot make one of them has no form.
fn joined(forms: Vec<RemedyForms>) -> RemedyForms {
    fn all(forms: &[RemedyForms], part: fn(&RemedyForms) -> &Option<String>, sep: &str) -> Option<String> {
        let lines: Option<Vec<&str>> = forms.iter().map(|f| part(f).as_deref()).collect();
        lines.filter(|l| !l.is_empty()).map(|l| l.join(sep))
    }
    RemedyForms {
        vsphere_client: all(&forms, |f| &f.vsphere_client, "; then "),
        powercli: all(&forms, |f| &f.powercli, "; "),
        govc: all(&forms, |f| &f.govc, "; "),
        esxcli: all(&forms, |f| &f.esxcli, "; "),
    }
}

/// Writes every tool's form of the fixes of `host`'s checks that do not pass, from their
/// changes.
pub(in crate::diagnose) fn attach_forms(host: &str, checks: &mut [Check]) {
    for c in checks.iter_mut().filter(|c| c.status != Status::Pass) {
        let Some(remedy) = c.remedy.as_mut() else { continue };
        if remedy.changes.is_empty() {
            continue;
        }
        let forms = joined(remedy.changes.iter().map(|ch| forms_of(host, ch)).collect());
        let any = forms.vsphere_client.is_some()
            || forms.powercli.is_some()
            || forms.govc.is_some()
            || forms.esxcli.is_some();
        remedy.forms = any.then_some(forms);
    }
}
