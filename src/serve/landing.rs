//! `/`: the exporter's landing page, what it is and a link to a probe of every group and
//! host it allows.
use super::exporter::Exporter;

/// Escapes text for HTML.
fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A probe URL for `target`.
fn probe_href(target: &str) -> String {
    let q: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("target", target)
        .finish();
    format!("/probe?{q}")
}

/// Hosts listed on the landing page at most (the rest are counted).
const LANDING_HOSTS: usize = 200;

/// `/`: what this is, and links to `/metrics` and a probe of every group and host.
pub(super) fn landing_page(exporter: &Exporter) -> String {
    let config = exporter.config();
    let mut out = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pvrdma-doctor exporter</title></head><body>\n<h1>pvrdma-doctor exporter</h1>\n<p>Diagnoses the PVRDMA adapters of an ESXi host, or of a group of hosts as one fleet, when Prometheus asks <code>/probe?target=NAME</code>.</p>\n<ul>\n<li><a href=\"/metrics\">/metrics</a>: the exporter's own metrics</li>\n<li><a href=\"/-/healthy\">/-/healthy</a></li>\n</ul>\n",
    );
    if !config.groups.is_empty() {
        out.push_str("<h2>Groups</h2>\n<ul>\n");
        for (name, g) in &config.groups {
            out.push_str(&format!(
                "<li><a href=\"{}\">{}</a> ({} hosts: {})</li>\n",
                html(&probe_href(name)),
                html(name),
                g.members.len(),
                html(&pvrdma_nodeset::fold(&g.members))
            ));
        }
        out.push_str("</ul>\n");
    }
    if !config.hosts.is_empty() {
        out.push_str("<h2>Hosts</h2>\n<ul>\n");
        for h in config.hosts.iter().take(LANDING_HOSTS) {
            out.push_str(&format!(
                "<li><a href=\"{}\">{}</a></li>\n",
                html(&probe_href(h)),
                html(h)
            ));
        }
        if config.hosts.len() > LANDING_HOSTS {
            out.push_str(&format!("<li>and {} more</li>\n", config.hosts.len() - LANDING_HOSTS));
        }
        out.push_str("</ul>\n");
    }
    let modules: Vec<&str> = config.modules.keys().map(String::as_str).collect();
    out.push_str(&format!(
        "<p>Modules: {}. Add <code>&amp;module=NAME</code> to a probe URL to choose one.</p>\n</body></html>\n",
        html(&modules.join(", "))
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_escaped() {
        assert_eq!(probe_href("a&b c"), "/probe?target=a%26b+c");
        assert_eq!(html("<a href=\"x\">&"), "&lt;a href=&quot;x&quot;&gt;&amp;");
    }
}
