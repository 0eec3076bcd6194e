//! The checks' rules, with cheap hashes (cost 4): what passes, what each failure costs,
//! which checks run at all.
use super::*;
use std::cell::Cell;

/// The address of the tests' clients.
const HERE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

fn header(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        data_encoding::BASE64.encode(format!("{user}:{password}").as_bytes())
    )
}

fn one_user(password: &str, cost: u32) -> BasicAuth {
    let hash = bcrypt::hash(password, cost).expect("hash");
    BasicAuth::new([("prom".to_string(), hash)].into_iter().collect())
}

/// A client that stays.
async fn stays() {
    std::future::pending::<()>().await;
}

async fn check(auth: &BasicAuth, m: &Metrics, h: &str) -> Verdict {
    auth.check(Some(h.as_bytes()), HERE, stays(), m).await
}

#[test]
fn basic_credentials_are_decoded() {
    assert_eq!(
        decode_basic(b"Basic cHJvbTpzM2NyZXQ6eA=="),
        Some(("prom".into(), "s3cret:x".into()))
    );
    assert_eq!(decode_basic(b"Bearer abc"), None);
    assert_eq!(decode_basic(b"Basic !!!"), None);
}

#[tokio::test(flavor = "current_thread")]
async fn only_the_right_password_of_a_known_user_passes_and_each_credential_is_checked_once() {
    let auth = one_user("s3cret", 4);
    let m = Metrics::new();
    assert_eq!(check(&auth, &m, &header("prom", "s3cret")).await, Verdict::Allowed);
    assert_eq!(check(&auth, &m, &header("prom", "s3cret")).await, Verdict::Allowed);
    assert_eq!(m.auth_checks.get(), 1, "a good password is remembered");
    assert_eq!(check(&auth, &m, &header("prom", "wrong")).await, Verdict::Refused);
    assert_eq!(check(&auth, &m, &header("prom", "wrong")).await, Verdict::Refused);
    assert_eq!(m.auth_checks.get(), 2, "so is a wrong one");
    assert_eq!(check(&auth, &m, &header("other", "s3cret")).await, Verdict::Refused);
    assert_eq!(auth.check(None, HERE, stays(), &m).await, Verdict::Refused);
    assert_eq!(auth.check(Some(b"Bearer x"), HERE, stays(), &m).await, Verdict::Refused);
}

