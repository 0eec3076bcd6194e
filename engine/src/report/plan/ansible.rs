//! `--format ansible`: the plan as an Ansible playbook of community.vmware modules.
//!
//! The first play lists the hosts to change, each an in-memory inventory host holding its
//! changes and the values they replace (the part to review); the second applies them in
//! batches (`serial`), every task tagged with the check it fixes. Every value from a host
//! or vCenter is a YAML double-quoted string tagged `!unsafe`, so Ansible never reads
//! `{{` in a name as a template.
use super::{comment_text, header, manual_lines, HostPlan, Plan, PlanOptions, Step};
use crate::diagnose::{ChangeTarget, CheckId, Diagnosis, Setting};
use std::fmt::Write;

/// The inventory group the first play fills and the second applies.
const GROUP: &str = "pvrdma_doctor_fix";

/// Renders the plan of `diagnosis`.
pub fn render(diagnosis: &Diagnosis, options: &PlanOptions) -> String {
    let plan = Plan::of(diagnosis);
    let mut out = String::from("---\n");
    for line in header(&plan, options, "Ansible (community.vmware)") {
        comment(&mut out, "", &line);
    }
    out.push_str(GUIDE);
    for line in certificates(options.vcenter.is_some()) {
        comment(&mut out, "", line);
    }
    for step in &plan.fleet {
        manual(&mut out, "", "across hosts", step);
    }
    for (host, why) in &plan.not_diagnosed {
        comment(
            &mut out,
            "",
            &format!("{host} was not diagnosed ({why}): nothing is planned for it."),
        );
    }
    out.push_str("- name: \"pvrdma-doctor: the hosts to change and what changes\"\n  hosts: localhost\n  gather_facts: false\n  tasks:\n");
    let (api, port) = match options.vcenter_address() {
        Some((host, port)) => (Some(host), port),
        None => (None, None),
    };
    for h in &plan.hosts {
        host_entry(&mut out, h, api.as_deref(), port);
    }
    if plan.counts().0 == 0 {
        // A play needs a task; this one says why there is nothing to apply.
        let why = if plan.hosts.is_empty() && plan.fleet.is_empty() {
            "pvrdma-doctor found no failing check with a fix"
        } else {
            "every fix pvrdma-doctor found is one to make by hand: see the comments"
        };
        let _ = write!(
            out,
            "\n    - name: \"Nothing to apply\"\n      ansible.builtin.debug:\n        msg: \"{why}\"\n"
        );
    }
    out.push_str(APPLY);
    out
}

/// How to review and run it; credentials and certificates.
const GUIDE: &str = "\
# Review, then: ansible-playbook --check --diff PLAN.yml (what would change), then
#   ansible-playbook PLAN.yml. One host first: --limit 'localhost,pvrdma-doctor-HOST'.
#   Batches: -e pvrdma_batch=N hosts at a time (10 by default); a failure stops the rest.
# Needs the community.vmware collection and pyVmomi where ansible-playbook runs.
# Credentials: the modules read VMWARE_USER and VMWARE_PASSWORD from the environment, or
#   give vmware_user and vmware_password from an ansible-vault file (-e @vault.yml).
#   Nothing secret is in this file.
";

/// How to trust the certificates of the API the plan addresses (verification stays on).
fn certificates(vcenter: bool) -> [&'static str; 3] {
    if vcenter {
        [
            "Certificates are verified (validate_certs stays on). Trust vCenter's CA: download its",
            "  VMCA root certificate (the vCenter landing page, \"Download trusted root CA",
            "  certificates\") into the system's trust store, or point SSL_CERT_FILE at it.",
        ]
    } else {
        [
            "Certificates are verified (validate_certs stays on). Trust each host's issuer: the",
            "  VMCA root of the vCenter that manages the hosts (its landing page), or the CA that",
            "  signed their certificates, in the system's trust store or SSL_CERT_FILE.",
        ]
    }
}

