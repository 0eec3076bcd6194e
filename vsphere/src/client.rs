//! The vSphere client: a session (SessionManager login, the `vmware_soap_session`
//! cookie), the inventory read through one container view and the paged property
//! collector, and the logout vCenter needs to free the session (it limits how many are
//! open). A session that expired is renewed once per call, so a long-lived client (the
//! exporter's) keeps working across vCenter's idle timeout.
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};

use crate::assemble::assemble;
use crate::config::{self, HostConfig};
use crate::endpoint::{Endpoint, Trust};
use crate::error::Error;
use crate::http::Transport;
use crate::inventory::Inventory;
use crate::soap::{self, Answer, MoRef, ServiceContent};
use bytes::Bytes;
use pvrdma_parsers::xml::{self, Element};

/// How to reach and log in to one vCenter.
#[derive(Debug, Clone)]
pub struct Config {
    pub endpoint: Endpoint,
    pub trust: Trust,
    pub user: String,
    /// Never shown: `Debug` prints it redacted and no error carries it.
    pub password: SecretString,
    /// The limit on each request, connection and TLS handshake included.
    pub timeout: Duration,
    /// Objects per property-collector page (`maxObjects`).
    pub page_size: u32,
}

impl Config {
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    pub const DEFAULT_PAGE_SIZE: u32 = 1000;

    pub fn new(endpoint: Endpoint, trust: Trust, user: impl Into<String>, password: SecretString) -> Config {
        Config {
            endpoint,
            trust,
            user: user.into(),
            password,
            timeout: Self::DEFAULT_TIMEOUT,
            page_size: Self::DEFAULT_PAGE_SIZE,
        }
    }
}

