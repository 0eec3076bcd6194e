//! `--format powercli`: the plan as a PowerCLI script, for sites without Ansible.
//!
//! It asks for the credential with the site's own prompt (`Get-Credential`), connects to
//! the vCenter the run read (or to each host), changes only what differs (so a second run
//! changes nothing), and honours `-WhatIf`. Every value from a host or vCenter is a
//! single-quoted PowerShell string ([`powershell_quote`]), in which `$`, the backtick and
//! double quotes are plain characters.
use super::{comment_text, header, manual_lines, HostPlan, Plan, PlanOptions, Step};
use crate::diagnose::{powershell_quote as q, ChangeTarget, Diagnosis, Setting};
use std::fmt::Write;

/// Renders the plan of `diagnosis`.
pub fn render(diagnosis: &Diagnosis, options: &PlanOptions) -> String {
    let plan = Plan::of(diagnosis);
    let mut out = String::new();
    for line in header(&plan, options, "PowerCLI") {
        comment(&mut out, "", &line);
    }
    out.push_str(GUIDE);
    let trust = if options.vcenter.is_some() {
        "vCenter's VMCA root certificate (the vCenter landing page, \"Download trusted root CA certificates\")"
    } else {
        "the hosts' issuer (the VMCA root of the vCenter that manages them, or the CA that signed their certificates)"
    };
    comment(
        &mut out,
        "",
        &format!("Certificates are verified as PowerCLI's InvalidCertificateAction says: trust {trust} in the system's store rather than ignoring invalid certificates."),
    );
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
    out.push_str("[CmdletBinding(SupportsShouldProcess = $true)]\nparam()\n$ErrorActionPreference = 'Stop'\n");
    if plan.counts().0 == 0 {
        // Nothing for the script to change: no credential asked, no connection opened.
        for h in &plan.hosts {
            host_block(&mut out, h, false);
        }
        let why = if plan.hosts.is_empty() && plan.fleet.is_empty() {
            "pvrdma-doctor found no failing check with a fix"
        } else {
            "every fix pvrdma-doctor found is one to make by hand: see the comments"
        };
        let _ = writeln!(out, "Write-Output {}", q(&format!("Nothing to apply: {why}.")));
        return out;
    }
    let address = options.vcenter_address();
    let target = match &address {
        Some((host, _)) => format!("vCenter {host}"),
        None => "the ESXi hosts".to_string(),
    };
    let _ = writeln!(
        out,
        "$credential = Get-Credential -Message {}",
        q(&format!("pvrdma-doctor plan: an account of {target}"))
    );
    match &address {
        Some((vc, port)) => {
            let _ = writeln!(
                out,
                "$server = Connect-VIServer -Server {}{} -Credential $credential",
                q(vc),
                port_arg(*port)
            );
            out.push_str("try {\n");
            for h in &plan.hosts {
                host_block(&mut out, h, true);
            }
            out.push_str(DISCONNECT);
        }
        None => {
            for h in &plan.hosts {
                if h.changes().next().is_none() {
                    // Only steps by hand: nothing to connect for.
                    out.push('\n');
                    host_block(&mut out, h, false);
                    continue;
                }
                let _ = writeln!(
                    out,
                    "\n$server = Connect-VIServer -Server {} -Credential $credential",
                    q(&h.host)
                );
                out.push_str("try {\n");
                host_block(&mut out, h, false);
                out.push_str(DISCONNECT);
            }
        }
    }
    out
}

/// Closes the connection whatever happened in the block above.
const DISCONNECT: &str = "} finally {\n    Disconnect-VIServer -Server $server -Confirm:$false\n}\n";

const GUIDE: &str = "\
# Review, then run it in PowerShell with VMware PowerCLI: ./PLAN.ps1 -WhatIf shows what
#   would change, ./PLAN.ps1 changes it. It stops at the first error; run it again to go
#   on (what is already as planned is left alone).
# The credential is asked for when it starts; nothing secret is in this file.
";

fn port_arg(port: Option<u16>) -> String {
    port.map_or(String::new(), |p| format!(" -Port {p}"))
}

