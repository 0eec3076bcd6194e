//! The HTML report in a real browser, Debian's headless Chromium: every sample's page
//! renders (not blank, the picture drawn), the DOM Chromium builds with scripts disabled
//! holds each host's name and each adapter's verdict, a name made of markup stays text,
//! the page's own script runs under its own policy, printing on A4 and on Letter puts
//! every host name on paper, and none of it asks the network for anything: every request
//! goes to a loopback recorder set as the proxy, which a control page proves can see one.
use crate::golden::scenarios;
use crate::support::chromium::{self, Recorder};
use crate::support::client::Doctor;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Chromium's traffic, all of it sent to the recorder. Chromium asks some hosts on its
/// own whatever the page (its update check, the sign-in account listing, optimisation
/// hints, on a schedule of their own that no flag fully turns off): those are the hosts a
/// blank page run each way the tests run a page asks for, and Google's service domains,
/// which a page of ours never names ([`page`] checks). Anything else came from the page.
struct Network {
    recorder: Recorder,
    own: BTreeSet<String>,
}

impl Network {
    fn start(dir: &Path) -> Network {
        let recorder = Recorder::start();
        let proxy = recorder.proxy();
        let blank = dir.join("blank.html");
        std::fs::write(
            &blank,
            "<!DOCTYPE html><html lang=\"en\"><title>blank</title><p>blank</p></html>",
        )
        .unwrap();
        let url = format!("file://{}", blank.display());
        let shot = format!("--screenshot={}", dir.join("blank.png").display());
        let pdf = format!("--print-to-pdf={}", dir.join("blank.pdf").display());
        for _ in 0..2 {
            chromium::run(dir, &proxy, &["--window-size=1280,1200", &shot, &url]);
            chromium::run(dir, &proxy, &["--no-pdf-header-footer", &pdf, &url]);
            chromium::run(dir, &proxy, &["--dump-dom", &url]);
            chromium::dom_without_scripts(dir, &proxy, &url);
        }
        let own = recorder.take().iter().map(|r| chromium::host_of(r)).collect();
        Network { recorder, own }
    }

    fn proxy(&self) -> String {
        self.recorder.proxy()
    }

    /// The requests since the last call that Chromium does not make on its own.
    fn asked_by_pages(&self) -> Vec<String> {
        self.recorder
            .take()
            .into_iter()
            .filter(|r| {
                let host = chromium::host_of(r);
                !self.own.contains(&host) && !chromiums_own(&host)
            })
            .collect()
    }
}

/// Google's service domains, where Chromium's own background requests go.
const CHROMIUMS_OWN: &[&str] = &["google.com", "googleapis.com", "gvt1.com", "gstatic.com"];

