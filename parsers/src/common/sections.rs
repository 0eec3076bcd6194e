//! `==> key <==` sections of a batched per-VM query.
use nom::bytes::complete::{tag, take_until};
use nom::combinator::all_consuming;
use nom::sequence::delimited;
use nom::Parser;

use super::error::{end_of, fail, offset_in, PResult};
use super::lines::{is_blank, lines};

/// One `==> key <==` section of a batched per-VM query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section<'a> {
    pub key: &'a str,
    pub header: &'a str,
    /// Everything up to the next header, as a sub-slice of the input.
    pub body: &'a str,
}

fn section_header(l: &str) -> PResult<'_, &str> {
    all_consuming(delimited(tag("==> "), take_until(" <=="), tag(" <=="))).parse_complete(l.trim_end())
}

/// Splits a batch into sections. Text before the first header is an error: the loop
/// prints a header before anything else, so such text means the loop itself failed.
pub(crate) fn sections<'a>(input: &'a str, expected: &'static str) -> PResult<'a, Vec<Section<'a>>> {
    let mut heads: Vec<(&str, &str)> = Vec::new();
    for l in lines(input) {
        match section_header(l) {
            Ok((_, key)) => heads.push((key.trim(), l)),
            Err(_) if heads.is_empty() && !is_blank(l) => return Err(fail(l, expected)),
            Err(_) => {}
        }
    }
    let mut out = Vec::new();
    let mut iter = heads.iter().peekable();
    while let Some(&(key, header)) = iter.next() {
        let from = offset_in(input, header).map_or(input.len(), |o| o + header.len());
        let from = if input.get(from..).is_some_and(|r| r.starts_with("\r\n")) {
            from + 2
        } else if input.get(from..).is_some_and(|r| r.starts_with('\n')) {
            from + 1
        } else {
            from
        };
        let to = iter
            .peek()
            .and_then(|(_, next)| offset_in(input, next))
            .unwrap_or(input.len());
        let body = input.get(from..to.max(from)).unwrap_or_else(|| end_of(input));
        out.push(Section { key, header, body });
    }
    Ok((end_of(input), out))
}
