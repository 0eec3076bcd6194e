//! The one error type every parser returns.
use serde::Serialize;

/// Why a command's output could not be parsed, precise enough to find the spot by eye.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{command}: line {line}, column {column}: expected {expected}, found {snippet:?}")]
pub struct ParseError {
    /// The catalogue id of the command whose output this is (e.g. `esxcli_rdma_device_list`).
    pub command: &'static str,
    /// 1-based line number in the output.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What the parser expected at that spot, e.g. "a dash row under the header".
    pub expected: &'static str,
    /// The offending line, cut to at most 80 characters.
    pub snippet: String,
}

impl ParseError {
    /// Where the output stopped parsing and why, without the command's id (for a message
    /// that already names the command as a user types it): `line 2, column 1: expected a
    /// dash row under the header, found ""`.
    pub fn spot(&self) -> String {
        format!(
            "line {}, column {}: expected {}, found {:?}",
            self.line, self.column, self.expected, self.snippet
        )
    }
}
