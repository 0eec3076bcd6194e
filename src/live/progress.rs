//! The progress display of a live run.
use super::*;

pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    in_flight: Mutex<BTreeMap<String, Stage>>,
    /// Set once the bar is cleared: a host task still running (after Ctrl-C or the run
    /// timeout) must not draw it again over the report.
    finished: std::sync::atomic::AtomicBool,
}

impl Progress {
    pub(super) fn new(total: usize, enabled: bool) -> Self {
        let bar = enabled.then(|| {
            let bar =
                indicatif::ProgressBar::with_draw_target(Some(total as u64), indicatif::ProgressDrawTarget::stderr());
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {pos}/{len} hosts done  {wide_msg}",
            ) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Progress {
            bar,
            in_flight: Mutex::new(BTreeMap::new()),
            finished: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub(super) fn stage(&self, host: &str, stage: Stage) {
        let Some(bar) = &self.bar else { return };
        if self.finished.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let Ok(mut m) = self.in_flight.lock() else {
            return;
        };
        if stage == Stage::Done {
            m.remove(host);
        } else {
            m.insert(host.to_string(), stage);
        }
        let msg: Vec<String> = m
            .iter()
            .take(6)
            .map(|(h, s)| {
                let s = match s {
                    Stage::Connecting => "connecting",
                    Stage::Collecting => "collecting",
                    Stage::Done => "done",
                };
                format!("{h}: {s}")
            })
            .collect();
        let more = m.len().saturating_sub(6);
        bar.set_message(if more > 0 {
            format!("{} (+{more} more)", msg.join(", "))
        } else {
            msg.join(", ")
        });
    }

    pub(super) fn host_done(&self, host: &str) {
        self.stage(host, Stage::Done);
        if self.finished.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    pub(super) fn finish(&self) {
        self.finished.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
