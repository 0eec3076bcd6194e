//! Whose credentials are checked next: client addresses take turns (round robin), and
//! within an address a credential asked again (see [`super::BasicAuth::check`]) goes
//! before those asked for the first time, each kind in the order it came. A client
//! flooding wrong passwords from one address therefore has one check ahead of a client at
//! another address at a time, however many it has queued; clients sharing an address
//! (NAT, a proxy, the same machine) share its turns, and there a credential sent again
//! (as Prometheus sends its own at every scrape) passes the guesses each sent once.
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use tokio::sync::oneshot;

/// The line in front of the check pool: one request at a time is let through to wait for
/// a slot of the pool (see [`Turn`]).
#[derive(Default)]
pub(super) struct Turnstile {
    inner: RefCell<Line>,
}

#[derive(Default)]
struct Line {
    /// A request has been let through and has not got its slot yet.
    busy: bool,
    /// The requests waiting, by address.
    queues: HashMap<IpAddr, Lanes>,
    /// The addresses with requests waiting, in the order their turns come.
    order: VecDeque<IpAddr>,
}

/// An address's waiting requests, oldest first in each lane.
#[derive(Default)]
struct Lanes {
    /// Credentials asked again: served first.
    again: VecDeque<oneshot::Sender<()>>,
    /// Credentials asked for the first time.
    first: VecDeque<oneshot::Sender<()>>,
}

impl Lanes {
    fn pop_front(&mut self) -> Option<oneshot::Sender<()>> {
        self.again.pop_front().or_else(|| self.first.pop_front())
    }

    fn is_empty(&self) -> bool {
        self.again.is_empty() && self.first.is_empty()
    }
}

impl Line {
    /// Lets the next request through: the oldest of the next address in turn. One that
    /// went away meanwhile (its receiver dropped) is passed over.
    fn let_next(&mut self) {
        while let Some(addr) = self.order.pop_front() {
            let Some(queue) = self.queues.get_mut(&addr) else {
                continue;
            };
            let next = queue.pop_front();
            if queue.is_empty() {
                self.queues.remove(&addr);
            } else {
                self.order.push_back(addr);
            }
            if let Some(tx) = next {
                if tx.send(()).is_ok() {
                    self.busy = true;
                    return;
                }
            }
        }
    }
}

/// A request let through the turnstile: dropping it (slot got, or request gone) lets the
/// next one through.
pub(super) struct Turn<'a>(&'a Turnstile);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A request waiting for its turn: dropped after it was let through but before it saw
/// so, it passes the turn on rather than keep the line closed.
struct Waiting<'a> {
    stile: &'a Turnstile,
    rx: Option<oneshot::Receiver<()>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(mut rx) = self.rx.take() {
            if rx.try_recv().is_ok() {
                self.stile.release();
            }
        }
    }
}

impl Turnstile {
    /// Waits for the turn of a request from `addr`; `again`: its credential was asked
    /// before, and it goes before the address's first asks.
    pub(super) async fn turn(&self, addr: IpAddr, again: bool) -> Turn<'_> {
        let rx = {
            let mut line = self.inner.borrow_mut();
            if !line.busy && line.order.is_empty() {
                line.busy = true;
                return Turn(self);
            }
            let (tx, rx) = oneshot::channel();
            let lanes = line.queues.entry(addr).or_default();
            let had_waiting = !lanes.is_empty();
            if again {
                lanes.again.push_back(tx);
            } else {
                lanes.first.push_back(tx);
            }
            if !had_waiting {
                line.order.push_back(addr);
            }
            rx
        };
        let mut waiting = Waiting {
            stile: self,
            rx: Some(rx),
        };
        if let Some(rx) = waiting.rx.as_mut() {
            // The sender is only dropped with the turnstile, which outlives this wait.
            let _ = rx.await;
        }
        waiting.rx = None;
        Turn(self)
    }

    fn release(&self) {
        let mut line = self.inner.borrow_mut();
        line.busy = false;
        line.let_next();
    }
}