fn chromiums_own(host: &str) -> bool {
    CHROMIUMS_OWN
        .iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// `analyze --format FORMAT` of a sample: stdout.
fn analyze(scenario: &str, format: &str) -> String {
    let out = Doctor::new()
        .args(["analyze", "--format", format])
        .arg(samples().join(scenario))
        .output();
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The sample's page written into `dir`, and its `file://` URL.
fn page(dir: &Path, scenario: &str) -> (PathBuf, String) {
    let path = dir.join(format!("{scenario}.html"));
    let html = analyze(scenario, "html");
    // What the recorder leaves out as Chromium's own must be nothing the page could ask for.
    for domain in CHROMIUMS_OWN {
        assert!(!html.contains(domain), "{scenario}: the page names {domain}");
    }
    std::fs::write(&path, html).unwrap();
    let url = format!("file://{}", path.display());
    (path, url)
}

/// The text a reader sees of some HTML: tags left out, entities decoded.
fn text_of(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match (c, in_tag) {
            ('<', _) => in_tag = true,
            ('>', true) => {
                in_tag = false;
                out.push(' ');
            }
            (c, false) => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// The opening tags of some HTML: (name, the rest up to `>`).
fn tags(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        if name.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
            let attrs = rest[name.len()..].split('>').next().unwrap_or("").to_string();
            out.push((name.to_ascii_lowercase(), attrs));
        }
    }
    out
}

/// What the page is made of; an element of another name was made from host text.
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

/// The page's DOM as Chromium built it with scripts off: the picture, every host by name,
/// every adapter's verdict in a row with its VM and host, the script-only controls still
/// hidden, and no element, attribute or script made from what a host sent.
fn check_dom(scenario: &str, dom: &str, report: &serde_json::Value) {
    assert!(
        dom.contains("role=\"img\" aria-labelledby=\"picture-title picture-desc\""),
        "{scenario}: no picture in the DOM"
    );
    let text = text_of(dom);
    let hosts = report["hosts"].as_array().expect("hosts");
    for h in hosts {
        let name = h["host"].as_str().unwrap();
        assert!(
            text.contains(name),
            "{scenario}: host {name:?} is not in the DOM's text"
        );
    }
    let table = dom
        .split_once("<table id=\"adapter-table\">")
        .map(|(_, t)| t.split("</table>").next().unwrap_or(""));
    for h in hosts {
        for vm in h["vms"].as_array().unwrap() {
            for a in vm["adapters"].as_array().unwrap() {
                let (host, name, verdict) = (
                    h["host"].as_str().unwrap(),
                    vm["name"].as_str().unwrap(),
                    a["verdict"].as_str().unwrap(),
                );
                let table = table.unwrap_or_else(|| panic!("{scenario}: no adapter table"));
                let found = table.split("<tr").skip(1).any(|row| {
                    let row = text_of(row);
                    row.contains(host) && row.contains(name) && row.contains(&format!(" {verdict}"))
                });
                assert!(found, "{scenario}: no row says {verdict} for {name:?} on {host:?}");
            }
        }
    }
    let tags = tags(dom);
    let strange: Vec<&String> = tags
        .iter()
        .map(|(n, _)| n)
        .filter(|n| !ELEMENTS.contains(&n.as_str()))
        .collect();
    assert!(
        strange.is_empty(),
        "{scenario}: elements made from host text: {strange:?}"
    );
    let handlers: Vec<&String> = tags
        .iter()
        .map(|(_, a)| a)
        .filter(|a| a.split_whitespace().any(|w| w.to_ascii_lowercase().starts_with("on")))
        .collect();
    assert!(
        handlers.is_empty(),
        "{scenario}: event handler attributes: {handlers:?}"
    );
    assert_eq!(
        tags.iter().filter(|(n, _)| n == "script").count(),
        1,
        "{scenario}: one script"
    );
    // The controls only a script can work stay hidden without one.
    assert!(
        dom.contains("data-filter-for=\"adapter-table\" hidden") || table.is_none(),
        "{scenario}"
    );
}

/// A screenshot that is a page, not a blank: many colours, and the picture's bus drawn in
/// its own colour (#424a53), which nothing outside the picture uses.
fn check_png(scenario: &str, png: &[u8]) {
    let (w, h, pixels) = chromium::png_pixels(png);
    assert!(w >= 1000 && h >= 800, "{scenario}: {w}x{h}");
    let white = pixels.iter().filter(|p| **p == [255, 255, 255]).count();
    assert!(white < pixels.len() * 98 / 100, "{scenario}: the screenshot is blank");
    let bus = pixels.iter().filter(|p| **p == [0x42, 0x4a, 0x53]).count();
    assert!(
        bus > 100,
        "{scenario}: the picture was not drawn ({bus} pixels of its bus)"
    );
}

#[test]
#[ignore = "needs chromium: scripts/test.sh runs it"]
fn every_sample_page_renders_and_reads_without_scripts_and_asks_nothing_of_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let network = Network::start(dir.path());
    let proxy = network.proxy();
    // One browser reads every page's DOM, tab by tab, scripts off.
    let mut reader = chromium::Browser::open(dir.path(), &proxy);
    for (scenario, _) in scenarios() {
        let (_, url) = page(dir.path(), scenario);
        let report: serde_json::Value = serde_json::from_str(&analyze(scenario, "json")).unwrap();
        let shot = dir.path().join(format!("{scenario}.png"));
        let screenshot = format!("--screenshot={}", shot.display());
        chromium::run(
            dir.path(),
            &proxy,
            &["--hide-scrollbars", "--window-size=1280,1200", &screenshot, &url],
        );
        check_png(scenario, &std::fs::read(&shot).unwrap());
        reader.load(&url, false);
        check_dom(scenario, &reader.outer_html(), &report);
    }
    drop(reader);
    let seen = network.asked_by_pages();
    assert!(seen.is_empty(), "the pages asked the network for: {seen:?}");
    // The control: a page that asks for an image is seen, so the silence above means
    // something.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html lang=\"en\"><title>control</title><img alt=\"\" src=\"http://pvrdma-doctor-control.test/pixel.png\"></html>",
    )
    .unwrap();
    chromium::run(
        dir.path(),
        &proxy,
        &["--dump-dom", &format!("file://{}", control.display())],
    );
    let seen = network.asked_by_pages();
    assert!(
        seen.iter().any(|r| r.contains("pvrdma-doctor-control.test/pixel.png")),
        "the recorder saw no request from the control page: {seen:?}"
    );
}

