//! The page as a user relies on it: nothing a host sends becomes markup, the policy
//! allows exactly the page's own script, the picture is accessible and draws what the
//! diagnosis found (a prediction apart from an observation, a fleet folded), and the
//! outputs behind a finding travel with it.
use super::*;
use crate::capture::{folder, from_vsphere, HostCapture};
use crate::diagnose::{self, Status, Verdict};
use crate::report::{render_with, Format, RenderOptions};
use sha2::{Digest, Sha256};

fn sample(name: &str) -> Vec<HostCapture> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(name);
    folder::read_dir_for_tests(&dir).expect("sample loads")
}

fn page(d: &Diagnosis, options: HtmlOptions) -> String {
    let options = RenderOptions {
        html: options,
        ..RenderOptions::default()
    };
    render_with(d, Format::Html, &options).text
}

/// Every tag name that opens an element in `html`, as a browser's tokenizer would see
/// `<` followed by a letter.
fn tags(html: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        if name.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
            out.insert(name.to_ascii_lowercase());
        }
    }
    out
}

const ELEMENTS: &[&str] = &[
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "p",
    "span",
    "strong",
    "dl",
    "dt",
    "dd",
    "nav",
    "ol",
    "ul",
    "li",
    "a",
    "main",
    "section",
    "figure",
    "figcaption",
    "svg",
    "desc",
    "g",
    "rect",
    "text",
    "tspan",
    "path",
    "line",
    "article",
    "code",
    "details",
    "summary",
    "pre",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "div",
    "label",
    "input",
    "select",
    "option",
    "output",
    "button",
    "footer",
    "script",
    "time",
];

const HOSTILE: &str = "<img src=x onerror=alert(1)>&amp;\"'</script><script>alert(2)</script>\u{202e}";

/// The healthy cluster with every name a host or vCenter gives replaced by markup.
fn hostile() -> Diagnosis {
    let mut d = diagnose::diagnose(&sample("healthy-cluster"));
    for (n, h) in d.hosts.iter_mut().enumerate() {
        h.host = format!("{HOSTILE}{n}");
        h.esxi_version = Some(HOSTILE.to_string());
        for vm in &mut h.vms {
            vm.name = format!("{HOSTILE}vm{n}");
            for a in &mut vm.adapters {
                a.verdict = Verdict::TcpFallback;
                a.reasons = vec![HOSTILE.to_string()];
                if let Some(p) = &mut a.port {
                    p.vswitch = Some(HOSTILE.to_string());
                }
            }
        }
        for c in &mut h.checks {
            c.status = Status::Fail;
            c.summary = HOSTILE.to_string();
            c.remedy = Some(diagnose::Remedy {
                command: Some(HOSTILE.to_string()),
                advice: Some(HOSTILE.to_string()),
                decision: Some(HOSTILE.to_string()),
                forms: Some(diagnose::RemedyForms {
                    vsphere_client: Some(HOSTILE.to_string()),
                    powercli: Some(HOSTILE.to_string()),
                    govc: Some(HOSTILE.to_string()),
                    esxcli: Some(HOSTILE.to_string()),
                }),
                changes: Vec::new(),
            });
        }
        for d in &mut h.topology.devices {
            d.device = HOSTILE.to_string();
            d.state = HOSTILE.to_string();
            if let Some(s) = &mut d.switch {
                s.name = HOSTILE.to_string();
            }
            if let Some(u) = &mut d.uplink {
                u.name = HOSTILE.to_string();
            }
        }
        if let Some(v) = &mut h.pvrdma_vmknic {
            v.name = HOSTILE.to_string();
            v.ipv4 = Some(HOSTILE.to_string());
        }
    }
    d
}

#[test]
fn nothing_a_host_sends_becomes_markup() {
    let html = page(&hostile(), HtmlOptions::default());
    let unexpected: Vec<String> = tags(&html)
        .into_iter()
        .filter(|t| !ELEMENTS.contains(&t.as_str()))
        .collect();
    assert!(unexpected.is_empty(), "elements made from host text: {unexpected:?}");
    assert_eq!(html.matches("<script").count(), 1, "one script, the page's own");
    assert!(!html.contains("<img"), "an image from a VM name");
    assert!(!html.contains("onerror=alert(1)>"), "an unescaped attribute");
    // The names are there, as text.
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;&amp;amp;&quot;&#39;&lt;/script&gt;"));
    // A bidi override is shown, never obeyed.
    assert!(!html.contains('\u{202e}') && html.contains("\\u{202e}"));
}

