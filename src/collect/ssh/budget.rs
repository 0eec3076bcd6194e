//! Output budgets: of a host (`--host-output-budget`), of a run (`--total-output-budget`)
//! and, in the exporter, of the process; what a command may keep is what all three grant.
use pvrdma_engine::capture::Cap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The output budget of a whole run (`--total-output-budget`), shared by all hosts; in
/// the exporter also a share of the process's budget (see [`ProcessBudget`]).
#[derive(Debug)]
pub struct RunBudget {
    left: AtomicUsize,
    total: usize,
    /// The exporter's budget this run also takes from. What the run took from it is what
    /// the run's own budget lost (`total - left`: a byte the process refused goes back to
    /// the run at once), given back when the last holder of this run's budget drops it.
    process: Option<Arc<ProcessBudget>>,
}

impl RunBudget {
    pub(crate) fn new(bytes: usize) -> Arc<Self> {
        Arc::new(RunBudget {
            left: AtomicUsize::new(bytes),
            total: bytes,
            process: None,
        })
    }

    /// A run of at most `bytes` whose outputs also count against `process` until the
    /// returned budget is dropped: the exporter holds it until the probe's outputs are
    /// gone.
    pub fn within(bytes: usize, process: &Arc<ProcessBudget>) -> Arc<Self> {
        Arc::new(RunBudget {
            left: AtomicUsize::new(bytes),
            total: bytes,
            process: Some(process.clone()),
        })
    }

    /// Takes up to `want` bytes from the run, then from the process; how many were
    /// granted and, when fewer, which budget ran out.
    fn take(&self, want: usize) -> (usize, Option<Cap>) {
        let from_run = take_from(&self.left, want);
        let Some(process) = &self.process else {
            return (from_run, (from_run < want).then_some(Cap::RunBudget));
        };
        let granted = process.take(from_run);
        if granted < from_run {
            self.left.fetch_add(from_run - granted, Ordering::SeqCst);
            return (granted, Some(Cap::ProcessBudget));
        }
        (granted, (granted < want).then_some(Cap::RunBudget))
    }

    /// The size of the budget that `cap` names.
    pub(super) fn limit(&self, cap: Cap) -> usize {
        match (cap, &self.process) {
            (Cap::ProcessBudget, Some(p)) => p.total(),
            _ => self.total,
        }
    }
}

impl Drop for RunBudget {
    fn drop(&mut self) {
        if let Some(process) = &self.process {
            process.give_back(self.total.saturating_sub(*self.left.get_mut()));
        }
    }
}

/// The exporter's output budget: every probe in flight takes its outputs from this one
/// pool (through its [`RunBudget::within`]), and gives them back once its answer is
/// rendered, so hosts flooding their output cannot take the process past it however many
/// probes run at once. An output cut by it is marked cut, as by any other budget.
#[derive(Debug)]
pub struct ProcessBudget {
    in_use: AtomicUsize,
    total: AtomicUsize,
}

impl ProcessBudget {
    pub fn new(bytes: usize) -> Arc<Self> {
        Arc::new(ProcessBudget {
            in_use: AtomicUsize::new(0),
            total: AtomicUsize::new(bytes),
        })
    }

    /// Bytes held by the probes in flight.
    pub fn in_use(&self) -> usize {
        self.in_use.load(Ordering::SeqCst)
    }

    /// The budget's size.
    pub fn total(&self) -> usize {
        self.total.load(Ordering::SeqCst)
    }

    /// A new size (a reloaded configuration): the probes in flight keep what they hold;
    /// new output is granted only while less than the new size is held.
    pub fn resize(&self, bytes: usize) {
        self.total.store(bytes, Ordering::SeqCst);
    }

    /// Grants up to `want` bytes; how many.
    fn take(&self, want: usize) -> usize {
        let total = self.total();
        let mut granted = 0;
        let _ = self.in_use.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
            granted = want.min(total.saturating_sub(used));
            Some(used + granted)
        });
        granted
    }

    fn give_back(&self, bytes: usize) {
        let _ = self.in_use.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
            Some(used.saturating_sub(bytes))
        });
    }
}

/// Takes up to `want` bytes from `left`; returns how many were granted.
fn take_from(left: &AtomicUsize, want: usize) -> usize {
    let mut granted = 0;
    let _ = left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| {
        granted = want.min(l);
        Some(l - granted)
    });
    granted
}

/// What is left of a host's output budget (shared by its concurrent commands) and of
/// the run's.
pub(super) struct Budget {
    host: AtomicUsize,
    pub(super) run: Arc<RunBudget>,
}

impl Budget {
    pub(super) fn new(bytes: usize, run: Arc<RunBudget>) -> Self {
        Budget {
            host: AtomicUsize::new(bytes),
            run,
        }
    }

    /// Takes up to `want` bytes; returns how many were granted and, when fewer, which
    /// budget ran out.
    pub(super) fn take(&self, want: usize) -> (usize, Option<Cap>) {
        let from_host = take_from(&self.host, want);
        let (granted, short) = self.run.take(from_host);
        if granted < from_host {
            self.host.fetch_add(from_host - granted, Ordering::SeqCst);
            return (granted, short);
        }
        (granted, (granted < want).then_some(Cap::HostBudget))
    }
}
