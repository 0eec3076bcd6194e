//! How a duration the user gave (`--command-timeout 500ms`, a module's
//! `connect_timeout`, a scrape's deadline) is echoed back in messages and logs: in
//! humantime's notation (`500ms`, `1m 30s`, `2s 500ms`), to the millisecond, so a limit
//! under a second is never shown as `0s` and one with a fraction is not rounded away.
use std::time::Duration;

/// `d` as humantime writes it, to the nearest millisecond (`0s` for zero).
pub fn text(d: Duration) -> String {
    let ms = d.as_nanos().saturating_add(500_000) / 1_000_000;
    humantime::format_duration(Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX))).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_given_milliseconds_kept() {
        assert_eq!(text(Duration::from_millis(500)), "500ms");
        assert_eq!(text(Duration::from_secs(60)), "1m");
        assert_eq!(text(Duration::from_millis(2500)), "2s 500ms");
        assert_eq!(text(Duration::ZERO), "0s");
        // `0.1s` parsed through a float lands a few nanoseconds off.
        assert_eq!(text(Duration::from_secs_f64(0.1)), "100ms");
        assert_eq!(text(Duration::from_nanos(1_499_999_999)), "1s 500ms");
        // What it prints reads back as the same duration.
        for ms in [1, 250, 500, 999, 1000, 1500, 61_001, 3_600_000] {
            let d = Duration::from_millis(ms);
            assert_eq!(humantime::parse_duration(&text(d)).ok(), Some(d), "{ms} ms");
        }
    }
}