pub struct Client {
    config: Config,
    label: String,
    transport: Transport,
    service: Option<ServiceContent>,
    cookie: Option<String>,
    calls: BTreeMap<&'static str, u32>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.config.endpoint.to_string())
            .field("user", &self.config.user)
            .field("session", &self.cookie.is_some())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Prepares the TLS configuration (reading the CA file); connects on first use.
    pub fn new(config: Config) -> Result<Client, Error> {
        let label = config.endpoint.label();
        let (tls, rejection) = crate::tls::client_config(&config.trust, &label)?;
        let transport = Transport::new(config.endpoint.clone(), tls, rejection, config.timeout);
        Ok(Client {
            label,
            transport,
            config,
            service: None,
            cookie: None,
            calls: BTreeMap::new(),
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.config.endpoint
    }

    pub fn has_session(&self) -> bool {
        self.cookie.is_some()
    }

    /// How many times each API method was called by this client, e.g.
    /// `RetrievePropertiesEx` → 1, `ContinueRetrievePropertiesEx` → 9.
    pub fn calls(&self) -> &BTreeMap<&'static str, u32> {
        &self.calls
    }

    /// Calls `method` and reads its whole answer.
    async fn invoke(&mut self, method: &'static str, body: String) -> Result<Option<Element>, Error> {
        let (returned, _) = self.invoke_to_depth(method, body, xml::MAX_DEPTH).await?;
        Ok(returned.value)
    }

    /// Calls `method` and reads its answer to `depth` (see [`soap::VALUE_DEPTH`]); the
    /// answer's text comes back too, for the parts handed on as written.
    async fn invoke_to_depth(
        &mut self,
        method: &'static str,
        body: String,
        depth: usize,
    ) -> Result<(soap::Returned, Bytes), Error> {
        *self.calls.entry(method).or_default() += 1;
        let response = self.transport.post(body, self.cookie.as_deref(), method).await?;
        if let Some(cookie) = response.set_cookie.iter().find_map(|c| soap::session_cookie(c)) {
            self.cookie = Some(cookie);
        }
        let protocol = |message: String| Error::Protocol {
            endpoint: self.label.clone(),
            message,
        };
        // The first call, to a server that is not the vSphere API: a web page, a method it
        // does not implement.
        let first = method == "RetrieveServiceContent";
        let not_vsphere = |status: u16| Error::NotVsphere {
            endpoint: self.label.clone(),
            url: self.transport.url(&self.config.endpoint.path),
            status,
            content_type: response.content_type.clone(),
            body_excerpt: soap::excerpt(&response.body),
        };
        if first && response.status == 501 {
            return Err(not_vsphere(501));
        }
        // Faults come with HTTP 500; anything else that is not 200 is not the API talking.
        if !matches!(response.status, 200 | 500) {
            return Err(Error::Http {
                endpoint: self.label.clone(),
                status: response.status,
                body_excerpt: soap::excerpt(&response.body),
            });
        }
        match soap::decode(&response.body, method, depth) {
            Ok(Answer::Return(ret)) => Ok((ret, response.body)),
            Ok(Answer::Fault { fault, message }) => Err(match fault.as_str() {
                "NotAuthenticated" => Error::NotAuthenticated {
                    endpoint: self.label.clone(),
                },
                "InvalidLogin" => Error::Login {
                    endpoint: self.label.clone(),
                    user: self.config.user.clone(),
                    message,
                },
                _ => Error::Fault {
                    endpoint: self.label.clone(),
                    fault,
                    message,
                },
            }),
            Err(_) if first && response.status == 200 => Err(not_vsphere(200)),
            Err(_) if response.status == 500 => Err(Error::Http {
                endpoint: self.label.clone(),
                status: 500,
                body_excerpt: soap::excerpt(&response.body),
            }),
            Err(e) => Err(protocol(e)),
        }
    }

    fn protocol(&self, message: String) -> Error {
        Error::Protocol {
            endpoint: self.label.clone(),
            message,
        }
    }

    async fn service(&mut self) -> Result<ServiceContent, Error> {
        if let Some(sc) = &self.service {
            return Ok(sc.clone());
        }
        self.check_api().await?;
        let ret = self
            .invoke("RetrieveServiceContent", soap::retrieve_service_content())
            .await?;
        let sc = soap::service_content(ret.as_ref()).map_err(|e| self.protocol(e))?;
        if let Some(version) = &sc.api_version {
            self.transport.speak(version);
        }
        self.service = Some(sc.clone());
        Ok(sc)
    }

    /// Asks for the API's releases (`/sdk/vimServiceVersions.xml`, which pyVmomi also asks
    /// for first) before the first call. vCenter and ESXi answer with the `urn:vim25`
    /// namespace; an HTTPS server that is not the vSphere API answers something else (a
    /// web page) and may never answer a SOAP call at all, so that is said now, not after
    /// the request timeout. Without such a document (404), the call itself judges.
    async fn check_api(&mut self) -> Result<(), Error> {
        let path = format!(
            "{}/vimServiceVersions.xml",
            self.config.endpoint.path.trim_end_matches('/')
        );
        let response = self.transport.get(path.clone(), "vimServiceVersions.xml").await?;
        if response.status == 200 && !soap::lists_vim25(&response.body) {
            return Err(Error::NotVsphere {
                endpoint: self.label.clone(),
                url: self.transport.url(&path),
                status: response.status,
                content_type: response.content_type,
                body_excerpt: soap::excerpt(&response.body),
            });
        }
        Ok(())
    }

    /// Logs in unless a session is open.
    pub async fn login(&mut self) -> Result<(), Error> {
        if self.cookie.is_some() {
            return Ok(());
        }
        let sc = self.service().await?;
        let body = soap::login(
            &sc.session_manager,
            &self.config.user,
            self.config.password.expose_secret(),
        );
        self.invoke("Login", body).await?;
        if self.cookie.is_none() {
            return Err(self.protocol("the login succeeded but set no vmware_soap_session cookie".into()));
        }
        Ok(())
    }

    /// Ends the session; nothing to do without one. A session vCenter already ended
    /// counts as logged out.
    pub async fn logout(&mut self) -> Result<(), Error> {
        if self.cookie.is_none() {
            return Ok(());
        }
        let sc = self.service().await?;
        let result = self.invoke("Logout", soap::logout(&sc.session_manager)).await;
        self.cookie = None;
        match result {
            Ok(_) | Err(Error::NotAuthenticated { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Drops the connection after a cancelled call; the session stays.
    pub fn reset_connection(&mut self) {
        self.transport.reset();
    }

    /// Makes `call` in the session, logging in first when there is none. A session vCenter
    /// ended (`NotAuthenticated`: its idle timeout, an administrator) is renewed once and
    /// the call made again; refused a second time, the call's error is the answer. Every
    /// call that needs a session goes through here.
    async fn with_session<T>(
        &mut self,
        mut call: impl AsyncFnMut(&mut Client) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.login().await?;
        match call(self).await {
            Err(Error::NotAuthenticated { .. }) => {
                self.cookie = None;
                self.login().await?;
                call(self).await
            }
            other => other,
        }
    }

    /// Reads hosts and VMs (see [`Client::with_session`] for the session).
    pub async fn inventory(&mut self) -> Result<Inventory, Error> {
        self.with_session(async |client: &mut Client| client.read_inventory().await)
            .await
    }

    async fn read_inventory(&mut self) -> Result<Inventory, Error> {
        let sc = self.service().await?;
        let ret = self
            .invoke(
                "CreateContainerView",
                soap::create_container_view(&sc.view_manager, &sc.root_folder),
            )
            .await?;
        let view = soap::returned_moref(ret.as_ref(), "CreateContainerView").map_err(|e| self.protocol(e))?;
        let objects = self.read_pages(&sc.property_collector, &view).await;
        // The view lives as long as the session: destroy it also after a failed read,
        // so a long-lived session does not pile them up.
        let destroyed = match &objects {
            Err(Error::NotAuthenticated { .. }) => Ok(None),
            _ => self.invoke("DestroyView", soap::destroy_view(&view)).await,
        };
        let objects = objects?;
        destroyed?;
        Ok(assemble(&objects))
    }

    async fn read_pages(&mut self, collector: &MoRef, view: &MoRef) -> Result<Vec<soap::ObjectContent>, Error> {
        let page_size = self.config.page_size.max(1);
        let first = soap::retrieve_view(collector, view, page_size);
        let mut objects = Vec::new();
        self.pages(collector, first, xml::MAX_DEPTH, |mut page, _| {
            objects.append(&mut page.objects);
            Ok(())
        })
        .await?;
        Ok(objects)
    }

    /// Sends a `RetrievePropertiesEx` request and follows its pages to the end, each read
    /// to `depth` and handed to `take` as it arrives, with the answer it was read from.
    async fn pages(
        &mut self,
        collector: &MoRef,
        first: String,
        depth: usize,
        mut take: impl FnMut(soap::RetrieveResult, soap::Page) -> Result<(), String>,
    ) -> Result<(), Error> {
        let (mut method, mut body) = ("RetrievePropertiesEx", first);
        loop {
            let (returned, text) = self.invoke_to_depth(method, body, depth).await?;
            let page = soap::retrieve_result(returned.value).map_err(|e| self.protocol(e))?;
            let token = page.token.clone();
            take(page, soap::Page::new(text, returned.namespaces)).map_err(|e| self.protocol(e))?;
            let Some(token) = token else {
                return Ok(());
            };
            method = "ContinueRetrievePropertiesEx";
            body = soap::continue_retrieve(collector, &token);
        }
    }

    /// Reads the configuration of these hosts (managed object ids, `host-21`) and of the
    /// VMs registered on them, in paged calls: one request for all of them, then one
    /// continuation per page. Hosts vCenter no longer knows are absent from the answer.
    pub async fn host_configs(&mut self, host_ids: &[String]) -> Result<BTreeMap<String, HostConfig>, Error> {
        let mut configs = BTreeMap::new();
        self.host_configs_each(host_ids, |c| {
            configs.insert(c.id.clone(), c);
        })
        .await?;
        Ok(configs)
    }

    /// [`Client::host_configs`], each host handed to `each` the moment its object and its
    /// VMs' have been read (see [`config::Grouping`]), so the caller holds what it keeps
    /// of each host and this client one page of the answer. A session renewed halfway
    /// reads the answer again; no host is handed on twice.
    pub async fn host_configs_each(
        &mut self,
        host_ids: &[String],
        mut each: impl FnMut(HostConfig),
    ) -> Result<(), Error> {
        if host_ids.is_empty() {
            return Ok(());
        }
        let mut grouping = config::Grouping::default();
        self.with_session(async |client: &mut Client| {
            grouping.restart();
            client.read_host_configs(host_ids, &mut grouping, &mut each).await
        })
        .await?;
        grouping.finish(&mut each);
        Ok(())
    }

    async fn read_host_configs(
        &mut self,
        host_ids: &[String],
        grouping: &mut config::Grouping,
        each: &mut impl FnMut(HostConfig),
    ) -> Result<(), Error> {
        let sc = self.service().await?;
        let page_size = self.config.page_size.max(1);
        let first = config::retrieve_config(&sc.property_collector, host_ids, page_size);
        // The hosts a page made whole are handed on once the page is dropped: what they
        // are turned into then takes the page's memory, not memory beside it.
        let mut whole = Vec::new();
        self.pages(&sc.property_collector, first, soap::VALUE_DEPTH, |page, answer| {
            grouping.take(page, &answer, &mut |c| whole.push(c))?;
            drop(answer);
            whole.drain(..).for_each(&mut *each);
            Ok(())
        })
        .await
    }

    /// How many sessions vCenter has open (`SessionManager.sessionList`), this one
    /// included: for diagnostics and tests.
    pub async fn session_count(&mut self) -> Result<usize, Error> {
        self.with_session(async |client: &mut Client| client.read_session_count().await)
            .await
    }

    async fn read_session_count(&mut self) -> Result<usize, Error> {
        let sc = self.service().await?;
        let body = soap::retrieve_one(&sc.property_collector, &sc.session_manager, "sessionList");
        let ret = self.invoke("RetrievePropertiesEx", body).await?;
        let page = soap::retrieve_result(ret).map_err(|e| self.protocol(e))?;
        Ok(page
            .objects
            .first()
            .and_then(|o| o.prop("sessionList"))
            .map_or(0, |list| list.children.len()))
    }
}

/// Connects and reads the service content, which needs no login and opens no session: the
/// address, the certificate and the API are checked before anyone types a password, as
/// ssh checks a host key before it asks for one.
pub async fn check_endpoint(endpoint: Endpoint, trust: Trust, timeout: Duration) -> Result<(), Error> {
    let config = Config {
        timeout,
        ..Config::new(endpoint, trust, "", SecretString::from(String::new()))
    };
    Client::new(config)?.service().await.map(|_| ())
}

/// Logs in, reads the inventory and always logs out before returning: after a failed
/// read, and when `cancel` completes first (then the answer is [`Error::Cancelled`]).
/// A logout that fails after a good read is the error returned: the session may be left
/// open, which vCenter's session limit makes worth knowing.
pub async fn read_inventory(config: Config, cancel: impl Future<Output = ()>) -> Result<Inventory, Error> {
    in_session(config, cancel, async |client: &mut Client| client.inventory().await).await
}

/// Logs in, reads the inventory, then the configuration of the hosts `pick` chooses from
/// it (managed object ids) and of their VMs, in the same session, and always logs out (see
/// [`read_inventory`]).
pub async fn read_configuration(
    config: Config,
    cancel: impl Future<Output = ()>,
    pick: impl FnOnce(&Inventory) -> Vec<String>,
) -> Result<(Inventory, BTreeMap<String, HostConfig>), Error> {
    let mut configs = BTreeMap::new();
    let inventory = read_configuration_each(config, cancel, pick, |c| {
        configs.insert(c.id.clone(), c);
    })
    .await?;
    Ok((inventory, configs))
}

/// [`read_configuration`], each host handed to `each` as it is read (see
/// [`Client::host_configs_each`]); returns the inventory. After an error or a
/// cancellation, the hosts handed on so far are all there is.
pub async fn read_configuration_each(
    config: Config,
    cancel: impl Future<Output = ()>,
    pick: impl FnOnce(&Inventory) -> Vec<String>,
    each: impl FnMut(HostConfig),
) -> Result<Inventory, Error> {
    in_session(config, cancel, async |client: &mut Client| {
        let inventory = client.inventory().await?;
        client.host_configs_each(&pick(&inventory), each).await?;
        Ok(inventory)
    })
    .await
}

/// Runs `work` in a session of its own: logged in first, logged out on every path (after
/// an error, and when `cancel` completes first: then the answer is [`Error::Cancelled`]).
/// A logout that fails after good work is the error returned: the session may be left
/// open, which vCenter's session limit makes worth knowing.
async fn in_session<T>(
    config: Config,
    cancel: impl Future<Output = ()>,
    work: impl AsyncFnOnce(&mut Client) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut client = Client::new(config)?;
    let label = client.label.clone();
    let mut cancel = std::pin::pin!(cancel);
    let cancelled = || Error::Cancelled {
        endpoint: label.clone(),
    };

    // A login cut short could open a session whose cookie never arrives: the login is
    // let finish (it is bounded by the request timeout), then logged out.
    let login_result = {
        let mut login = std::pin::pin!(client.login());
        tokio::select! {
            r = &mut login => Some(r),
            _ = &mut cancel => {
                let _ = login.await;
                None
            }
        }
    };
    let result = match login_result {
        None => Err(cancelled()),
        Some(Err(e)) => Err(e),
        Some(Ok(())) => {
            let outcome = tokio::select! {
                r = work(&mut client) => Some(r),
                _ = &mut cancel => None,
            };
            match outcome {
                Some(r) => r,
                None => {
                    client.reset_connection();
                    Err(cancelled())
                }
            }
        }
    };
    let logout = client.logout().await;
    match (result, logout) {
        (Ok(v), Ok(())) => Ok(v),
        (Ok(_), Err(e)) => Err(e),
        (Err(e), _) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(address: &str, trust: Trust) -> Config {
        Config::new(
            Endpoint::parse(address).unwrap(),
            trust,
            "ops&<admin>",
            SecretString::from("s3cret-p@ss".to_string()),
        )
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn the_password_is_never_shown() {
        let c = config("vc01", Trust::System);
        assert!(!format!("{c:?}").contains("s3cret"), "{c:?}");
        let client = Client::new(c).unwrap();
        assert!(!format!("{client:?}").contains("s3cret"), "{client:?}");
        assert!(!client.has_session());
    }

    #[test]
    fn a_missing_ca_file_is_named() {
        let err = Client::new(config("vc01", Trust::Ca("/nonexistent/vmca.pem".into()))).unwrap_err();
        assert!(
            matches!(&err, Error::CaFile { path, .. } if path == "/nonexistent/vmca.pem"),
            "{err:?}"
        );
    }

    #[test]
    fn refused_connections_and_plain_tcp_servers_are_told_apart() {
        let rt = runtime();
        // A port nothing listens on: refused.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = config(&format!("127.0.0.1:{port}"), Trust::System);
        let err = rt.block_on(read_inventory(c, std::future::pending())).unwrap_err();
        assert!(
            matches!(&err, Error::Connect { endpoint, .. } if endpoint == &format!("127.0.0.1:{port}")),
            "{err:?}"
        );

        // A server that closes every connection at once: the TLS handshake fails.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for s in listener.incoming().take(1) {
                drop(s);
            }
        });
        let c = config(&format!("127.0.0.1:{port}"), Trust::System);
        let err = rt.block_on(read_inventory(c, std::future::pending())).unwrap_err();
        assert!(matches!(err, Error::Tls { .. }), "{err:?}");

        // A server that accepts and never answers: a timeout naming the stage.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut c = config(&format!("127.0.0.1:{port}"), Trust::System);
        c.timeout = Duration::from_millis(300);
        let err = rt.block_on(read_inventory(c, std::future::pending())).unwrap_err();
        assert!(
            matches!(&err, Error::Timeout { stage, .. } if *stage == crate::error::Stage::Handshake),
            "{err:?}"
        );
        drop(listener);
    }
}
