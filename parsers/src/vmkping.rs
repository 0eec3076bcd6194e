//! `vmkping`: ICMP echo from a VMkernel adapter, the only read-only proof that two hosts'
//! PVRDMA vmknics reach each other (and, with don't-fragment and a jumbo payload, that the
//! whole path carries the vmknic's MTU). Real samples, from public captures:
//!
//! A reply (nested ESXi lab, `vmkping -I vmk1 172.16.98.22`, VERBATIM):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! PING 172.16.98.22 (172.16.98.22): 56 data bytes
//! 64 bytes from 172.16.98.22: icmp_seq=0 ttl=64 time=0.243 ms
//! 64 bytes from 172.16.98.22: icmp_seq=1 ttl=64 time=0.260 ms
//! 64 bytes from 172.16.98.22: icmp_seq=2 ttl=64 time=0.262 ms
//!
//! --- 172.16.98.22 ping statistics ---
//! 3 packets transmitted, 3 packets received, 0% packet loss
//! round-trip min/avg/max = 0.243/0.255/0.262 ms
//! "#;
//! let ping = parse_vmkping(output.trim_start_matches('\n'))?;
//! assert_eq!(ping.replies, 3);
//! assert_eq!(ping.statistics.map(|s| s.received), Some(3));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! A payload larger than the vmknic MTU with don't-fragment (ESXi 9, ogelbric/VCF9-notes,
//! VERBATIM). There is no round-trip line on a total loss, and a capture from an NSX lab
//! stops after the `sendto()` lines with no statistics at all:
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! PING 192.168.6.1 (192.168.6.1): 1500 data bytes
//! sendto() failed (Message too long)
//! sendto() failed (Message too long)
//! sendto() failed (Message too long)
//!
//! --- 192.168.6.1 ping statistics ---
//! 3 packets transmitted, 0 packets received, 100% packet loss
//! "#;
//! let ping = parse_vmkping(output.trim_start_matches('\n'))?;
//! assert_eq!(ping.send_errors.len(), 3); // "Message too long": the path MTU is smaller
//! assert_eq!(ping.statistics.map(|s| s.received), Some(0));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! A silent peer (no reply within `-W`) prints the header and the statistics line only, as
//! the FreeBSD ping vmkping derives from does (its `ping(8)` output);
//! **composed** for vmkping. `sendto() failed (Host is down)` is named by a public
//! Invoke-VmkPing script; the lines carrying it are **composed** in the same form as
//! `Message too long`. An adapter vmkping does not know (`-I vmk9`) is answered with one
//! error line and no statistics; its exact wording has **no public capture**, so any line
//! that is none of the above is kept verbatim as an error rather than matched by text.
//!
//! The probe batch (pvrdma-doctor's own `--probe` command line) runs the plain and the
//! jumbo ping in one channel and frames each with the house end markers:
//! `==> plain <==` ... `<== plain exit N ==>`. A section without its end marker was cut off.
use crate::common::{fail, is_blank, line_iter, to_parse_error};
use crate::ParseError;
use serde::Serialize;

const COMMAND: &str = "vmkping";

/// `round-trip min/avg/max = a/b/c ms`, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RoundTrip {
    pub min_ms: f64,
    pub avg_ms: f64,
    pub max_ms: f64,
}

/// `N packets transmitted, M packets received, L% packet loss`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PingStatistics {
    pub transmitted: u32,
    pub received: u32,
    pub loss_percent: f64,
}

/// What one vmkping run printed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Vmkping {
    /// The address in the `PING <target> (<address>): N data bytes` header.
    pub target: Option<String>,
    /// The `N data bytes` of the header (the `-s` payload).
    pub payload_bytes: Option<u32>,
    /// `... bytes from ...` reply lines.
    pub replies: u32,
    /// The reason of every `sendto() failed (<reason>)` line, in order.
    pub send_errors: Vec<String>,
    pub statistics: Option<PingStatistics>,
    pub round_trip: Option<RoundTrip>,
    /// Lines that are none of the above (an unknown interface, a usage message), verbatim.
    pub errors: Vec<String>,
}

