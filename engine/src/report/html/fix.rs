//! The forms of a check's fix, as the page lists them: a decision to take first, then
//! each tool an admin changes hosts with (the ESXi shell's esxcli, the vSphere Client,
//! PowerCLI, govc), the one the run could use first, as the text report orders them; a
//! command shown whole in `<code>` (to copy), prose as prose. The one place the page reads
//! a [`Remedy`]: a new form of fix is a new entry here, and every finding shows it.
use super::escape;
use crate::diagnose::Remedy;
use std::fmt::Write;

/// One way to apply a fix, or what to know before.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FixForm<'a> {
    /// Where it is typed or done (`ESXi shell`), or what it is (`Decide first`).
    pub where_: &'static str,
    /// The text: a command line, or words.
    pub text: &'a str,
    /// A command to copy and run, exactly as shown.
    pub command: bool,
}

/// How the fixes of a finding are shown.
#[derive(Debug, Default, Clone)]
pub(super) struct FixOrder {
    /// The host was read without SSH (`--no-ssh`, or SSH refused under `--vcenter`): the
    /// vSphere Client and the tools that go through vCenter lead, esxcli comes last.
    pub vcenter_first: bool,
    /// A finding of several hosts: their node set (the forms shown name the first).
    pub also_for: Option<String>,
}

/// Every form of `remedy`, in the order the run can use them: the decision first, then
/// esxcli first over SSH or last without it, then the advice.
pub(super) fn forms_of_fix(remedy: &Remedy, vcenter_first: bool) -> Vec<FixForm<'_>> {
    let tools = remedy.forms.as_ref();
    let client = tools.and_then(|f| f.vsphere_client.as_deref());
    let esxcli = remedy.command.as_deref();
    let mut parts: Vec<(&'static str, Option<&str>, bool)> = vec![("Decide first", remedy.decision.as_deref(), false)];
    if !vcenter_first {
        parts.push(("ESXi shell", esxcli, true));
    } else {
        parts.push(("vSphere Client", client, false));
    }
    parts.push(("PowerCLI", tools.and_then(|f| f.powercli.as_deref()), true));
    parts.push(("govc", tools.and_then(|f| f.govc.as_deref()), true));
    if !vcenter_first {
        parts.push(("vSphere Client", client, false));
    } else {
        parts.push(("ESXi shell", esxcli, true));
    }
    let any_form = parts.iter().skip(1).any(|(_, text, _)| text.is_some());
    parts.push((
        if any_form { "Also" } else { "What to do" },
        remedy.advice.as_deref(),
        false,
    ));
    parts
        .into_iter()
        .filter_map(|(where_, text, command)| text.map(|text| FixForm { where_, text, command }))
        .collect()
}

/// The forms as a definition list (nothing when there are none); a decision to take is
/// marked as such, and a fix folded over several hosts says whom its lines name.
pub(super) fn fix_list(out: &mut String, remedy: &Remedy, order: &FixOrder) {
    let forms = forms_of_fix(remedy, order.vcenter_first);
    if forms.is_empty() {
        return;
    }
    out.push_str("<dl class=\"fix\">");
    for form in forms {
        let class = if form.where_ == "Decide first" {
            " class=\"decide\""
        } else {
            ""
        };
        let _ = write!(out, "<dt{class}>{}</dt><dd{class}>", escape::text(form.where_));
        if form.command {
            command(out, form.text);
        } else {
            escape::push(out, form.text);
        }
        out.push_str("</dd>");
    }
    if let (Some(hosts), true) = (&order.also_for, remedy.forms.is_some()) {
        let _ = write!(
            out,
            "<dt>For each host</dt><dd>the lines above name the first of {}; <code>--format powercli</code> or \
             <code>--format ansible</code> writes them for every host</dd>",
            escape::text(hosts)
        );
    }
    out.push_str("</dl>\n");
}

