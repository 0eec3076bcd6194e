//! Values of keywords this tool does not act on, checked as ssh checks them: a file ssh
//! refuses (`ConnectTimeout -1`, `LogLevel junk`) is refused here too, so the tool never
//! logs in where `ssh` would not start.

/// ssh's `convtime`: digits with an optional unit (`s`, `m`, `h`, `d`, `w`, either case),
/// one or more such groups (`1h30m`); seconds. Refused: empty, a sign, another unit.
pub(super) fn time(value: &str) -> Result<u64, String> {
    let invalid = || "invalid time value.".to_string();
    if value.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            digits.push(c);
            if chars.peek().is_some() {
                continue;
            }
        }
        let unit = match c {
            _ if c.is_ascii_digit() => 1,
            's' | 'S' => 1,
            'm' | 'M' => 60,
            'h' | 'H' => 3600,
            'd' | 'D' => 86400,
            'w' | 'W' => 604_800,
            _ => return Err(invalid()),
        };
        let n: u64 = digits.parse().map_err(|_| invalid())?;
        digits.clear();
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .filter(|t| *t <= i32::MAX as u64)
            .ok_or_else(invalid)?;
    }
    Ok(total)
}

/// ssh's `parse_int`: a decimal integer from 0 to `INT_MAX`.
pub(super) fn integer(value: &str) -> Result<u32, String> {
    let n: i64 = value.parse().map_err(|_| "integer value invalid.".to_string())?;
    if n < 0 {
        return Err("integer value too small.".into());
    }
    if n > i64::from(i32::MAX) {
        return Err("integer value too large.".into());
    }
    u32::try_from(n).map_err(|_| "integer value too large.".into())
}

/// `LogLevel`: one of ssh's level names, in any case.
pub(super) fn log_level(value: &str) -> Result<(), String> {
    const LEVELS: &[&str] = &[
        "QUIET", "FATAL", "ERROR", "INFO", "VERBOSE", "DEBUG", "DEBUG1", "DEBUG2", "DEBUG3",
    ];
    if LEVELS.iter().any(|l| l.eq_ignore_ascii_case(value)) {
        Ok(())
    } else {
        Err(format!("unsupported log level '{value}'"))
    }
}

/// ssh's `valid_domain` for `CanonicalDomains`: starts with a letter or digit, then
/// letters, digits, `-`, `_` and single dots.
pub(super) fn domain(value: &str) -> Result<(), String> {
    let first = value.chars().next();
    if !first.is_some_and(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("domain name \"{value}\" starts with invalid character"));
    }
    if value.contains("..") {
        return Err(format!("domain name \"{value}\" contains consecutive separators"));
    }
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        return Err(format!("domain name \"{value}\" contains invalid characters"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_as_convtime_reads_them() {
        assert_eq!(time("10"), Ok(10));
        assert_eq!(time("0"), Ok(0));
        assert_eq!(time("1m"), Ok(60));
        assert_eq!(time("1h30M"), Ok(5400));
        assert_eq!(time("2w"), Ok(1_209_600));
        for bad in ["-1", "soon", "", "1x", "m", "1.5", "99999999999"] {
            assert!(time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn integers_levels_and_domains() {
        assert_eq!(integer("3"), Ok(3));
        assert!(integer("-1").is_err() && integer("x").is_err() && integer("2147483648").is_err());
        assert!(log_level("debug3").is_ok() && log_level("Verbose").is_ok());
        assert!(log_level("junk").is_err() && log_level("DEBUG4").is_err());
        assert!(domain("lab.example").is_ok() && domain("a_b-c").is_ok());
        assert!(domain(".lab").is_err() && domain("a..b").is_err() && domain("a b").is_err());
    }
}
