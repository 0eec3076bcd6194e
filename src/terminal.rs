//! What the front ends know of the terminal they run on, read once per invocation: the
//! engine is given widths and colour, it never looks at the terminal itself.
use std::io::IsTerminal;

/// The terminal of this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terminal {
    /// stdout is a terminal (colour with `--color auto`).
    pub stdout: bool,
    /// stderr is a terminal (the progress bar).
    pub stderr: bool,
    /// The width reports are laid out to: `$COLUMNS` when set to a number, else the width
    /// of the terminal on stdout, else [`pvrdma_engine::report::DEFAULT_WIDTH`].
    pub width: usize,
    /// `NO_COLOR` is set to something (https://no-color.org).
    pub no_color: bool,
}

impl Terminal {
    /// Looks at this process' stdout, stderr and environment.
    pub fn detect() -> Self {
        Terminal {
            stdout: std::io::stdout().is_terminal(),
            stderr: std::io::stderr().is_terminal(),
            width: stdout_width(),
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        }
    }
}

/// `$COLUMNS`, when it is set to a positive number.
fn columns_from_env() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|w| *w > 0)
}

/// The width of reports on stdout (see [`Terminal::width`]).
pub fn stdout_width() -> usize {
    columns_from_env()
        .or_else(|| terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0)))
        .unwrap_or(pvrdma_engine::report::DEFAULT_WIDTH)
}

/// `$COLUMNS` when set to a number, else the width of the terminal on stderr; `None`
/// when stderr is not a terminal (messages then stay one line each, for grep).
pub fn stderr_width() -> Option<usize> {
    columns_from_env().or_else(|| terminal_size::terminal_size_of(std::io::stderr()).map(|(w, _)| usize::from(w.0)))
}

/// A message for stderr wrapped to its terminal ([`pvrdma_engine::report::stderr_message`]).
pub fn stderr_message(prefix: &str, message: &str) -> String {
    pvrdma_engine::report::stderr_message(prefix, message, stderr_width())
}

/// Text with its own lines for stderr, wrapped to its terminal ([`pvrdma_engine::report::stderr_lines`]).
pub fn stderr_lines(text: &str) -> String {
    pvrdma_engine::report::stderr_lines(text, stderr_width())
}
