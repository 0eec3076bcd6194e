//! The value parsers of the options: durations, sizes, counts. Each error says what was
//! expected, and clap prints it after the option's name.
use std::time::Duration;

/// `--interval`: at least 100 ms.
pub(super) fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d < Duration::from_millis(100) {
        return Err(format!("{text:?} is shorter than 100ms"));
    }
    Ok(d)
}

/// `--count`: 1 or more rounds.
pub(super) fn parse_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{text:?} is not a number of rounds (1 or more)")),
    }
}

/// `--host-output-budget`: `10MiB`, `512KiB`, `1GiB`, `4096` (bytes); at least 64 KiB so a
/// healthy host always fits.
pub(crate) fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: usize = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 10MiB, 512KiB)"))?;
    let factor: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        "g" | "gb" | "gib" => 1024 * 1024 * 1024,
        other => return Err(format!("unknown size unit {other:?} (use B, KiB, MiB or GiB)")),
    };
    let bytes = n.checked_mul(factor).ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes < 64 * 1024 {
        return Err(format!(
            "{text:?} is below 64KiB, too small for one healthy host's outputs"
        ));
    }
    Ok(bytes)
}

/// `--parallel`: 1 to 1024 hosts at once.
pub(super) fn parse_parallel(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a number of hosts from 1 to 1024")),
    }
}

/// `--probe-sample`: at least one peer.
pub(super) fn parse_sample(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{text:?} is not a number of peers (1 or more)")),
    }
}

/// `10s`, `500ms`, `2m`, `1h`, or plain seconds (`30`).
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 10s, 500ms, 2m"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("unknown unit {unit:?} in {text:?} (use ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5d").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
