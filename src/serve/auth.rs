//! Basic authentication (`basic_auth_users` of the web configuration): bcrypt checks,
//! bounded so that wrong passwords cannot lock the right one out.
//!
//! A bcrypt check costs tens of milliseconds of CPU on purpose. What one costs the server:
//!
//! - **A bounded pool.** At most [`POOL`] checks run at once, each on a blocking thread
//!   that holds its slot until bcrypt returns, even when the request that asked for it is
//!   gone. The others wait their turn, client addresses taking turns ([`turn`]): a client
//!   at one address has at most one check ahead of a client at another, however many it
//!   has queued.
//! - **One check per connection.** HTTP/1.1 serves a connection's requests one after the
//!   other, so a client waits for its own check before it can ask for another: holding N
//!   checks in the queue takes N connections, bounded by `limits.max_connections`.
//! - **Dropped when its client goes.** A check still waiting for a slot is dropped the
//!   moment its client's side of the connection is closed (the peer's FIN or a reset,
//!   seen in the kernel's TCP state), so a client that gives up and reconnects does not
//!   leave its old checks to run. The request is answered 503 and closed: a client that
//!   half-closes its side right after its request is taken for gone too.
//! - **A credential asked again goes first.** A check dropped because its client went
//!   leaves its credential's digest behind (the most recent [`UNANSWERED_CAP`]); when that
//!   credential is asked again, its check goes before the first asks of its address. Nothing
//!   tells a right password from a wrong one before bcrypt, but repetition does tell
//!   Prometheus, which sends the same credential at every scrape (and gives up on a scrape
//!   after its timeout), from a scanner, which sends each guess once: a flood of guesses
//!   from Prometheus' own address delays its first scrape only, and the next one is checked
//!   after the few checks already let through. An attacker that sends each guess, gives
//!   up on it before its check and sends it again gets the same lane for its guesses, and
//!   then the credential asked again waits its turn among them, as in a plain queue; its
//!   guesses are still checked once each.
//! - **Each credential once.** The same user and password asked again while its check runs
//!   wait for that check; once checked, a good one is remembered (as a SHA-256 digest, as
//!   the exporter-toolkit does) and so is a wrong one, so neither costs bcrypt again. A
//!   remembered good password is answered at once, never queued behind wrong ones, and the
//!   memory survives a reload (SIGHUP) for every user whose hash did not change.
//! - **A failure costs the same whoever is named**, so the time of a 401 does not tell
//!   which users exist or how dear their hash is: every check runs one bcrypt at each
//!   cost the configured users have, the named user's own hash at its cost (an unknown
//!   user's: a stand-in made at load time with the highest cost) and a stand-in at each
//!   other cost. The same work for every check, whoever is named: no timer to tune, no
//!   average that a check slowed by load could push.
use super::metrics::Metrics;
use sha2::Digest;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Semaphore};

/// bcrypt checks running at once at most.
pub const POOL: usize = 2;

/// Remembered good credentials at most (a different password per scrape cannot grow
/// memory without bound): the memory starts over when full.
const VERIFIED_CAP: usize = 256;

/// Remembered wrong credentials at most, likewise.
const REFUSED_CAP: usize = 4096;

/// Credentials whose check was dropped (its client gone) remembered at most, the oldest
/// forgotten first: more checks dropped than this between two scrapes make the scrape
/// after wait its turn as a first ask would.
const UNANSWERED_CAP: usize = 4096;

/// What a request's credentials come to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    Refused,
    /// The client closed its side before its check could start: nothing was checked.
    Gone,
}

/// Users and their bcrypt hashes, and the checks' state.
pub struct BasicAuth {
    users: BTreeMap<String, String>,
    /// Digests of good credentials.
    verified: RefCell<HashSet<[u8; 32]>>,
    /// Digests of wrong credentials.
    refused: RefCell<HashSet<[u8; 32]>>,
    /// Digests of credentials whose check was dropped before it started.
    unanswered: RefCell<Recent>,
    /// The checks asked for and not finished, by credential digest.
    flights: RefCell<HashMap<[u8; 32], watch::Receiver<Option<bool>>>>,
    pool: Arc<Semaphore>,
    /// Who waits for the pool next.
    line: turn::Turnstile,
    /// A hash of a random password at the highest cost among the users.
    dummy: String,
    max_cost: u32,
    /// A hash of a random password at each cost the users have (`dummy` among them).
    stand_ins: BTreeMap<u32, String>,
}

