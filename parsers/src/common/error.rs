//! The internal error type [`Fail`] and its one-time conversion into the public
//! [`ParseError`] (line, column, snippet).
use crate::ParseError;
use nom::error::{ContextError, ErrorKind, FromExternalError};
use nom::IResult;

/// Where parsing stopped and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fail<'a> {
    /// A sub-slice of the input starting at the offending spot.
    pub at: &'a str,
    pub expected: &'static str,
    /// Set once a `context` (or an explicit [`fail`]) named the expectation; inner ones win
    /// because they are the most precise.
    pub(super) named: bool,
}

impl<'a> nom::error::ParseError<&'a str> for Fail<'a> {
    fn from_error_kind(input: &'a str, _kind: ErrorKind) -> Self {
        // nom's own kinds (`TakeUntil`, `Digit`) mean nothing to a user; every parser here
        // wraps its grammar pieces in a `context` that names the expectation instead.
        Fail {
            at: input,
            expected: "well-formed command output",
            named: false,
        }
    }

    fn append(_: &'a str, _: ErrorKind, other: Self) -> Self {
        other
    }
}

impl<'a> ContextError<&'a str> for Fail<'a> {
    fn add_context(_input: &'a str, ctx: &'static str, mut other: Self) -> Self {
        if !other.named {
            other.expected = ctx;
            other.named = true;
        }
        other
    }
}

impl<'a, E> FromExternalError<&'a str, E> for Fail<'a> {
    fn from_external_error(input: &'a str, kind: ErrorKind, _e: E) -> Self {
        <Self as nom::error::ParseError<&'a str>>::from_error_kind(input, kind)
    }
}

pub(crate) type PResult<'a, T> = IResult<&'a str, T, Fail<'a>>;

/// A failure at `at` that says what was expected.
pub(crate) fn fail<'a>(at: &'a str, expected: &'static str) -> nom::Err<Fail<'a>> {
    nom::Err::Error(Fail {
        at,
        expected,
        named: true,
    })
}

/// The empty slice at the very end of `input` (for "the output ended too early").
pub(crate) fn end_of(input: &str) -> &str {
    input.get(input.len()..).unwrap_or("")
}

/// Byte offset of `part` inside `whole`, when `part` really is a sub-slice of it.
pub(crate) fn offset_in(whole: &str, part: &str) -> Option<usize> {
    let off = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (off + part.len() <= whole.len()).then_some(off)
}

/// Renders a [`Fail`] as the public error: 1-based line and column, the offending line.
pub(crate) fn to_parse_error(command: &'static str, input: &str, e: &Fail<'_>) -> ParseError {
    let off = offset_in(input, e.at).unwrap_or(0);
    let before = input.get(..off).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    let line = before.matches('\n').count() + 1;
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    let snippet = input
        .get(line_start..)
        .and_then(|s| s.split('\n').next())
        .unwrap_or("")
        .trim_end_matches('\r')
        .chars()
        .take(80)
        .collect();
    ParseError {
        command,
        line,
        column,
        expected: e.expected,
        snippet,
    }
}