/// The play that applies the changes.
const APPLY: &str = r#"
- name: "pvrdma-doctor: apply the fixes, a batch of hosts at a time"
  hosts: pvrdma_doctor_fix
  serial: "{{ pvrdma_batch | default(10) }}"
  max_fail_percentage: 0
  gather_facts: false
  vars:
    ansible_connection: local
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
  module_defaults:
    group/community.vmware.vmware:
      hostname: "{{ pvrdma_api }}"
      port: "{{ pvrdma_api_port | default(443) }}"
      username: "{{ vmware_user | default(omit) }}"
      password: "{{ vmware_password | default(omit) }}"
      validate_certs: true
  tasks:
    # The firewall manager sets the addresses a ruleset allows to what it is given, and
    # closes the ruleset to every address when given none: it is given what each ruleset
    # allows now, read first, so enabling it changes nothing else.
    - name: "Read the firewall rulesets"
      community.vmware.vmware_host_firewall_info:
        esxi_hostname: "{{ pvrdma_esxi }}"
      register: pvrdma_firewall
      when: pvrdma_rulesets is defined
      tags: [firewall-pvrdma]

    - name: "Enable the firewall rulesets"
      community.vmware.vmware_host_firewall_manager:
        esxi_hostname: "{{ pvrdma_esxi }}"
        rules:
          - name: "{{ item.name }}"
            enabled: "{{ item.enabled }}"
            allowed_hosts: "{{ ((pvrdma_firewall.hosts_firewall_info | dict2items | first).value | selectattr('key', 'equalto', item.name) | first).allowed_hosts }}"
      loop: "{{ pvrdma_rulesets | default([]) }}"
      loop_control:
        label: "{{ item.name }} enabled: {{ item.enabled }} (was {{ item.replaces }})"
      tags: [firewall-pvrdma]

    - name: "Set the advanced options"
      community.vmware.vmware_host_config_manager:
        esxi_hostname: "{{ pvrdma_esxi }}"
        options: "{{ {item.key: item.value} }}"
      loop: "{{ pvrdma_options | default([]) }}"
      loop_control:
        label: "{{ item.key }} = '{{ item.value }}' (was '{{ item.replaces }}')"
      tags: [pvrdma-vmknic-tagged, pvrdma-vmknic-valid]

    # A VM is found by name, then held to its managed object id (or, when the run did not
    # read one, to its host), and changed by its instance UUID: never another VM of the
    # same name. Where vCenter refuses the change on a running VM, power it off and run the
    # plan again.
    - name: "Find the VMs"
      community.vmware.vmware_vm_info:
        vm_name: "{{ item.name }}"
      loop: "{{ pvrdma_vm_memory | default([]) }}"
      loop_control:
        label: "{{ item.name }}"
      register: pvrdma_vms
      tags: [vm-memory-reserved]

    - name: "Check that each name is exactly one VM"
      ansible.builtin.assert:
        that: pvrdma_vm | length == 1
        fail_msg: "not exactly one VM named {{ item.name }} (moid {{ item.moid }}, host {{ item.on_host }}): {{ pvrdma_vm | length }} found; change it by hand"
        quiet: true
      vars:
        pvrdma_vm: &pvrdma_vm "{{ pvrdma_vms.results[pvrdma_index].virtual_machines | selectattr('moid', 'equalto', item.moid) | list if item.moid else pvrdma_vms.results[pvrdma_index].virtual_machines | selectattr('esxi_hostname', 'equalto', item.on_host) | list if item.on_host else pvrdma_vms.results[pvrdma_index].virtual_machines }}"
      loop: "{{ pvrdma_vm_memory | default([]) }}"
      loop_control:
        index_var: pvrdma_index
        label: "{{ item.name }}"
      tags: [vm-memory-reserved]

    - name: "Reserve all guest memory (All locked)"
      community.vmware.vmware_guest:
        uuid: "{{ (pvrdma_vm | first).instance_uuid }}"
        use_instance_uuid: true
        hardware:
          memory_reservation_lock: true
      vars:
        pvrdma_vm: *pvrdma_vm
      loop: "{{ pvrdma_vm_memory | default([]) }}"
      loop_control:
        index_var: pvrdma_index
        label: "{{ item.name }} (was {{ item.replaces }})"
      tags: [vm-memory-reserved]
"#;

