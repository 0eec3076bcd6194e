//! What the plugin is told: its states, the `-w`/`-c` threshold ranges of the Monitoring
//! Plugins Development Guidelines, and the options of one run.
use std::time::Duration;

/// A plugin state: the exit code the monitoring system reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Ok,
    Warning,
    Critical,
    Unknown,
}

impl State {
    /// The plugin exit code: 0, 1, 2, 3.
    pub fn code(self) -> u8 {
        match self {
            State::Ok => 0,
            State::Warning => 1,
            State::Critical => 2,
            State::Unknown => 3,
        }
    }

    /// The word of the status line.
    pub fn word(self) -> &'static str {
        match self {
            State::Ok => "OK",
            State::Warning => "WARNING",
            State::Critical => "CRITICAL",
            State::Unknown => "UNKNOWN",
        }
    }

    /// Severity for "the worst state wins".
    pub(super) fn rank(self) -> u8 {
        match self {
            State::Ok => 0,
            State::Warning => 1,
            State::Unknown => 2,
            State::Critical => 3,
        }
    }

    pub(super) fn worst(self, other: State) -> State {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

/// A threshold range in the guidelines' syntax (`[@]start:end`; `10` = `0:10`, `10:` =
/// 10 to infinity, `~:10` = minus infinity to 10): a value outside the range alerts, or
/// inside it with a leading `@`.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    start: f64,
    end: f64,
    inside: bool,
    text: String,
}

impl Range {
    /// Whether `value` alerts.
    pub fn alerts(&self, value: f64) -> bool {
        let within = self.start <= value && value <= self.end;
        within == self.inside
    }

    /// The range as the performance data writes it (as given).
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl std::str::FromStr for Range {
    type Err = String;

    fn from_str(s: &str) -> Result<Range, String> {
        let text = s.trim();
        let bad = |why: &str| {
            format!(
                "{s:?} is not a threshold range ({why}); use N (alert above N), N: (below N), \
                 ~:N (above N), N:M (outside N..M) or @N:M (inside N..M)"
            )
        };
        let (inside, body) = match text.strip_prefix('@') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let number = |t: &str| -> Result<f64, String> {
            let ok = !t.is_empty()
                && t.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '-')
                && t.parse::<f64>().is_ok_and(f64::is_finite);
            if ok {
                t.parse::<f64>().map_err(|e| e.to_string())
            } else {
                Err(bad(&format!("{t:?} is not a number")))
            }
        };
        let (start, end) = match body.split_once(':') {
            None => (0.0, number(body)?),
            Some((a, b)) => {
                let start = if a == "~" { f64::NEG_INFINITY } else { number(a)? };
                let end = if b.is_empty() { f64::INFINITY } else { number(b)? };
                (start, end)
            }
        };
        if start > end {
            return Err(bad("its start is above its end"));
        }
        Ok(Range {
            start,
            end,
            inside,
            text: text.to_string(),
        })
    }
}

/// What shapes the plugin report besides the diagnosis.
#[derive(Debug, Clone)]
pub struct NagiosOptions {
    /// `-w/--warning`: the number of adapters in TCP fallback that makes a WARNING.
    pub warning: Option<Range>,
    /// `-c/--critical`: the number that makes it CRITICAL. Without `-w` and `-c` any
    /// fallback is CRITICAL (the range `0`).
    pub critical: Option<Range>,
    /// The state of a host that could not be reached (UNKNOWN unless the site says so).
    pub unreachable: State,
    /// How long the run took (the `duration` performance data; left out when unknown).
    pub duration: Option<Duration>,
    /// `Some(limit)` when the run hit its own `--timeout` before every host finished.
    pub timed_out: Option<Duration>,
}

impl Default for NagiosOptions {
    fn default() -> Self {
        NagiosOptions {
            warning: None,
            critical: None,
            unreachable: State::Unknown,
            duration: None,
            timed_out: None,
        }
    }
}
