//! The HTTP side: accepting connections within limits, TLS, basic authentication, routing.
//!
//! What a hostile or broken client can cost is bounded: at most `limits.max_connections`
//! connections are served at once (more wait in the kernel's accept queue), a request's
//! headers must fit in 16 KiB (else 431) and arrive within 10 s (else the connection is
//! closed), a TLS handshake must finish within 10 s, and a connection is recycled after
//! 10 minutes. Request bodies are never read.
use super::probe::Engine;
use super::web::WebConfig;
use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::time::Instant;

/// Time a client has to send a request's headers (and, between requests, to start one).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to finish the TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of a request line and headers.
const MAX_HEADER_BYTES: usize = 16 * 1024;
/// A kept-alive connection is closed (after its request in flight) this long after it
/// was opened, so no client holds a slot for ever.
const MAX_CONNECTION_AGE: Duration = Duration::from_secs(600);

/// The exposition format's content type (text format 0.0.4).
const METRICS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What the request handlers share.
pub struct Site {
    pub engine: Rc<Engine>,
    pub web: Option<WebConfig>,
    /// `/-/ready` answers 503 once draining has begun.
    pub draining: std::cell::Cell<bool>,
}

/// Serves `listener` until `stop` turns true, then stops accepting, lets the requests in
/// flight finish (each is bounded by its deadline) and returns.
pub async fn serve(listener: TcpListener, site: Rc<Site>, mut stop: watch::Receiver<bool>) {
    let max = site.engine.config().limits.max_connections;
    let slots = Arc::new(Semaphore::new(max));
    let (drain_tx, drain_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        while tasks.try_join_next().is_some() {}
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            _ = stop.wait_for(|s| *s) => break,
        };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (tcp, _peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of descriptors or a connection reset before accept: wait a moment
                // rather than spin.
                eprintln!("pvrdma-doctor: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let site = site.clone();
        let drain = drain_rx.clone();
        tasks.spawn_local(async move {
            site.engine.metrics.http_connections_open.inc();
            let tls = site.web.as_ref().and_then(|w| w.tls.clone());
            match tls {
                None => connection(tcp, site.clone(), drain).await,
                Some(acceptor) => match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                    Ok(Ok(stream)) => connection(stream, site.clone(), drain).await,
                    _ => site.engine.metrics.http_connection_errors.inc(),
                },
            }
            site.engine.metrics.http_connections_open.sub(1);
            drop(permit);
        });
    }
    site.draining.set(true);
    let _ = drain_tx.send(true);
    while tasks.join_next().await.is_some() {}
}

/// Serves one connection's requests.
async fn connection<I>(io: I, site: Rc<Site>, mut drain: watch::Receiver<bool>)
where
    I: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let handler_site = site.clone();
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let site = handler_site.clone();
        async move { Ok::<_, Infallible>(handle(&site, req).await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_HEADER_BYTES)
        .keep_alive(true);
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let age = tokio::time::sleep(MAX_CONNECTION_AGE);
    tokio::pin!(age);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        _ = drain.wait_for(|d| *d) => {
            conn.as_mut().graceful_shutdown();
            conn.as_mut().await
        }
        _ = &mut age => {
            conn.as_mut().graceful_shutdown();
            conn.as_mut().await
        }
    };
    if result.is_err() {
        site.engine.metrics.http_connection_errors.inc();
    }
}

fn response(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn text(status: StatusCode, body: impl Into<String>) -> Response<Full<Bytes>> {
    let mut body = body.into();
    body.push('\n');
    response(status, "text/plain; charset=utf-8", body)
}

/// Routes one request.
async fn handle(site: &Site, req: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    let start = Instant::now();
    site.engine.metrics.http_requests.inc();
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD are served");
        r.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if let Some(auth) = site.web.as_ref().and_then(|w| w.auth.as_ref()) {
        let header = req
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .map(HeaderValue::as_bytes);
        if !auth.allows(header).await {
            site.engine.metrics.auth_failures.inc();
            let mut r = text(StatusCode::UNAUTHORIZED, "Unauthorized");
            r.headers_mut().insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"pvrdma-doctor\""),
            );
            return r;
        }
    }
    match req.uri().path() {
        "/" => response(StatusCode::OK, "text/html; charset=utf-8", landing_page(&site.engine)),
        "/metrics" => response(StatusCode::OK, METRICS_TYPE, site.engine.render_metrics()),
        "/-/healthy" => text(StatusCode::OK, "pvrdma-doctor exporter is Healthy."),
        "/-/ready" if site.draining.get() => text(
            StatusCode::SERVICE_UNAVAILABLE,
            "pvrdma-doctor exporter is shutting down.",
        ),
        "/-/ready" => text(StatusCode::OK, "pvrdma-doctor exporter is Ready."),
        "/probe" => {
            let (target, module) = match probe_params(req.uri().query()) {
                Ok(p) => p,
                Err(e) => {
                    site.engine.metrics.probes_rejected.inc();
                    return text(StatusCode::BAD_REQUEST, e);
                }
            };
            let header = req
                .headers()
                .get("x-prometheus-scrape-timeout-seconds")
                .and_then(|v| v.to_str().ok());
            let deadline = site.engine.deadline(start, header);
            match site.engine.probe(&target, module.as_deref(), start, deadline).await {
                Ok(body) => response(StatusCode::OK, METRICS_TYPE, body),
                Err(refused) => text(StatusCode::BAD_REQUEST, refused.0),
            }
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "Not Found: try /, /metrics or /probe?target=HOST",
        ),
    }
}

/// `target` and `module` from a query string; each at most once, `target` required.
pub(crate) fn probe_params(query: Option<&str>) -> Result<(String, Option<String>), String> {
    let mut target: Option<String> = None;
    let mut module: Option<String> = None;
    for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        let slot = match k.as_ref() {
            "target" => &mut target,
            "module" => &mut module,
            _ => continue,
        };
        if slot.is_some() {
            return Err(format!("the {k} parameter is given twice"));
        }
        *slot = Some(v.into_owned());
    }
    match target {
        Some(t) if !t.is_empty() => Ok((t, module.filter(|m| !m.is_empty()))),
        _ => Err("the target parameter is missing: /probe?target=HOST[&module=NAME]".into()),
    }
}

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
fn landing_page(engine: &Engine) -> String {
    let config = engine.config();
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
                html(&crate::nodeset::fold(&g.members))
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
    fn probe_parameters() {
        assert_eq!(probe_params(Some("target=esx01")), Ok(("esx01".into(), None)));
        assert_eq!(
            probe_params(Some("module=probe&target=esx%5B01-02%5D&x=1")),
            Ok(("esx[01-02]".into(), Some("probe".into())))
        );
        assert!(probe_params(None).is_err());
        assert!(probe_params(Some("target=")).is_err());
        assert!(probe_params(Some("target=a&target=b")).unwrap_err().contains("twice"));
        assert!(
            probe_params(Some("target=%FF%FE")).is_ok(),
            "lossy, then refused by the allow-list"
        );
    }

    #[test]
    fn links_are_escaped() {
        assert_eq!(probe_href("a&b c"), "/probe?target=a%26b+c");
        assert_eq!(html("<a href=\"x\">&"), "&lt;a href=&quot;x&quot;&gt;&amp;");
    }
}
