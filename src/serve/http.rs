//! The HTTP side: accepting connections within limits, TLS, basic authentication, routing.
//!
//! What a hostile or broken client can cost is bounded, and no client can keep a
//! legitimate scrape waiting: connection slots are for requests, not for idle sockets.
//!
//! - The listener is never left unread: a new connection is accepted at once, and when
//!   `limits.max_connections` are open the idlest connection that is not serving a
//!   request (the one that has waited longest for its next request's headers: an idle
//!   kept-alive socket, a TLS handshake or a slowloris trickle) is closed to make room.
//!   A newcomer therefore gets `max_connections` arrivals' worth of time to send its
//!   request, which a scraper does in microseconds, while an attacker holding idle or
//!   dribbling sockets only evicts its own. Only when every open connection is serving a
//!   request does a new one wait, in the kernel's accept queue.
//! - Evicting, rather than capping per client address: Prometheus and an attacker may
//!   share an address (NAT, a proxy, the same machine), and a per-address cap would then
//!   let the attacker use up Prometheus' share.
//! - Basic authentication's bcrypt checks run on a small pool, one per connection at a
//!   time, each credential once, and a check whose client went before it started is
//!   dropped (see [`super::auth`]), so wrong passwords cannot queue work nobody waits
//!   for ahead of the right one.
//! - A request's headers must fit in 16 KiB (else 431) and arrive within 5 s of the
//!   connection or the previous answer (else the connection is closed); a TLS handshake
//!   must finish within 5 s; a connection is recycled after 10 minutes. Request bodies
//!   are never read. A client that half-closes its side after the request still gets the
//!   answer (unless its credentials were still waiting for a check: it is taken for gone,
//!   see [`super::auth`]).
//!
//! Drain (SIGTERM): the listener is closed at once, so a new connection is refused, not
//! left hanging; connections already open are still served, with `/-/ready` answering
//! 503 and every answer closing its connection; once no request is being served (probes
//! end by their deadline, at most `limits.max_timeout`) the remaining connections, idle or
//! still sending headers, are closed and the server returns.
use super::auth::Verdict;
use super::exporter::Exporter;
use super::web::WebConfig;
use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, ALLOW, CONNECTION, CONTENT_TYPE, HOST, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::os::fd::RawFd;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

/// Time a client has to send a request's headers (and, between requests, to start one).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Time a client has to finish the TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Most bytes of a request line and headers.
const MAX_HEADER_BYTES: usize = 16 * 1024;
/// A kept-alive connection is closed (after its request in flight) this long after it
/// was opened, so no client holds a connection for ever.
const MAX_CONNECTION_AGE: Duration = Duration::from_secs(600);
/// Once a drain has no request left, what the connections get to write their last
/// answers before they are closed.
const DRAIN_FLUSH: Duration = Duration::from_secs(1);

/// The exposition format's content type (text format 0.0.4).
const METRICS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What the request handlers share.
pub struct Site {
    pub exporter: Rc<Exporter>,
    /// TLS and basic authentication; SIGHUP may replace it.
    pub web: RefCell<Option<Rc<WebConfig>>>,
    /// `/-/ready` answers 503 once draining has begun.
    pub draining: Cell<bool>,
    /// The connections open now.
    pub conns: Conns,
}

impl Site {
    pub fn new(exporter: Rc<Exporter>, web: Option<WebConfig>) -> Site {
        Site {
            exporter,
            web: RefCell::new(web.map(Rc::new)),
            draining: Cell::new(false),
            conns: Conns::default(),
        }
    }
}

/// One open connection, as the accept loop sees it.
struct Conn {
    id: u64,
    /// Requests being handled now: a connection serving one is never evicted.
    serving: Cell<usize>,
    /// Since when it has been waiting for a request (accepted, or its last answer given).
    idle_since: Cell<Instant>,
    /// Closes it at once.
    kill: Notify,
}

/// The open connections, and how many requests they are serving.
#[derive(Default)]
pub struct Conns {
    open: RefCell<HashMap<u64, Rc<Conn>>>,
    /// The connections not serving a request, oldest wait first: eviction takes the first
    /// without a scan, as an attacker's reconnections make it frequent.
    idle: RefCell<BTreeSet<(Instant, u64)>>,
    next_id: Cell<u64>,
    serving: Cell<usize>,
    /// Woken when a connection closes or a request ends.
    changed: Notify,
}

impl Conns {
    fn len(&self) -> usize {
        self.open.borrow().len()
    }

    /// Requests being served now, all connections together.
    pub fn serving(&self) -> usize {
        self.serving.get()
    }