/// One host's entry in the first play: its changes, and comments for what is by hand.
fn host_entry(out: &mut String, h: &HostPlan, vcenter: Option<&str>, port: Option<u16>) {
    out.push('\n');
    comment(out, "    ", &format!("{}:", h.host));
    for step in &h.steps {
        match step {
            Step::Apply { check, change } => {
                let replaces = change
                    .replaces
                    .as_deref()
                    .map_or("unknown".to_string(), |r| format!("'{r}'"));
                comment(
                    out,
                    "    ",
                    &format!(
                        "{check}: {} (it replaces {replaces})",
                        describe(&change.target, &change.setting)
                    ),
                );
            }
            Step::Manual { .. } => manual(out, "    ", &format!("on {}", h.host), step),
        }
    }
    let changes: Vec<(CheckId, &crate::diagnose::ConfigChange)> = h.changes().collect();
    if changes.is_empty() {
        return;
    }
    let _ = writeln!(out, "    - name: !unsafe {}", quoted(&h.host));
    // Adding a host to this run's in-memory inventory changes nothing anywhere.
    out.push_str("      tags: [always]\n      changed_when: false\n      ansible.builtin.add_host:\n");
    let _ = writeln!(out, "        name: {}", quoted(&inventory_name(&h.host)));
    let _ = writeln!(out, "        groups: [{GROUP}]");
    let _ = writeln!(out, "        pvrdma_esxi: !unsafe {}", quoted(&h.host));
    let _ = writeln!(
        out,
        "        pvrdma_api: !unsafe {}",
        quoted(vcenter.unwrap_or(&h.host))
    );
    if let Some(p) = port {
        let _ = writeln!(out, "        pvrdma_api_port: {p}");
    }
    let section = |out: &mut String, name: &str, items: Vec<String>| {
        if !items.is_empty() {
            let _ = writeln!(out, "        {name}:");
            for i in items {
                let _ = writeln!(out, "          - {i}");
            }
        }
    };
    let mut rulesets = Vec::new();
    let mut options = Vec::new();
    let mut vms = Vec::new();
    for (_, c) in &changes {
        let replaces = quoted(c.replaces.as_deref().unwrap_or("unknown"));
        match (&c.target, &c.setting) {
            (ChangeTarget::Host, Setting::FirewallRuleset { ruleset, enabled }) => rulesets.push(format!(
                "{{name: !unsafe {}, enabled: {enabled}, replaces: !unsafe {replaces}}}",
                quoted(ruleset)
            )),
            (ChangeTarget::Host, Setting::AdvancedOption { key, value }) => options.push(format!(
                "{{key: !unsafe {}, value: !unsafe {}, replaces: !unsafe {replaces}}}",
                quoted(key),
                quoted(value)
            )),
            (ChangeTarget::Vm { name, moid }, Setting::MemoryReservationLocked { .. }) => vms.push(format!(
                "{{name: !unsafe {}, moid: {}, on_host: {}, replaces: !unsafe {replaces}}}",
                quoted(name),
                moid.as_deref()
                    .map_or("null".to_string(), |m| format!("!unsafe {}", quoted(m))),
                // Without vCenter the host's own API lists only its VMs.
                match vcenter {
                    Some(_) => format!("!unsafe {}", quoted(&h.host)),
                    None => "null".to_string(),
                }
            )),
            _ => {}
        }
    }
    section(out, "pvrdma_rulesets", rulesets);
    section(out, "pvrdma_options", options);
    section(out, "pvrdma_vm_memory", vms);
}

/// A change in words, for the comment above it.
fn describe(target: &ChangeTarget, setting: &Setting) -> String {
    let on = match target {
        ChangeTarget::Host => String::new(),
        ChangeTarget::Vm { name, moid } => match moid {
            Some(m) => format!("VM {name} ({m}): "),
            None => format!("VM {name}: "),
        },
    };
    let what = match setting {
        Setting::FirewallRuleset { ruleset, enabled } => format!("firewall ruleset {ruleset} enabled: {enabled}"),
        Setting::AdvancedOption { key, value } => format!("{key} = '{value}'"),
        Setting::MemoryReservationLocked { .. } => "reserve all guest memory (All locked)".to_string(),
        Setting::Esxcli { .. } => setting.esxcli().unwrap_or_default(),
    };
    format!("{on}{what}")
}

/// A step by hand, as comments.
fn manual(out: &mut String, indent: &str, place: &str, step: &Step) {
    for line in manual_lines(place, step) {
        comment(out, indent, &line);
    }
}

/// One comment line (a newline in the text would end it).
fn comment(out: &mut String, indent: &str, text: &str) {
    let _ = writeln!(out, "{indent}# {}", comment_text(text));
}

/// The in-memory inventory name of a host: a prefix keeps it apart from any inventory
/// host of the same name (whose connection settings would otherwise apply).
fn inventory_name(host: &str) -> String {
    let safe: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("pvrdma-doctor-{safe}")
}

/// A YAML double-quoted scalar: backslash, double quote and every control character
/// escaped, so any text stays one value.
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' || c == '\u{feff}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