#[tokio::test(flavor = "current_thread")]
async fn an_unknown_user_goes_through_a_bcrypt_check_at_the_highest_cost_among_the_users() {
    // `alice` sorts first and is the cheaper: a rule that checked unknown users against
    // her hash answered a name that does not exist faster.
    let users = [
        ("alice".to_string(), bcrypt::hash("a", 4).expect("hash")),
        ("prom".to_string(), bcrypt::hash("p", 6).expect("hash")),
    ];
    let auth = BasicAuth::new(users.into_iter().collect());
    assert_eq!(auth.max_cost(), 6);
    assert_eq!(
        cost_of(auth.dummy_hash()),
        6,
        "the stand-in hash costs what the dearest user costs"
    );
    let m = Metrics::new();
    assert_eq!(check(&auth, &m, &header("mallory", "p")).await, Verdict::Refused);
    assert_eq!(m.auth_checks.get(), 1, "the unknown user was checked with bcrypt");
    assert_eq!(check(&auth, &m, &header("prom", "p")).await, Verdict::Allowed);
    assert_eq!(m.auth_checks.get(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn the_same_credential_asked_at_once_is_checked_once() {
    let auth = one_user("s3cret", 4);
    let m = Metrics::new();
    let h = header("prom", "nope");
    let all = futures::future::join_all((0..10).map(|_| check(&auth, &m, &h))).await;
    assert!(all.iter().all(|v| *v == Verdict::Refused), "{all:?}");
    assert_eq!(m.auth_checks.get(), 1);
}

/// Many wrong passwords, each from a client that gives up after a moment: the checks
/// that had not started when their client went are dropped, and the right password,
/// asked after them, is answered.
#[tokio::test(flavor = "current_thread")]
async fn checks_of_clients_that_went_are_dropped_and_the_right_password_still_passes() {
    let auth = one_user("s3cret", 6);
    let m = Metrics::new();
    let wrong = 40u64;
    let gone_after = |ms: u64| async move { tokio::time::sleep(Duration::from_millis(ms)).await };
    let headers: Vec<String> = (0..wrong).map(|i| header("prom", &format!("guess-{i}"))).collect();
    let attempts = futures::future::join_all(
        headers
            .iter()
            .map(|h| auth.check(Some(h.as_bytes()), HERE, gone_after(1), &m)),
    );
    let answers = attempts.await;
    let gone = answers.iter().filter(|v| **v == Verdict::Gone).count() as u64;
    assert!(gone > 0, "{answers:?}");
    assert!(answers.iter().all(|v| *v != Verdict::Allowed), "{answers:?}");
    assert_eq!(m.auth_checks_dropped.get(), gone);
    assert_eq!(m.auth_checks.get(), wrong - gone, "a dropped check never ran");
    assert!(m.auth_checks.get() < wrong, "every wrong password was checked");
    assert_eq!(check(&auth, &m, &header("prom", "s3cret")).await, Verdict::Allowed);
}

#[tokio::test(flavor = "current_thread")]
async fn a_reload_keeps_the_passwords_checked_for_users_whose_hash_is_the_same() {
    let hash = bcrypt::hash("s3cret", 4).expect("hash");
    let before = BasicAuth::new([("prom".to_string(), hash.clone())].into_iter().collect());
    let m = Metrics::new();
    assert_eq!(check(&before, &m, &header("prom", "s3cret")).await, Verdict::Allowed);
    let same = BasicAuth::new([("prom".to_string(), hash)].into_iter().collect());
    same.remember_from(&before);
    assert_eq!(check(&same, &m, &header("prom", "s3cret")).await, Verdict::Allowed);
    assert_eq!(m.auth_checks.get(), 1, "not checked again after the reload");
    let changed = one_user("s3cret", 4);
    changed.remember_from(&before);
    assert_eq!(check(&changed, &m, &header("prom", "s3cret")).await, Verdict::Allowed);
    assert_eq!(m.auth_checks.get(), 2, "a new hash is checked again");
}

#[tokio::test(flavor = "current_thread")]
async fn a_closed_peer_is_seen_and_an_open_one_is_not() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let client = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (server, _) = listener.accept().await.expect("accept");
    let fd = std::os::fd::AsRawFd::as_raw_fd(&server);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), peer_closed(fd))
            .await
            .is_err(),
        "the client is still there"
    );
    drop(client);
    tokio::time::timeout(Duration::from_secs(5), peer_closed(fd))
        .await
        .expect("the client's close is seen");
}

/// One address floods wrong passwords and waits; the right password from another
/// address, asked after the whole flood, is answered after a few of them, not after all.
#[tokio::test(flavor = "current_thread")]
async fn addresses_take_turns_so_a_flood_from_one_does_not_queue_another_behind_it() {
    let auth = one_user("s3cret", 6);
    let m = Metrics::new();
    let flooder = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 7));
    let wrong: Vec<String> = (0..20).map(|i| header("prom", &format!("guess-{i}"))).collect();
    let right = header("prom", "s3cret");
    let answered = Cell::new(0usize);
    let flood = futures::future::join_all(wrong.iter().map(|h| async {
        let v = auth.check(Some(h.as_bytes()), flooder, stays(), &m).await;
        answered.set(answered.get() + 1);
        v
    }));
    let prometheus = async {
        tokio::task::yield_now().await;
        let v = auth.check(Some(right.as_bytes()), HERE, stays(), &m).await;
        (v, answered.get())
    };
    let (flooded, (v, before)) = tokio::join!(flood, prometheus);
    assert_eq!(v, Verdict::Allowed);
    assert!(flooded.iter().all(|v| *v == Verdict::Refused));
    // Ahead of it: the two running and the one waiting for a slot when it came, the
    // flood's next turn, and what the other slot finished while it was checked.
    assert!(before <= 6, "{before} of the flood's 20 were answered first");
    assert_eq!(m.auth_checks.get(), 21);
}