/// A command in `<code>`, each word kept whole where the line wraps: a browser would
/// otherwise break `Set-VMHostFirewallException` after its hyphen, and the line would
/// read as two words. The text, copied, is the command exactly.
fn command(out: &mut String, text: &str) {
    out.push_str("<code>");
    for (n, word) in text.split(' ').enumerate() {
        if n > 0 {
            out.push(' ');
        }
        // A leading hyphen (`-Name`) is no break opportunity; one inside a word is.
        if word.chars().skip(1).any(|c| c == '-') {
            let _ = write!(out, "<span class=\"w\">{}</span>", escape::text(word));
        } else {
            escape::push(out, word);
        }
    }
    out.push_str("</code>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::RemedyForms;

    fn firewall() -> Remedy {
        Remedy {
            command: Some("esxcli network firewall ruleset set -e true -r pvrdma".into()),
            advice: Some("an ESXi 8.0 upgrade turns it off".into()),
            forms: Some(RemedyForms {
                vsphere_client: Some(
                    "select host esx01 > Configure > System > Firewall > Edit, tick pvrdma, OK".into(),
                ),
                powercli: Some("Get-VMHostFirewallException -VMHost (Get-VMHost -Name 'esx01')".into()),
                govc: Some("govc host.esxcli -host esx01 network firewall ruleset set -e true -r pvrdma".into()),
                esxcli: Some("esxcli network firewall ruleset set -e true -r pvrdma".into()),
            }),
            ..Remedy::default()
        }
    }

    fn places(remedy: &Remedy, vcenter_first: bool) -> Vec<&'static str> {
        forms_of_fix(remedy, vcenter_first).iter().map(|f| f.where_).collect()
    }

    #[test]
    fn every_form_is_listed_once_the_one_the_run_can_use_first() {
        let remedy = firewall();
        assert_eq!(
            places(&remedy, false),
            ["ESXi shell", "PowerCLI", "govc", "vSphere Client", "Also"]
        );
        assert_eq!(
            places(&remedy, true),
            ["vSphere Client", "PowerCLI", "govc", "ESXi shell", "Also"]
        );
        let commands: Vec<bool> = forms_of_fix(&remedy, true).iter().map(|f| f.command).collect();
        assert_eq!(commands, [false, true, true, true, false]);
    }

    #[test]
    fn a_decision_comes_before_any_form_and_is_marked() {
        let remedy = Remedy {
            decision: Some("two vmknics are on the HCA's vDS: choose the one".into()),
            ..firewall()
        };
        assert_eq!(places(&remedy, false)[0], "Decide first");
        let mut out = String::new();
        fix_list(&mut out, &remedy, &FixOrder::default());
        assert!(
            out.starts_with(
                "<dl class=\"fix\"><dt class=\"decide\">Decide first</dt><dd class=\"decide\">two vmknics are on the HCA&#39;s vDS: choose the one</dd><dt>ESXi shell</dt>"
            ),
            "{out}"
        );
    }

    #[test]
    fn forms_are_escaped_and_a_folded_fix_says_whom_it_names() {
        let mut remedy = firewall();
        if let Some(f) = remedy.forms.as_mut() {
            f.powercli = Some("Get-VMHost -Name '</script><b>&\"'".into());
        }
        let mut out = String::new();
        let order = FixOrder {
            vcenter_first: false,
            also_for: Some("esx[01-40]".into()),
        };
        fix_list(&mut out, &remedy, &order);
        assert!(
            out.contains(
                "<dt>PowerCLI</dt><dd><code><span class=\"w\">Get-VMHost</span> -Name &#39;&lt;/script&gt;&lt;b&gt;&amp;&quot;&#39;</code></dd>"
            ),
            "{out}"
        );
        assert!(out.contains("the lines above name the first of esx[01-40]"), "{out}");
    }

    #[test]
    fn a_command_wraps_only_between_its_words_and_copies_as_it_is() {
        let mut out = String::new();
        command(&mut out, "Get-VMHost -Name 'a b' | Set-X -Enabled $true");
        assert_eq!(
            out,
            "<code><span class=\"w\">Get-VMHost</span> -Name &#39;a b&#39; | \
             <span class=\"w\">Set-X</span> -Enabled $true</code>"
        );
    }

    #[test]
    fn advice_alone_is_what_to_do_and_nothing_is_nothing() {
        let remedy = Remedy {
            advice: Some("replace the cable".into()),
            ..Remedy::default()
        };
        assert_eq!(places(&remedy, false), ["What to do"]);
        let mut out = String::new();
        fix_list(&mut out, &Remedy::default(), &FixOrder::default());
        assert!(out.is_empty());
    }
}
