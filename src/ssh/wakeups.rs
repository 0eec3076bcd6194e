//! Fewer wake-ups when many hosts answer at once: the runtime's thread, about to sleep
//! until the next event, first pauses a moment when what it just handled was busy, so
//! that the packets of many hosts arriving meanwhile are read in one wake-up.
//!
//! Each answer of a concurrent batch arrives as a packet of its own (that is what lets a
//! hung query cost only its own answer), and on a fleet the packets of many hosts arrive
//! a fraction of a millisecond apart. Handled one by one, every packet costs a sleep and
//! a wake-up of the thread (the kernel's context switch, and in a virtual machine the
//! hypervisor's), which was most of the client's CPU per host. Network cards do the same
//! with their interrupts.
//!
//! The pause comes only after a busy spell, when at least [`BUSY_READS`] reads of SSH
//! connections returned bytes since the thread last slept: a lone host's packets mostly
//! come one per wake-up and are seldom held. A busier spell ([`BUSIER_READS`]) pauses
//! longer, and the busiest ([`BUSIEST_READS`]) longer still: the more hosts answer at
//! once, the more packets a longer pause gathers. It delays an event by at most
//! [`LONGEST_PAUSE`], against runs that wait seconds on `esxcli`; a timeout fires at most
//! that late.
//!
//! The count is per thread: a live run drives its connections on one thread (see
//! `live::fleet_runtime`, which installs [`before_sleep`]), and the pause is that
//! thread's. The exporter does without it: at 50 targets every 15 s (a few hosts
//! collected at a time) the pause left its CPU per probe as it was (4.0 and 5.0 ms
//! against 4.1 and 4.3) and made each probe 60 ms later (2.07 s against 2.01 s).
use std::cell::Cell;
use std::time::Duration;

/// Reads with bytes in one waking spell that make it busy: two packets (russh reads a
/// packet's length, then the rest). At 20 and 50 hosts this threshold saved more CPU
/// than three packets, for the same wall time of a lone host.
const BUSY_READS: usize = 4;

/// How long a busy thread waits before it sleeps until the next event. 20 ms saved more
/// CPU than 10 at 50 hosts; a lone 40-VM host takes about 40 ms longer than with no
/// pause (2.14 s against 2.10 s), as its dependent commands start up to a pause later.
const PAUSE: Duration = Duration::from_millis(20);

/// Reads that make a spell busier: eight packets, which a lone host seldom sends at once.
const BUSIER_READS: usize = 16;

/// The pause after a busier spell. With it, the client's CPU per host fell from 0.81x to
/// 0.69x of the code before the per-answer framing at 20 hosts, and from 0.96x to 0.77x
/// at 50, with the same wall time.
const LONGER_PAUSE: Duration = Duration::from_millis(40);

/// Reads that make a spell the busiest: 32 packets, which only many hosts answering at once
/// send within one pause.
const BUSIEST_READS: usize = 64;

/// The pause after the busiest spells. Where the simulated hosts keep both cores busy the
/// packets pile up during a 40 ms pause too; waiting 80 ms took the client's CPU per host
/// to 0.89x at 100 hosts and 0.86x at 20 (3 rounds each against 40 ms alone), a lone host's
/// time unchanged (2.150 s against 2.176 s) and a 20-host run's 60 ms longer (3.81 s).
const LONGEST_PAUSE: Duration = Duration::from_millis(80);

thread_local! {
    static READS: Cell<usize> = const { Cell::new(0) };
}

/// One read of an SSH connection returned bytes (on the thread that drives it).
pub(crate) fn read_some() {
    READS.with(|r| r.set(r.get().saturating_add(1)));
}

/// The runtime's hook before its thread sleeps: pauses when the spell was busy.
pub(crate) fn before_sleep() {
    if let Some(pause) = pause_after(READS.with(|r| r.replace(0))) {
        std::thread::sleep(pause);
    }
}

/// The pause after a waking spell with `reads` reads that returned bytes, if any.
fn pause_after(reads: usize) -> Option<Duration> {
    match reads {
        n if n >= BUSIEST_READS => Some(LONGEST_PAUSE),
        n if n >= BUSIER_READS => Some(LONGER_PAUSE),
        n if n >= BUSY_READS => Some(PAUSE),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_busy_spell_pauses_and_the_count_starts_again_after_each_sleep() {
        assert_eq!(pause_after(0), None);
        assert_eq!(pause_after(BUSY_READS - 1), None, "a lone host's packet or two");
        assert_eq!(pause_after(BUSY_READS), Some(PAUSE));
        assert_eq!(pause_after(BUSIER_READS - 1), Some(PAUSE));
        assert_eq!(pause_after(BUSIER_READS), Some(LONGER_PAUSE));
        assert_eq!(pause_after(BUSIEST_READS - 1), Some(LONGER_PAUSE));
        assert_eq!(pause_after(BUSIEST_READS), Some(LONGEST_PAUSE));
        assert_eq!(pause_after(usize::MAX), Some(LONGEST_PAUSE));
        for _ in 0..BUSY_READS {
            read_some();
        }
        assert_eq!(READS.with(Cell::get), BUSY_READS);
        let started = std::time::Instant::now();
        before_sleep();
        assert!(started.elapsed() >= PAUSE, "a busy spell pauses");
        assert_eq!(READS.with(Cell::get), 0, "counted afresh");
        // Another thread's reads are its own.
        std::thread::spawn(|| {
            for _ in 0..BUSY_READS {
                read_some();
            }
        })
        .join()
        .expect("the other thread");
        assert_eq!(READS.with(Cell::get), 0);
    }
}