impl Vmkping {
    /// The sending host refused a packet as larger than its own interface allows
    /// (`sendto() failed (Message too long)`, the text of EMSGSIZE), rather than the path
    /// losing it.
    pub fn refused_by_the_sender_as_too_long(&self) -> bool {
        self.send_errors.iter().any(|e| e == "Message too long")
    }
}

/// One framed run of the probe batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VmkpingSection {
    /// `plain` or `jumbo` (whatever the header named).
    pub key: String,
    /// The exit status from the end marker; `None` when the marker is missing (cut off).
    pub exit: Option<i32>,
    pub ping: Vmkping,
}

/// Parses the output of a single vmkping. Never fails on content: lines it does not know
/// are kept in [`Vmkping::errors`] so the caller can show them.
pub fn parse_vmkping(input: &str) -> Result<Vmkping, ParseError> {
    let mut out = Vmkping::default();
    for l in line_iter(input) {
        read_line(l.trim(), &mut out);
    }
    Ok(out)
}

fn read_line(l: &str, out: &mut Vmkping) {
    if l.is_empty() {
        return;
    }
    if let Some((target, bytes)) = header(l) {
        out.target = Some(target.to_string());
        out.payload_bytes = Some(bytes);
    } else if is_reply(l) {
        out.replies = out.replies.saturating_add(1);
    } else if let Some(reason) = l.strip_prefix("sendto() failed (").and_then(|r| r.strip_suffix(')')) {
        out.send_errors.push(reason.to_string());
    } else if l.starts_with("--- ") && l.ends_with(" ping statistics ---") {
        // The statistics banner: the numbers follow on the next line.
    } else if let Some(s) = statistics(l) {
        out.statistics = Some(s);
    } else if let Some(r) = round_trip(l) {
        out.round_trip = Some(r);
    } else {
        out.errors.push(l.to_string());
    }
}

/// `PING 10.0.1.1 (10.0.1.1): 56 data bytes` → (`10.0.1.1`, 56).
fn header(l: &str) -> Option<(&str, u32)> {
    let rest = l.strip_prefix("PING ")?;
    let (_, rest) = rest.split_once(" (")?;
    let (address, rest) = rest.split_once("): ")?;
    let bytes = rest.strip_suffix(" data bytes")?.trim().parse().ok()?;
    Some((address, bytes))
}

/// `64 bytes from 10.0.1.1: icmp_seq=0 ttl=64 time=0.337 ms`.
fn is_reply(l: &str) -> bool {
    let Some((count, rest)) = l.split_once(' ') else {
        return false;
    };
    count.parse::<u32>().is_ok() && rest.starts_with("bytes from ") && rest.contains(": ")
}

/// `3 packets transmitted, 0 packets received, 100% packet loss` (BSD ping may add
/// `, +N duplicates` or print the loss with a decimal).
fn statistics(l: &str) -> Option<PingStatistics> {
    let mut parts = l.split(", ");
    let transmitted = parts
        .next()?
        .strip_suffix(" packets transmitted")?
        .trim()
        .parse()
        .ok()?;
    let received_part = parts.next()?;
    let received = received_part
        .strip_suffix(" packets received")
        .or_else(|| received_part.strip_suffix(" received"))?
        .trim()
        .parse()
        .ok()?;
    let loss_percent = parts
        .find_map(|p| p.strip_suffix("% packet loss"))?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())?;
    Some(PingStatistics {
        transmitted,
        received,
        loss_percent,
    })
}