    fn register(&self) -> Rc<Conn> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let now = Instant::now();
        let conn = Rc::new(Conn {
            id,
            serving: Cell::new(0),
            idle_since: Cell::new(now),
            kill: Notify::new(),
        });
        self.open.borrow_mut().insert(id, conn.clone());
        self.idle.borrow_mut().insert((now, id));
        conn
    }

    fn remove(&self, conn: &Conn) {
        self.idle.borrow_mut().remove(&(conn.idle_since.get(), conn.id));
        if self.open.borrow_mut().remove(&conn.id).is_some() {
            self.changed.notify_waiters();
        }
    }

    /// Closes the connection not serving a request that has waited longest for one;
    /// whether there was one.
    fn evict_idlest(&self) -> bool {
        let Some((_, id)) = self.idle.borrow_mut().pop_first() else {
            return false;
        };
        if let Some(c) = self.open.borrow_mut().remove(&id) {
            c.kill.notify_one();
        }
        true
    }

    /// Closes every connection.
    fn close_all(&self) {
        self.idle.borrow_mut().clear();
        for (_, c) in self.open.borrow_mut().drain() {
            c.kill.notify_one();
        }
    }

    /// Resolves once a connection may be accepted under `cap`: below it, or with one
    /// to evict.
    async fn room(&self, cap: impl Fn() -> usize) {
        loop {
            let changed = self.changed.notified();
            if self.len() < cap() || !self.idle.borrow().is_empty() {
                return;
            }
            changed.await;
        }
    }

    /// Resolves once no request is being served.
    async fn quiet(&self) {
        loop {
            let changed = self.changed.notified();
            if self.serving.get() == 0 {
                return;
            }
            changed.await;
        }
    }
}

/// Marks a request being served on its connection until dropped (answered, or its
/// client gone).
struct Serving<'a> {
    conns: &'a Conns,
    conn: Rc<Conn>,
}

impl<'a> Serving<'a> {
    fn new(conns: &'a Conns, conn: Rc<Conn>) -> Self {
        if conn.serving.get() == 0 {
            conns.idle.borrow_mut().remove(&(conn.idle_since.get(), conn.id));
        }
        conn.serving.set(conn.serving.get() + 1);
        conns.serving.set(conns.serving.get() + 1);
        Serving { conns, conn }
    }
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        let c = &self.conn;
        c.serving.set(c.serving.get().saturating_sub(1));
        if c.serving.get() == 0 && self.conns.open.borrow().contains_key(&c.id) {
            let now = Instant::now();
            c.idle_since.set(now);
            self.conns.idle.borrow_mut().insert((now, c.id));
        }
        self.conns.serving.set(self.conns.serving.get().saturating_sub(1));
        self.conns.changed.notify_waiters();
    }
}

