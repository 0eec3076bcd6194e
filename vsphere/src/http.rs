//! One HTTPS connection to vCenter, kept alive between calls (a discovery is a handful of
//! requests; the exporter makes them every few minutes), re-opened when the server closed
//! it. Each failure is classified where it happens: connect, TLS (with the refused
//! certificate's thumbprint), timeout, HTTP.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;

use crate::endpoint::Endpoint;
use crate::error::{Error, Stage};
use crate::tls::{Rejection, RejectionSlot};

/// The largest answer read: a page of 1,000 objects is well under a megabyte.
const MAX_BODY: usize = 256 << 20;

/// The SOAP action of the first request, before the server said which API release it
/// speaks: the oldest release discovery supports, which every later vCenter answers.
const FIRST_SOAP_ACTION: &str = "urn:vim25/6.7";

pub struct Response {
    pub status: u16,
    pub content_type: Option<String>,
    pub set_cookie: Vec<String>,
    pub body: Bytes,
}

pub struct Transport {
    endpoint: Endpoint,
    label: String,
    tls: Arc<rustls::ClientConfig>,
    rejection: RejectionSlot,
    sender: Option<SendRequest<Full<Bytes>>>,
    timeout: Duration,
    /// The SOAP action of each request: the API release vCenter serializes its answers
    /// for. A property newer than that release is left out of them (`rdmaDevice` of
    /// `HostNetworkInfo` is from vSphere API 7.0), so after the service content the
    /// server's own release is spoken.
    soap_action: String,
    /// What the call in flight was doing: one deadline covers the whole call, and a
    /// timeout names the step it stopped in (a server that accepts and never speaks TLS
    /// is told from one that never answers the request).
    step: Step,
}

#[derive(Clone, Copy)]
enum Step {
    Connect,
    Handshake,
    Request,
}

impl Transport {
    pub fn new(
        endpoint: Endpoint,
        tls: Arc<rustls::ClientConfig>,
        rejection: RejectionSlot,
        timeout: Duration,
    ) -> Self {
        Transport {
            label: endpoint.label(),
            endpoint,
            tls,
            rejection,
            sender: None,
            timeout,
            soap_action: FIRST_SOAP_ACTION.to_string(),
            step: Step::Request,
        }
    }

    /// Speaks API release `version` (`8.0.2.0`) from the next request on.
    pub fn speak(&mut self, version: &str) {
        self.soap_action = format!("urn:vim25/{version}");
    }

    /// Drops the connection: the next request opens a new one. After a cancelled
    /// request the old one may still carry its answer.
    pub fn reset(&mut self) {
        self.sender = None;
    }

    fn timeout_error(&self, stage: Stage) -> Error {
        Error::Timeout {
            endpoint: self.label.clone(),
            stage,
            limit: self.timeout,
        }
    }