/// A hash's bcrypt cost (validated at load).
pub(crate) fn cost_of(hash: &str) -> u32 {
    hash.parse::<bcrypt::HashParts>()
        .map_or(bcrypt::DEFAULT_COST, |p| p.get_cost())
}

/// The most recent digests, at most [`UNANSWERED_CAP`].
#[derive(Default)]
struct Recent {
    set: HashSet<[u8; 32]>,
    order: VecDeque<[u8; 32]>,
}

impl Recent {
    fn insert(&mut self, key: [u8; 32]) {
        if !self.set.insert(key) {
            return;
        }
        self.order.push_back(key);
        if self.order.len() > UNANSWERED_CAP {
            if let Some(oldest) = self.order.pop_front() {
                self.set.remove(&oldest);
            }
        }
    }

    fn contains(&self, key: &[u8; 32]) -> bool {
        self.set.contains(key)
    }
}

/// Removes a flight when its leader finishes or is dropped: the requests that joined it
/// then see it end (with a result, or without one and try again).
struct Flight<'a> {
    auth: &'a BasicAuth,
    key: [u8; 32],
}

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        self.auth.flights.borrow_mut().remove(&self.key);
    }
}

impl BasicAuth {
    pub(crate) fn new(users: BTreeMap<String, String>) -> Self {
        let max_cost = users.values().map(|h| cost_of(h)).max().unwrap_or(bcrypt::DEFAULT_COST);
        let mut costs: Vec<u32> = users.values().map(|h| cost_of(h)).collect();
        costs.push(max_cost);
        let stand_ins: BTreeMap<u32, String> = costs
            .into_iter()
            .map(|cost| {
                let secret: [u8; 16] = rand::random();
                (
                    cost,
                    bcrypt::hash(data_encoding::HEXLOWER.encode(&secret), cost).unwrap_or_default(),
                )
            })
            .collect();
        let dummy = stand_ins.get(&max_cost).cloned().unwrap_or_default();
        BasicAuth {
            users,
            verified: RefCell::new(HashSet::new()),
            refused: RefCell::new(HashSet::new()),
            unanswered: RefCell::new(Recent::default()),
            flights: RefCell::new(HashMap::new()),
            pool: Arc::new(Semaphore::new(POOL)),
            line: turn::Turnstile::default(),
            dummy,
            max_cost,
            stand_ins,
        }
    }

    /// Takes over what `old` (the configuration before a reload) remembered: a digest
    /// covers the user's hash, so a user whose hash changed is checked again.
    pub fn remember_from(&self, old: &BasicAuth) {
        self.verified.borrow_mut().extend(old.verified.borrow().iter().copied());
        self.refused.borrow_mut().extend(old.refused.borrow().iter().copied());
        let mut unanswered = self.unanswered.borrow_mut();
        for key in &old.unanswered.borrow().order {
            unanswered.insert(*key);
        }
    }

    /// The highest bcrypt cost among the users (what every failure costs).
    pub fn max_cost(&self) -> u32 {
        self.max_cost
    }

    /// The stand-in hash an unknown user is checked against.
    pub fn dummy_hash(&self) -> &str {
        &self.dummy
    }