/// `round-trip min/avg/max = 0.337/3.434/6.532 ms` (also `min/avg/max/stddev`).
fn round_trip(l: &str) -> Option<RoundTrip> {
    let rest = l.strip_prefix("round-trip ").or_else(|| l.strip_prefix("rtt "))?;
    let (names, values) = rest.split_once(" = ")?;
    let values = values.strip_suffix(" ms").unwrap_or(values);
    let names: Vec<&str> = names.split('/').collect();
    let values: Vec<f64> = values
        .split('/')
        .map(|v| v.trim().parse::<f64>().ok().filter(|f| f.is_finite()))
        .collect::<Option<Vec<f64>>>()?;
    let get = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .and_then(|i| values.get(i).copied())
    };
    Some(RoundTrip {
        min_ms: get("min")?,
        avg_ms: get("avg")?,
        max_ms: get("max")?,
    })
}

/// `==> plain <==` → `plain`.
fn section_start(l: &str) -> Option<&str> {
    l.trim_end().strip_prefix("==> ")?.strip_suffix(" <==").map(str::trim)
}

/// `<== plain exit 1 ==>` → (`plain`, 1).
fn section_end(l: &str) -> Option<(&str, i32)> {
    let rest = l.trim_end().strip_prefix("<== ")?.strip_suffix(" ==>")?;
    let (key, code) = rest.rsplit_once(" exit ")?;
    Some((key.trim(), code.trim().parse().ok()?))
}

/// Parses the probe batch: one framed section per vmkping. Text before the first header
/// means the batch itself did not run (the shell refused it), which is an error.
pub fn parse_vmkping_probe(input: &str) -> Result<Vec<VmkpingSection>, ParseError> {
    let mut out: Vec<VmkpingSection> = Vec::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    for l in line_iter(input) {
        if let Some(key) = section_start(l) {
            if let Some((key, body)) = current.take() {
                out.push(section(key, &body, None));
            }
            current = Some((key.to_string(), Vec::new()));
            continue;
        }
        if let Some((key, code)) = section_end(l) {
            match current.take() {
                Some((open, body)) if open == key => out.push(section(open, &body, Some(code))),
                _ => return Err(refuse(input, l, "an end marker closing the open `==> KEY <==` section")),
            }
            continue;
        }
        match &mut current {
            Some((_, body)) => body.push(l),
            None if is_blank(l) => {}
            None => return Err(refuse(input, l, "a `==> plain <==` or `==> jumbo <==` section header")),
        }
    }
    if let Some((key, body)) = current.take() {
        out.push(section(key, &body, None));
    }
    Ok(out)
}

fn refuse(input: &str, l: &str, expected: &'static str) -> ParseError {
    match fail(l, expected) {
        nom::Err::Error(e) | nom::Err::Failure(e) => to_parse_error(COMMAND, input, &e),
        nom::Err::Incomplete(_) => ParseError {
            command: COMMAND,
            line: 1,
            column: 1,
            expected,
            snippet: l.chars().take(80).collect(),
        },
    }
}

