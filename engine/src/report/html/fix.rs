//! The forms of a check's fix, as the page lists them: each way an admin can apply it,
//! named by where it is typed, a command shown whole in `<code>` (to copy), prose as
//! prose. The one place the page reads a [`Remedy`]: a new form of fix is a new entry
//! here, and every finding on the page shows it.
use super::escape;
use crate::diagnose::Remedy;
use std::fmt::Write;

/// One way to apply a fix.
pub(super) struct FixForm<'a> {
    /// Where it is typed or done (`ESXi shell`).
    pub where_: &'static str,
    /// The text: a command line, or what to do in words.
    pub text: &'a str,
    /// A command to copy and run, exactly as shown.
    pub command: bool,
}

/// Every form of `remedy`, the commands first.
pub(super) fn forms_of_fix(remedy: &Remedy) -> Vec<FixForm<'_>> {
    let mut forms = Vec::new();
    if let Some(command) = &remedy.command {
        forms.push(FixForm {
            where_: "ESXi shell",
            text: command,
            command: true,
        });
    }
    if let Some(advice) = &remedy.advice {
        forms.push(FixForm {
            where_: if remedy.command.is_some() { "Also" } else { "What to do" },
            text: advice,
            command: false,
        });
    }
    forms
}

/// The forms as a definition list (nothing when there are none).
pub(super) fn fix_list(out: &mut String, remedy: &Remedy) {
    let forms = forms_of_fix(remedy);
    if forms.is_empty() {
        return;
    }
    out.push_str("<dl class=\"fix\">");
    for form in forms {
        let _ = write!(out, "<dt>{}</dt><dd>", escape::text(form.where_));
        if form.command {
            let _ = write!(out, "<code>{}</code>", escape::text(form.text));
        } else {
            escape::push(out, form.text);
        }
        out.push_str("</dd>");
    }
    out.push_str("</dl>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_the_fix_is_listed_once_command_first() {
        let remedy = Remedy {
            command: Some("esxcli network firewall ruleset set -e true -r pvrdma".into()),
            advice: Some("or in the vSphere Client: Host > Configure > Firewall".into()),
            ..Remedy::default()
        };
        let mut out = String::new();
        fix_list(&mut out, &remedy);
        assert_eq!(
            out,
            "<dl class=\"fix\"><dt>ESXi shell</dt><dd><code>esxcli network firewall ruleset set -e true -r pvrdma</code></dd>\
             <dt>Also</dt><dd>or in the vSphere Client: Host &gt; Configure &gt; Firewall</dd></dl>"
        );
        let none = Remedy::default();
        let mut out = String::new();
        fix_list(&mut out, &none);
        assert!(out.is_empty());
    }
}