    /// Whether an `Authorization` header value, from a client at `addr`, names a user
    /// with the right password; [`Verdict::Gone`] when `gone` resolves (the client closed
    /// its side) before a check could start. Counts the checks run and dropped in
    /// `metrics`.
    pub async fn check(
        &self,
        header: Option<&[u8]>,
        addr: IpAddr,
        gone: impl Future<Output = ()>,
        metrics: &Metrics,
    ) -> Verdict {
        let Some((user, password)) = header.and_then(decode_basic) else {
            return Verdict::Refused;
        };
        let hash = self.users.get(&user).cloned();
        let mut digest = sha2::Sha256::new();
        for part in [user.as_str(), password.as_str(), hash.as_deref().unwrap_or("")] {
            digest.update(part.as_bytes());
            digest.update([0]);
        }
        let key: [u8; 32] = digest.finalize().into();
        tokio::pin!(gone);
        loop {
            if hash.is_some() && self.verified.borrow().contains(&key) {
                return Verdict::Allowed;
            }
            if self.refused.borrow().contains(&key) {
                return Verdict::Refused;
            }
            let joined = self.flights.borrow().get(&key).cloned();
            if let Some(mut flight) = joined {
                tokio::select! {
                    biased;
                    () = &mut gone => return Verdict::Gone,
                    done = flight.wait_for(Option::is_some) => match done.ok().and_then(|v| *v) {
                        Some(true) => return Verdict::Allowed,
                        Some(false) => return Verdict::Refused,
                        // Its leader went before its check started: lead it now.
                        None => continue,
                    },
                }
            }
            let (tx, rx) = watch::channel(None);
            self.flights.borrow_mut().insert(key, rx);
            let _flight = Flight { auth: self, key };
            let again = self.unanswered.borrow().contains(&key);
            let permit = tokio::select! {
                biased;
                () = &mut gone => {
                    metrics.auth_checks_dropped.inc();
                    self.unanswered.borrow_mut().insert(key);
                    return Verdict::Gone;
                }
                p = async {
                    let _turn = self.line.turn(addr, again).await;
                    self.pool.clone().acquire_owned().await
                } => p,
            };
            let Ok(permit) = permit else {
                return Verdict::Refused;
            };
            metrics.auth_checks.inc();
            let ok = self.verify(hash.as_deref(), password, permit).await;
            let set = if ok { &self.verified } else { &self.refused };
            let cap = if ok { VERIFIED_CAP } else { REFUSED_CAP };
            let mut set = set.borrow_mut();
            if set.len() >= cap {
                set.clear();
            }
            set.insert(key);
            let _ = tx.send(Some(ok));
            return if ok { Verdict::Allowed } else { Verdict::Refused };
        }
    }

    /// One check on a blocking thread, which keeps `permit` until bcrypt returns (a
    /// dropped request cannot free its slot early): bcrypt against the named user's hash
    /// (an unknown user's: the stand-in at the highest cost), then against the stand-in at
    /// each other cost the users have, so every check does the same work.
    async fn verify(&self, hash: Option<&str>, password: String, permit: tokio::sync::OwnedSemaphorePermit) -> bool {
        let known = hash.is_some();
        let (own, others) = self.hashes_for(hash);
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let ok = bcrypt::verify(&password, &own).unwrap_or(false);
            for stand_in in &others {
                let _ = bcrypt::verify(&password, stand_in);
            }
            ok
        })
        .await
        .unwrap_or(false)
            && known
    }
}

impl BasicAuth {
    /// What a check of a user with `hash` (`None`: unknown) runs bcrypt against: that hash
    /// (or the stand-in at the highest cost), then the stand-ins of the other costs.
    fn hashes_for(&self, hash: Option<&str>) -> (String, Vec<String>) {
        let own = hash.map_or_else(|| self.dummy.clone(), str::to_string);
        let own_cost = cost_of(&own);
        let others = self
            .stand_ins
            .iter()
            .filter(|(cost, _)| **cost != own_cost)
            .map(|(_, h)| h.clone())
            .collect();
        (own, others)
    }
}

/// `Basic base64(user:password)` → (user, password).
fn decode_basic(value: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(value).ok()?.trim();
    let (scheme, encoded) = text.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let bytes = data_encoding::BASE64.decode(encoded.trim().as_bytes()).ok()?;
    let pair = String::from_utf8(bytes).ok()?;
    let (u, p) = pair.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

/// Resolves once the peer of the TCP socket `fd` has closed its side (its FIN arrived, or
/// the connection was reset), as the kernel's TCP state tells; checked every 50 ms. The
/// descriptor must stay open while this runs (the connection's task owns both).
pub async fn peer_closed(fd: std::os::fd::RawFd) {
    loop {
        if peer_has_closed(fd) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether the socket's TCP state is CLOSE_WAIT (the peer's FIN arrived) or CLOSE (reset).
fn peer_has_closed(fd: std::os::fd::RawFd) -> bool {
    const TCP_CLOSE: u8 = 7;
    const TCP_CLOSE_WAIT: u8 = 8;
    // SAFETY: tcp_info is plain integers, for which all zeroes is a valid value.
    #[allow(unsafe_code)]
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = libc::socklen_t::try_from(std::mem::size_of::<libc::tcp_info>()).unwrap_or(0);
    // SAFETY: getsockopt writes at most `len` bytes into `info`, which is that large and
    // lives across the call; an invalid descriptor only makes it fail.
    #[allow(unsafe_code)]
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            std::ptr::addr_of_mut!(info).cast(),
            &mut len,
        )
    };
    rc == 0 && (info.tcpi_state == TCP_CLOSE_WAIT || info.tcpi_state == TCP_CLOSE)
}

mod turn;

#[cfg(test)]
mod tests;
