//! The entry point of every parser: an output that is an error message (esxcli's, the
//! shell's) is refused as such, anything else is parsed whole, and a failure becomes the
//! public [`ParseError`] once.
use crate::ParseError;
use nom::combinator::all_consuming;
use nom::Parser;

use super::error::{end_of, to_parse_error, Fail};
use super::lines::{is_blank, line_iter};
use super::records::key_value;

/// Runs a whole-input parser and converts its failure, once, into a [`ParseError`].
pub(crate) fn run<'a, T, P>(command: &'static str, input: &'a str, parser: P) -> Result<T, ParseError>
where
    P: Parser<&'a str, Output = T, Error = Fail<'a>>,
{
    if let Some(e) = error_text(input) {
        return Err(to_parse_error(command, input, &e));
    }
    match all_consuming(parser).parse_complete(input) {
        Ok((_, value)) => Ok(value),
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => Err(to_parse_error(command, input, &e)),
        Err(nom::Err::Incomplete(_)) => Err(to_parse_error(
            command,
            input,
            &Fail {
                at: end_of(input),
                expected: "more output (it ended early)",
                named: true,
            },
        )),
    }
}

/// Output that is an error message instead of data: esxcli's `Error: ...` or the shell's
/// `-sh: esxcli: not found`. Never let those pass as (empty) data.
pub(crate) fn error_text(input: &str) -> Option<Fail<'_>> {
    let mut filled = line_iter(input).filter(|l| !is_blank(l));
    let first = filled.next()?;
    let t = first.trim_start();
    // A record list whose first record is named `Error: ...` (a VM can be called that) is
    // followed by indented `Key: value` fields; esxcli's own error is not.
    let record_follows = filled
        .next()
        .is_some_and(|l| l.starts_with([' ', '\t']) && key_value(l).is_ok());
    if (t.starts_with("Error:") || t.starts_with("Error ")) && !record_follows {
        return Some(Fail {
            at: t,
            expected: "command output, not an esxcli `Error:` message",
            named: true,
        });
    }
    let shell = ["-sh:", "sh:", "/bin/sh:", "-ash:", "ash:"];
    if shell.iter().any(|p| t.starts_with(p)) && t.contains("not found") {
        return Some(Fail {
            at: t,
            expected: "command output, not a shell `not found` error (is this an ESXi host?)",
            named: true,
        });
    }
    None
}
