//! Lines as sub-slices of the input (so errors keep their positions).
use nom::bytes::complete::take_till;
use nom::character::complete::char;
use nom::combinator::{eof, not, opt};
use nom::multi::many0;
use nom::sequence::{preceded, terminated};
use nom::Parser;

use super::error::{end_of, offset_in, PResult};

/// One line without its `\n` (and without the `\r` of a CRLF ending).
fn line(i: &str) -> PResult<'_, &str> {
    let (i, l) = preceded(not(eof), terminated(take_till(|c| c == '\n'), opt(char('\n')))).parse_complete(i)?;
    Ok((i, l.strip_suffix('\r').unwrap_or(l)))
}

/// The input's lines, each a sub-slice of it. A final `\n` does not make an extra line.
pub(crate) fn lines(input: &str) -> Vec<&str> {
    many0(line).parse_complete(input).map(|(_, v)| v).unwrap_or_default()
}

pub(crate) fn is_blank(l: &str) -> bool {
    l.trim().is_empty()
}

/// Width of the leading whitespace, in bytes (spaces and tabs are both one byte).
pub(super) fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// The part of `input` that follows `l` (a line of it), for errors "after this line".
pub(super) fn after_line<'a>(input: &'a str, l: &'a str) -> &'a str {
    let rest = offset_in(input, l)
        .and_then(|o| input.get(o + l.len()..))
        .unwrap_or_else(|| end_of(input));
    rest.strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))
        .unwrap_or(rest)
}