/// Prometheus' own address floods wrong passwords, each sent once: its first scrape waits
/// among them and gives up; asked again, the right password goes before the guesses still
/// waiting, not after them.
#[tokio::test(flavor = "current_thread")]
async fn a_credential_asked_again_goes_before_the_guesses_waiting_at_its_address() {
    let auth = one_user("s3cret", 6);
    let m = Metrics::new();
    let wrong: Vec<String> = (0..40).map(|i| header("prom", &format!("guess-{i}"))).collect();
    let right = header("prom", "s3cret");
    let answered = Cell::new(0usize);
    let flood = futures::future::join_all(wrong.iter().map(|h| async {
        let v = auth.check(Some(h.as_bytes()), HERE, stays(), &m).await;
        answered.set(answered.get() + 1);
        v
    }));
    let prometheus = async {
        tokio::task::yield_now().await;
        // The first scrape is queued behind the flood, then its client goes.
        let first = auth
            .check(Some(right.as_bytes()), HERE, tokio::task::yield_now(), &m)
            .await;
        let dropped = m.auth_checks_dropped.get();
        let again = auth.check(Some(right.as_bytes()), HERE, stays(), &m).await;
        (first, dropped, again, answered.get())
    };
    let (flooded, (first, dropped, again, before)) = tokio::join!(flood, prometheus);
    assert_eq!(first, Verdict::Gone);
    assert_eq!(dropped, 1, "the first scrape's check was dropped, not run");
    assert_eq!(again, Verdict::Allowed);
    assert!(flooded.iter().all(|v| *v == Verdict::Refused));
    // Ahead of it: the two running and the one waiting for a slot when it came back, and
    // what the other slot finished while it was checked (a few, more when the machine is
    // busy and its thread waits for a core). In arrival order it would come after all 40.
    assert!(before <= 12, "{before} of the flood's 40 were answered first");
    assert_eq!(
        m.auth_checks.get(),
        41,
        "each guess and the right password checked once"
    );
}

/// The order turns are given in, exactly: addresses take turns, and within one the
/// credentials asked again go before the first asks, each lane in arrival order.
#[tokio::test(flavor = "current_thread")]
async fn within_an_address_the_lane_of_credentials_asked_again_is_served_first() {
    let stile = turn::Turnstile::default();
    let other = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 7));
    let order = RefCell::new(Vec::new());
    let held = stile.turn(HERE, false).await;
    let wait = |name: &'static str, addr: IpAddr, again: bool| {
        let (stile, order) = (&stile, &order);
        async move {
            let _turn = stile.turn(addr, again).await;
            order.borrow_mut().push(name);
            tokio::task::yield_now().await;
        }
    };
    let waiting = futures::future::join_all([
        wait("first-1", HERE, false),
        wait("first-2", HERE, false),
        wait("other-1", other, false),
        wait("again-1", HERE, true),
        wait("other-2", other, false),
        wait("again-2", HERE, true),
    ]);
    let release = async {
        tokio::task::yield_now().await;
        drop(held);
    };
    tokio::join!(waiting, release);
    assert_eq!(
        *order.borrow(),
        ["again-1", "other-1", "again-2", "other-2", "first-1", "first-2"]
    );
}

#[test]
fn every_check_runs_bcrypt_at_the_same_costs_whoever_is_named() {
    let cheap = bcrypt::hash("alice-pw", 4).unwrap();
    let dear = bcrypt::hash("prom-pw", 5).unwrap();
    let auth = BasicAuth::new(BTreeMap::from([
        ("alice".to_string(), cheap.clone()),
        ("prometheus".to_string(), dear.clone()),
    ]));
    let costs = |hash: Option<&str>| {
        let (own, others) = auth.hashes_for(hash);
        let mut all: Vec<u32> = std::iter::once(own).chain(others).map(|h| cost_of(&h)).collect();
        all.sort_unstable();
        all
    };
    assert_eq!(costs(None), [4, 5], "an unknown user");
    assert_eq!(costs(Some(&cheap)), [4, 5], "the cheaper user");
    assert_eq!(costs(Some(&dear)), [4, 5], "the dearer user");
    // The named user's own hash is the one whose answer counts.
    assert_eq!(auth.hashes_for(Some(&cheap)).0, cheap);
    assert_eq!(cost_of(&auth.hashes_for(None).0), 5);
}