#[test]
#[ignore = "needs chromium: scripts/test.sh runs it"]
fn names_made_of_markup_are_text_in_the_browser() {
    let dir = tempfile::tempdir().unwrap();
    let network = Network::start(dir.path());
    let (_, url) = page(dir.path(), "names-with-markup");
    let dom = chromium::dom_without_scripts(dir.path(), &network.proxy(), &url);
    let text = text_of(&dom);
    for name in [
        "esx01<b>&amp;'\"",
        "esx02<img src=x onerror=alert(2)>",
        "<img src=x onerror=alert(1)> & \"q\" 'r'",
        "</script><script>alert(\"vm\")</script>&amp;",
    ] {
        assert!(text.contains(name), "{name:?} is not shown as text");
    }
    let made: Vec<(String, String)> = tags(&dom)
        .into_iter()
        .filter(|(n, a)| matches!(n.as_str(), "img" | "b") || a.contains("onerror"))
        .collect();
    assert!(made.is_empty(), "elements made from names: {made:?}");
    let seen = network.asked_by_pages();
    assert!(seen.is_empty(), "{seen:?}");
}

#[test]
#[ignore = "needs chromium: scripts/test.sh runs it"]
fn the_page_script_runs_under_the_page_policy() {
    // With scripts on, the policy must let the page's own script run (its hash is
    // right): the filter shows itself and counts the rows; nothing is refused.
    let dir = tempfile::tempdir().unwrap();
    let network = Network::start(dir.path());
    let (_, url) = page(dir.path(), "esxi80-mixed-fleet");
    let run = chromium::run(
        dir.path(),
        &network.proxy(),
        &["--enable-logging=stderr", "--v=0", "--dump-dom", &url],
    );
    let dom = String::from_utf8(run.stdout).unwrap();
    assert!(
        dom.contains("<div class=\"filter\" data-filter-for=\"adapter-table\">"),
        "{dom}"
    );
    assert!(dom.contains("2 of 2 rows shown"), "the script ran");
    assert!(!run.stderr.contains("Content Security Policy"), "{}", run.stderr);
    let seen = network.asked_by_pages();
    assert!(seen.is_empty(), "{seen:?}");
}

/// `pdftotext` of a PDF, and its page size from `pdfinfo`.
fn pdf_text(pdf: &Path) -> (String, String) {
    let text = std::process::Command::new("pdftotext")
        .arg(pdf)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils, installed by scripts/install-test-deps.sh)");
    assert!(
        text.status.success(),
        "pdftotext {} ({} bytes): {}",
        pdf.display(),
        std::fs::metadata(pdf).map_or(0, |m| m.len()),
        String::from_utf8_lossy(&text.stderr)
    );
    let info = std::process::Command::new("pdfinfo")
        .arg(pdf)
        .output()
        .expect("pdfinfo");
    let info = String::from_utf8_lossy(&info.stdout).into_owned();
    let size = info
        .lines()
        .find_map(|l| l.strip_prefix("Page size:"))
        .unwrap_or("")
        .trim()
        .to_string();
    (String::from_utf8_lossy(&text.stdout).into_owned(), size)
}

#[test]
#[ignore = "needs chromium: scripts/test.sh runs it"]
fn printed_on_a4_and_letter_every_host_name_is_on_paper() {
    let dir = tempfile::tempdir().unwrap();
    let network = Network::start(dir.path());
    for (scenario, _) in scenarios() {
        let (path, _) = page(dir.path(), scenario);
        let html = std::fs::read_to_string(&path).unwrap();
        let report: serde_json::Value = serde_json::from_str(&analyze(scenario, "json")).unwrap();
        // The paper a print dialog would choose, as the page's own print style allows.
        for (paper, size) in [("A4", "(A4)"), ("letter", "(letter)")] {
            let copy = dir.path().join(format!("{scenario}-{paper}.html"));
            std::fs::write(
                &copy,
                html.replacen(
                    "</head>",
                    &format!("<style>@page {{ size: {paper}; }}</style></head>"),
                    1,
                ),
            )
            .unwrap();
            let pdf = dir.path().join(format!("{scenario}-{paper}.pdf"));
            chromium::run(
                dir.path(),
                &network.proxy(),
                &[
                    "--no-pdf-header-footer",
                    &format!("--print-to-pdf={}", pdf.display()),
                    &format!("file://{}", copy.display()),
                ],
            );
            let (text, page_size) = pdf_text(&pdf);
            assert!(
                page_size.ends_with(size),
                "{scenario}: printed on {page_size}, not {paper}"
            );
            let bare = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
            let on_paper = bare(&text);
            for h in report["hosts"].as_array().unwrap() {
                let name = h["host"].as_str().unwrap();
                assert!(
                    on_paper.contains(&bare(name)),
                    "{scenario} on {paper}: {name:?} is not on paper"
                );
            }
        }
    }
    let seen = network.asked_by_pages();
    assert!(seen.is_empty(), "{seen:?}");
}
