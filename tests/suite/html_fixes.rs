//! The page shows every form of each failing check's fix, as the JSON report carries them,
//! escaped, for every sample, host by host (`--no-fold`).
use crate::golden::scenarios;
use crate::support::client::Doctor;
use serde_json::Value;
use std::path::Path;

fn analyze(scenario: &str, args: &[&str]) -> String {
    let out = Doctor::new()
        .arg("analyze")
        .args(args)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(scenario))
        .output();
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// What the page writes for a string: the five characters markup gives a meaning to, escaped.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Each text of a fix (the command, the decision, the advice, every tool's form) with the
/// label the page gives it.
fn texts(remediation: &Value) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (label, value) in [
        ("ESXi shell", &remediation["command"]),
        ("Decide first", &remediation["decision"]),
        ("vSphere Client", &remediation["forms"]["vsphere_client"]),
        ("PowerCLI", &remediation["forms"]["powercli"]),
        ("govc", &remediation["forms"]["govc"]),
        ("ESXi shell", &remediation["forms"]["esxcli"]),
    ] {
        if let Some(text) = value.as_str() {
            out.push((label, text.to_string()));
        }
    }
    if let Some(advice) = remediation["advice"].as_str() {
        out.push(("", advice.to_string()));
    }
    out
}

#[test]
fn every_form_of_each_failing_checks_fix_is_on_the_page_escaped() {
    let mut forms_seen = 0;
    for (scenario, _) in scenarios() {
        let report: Value = serde_json::from_str(&analyze(scenario, &["--format", "json"])).unwrap();
        // A command's words with a hyphen are spans of their own (kept whole where it wraps).
        let page = analyze(scenario, &["--format", "html", "--no-fold"])
            .replace("<span class=\"w\">", "")
            .replace("</span>", "");
        let hosts = report["hosts"].as_array().unwrap();
        let checks = hosts
            .iter()
            .flat_map(|h| h["checks"].as_array().unwrap())
            .chain(report["fleet_checks"].as_array().into_iter().flatten());
        for c in checks.filter(|c| c["status"] == "fail" || c["status"] == "warn") {
            for (label, text) in texts(&c["remediation"]) {
                let shown = match label {
                    "" => escaped(&text),
                    "ESXi shell" | "PowerCLI" | "govc" => {
                        format!("<dt>{label}</dt><dd><code>{}</code></dd>", escaped(&text))
                    }
                    "Decide first" => format!(
                        "<dt class=\"decide\">{label}</dt><dd class=\"decide\">{}</dd>",
                        escaped(&text)
                    ),
                    _ => format!("<dt>{label}</dt><dd>{}</dd>", escaped(&text)),
                };
                assert!(
                    page.contains(&shown),
                    "{scenario}: {} on the page lacks {shown}",
                    c["id"]
                );
                forms_seen += usize::from(matches!(label, "PowerCLI" | "govc" | "vSphere Client"));
            }
        }
    }
    assert!(forms_seen >= 10, "the samples hold {forms_seen} tool forms");
}