    async fn connect(&mut self) -> Result<SendRequest<Full<Bytes>>, Error> {
        let addr = (self.endpoint.host.as_str(), self.endpoint.port);
        self.step = Step::Connect;
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|cause| Error::Connect {
                endpoint: self.label.clone(),
                cause,
            })?;
        let _ = tcp.set_nodelay(true);
        let name = ServerName::try_from(self.endpoint.host.clone()).map_err(|e| Error::Tls {
            endpoint: self.label.clone(),
            message: format!("`{}` is not a valid TLS server name: {e}", self.endpoint.host),
        })?;
        if let Ok(mut slot) = self.rejection.lock() {
            *slot = None;
        }
        let connector = tokio_rustls::TlsConnector::from(self.tls.clone());
        self.step = Step::Handshake;
        let handshake = connector.connect(name, tcp).await;
        let tls = match handshake {
            Ok(tls) => tls,
            Err(e) if not_tls(&e) && self.speaks_http().await => {
                return Err(Error::PlainHttp {
                    endpoint: self.label.clone(),
                })
            }
            Err(e) => return Err(self.tls_error(e)),
        };
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| self.protocol(format!("HTTP/1.1 setup: {e}")))?;
        // The connection's I/O runs beside the requests; it ends when the sender is dropped.
        tokio::spawn(connection);
        self.step = Step::Request;
        Ok(sender)
    }

    fn tls_error(&self, e: std::io::Error) -> Error {
        let rejection = self.rejection.lock().ok().and_then(|mut slot| slot.take());
        match rejection {
            Some(Rejection::Untrusted { thumbprint, problem }) => Error::UnknownCertificate {
                endpoint: self.label.clone(),
                thumbprint,
                problem,
            },
            Some(Rejection::Mismatch { expected, got }) => Error::ThumbprintMismatch {
                endpoint: self.label.clone(),
                expected,
                got,
            },
            None if e.kind() == std::io::ErrorKind::ConnectionReset
                || e.kind() == std::io::ErrorKind::UnexpectedEof =>
            {
                Error::Tls {
                    endpoint: self.label.clone(),
                    message: format!(
                        "the server closed the connection during the handshake ({e}): is this an HTTPS port?"
                    ),
                }
            }
            None => Error::Tls {
                endpoint: self.label.clone(),
                message: e.to_string(),
            },
        }
    }

    /// The URL of `path` at the endpoint, as a message names it.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.endpoint.authority())
    }

    fn protocol(&self, message: String) -> Error {
        Error::Protocol {
            endpoint: self.label.clone(),
            message,
        }
    }

    /// Whether the server answers plain HTTP, asked once more without TLS after it did not
    /// answer the TLS handshake with TLS (a port of a web server, a proxy's plain port).
    async fn speaks_http(&self) -> bool {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let addr = (self.endpoint.host.as_str(), self.endpoint.port);
        let Ok(mut tcp) = tokio::net::TcpStream::connect(addr).await else {
            return false;
        };
        let request = format!(
            "HEAD {} HTTP/1.0\r\nHost: {}\r\n\r\n",
            self.endpoint.path,
            self.endpoint.authority()
        );
        let mut head = [0u8; 5];
        tcp.write_all(request.as_bytes()).await.is_ok() && tcp.read_exact(&mut head).await.is_ok() && &head == b"HTTP/"
    }

    /// POSTs a SOAP envelope; `method` names the call in a timeout.
    pub async fn post(&mut self, body: String, cookie: Option<&str>, method: &'static str) -> Result<Response, Error> {
        let path = self.endpoint.path.clone();
        self.send(hyper::Method::POST, path, Bytes::from(body), cookie, method)
            .await
    }

    /// GETs `path` (a document beside the API, `/sdk/vimServiceVersions.xml`); `what` names
    /// it in a timeout.
    pub async fn get(&mut self, path: String, what: &'static str) -> Result<Response, Error> {
        self.send(hyper::Method::GET, path, Bytes::new(), None, what).await
    }

    async fn send(
        &mut self,
        verb: hyper::Method,
        path: String,
        body: Bytes,
        cookie: Option<&str>,
        method: &'static str,
    ) -> Result<Response, Error> {
        self.step = Step::Request;
        match tokio::time::timeout(self.timeout, self.send_inner(verb, &path, body, cookie)).await {
            Ok(r) => r,
            Err(_) => {
                self.reset();
                let stage = match self.step {
                    Step::Connect => Stage::Connect,
                    Step::Handshake => Stage::Handshake,
                    Step::Request => Stage::Call(method),
                };
                Err(self.timeout_error(stage))
            }
        }
    }

    async fn send_inner(
        &mut self,
        verb: hyper::Method,
        path: &str,
        body: Bytes,
        cookie: Option<&str>,
    ) -> Result<Response, Error> {
        // A kept connection the server closed while idle is only seen when used: one
        // retry on a fresh connection, never a second.
        let mut fresh = false;
        loop {
            let mut sender = match self.sender.take() {
                Some(s) if !s.is_closed() => s,
                _ => {
                    fresh = true;
                    self.connect().await?
                }
            };
            if sender.ready().await.is_err() {
                if fresh {
                    return Err(self.protocol("the connection closed before the request".into()));
                }
                continue;
            }
            let mut req = hyper::Request::builder()
                .method(verb.clone())
                .uri(path)
                .header(hyper::header::HOST, self.endpoint.authority());
            if verb == hyper::Method::POST {
                req = req
                    .header(hyper::header::CONTENT_TYPE, "text/xml; charset=utf-8")
                    .header("SOAPAction", self.soap_action.as_str());
            }
            if let Some(c) = cookie {
                req = req.header(hyper::header::COOKIE, c);
            }
            let req = req
                .body(Full::new(body.clone()))
                .map_err(|e| self.protocol(format!("request: {e}")))?;
            let response = match sender.send_request(req).await {
                Ok(r) => r,
                Err(e) if !fresh && (e.is_canceled() || e.is_closed() || e.is_incomplete_message()) => continue,
                Err(e) => return Err(self.protocol(format!("HTTP: {e}"))),
            };
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get(hyper::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let set_cookie = response
                .headers()
                .get_all(hyper::header::SET_COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok().map(str::to_string))
                .collect();
            let keep = !response
                .headers()
                .get(hyper::header::CONNECTION)
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
            let body = Limited::new(response.into_body(), MAX_BODY)
                .collect()
                .await
                .map_err(|e| self.protocol(format!("reading the answer: {e}")))?
                .to_bytes();
            if keep {
                self.sender = Some(sender);
            }
            return Ok(Response {
                status,
                content_type,
                set_cookie,
                body,
            });
        }
    }
}

/// Whether a failed TLS handshake got no TLS at all back: the first bytes were no TLS
/// record (an HTTP answer, an SSH banner).
fn not_tls(e: &std::io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| {
            matches!(
                r,
                rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)
            )
        })
}
