//! `==> key <==` sections of a batched per-VM query.
use nom::bytes::complete::{tag, take_until};
use nom::combinator::all_consuming;
use nom::sequence::delimited;
use nom::Parser;

use super::error::{end_of, fail, offset_in, PResult};
use super::lines::{is_blank, lines};

/// How a batch section ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SectionEnd {
    /// `<== key exit N ==>`: the iteration ran to its end and its query exited with N.
    Marker(u32),
    /// The batch prints end markers but this section has none: it was cut off.
    Missing,
    /// A capture from before end markers existed (no section has one): complete by
    /// construction, as such captures only come from commands that exited cleanly.
    Legacy,
}

/// One `==> key <==` section of a batched per-VM query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section<'a> {
    pub key: &'a str,
    pub header: &'a str,
    /// Everything up to the end marker (or the next header), as a sub-slice of the input.
    pub body: &'a str,
    pub end: SectionEnd,
}

impl Section<'_> {
    /// Why this section cannot be trusted as whole, if so.
    pub fn cut_off(&self) -> Option<String> {
        (self.end == SectionEnd::Missing).then(|| {
            format!(
                "its section has no end marker (`<== {} exit N ==>`): the output was cut off inside it",
                self.key
            )
        })
    }
}

fn section_header(l: &str) -> PResult<'_, &str> {
    all_consuming(delimited(tag("==> "), take_until(" <=="), tag(" <=="))).parse_complete(l.trim_end())
}

/// `<== key exit N ==>` (the key may itself contain ` exit `: the last one counts).
pub(crate) fn end_marker(l: &str) -> Option<(&str, u32)> {
    let inner = l.trim_end().strip_prefix("<== ")?.strip_suffix(" ==>")?;
    let (key, code) = inner.rsplit_once(" exit ")?;
    Some((key.trim(), code.trim().parse().ok()?))
}

/// Splits a batch into sections. Text before the first header is an error: the loop
/// prints a header before anything else, so such text means the loop itself failed.
/// Each iteration of the catalogue's loops ends with `<== key exit N ==>`; when any section
/// has one, a section without its own is [`SectionEnd::Missing`] and its body stops at the
/// next header. Text between an end marker and the next header is not any section's.
pub(crate) fn sections<'a>(input: &'a str, expected: &'static str) -> PResult<'a, Vec<Section<'a>>> {
    let all = lines(input);
    let markers = all.iter().any(|l| end_marker(l).is_some());
    let mut out: Vec<Section<'a>> = Vec::new();
    // The open section: key, header line, where its body starts.
    let mut open: Option<(&'a str, &'a str, usize)> = None;
    let body_start = |header: &str| {
        let from = offset_in(input, header).map_or(input.len(), |o| o + header.len());
        if input.get(from..).is_some_and(|r| r.starts_with("\r\n")) {
            from + 2
        } else if input.get(from..).is_some_and(|r| r.starts_with('\n')) {
            from + 1
        } else {
            from
        }
    };
    let slice = |from: usize, to: usize| input.get(from..to.max(from)).unwrap_or_else(|| end_of(input));
    // A section that ends at the next header or the end of the input: no marker of its own.
    let unmarked = |(key, header, from): (&'a str, &'a str, usize), to: usize| Section {
        key,
        header,
        body: slice(from, to),
        end: if markers {
            SectionEnd::Missing
        } else {
            SectionEnd::Legacy
        },
    };
    for l in all {
        let at = offset_in(input, l).unwrap_or(input.len());
        if let Ok((_, key)) = section_header(l) {
            if let Some(o) = open.take() {
                out.push(unmarked(o, at));
            }
            open = Some((key.trim(), l, body_start(l)));
            continue;
        }
        if let Some((key, code)) = end_marker(l) {
            if let Some((k, h, from)) = open {
                if k == key {
                    out.push(Section {
                        key: k,
                        header: h,
                        body: slice(from, at),
                        end: SectionEnd::Marker(code),
                    });
                    open = None;
                    continue;
                }
            }
        }
        if open.is_none() && out.is_empty() && !is_blank(l) {
            return Err(fail(l, expected));
        }
    }
    if let Some(o) = open {
        out.push(unmarked(o, input.len()));
    }
    Ok((end_of(input), out))
}