#[test]
fn the_policy_allows_only_the_script_the_page_holds() {
    let html = page(&diagnose::diagnose(&sample("healthy-cluster")), HtmlOptions::default());
    let script = html
        .split_once("<script>")
        .and_then(|(_, rest)| rest.split_once("</script>"))
        .map(|(s, _)| s)
        .expect("a script");
    let hash = data_encoding::BASE64.encode(&Sha256::digest(script.as_bytes()));
    let csp = html
        .split_once("http-equiv=\"Content-Security-Policy\" content=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(c, _)| c)
        .expect("a policy in a meta element");
    let directives: Vec<&str> = csp.split(';').map(str::trim).collect();
    assert!(directives.contains(&"default-src 'none'"), "{csp}");
    assert!(
        directives.contains(&format!("script-src 'sha256-{hash}'").as_str()),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-eval"));
    let script_src = directives.iter().find(|d| d.starts_with("script-src")).unwrap();
    assert!(!script_src.contains("unsafe-inline"), "{csp}");
    // The policy comes before anything that could load.
    assert!(html.find("Content-Security-Policy") < html.find("<style>"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no address to load from"
    );
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
}

#[test]
fn the_picture_is_an_image_with_a_title_and_a_description() {
    let d = diagnose::diagnose(&sample("esxi80-mixed-fleet"));
    let html = page(&d, HtmlOptions::default());
    let svg = html.split_once("<svg viewBox").map(|(_, s)| s).expect("the picture");
    assert!(svg.contains("role=\"img\" aria-labelledby=\"picture-title picture-desc\""));
    assert!(svg.contains("<title id=\"picture-title\">PVRDMA paths of esx[01-03]</title>"));
    let desc = svg.split_once("<desc id=\"picture-desc\">").map(|(_, s)| s).unwrap();
    // The description says in words what the picture draws: each host and the path.
    for words in [
        "esx01",
        "esx02",
        "esx03",
        "unreachable",
        "tcp-fallback",
        "path ✗ tcp · 1 adapter pair between esx01 and esx02",
    ] {
        assert!(desc.split("</desc>").next().unwrap().contains(words), "{words}: {desc}");
    }
    // A verdict is a word and a mark, never a colour alone.
    assert!(svg.contains("<tspan class=\"fail\">✗ tcp-fallback</tspan>"), "{svg}");
    assert!(svg.contains("<tspan class=\"ok\">✓ hca</tspan>"));
    assert!(svg.contains("class=\"edge tcp\""));
    assert!(svg.contains("✗ tcp · 1 adapter pair"));
}

/// Two hosts read through the vSphere API, one over SSH.
fn configuration_only_fleet() -> Diagnosis {
    const HOST: &str = include_str!("../../../../parsers/tests/fixtures/vsphere_host_config.xml");
    const VM: &str = include_str!("../../../../parsers/tests/fixtures/vsphere_vm_config.xml");
    let mut captures = sample("healthy-cluster");
    captures.truncate(1);
    for name in ["esx02", "esx03"] {
        captures.push(from_vsphere(name, HOST.to_string(), &[VM.to_string()], 5));
    }
    diagnose::diagnose(&captures)
}

#[test]
fn a_predicted_path_is_drawn_apart_from_an_observed_one() {
    let d = configuration_only_fleet();
    assert!(d.hosts[1].configuration_only && !d.hosts[0].configuration_only);
    let html = page(&d, HtmlOptions::default());
    let svg = html.split_once("<figure").map(|(_, s)| s).expect("the picture");
    assert!(svg.contains("class=\"edge rdma predicted\""), "a dashed path");
    assert!(svg.contains("✓ rdma (predicted) · "), "labelled as a prediction");
    assert!(!svg.contains("class=\"edge rdma\""), "no path observed as rdma: {svg}");
    // What the API cannot tell is drawn as unknown.
    assert!(html.contains("<tspan class=\"unknown\">MTU ?</tspan>"));
    assert!(html.contains("(not in the vSphere API)"));
}

#[test]
fn a_fleet_of_identical_hosts_is_one_band_with_its_paths_counted() {
    let base = sample("healthy-cluster").remove(0);
    let captures: Vec<HostCapture> = (1..=100)
        .map(|n| {
            let mut c = base.clone();
            c.host = format!("esx{n:03}");
            // Each host its own PVRDMA vmknic address, in one subnet.
            if let Some(o) = c.outputs.get_mut("esxcli_network_ip_interface_ipv4_get") {
                o.stdout = o.stdout.replace("10.10.10.11", &format!("10.10.10.{}", 100 + n));
            }
            c
        })
        .collect();
    let d = diagnose::diagnose(&captures);
    let html = page(&d, HtmlOptions::default());
    assert_eq!(
        html.matches("<rect class=\"band ").count(),
        1,
        "one band for 100 alike hosts"
    );
    assert!(html.contains("esx[001-100] (100 hosts)"));
    // Every healthy pair between them is counted on the one path among them.
    let pairs = d.transport.totals.rdma;
    assert_eq!(pairs, 100 * 99 / 2);
    assert!(
        html.contains(&format!("✓ rdma · {} adapter pairs", thousands(pairs))),
        "{pairs}"
    );
    // Each host stays findable by name.
    assert!(html.contains("esx001, esx002, esx003"));
}

#[test]
fn a_page_read_offline_carries_the_outputs_behind_each_finding() {
    let captures = sample("firewall-pvrdma-disabled");
    let d = diagnose::diagnose(&captures);
    let with = page(
        &d,
        HtmlOptions {
            outputs: Some(std::sync::Arc::new(Outputs::behind(&d, &captures))),
            ..HtmlOptions::default()
        },
    );
    let finding = with
        .split_once("firewall-pvrdma fails on esx01")
        .map(|(_, s)| s)
        .expect("the finding");
    let finding = finding.split("</article>").next().unwrap();
    assert!(
        finding.contains("<dt>ESXi shell</dt><dd><code>esxcli network firewall ruleset set -e true -r pvrdma</code>")
    );
    assert!(finding.contains("<details class=\"outputs\"><summary>What esx01 printed (2 outputs)</summary>"));
    let ruleset = &captures[0].outputs["esxcli_network_firewall_ruleset_list"].stdout;
    let pvrdma_row = ruleset.lines().find(|l| l.starts_with("pvrdma")).unwrap();
    assert!(finding.contains(pvrdma_row), "the row the check read: {pvrdma_row}");
    // A live run's page does not carry them.
    let without = page(&d, HtmlOptions::default());
    assert!(!without.contains("class=\"outputs\""));
}

#[test]
fn a_vm_first_run_lists_its_adapters_by_vm() {
    let captures = sample("esxi80-mixed-fleet");
    let d = diagnose::diagnose_selected(
        &captures,
        &diagnose::Selection::default().only_vms(["hpc-node02".to_string(), "gone".to_string()]),
    );
    let html = page(&d, HtmlOptions::default());
    assert!(html.contains("<h2 id=\"h-adapters\">VMs and their PVRDMA adapters</h2>"));
    let head = html.split_once("<table id=\"adapter-table\">").map(|(_, t)| t).unwrap();
    assert!(
        head.starts_with("\n<thead><tr><th scope=\"col\">VM</th><th scope=\"col\">Host</th>"),
        "{head}"
    );
    // esx03 was not reached: a chosen VM not seen may run there.
    assert!(
        html.contains("Not seen running: gone; the VM list of esx03 could not be read"),
        "{html}"
    );
}

#[test]
fn a_fix_folded_over_hosts_shows_the_first_hosts_lines_and_says_so() {
    let mut captures = sample("firewall-pvrdma-disabled");
    let mut second = captures[0].clone();
    second.host = "esx02".to_string();
    captures.push(second);
    let d = diagnose::diagnose(&captures);
    let folded = page(&d, HtmlOptions::default());
    let line = |host: &str| format!("govc host.esxcli -host {host} network firewall ruleset set -e true -r pvrdma");
    assert!(
        folded.contains("firewall-pvrdma fails on esx[01-02] (2 hosts)"),
        "{folded}"
    );
    assert!(folded.contains(&line("esx01")), "{folded}");
    assert!(!folded.contains(&line("esx02")), "{folded}");
    assert!(
        folded.contains("the lines above name the first of esx[01-02]; <code>--format powercli</code>"),
        "{folded}"
    );
    let options = RenderOptions {
        human: crate::report::HumanOptions {
            fold: false,
            ..Default::default()
        },
        ..RenderOptions::default()
    };
    let each = render_with(&d, Format::Html, &options).text;
    assert!(each.contains(&line("esx01")) && each.contains(&line("esx02")));
    assert!(!each.contains("the lines above name the first"));
}