/// Serves `listener` until `stop` turns true, then drains (see the module's text) and
/// returns.
pub async fn serve(listener: TcpListener, site: Rc<Site>, mut stop: watch::Receiver<bool>) {
    let (drain_tx, drain_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    let cap = || site.exporter.config().limits.max_connections;
    loop {
        while tasks.try_join_next().is_some() {}
        tokio::select! {
            () = site.conns.room(cap) => {}
            _ = stop.wait_for(|s| *s) => break,
        }
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (tcp, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of descriptors or a connection reset before accept: wait a moment
                // rather than spin.
                eprintln!("pvrdma-doctor: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        while site.conns.len() >= cap() && site.conns.evict_idlest() {
            site.exporter.metrics.http_connections_evicted.inc();
        }
        let _ = tcp.set_nodelay(true);
        // What tells a credentials check that its client went (see `auth::peer_closed`).
        let fd = std::os::fd::AsRawFd::as_raw_fd(&tcp);
        let conn = site.conns.register();
        let site = site.clone();
        let drain = drain_rx.clone();
        tasks.spawn_local(async move {
            site.exporter.metrics.http_connections_open.inc();
            let tls = site.web.borrow().as_ref().and_then(|w| w.tls.clone());
            let served = async {
                match tls {
                    None => connection(tcp, (fd, peer.ip()), &site, conn.clone(), drain).await,
                    Some(acceptor) => match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(stream)) => connection(stream, (fd, peer.ip()), &site, conn.clone(), drain).await,
                        _ => site.exporter.metrics.http_connection_errors.inc(),
                    },
                }
            };
            tokio::select! {
                biased;
                () = conn.kill.notified() => {}
                () = served => {}
            }
            site.conns.remove(&conn);
            site.exporter.metrics.http_connections_open.sub(1);
        });
    }
    // New connections are refused from now on, not left in a queue nobody reads.
    drop(listener);
    site.draining.set(true);
    let bound = site.exporter.config().limits.max_timeout + Duration::from_secs(1);
    let _ = tokio::time::timeout(bound, site.conns.quiet()).await;
    // Nothing is being served: let the last answers be written, then close the rest
    // (idle, or still sending headers).
    let _ = drain_tx.send(true);
    let flushed = tokio::time::timeout(DRAIN_FLUSH, async { while tasks.join_next().await.is_some() {} }).await;
    if flushed.is_err() {
        site.conns.close_all();
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
}

/// Serves one connection's requests; `client` is its TCP socket and the peer's address.
async fn connection<I>(io: I, client: Client, site: &Rc<Site>, conn: Rc<Conn>, mut drain: watch::Receiver<bool>)
where
    I: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let handler_site = site.clone();
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let site = handler_site.clone();
        let conn = conn.clone();
        async move {
            let _serving = Serving::new(&site.conns, conn);
            let mut r = handle(&site, req, client).await;
            if site.draining.get() {
                // Draining: each open connection gets its answer, then is closed.
                r.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            }
            Ok::<_, Infallible>(r)
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_HEADER_BYTES)
        .half_close(true)
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
        site.exporter.metrics.http_connection_errors.inc();
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

/// A connection's TCP socket and the address of its peer.
type Client = (RawFd, std::net::IpAddr);

/// Routes one request that arrived from `client`.
async fn handle(site: &Site, req: Request<hyper::body::Incoming>, client: Client) -> Response<Full<Bytes>> {
    let start = Instant::now();
    site.exporter.metrics.http_requests.inc();
    if let Some(refused) = refused(&req) {
        return refused;
    }
    if let Some(refused) = unauthorized(site, &req, client).await {
        return refused;
    }
    match req.uri().path() {
        "/" => response(
            StatusCode::OK,
            "text/html; charset=utf-8",
            super::landing::landing_page(&site.exporter),
        ),
        "/metrics" => response(StatusCode::OK, METRICS_TYPE, site.exporter.render_metrics()),
        "/-/healthy" => text(StatusCode::OK, "pvrdma-doctor exporter is Healthy."),
        "/-/ready" if site.draining.get() => text(
            StatusCode::SERVICE_UNAVAILABLE,
            "pvrdma-doctor exporter is shutting down.",
        ),
        "/-/ready" => text(StatusCode::OK, "pvrdma-doctor exporter is Ready."),
        "/probe" => probe(site, &req, start).await,
        "/sd" => {
            let group = form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
                .find(|(k, _)| k == "group")
                .map(|(_, v)| v.into_owned());
            match site.exporter.vcenter.sd(&site.exporter.config(), group.as_deref()) {
                Ok(body) => response(StatusCode::OK, "application/json", body),
                Err(e) => text(StatusCode::NOT_FOUND, e),
            }
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "Not Found: try /, /metrics or /probe?target=HOST",
        ),
    }
}

/// The answer to a request no path serves: a method other than GET and HEAD, or a
/// missing or repeated Host header.
fn refused(req: &Request<hyper::body::Incoming>) -> Option<Response<Full<Bytes>>> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD are served");
        r.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Some(r);
    }
    // "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
    // request message that lacks a Host header field and to any request message that
    // contains more than one Host header field line" (RFC 9112, "Request Target").
    let hosts = req.headers().get_all(HOST).iter().count();
    if hosts > 1 || (hosts == 0 && req.version() == Version::HTTP_11) {
        return Some(text(
            StatusCode::BAD_REQUEST,
            "Bad Request: an HTTP/1.1 request needs exactly one Host header",
        ));
    }
    None
}

/// The answer when basic authentication is configured and the request does not pass
/// it: 401, or 503 when its client went before its credentials were checked.
async fn unauthorized(
    site: &Site,
    req: &Request<hyper::body::Incoming>,
    client: Client,
) -> Option<Response<Full<Bytes>>> {
    let web = site.web.borrow().clone();
    let auth = web.as_ref().and_then(|w| w.auth.as_ref())?;
    let header = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    let verdict = auth
        .check(
            header,
            client.1,
            super::auth::peer_closed(client.0),
            &site.exporter.metrics,
        )
        .await;
    match verdict {
        Verdict::Allowed => None,
        Verdict::Refused => {
            site.exporter.metrics.auth_failures.inc();
            let mut r = text(StatusCode::UNAUTHORIZED, "Unauthorized");
            r.headers_mut().insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"pvrdma-doctor\""),
            );
            Some(r)
        }
        Verdict::Gone => {
            let mut r = text(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: the client closed its side of the connection before its credentials were checked",
            );
            r.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            Some(r)
        }
    }
}

/// `/probe?target=&module=`: 400 for a request that names no allowed target, 503 for a
/// vCenter group with no host to probe yet, else the probe's exposition.
async fn probe(site: &Site, req: &Request<hyper::body::Incoming>, start: Instant) -> Response<Full<Bytes>> {
    let (target, module) = match probe_params(req.uri().query()) {
        Ok(p) => p,
        Err(e) => {
            site.exporter.metrics.probes_rejected.inc();
            return text(StatusCode::BAD_REQUEST, e);
        }
    };
    let header = req
        .headers()
        .get("x-prometheus-scrape-timeout-seconds")
        .and_then(|v| v.to_str().ok());
    let deadline = site.exporter.deadline(start, header);
    match site.exporter.scrape(&target, module.as_deref(), start, deadline).await {
        Ok(body) => response(StatusCode::OK, METRICS_TYPE, body),
        Err(refused) if refused.unavailable => text(StatusCode::SERVICE_UNAVAILABLE, refused.why),
        Err(refused) => text(StatusCode::BAD_REQUEST, refused.why),
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
}