fn section(key: String, body: &[&str], exit: Option<i32>) -> VmkpingSection {
    let mut ping = Vmkping::default();
    for l in body {
        read_line(l.trim(), &mut ping);
    }
    VmkpingSection { key, exit, ping }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: &str = "PING 172.16.98.22 (172.16.98.22): 56 data bytes\n\
64 bytes from 172.16.98.22: icmp_seq=0 ttl=64 time=0.243 ms\n\
64 bytes from 172.16.98.22: icmp_seq=1 ttl=64 time=0.260 ms\n\
64 bytes from 172.16.98.22: icmp_seq=2 ttl=64 time=0.262 ms\n\
\n\
--- 172.16.98.22 ping statistics ---\n\
3 packets transmitted, 3 packets received, 0% packet loss\n\
round-trip min/avg/max = 0.243/0.255/0.262 ms\n";

    const TOO_LONG: &str = "PING 192.168.6.1 (192.168.6.1): 1500 data bytes\n\
sendto() failed (Message too long)\n\
sendto() failed (Message too long)\n\
sendto() failed (Message too long)\n\
\n\
--- 192.168.6.1 ping statistics ---\n\
3 packets transmitted, 0 packets received, 100% packet loss\n";

    #[test]
    fn replies_statistics_and_round_trip() {
        let p = parse_vmkping(REPLY).unwrap();
        assert_eq!(p.target.as_deref(), Some("172.16.98.22"));
        assert_eq!(p.payload_bytes, Some(56));
        assert_eq!(p.replies, 3);
        assert!(!p.refused_by_the_sender_as_too_long());
        assert_eq!(
            p.statistics,
            Some(PingStatistics {
                transmitted: 3,
                received: 3,
                loss_percent: 0.0
            })
        );
        assert_eq!(
            p.round_trip,
            Some(RoundTrip {
                min_ms: 0.243,
                avg_ms: 0.255,
                max_ms: 0.262
            })
        );
        assert!(p.errors.is_empty() && p.send_errors.is_empty());
    }

    #[test]
    fn message_too_long_is_a_send_error_with_total_loss() {
        let p = parse_vmkping(TOO_LONG).unwrap();
        assert_eq!(p.payload_bytes, Some(1500));
        assert_eq!(p.send_errors, vec!["Message too long"; 3]);
        assert!(p.refused_by_the_sender_as_too_long());
        assert_eq!(p.statistics.map(|s| s.received), Some(0));
        assert_eq!(p.statistics.map(|s| s.loss_percent), Some(100.0));
        assert_eq!(p.round_trip, None);
        assert!(p.errors.is_empty());
    }

    #[test]
    fn unknown_lines_are_kept_as_errors() {
        let p = parse_vmkping("Unknown interface 'vmk9': Invalid argument\n").unwrap();
        assert_eq!(p.errors, vec!["Unknown interface 'vmk9': Invalid argument"]);
        assert_eq!(p.statistics, None);
        let p = parse_vmkping("3 packets transmitted, x packets received, 0% packet loss\n").unwrap();
        assert_eq!(p.statistics, None);
        assert_eq!(p.errors.len(), 1);
    }

    #[test]
    fn bsd_variants_of_statistics_and_round_trip() {
        let p = parse_vmkping(
            "3 packets transmitted, 2 packets received, +1 duplicates, 33.3% packet loss\nround-trip min/avg/max/stddev = 0.1/0.2/0.3/0.05 ms\n",
        )
        .unwrap();
        assert_eq!(p.statistics.map(|s| s.loss_percent), Some(33.3));
        assert_eq!(p.round_trip.map(|r| r.max_ms), Some(0.3));
    }

    #[test]
    fn batch_sections_with_and_without_end_marker() {
        let input =
            format!("==> plain <==\n{REPLY}<== plain exit 0 ==>\n==> jumbo <==\n{TOO_LONG}<== jumbo exit 1 ==>\n");
        let s = parse_vmkping_probe(&input).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].key.as_str(), s[0].exit), ("plain", Some(0)));
        assert_eq!(s[0].ping.replies, 3);
        assert_eq!((s[1].key.as_str(), s[1].exit), ("jumbo", Some(1)));
        assert_eq!(s[1].ping.send_errors.len(), 3);

        let cut = "==> plain <==\nPING 10.0.0.2 (10.0.0.2): 56 data bytes\n64 bytes from 10.0.0.2: icmp_seq=0 ttl=64 time=0.2 ms\n";
        let s = parse_vmkping_probe(cut).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].exit, None, "no end marker: cut off");
        assert_eq!(s[0].ping.replies, 1);
        assert!(parse_vmkping_probe("").unwrap().is_empty());
    }

    #[test]
    fn batch_refuses_text_before_the_first_header_and_stray_markers() {
        let e = parse_vmkping_probe("sh: syntax error\n==> plain <==\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert_eq!(e.command, "vmkping");
        assert!(parse_vmkping_probe("==> plain <==\n<== jumbo exit 0 ==>\n").is_err());
    }
}