/// One host's steps, in order.
fn host_block(out: &mut String, h: &HostPlan, by_name: bool) {
    let pad = "    ";
    comment(out, pad, &h.host);
    if h.changes().next().is_some() {
        let name = if by_name {
            format!(" -Name {}", q(&h.host))
        } else {
            String::new()
        };
        let _ = writeln!(out, "{pad}$vmhost = Get-VMHost -Server $server{name}");
    }
    for step in &h.steps {
        let Step::Apply { check, change } = step else {
            manual(out, pad, &format!("on {}", h.host), step);
            continue;
        };
        let replaces = change.replaces.as_deref().unwrap_or("unknown");
        match (&change.target, &change.setting) {
            (ChangeTarget::Host, Setting::FirewallRuleset { ruleset, enabled }) => {
                comment(
                    out,
                    pad,
                    &format!("{check}: firewall ruleset {ruleset} enabled: {enabled} (was {replaces})"),
                );
                let _ = writeln!(out, "{pad}$rule = Get-VMHostFirewallException -VMHost $vmhost | Where-Object {{ $_.ExtensionData.Key -eq {} }}", q(ruleset));
                let _ = writeln!(
                    out,
                    "{pad}if (-not $rule) {{ throw ('no firewall ruleset ' + {} + ' on ' + {}) }}",
                    q(ruleset),
                    q(&h.host)
                );
                let _ = writeln!(out, "{pad}if ($rule.Enabled -ne ${enabled}) {{ $rule | Set-VMHostFirewallException -Enabled ${enabled} | Out-Null }}");
            }
            (ChangeTarget::Host, Setting::AdvancedOption { key, value }) => {
                comment(out, pad, &format!("{check}: {key} = '{value}' (was '{replaces}')"));
                let _ = writeln!(
                    out,
                    "{pad}$setting = Get-AdvancedSetting -Entity $vmhost -Name {}",
                    q(key)
                );
                let _ = writeln!(
                    out,
                    "{pad}if (-not $setting) {{ throw ('no advanced setting ' + {} + ' on ' + {}) }}",
                    q(key),
                    q(&h.host)
                );
                let _ = writeln!(out, "{pad}if ($setting.Value -ne {}) {{ $setting | Set-AdvancedSetting -Value {} -Confirm:$false | Out-Null }}", q(value), q(value));
            }
            (ChangeTarget::Vm { name, moid }, Setting::MemoryReservationLocked { .. }) => {
                comment(
                    out,
                    pad,
                    &format!("{check}: VM {name}: reserve all guest memory (was {replaces})"),
                );
                let find = match moid {
                    Some(id) => format!("Get-VM -Server $server -Id {}", q(&format!("VirtualMachine-{id}"))),
                    None => format!("Get-VM -Server $server -Name {} -Location $vmhost", q(name)),
                };
                let _ = writeln!(out, "{pad}$vm = @({find})");
                let _ = writeln!(
                    out,
                    "{pad}if ($vm.Count -ne 1 -or $vm[0].Name -ne {}) {{ throw ('not exactly one VM named ' + {} + ': change it by hand') }}",
                    q(name),
                    q(name)
                );
                let _ = writeln!(
                    out,
                    "{pad}if (-not $vm[0].ExtensionData.Config.MemoryReservationLockedToMax -and $PSCmdlet.ShouldProcess({}, 'Reserve all guest memory')) {{",
                    q(name)
                );
                let _ = writeln!(out, "{pad}    $vm[0].ExtensionData.ReconfigVM((New-Object VMware.Vim.VirtualMachineConfigSpec -Property @{{ MemoryReservationLockedToMax = $true }}))");
                let _ = writeln!(out, "{pad}}}");
            }
            _ => {}
        }
    }
}

/// A step by hand, as comments.
fn manual(out: &mut String, indent: &str, place: &str, step: &Step) {
    for line in manual_lines(place, step) {
        comment(out, indent, &line);
    }
}

/// One comment line: a newline would end it, and `#>` or `<#` could open or close a
/// block comment around code.
fn comment(out: &mut String, indent: &str, text: &str) {
    let text = comment_text(text).replace("<#", "< #").replace("#>", "# >");
    let _ = writeln!(out, "{indent}# {text}");
}
