//! Grammar pieces every esxcli and vsish parser shares: lines, the fixed-width table, the
//! name-line record list, `Key: value` structures and the `==> key <==` batch sections.
//!
//! Everything works on sub-slices of the one input the entry point was given, so an error
//! anywhere still points at the right line and column of the original output. That is also
//! why the internal error type [`Fail`] keeps a slice, not an owned string: it is converted
//! to the public [`ParseError`] exactly once, in [`run`].
mod error;
mod lines;
mod records;
mod run;
mod sections;
mod table;
#[cfg(test)]
mod tests;
mod values;

pub(crate) use error::{end_of, fail, offset_in, to_parse_error, PResult};
pub(crate) use lines::{is_blank, line_iter, trim, trim_start};
pub(crate) use records::{blocks, check_record_names, find, key_value, records, structure, value};
pub(crate) use run::{error_text, run};
pub(crate) use sections::{end_marker, marked_answers, sections, Section, SectionEnd};
pub(crate) use table::table;
pub use table::{table_layout, TableLayout};
pub(crate) use values::{bool01, bool_value, list_value, non_empty, non_na};
