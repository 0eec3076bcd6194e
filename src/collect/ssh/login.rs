//! A host's login within its connect limit.
use super::*;

/// How long a host's login may take (TCP connect, key exchange, authentication), and
/// what set it, for the message when it runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectLimit {
    pub(crate) limit: Duration,
    /// `--connect-timeout`, or the exporter module's `connect_timeout`.
    pub(crate) option: &'static str,
    /// Set by the host's `ConnectTimeout` in ssh_config, not by `option`.
    pub(crate) from_ssh_config: bool,
}

impl ConnectLimit {
    /// What is said when a login did not finish within the limit: the limit, where it
    /// comes from and how to raise it.
    fn exceeded(&self) -> (String, String) {
        let limit = pvrdma_engine::duration::text(self.limit);
        if self.from_ssh_config {
            (
                format!("ConnectTimeout {limit} (ssh_config)"),
                format!(
                    "raise ConnectTimeout for this host in ssh_config, or give {}",
                    self.option
                ),
            )
        } else {
            (format!("{} {limit}", self.option), format!("raise {}", self.option))
        }
    }
}

/// Logs in to `job`'s host within its connect limit; `purpose` (" for the path probe")
/// goes into the message when the limit runs out.
pub(crate) async fn login(job: &HostJob, purpose: &str) -> Result<Connection, Failure> {
    let connected = tokio::time::timeout(
        job.connect_timeout.limit,
        client::connect(&job.jumps, &job.target, &job.credentials),
    )
    .await;
    match connected {
        Ok(r) => r.map_err(Failure::from),
        Err(_) => {
            let (limit, raise) = job.connect_timeout.exceeded();
            Err(Failure::of_host(
                ErrorKind::Timeout,
                &job.target.label,
                format!(
                    "no SSH login{purpose} within {limit} (TCP connect, key exchange and authentication); check that the host is up and reachable, or {raise}"
                ),
            ))
        }
    }
}
