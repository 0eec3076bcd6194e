//! The client side of a concurrent batch's framing (the host side is
//! `catalogue::frame_functions`): the tagged lines of all its queries, in whatever order
//! the host's jobs wrote them, sorted back into one `==> KEY <==` section per key, in the
//! order of the command line, each ended by `<== KEY exit N ==>` only when its answer
//! arrived whole; the answers that did not are listed with the reason.
//!
//! The stream is a series of lines `N:begin KEY`, `N|TEXT`, `N:end KEY exit S lines L
//! bytes B` and `N:cut KEY lines L bytes B`, N being the key's 1-based position, and the
//! batch's own `0:started N` (the jobs of the first N keys have started). An
//! answer is whole when its end line arrived after its begin line, names its key, and
//! its line count and size match the records that arrived for it. A line that is no
//! well-formed record means that concurrent writes were spliced (a record longer than
//! the pipe's atomic write size written in pieces): every answer still open at that
//! point may have lost a piece or gained one, so none of them is trusted.
//!
//! It reads bytes a host chose and does no I/O, so it lives with the capture model, where
//! the fuzz harness reaches it.
use super::UnfinishedSection;

/// Where a line of an answer lies in the stream: answers keep places, not copies, so a
/// [`Reader`] can go on with a stream that has grown since it last read it.
type Span = std::ops::Range<usize>;

/// One key's answer as the stream built it.
#[derive(Debug)]
enum Answer {
    /// Nothing of it yet: its job had not started (all slots were taken), or had printed
    /// nothing (a job's first write carries its begin line with its first records; the
    /// batch's `0:started N` lines tell the two apart).
    Waiting,
    /// Begun, records so far.
    Open(Vec<Span>),
    /// Ended whole: the query's exit status and its lines.
    Ended(u32, Vec<Span>),
    /// The host stopped reading it at the per-query cap.
    Cut(Vec<Span>),
    /// Something arrived that the framing does not allow: never evidence.
    Damaged(Vec<Span>, String),
}

/// The batch's sections as text and the keys whose answer did not arrive whole.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    /// One `==> KEY <==` section per key, in the command line's order.
    pub stdout: String,
    /// The keys whose answer did not arrive whole, in the same order, with why.
    pub unfinished: Vec<UnfinishedSection>,
}

/// Sorts the framed stream `raw` of a batch over `keys` back into sections. `problem` is
/// how the command itself ended when not cleanly ("did not finish within
/// --command-timeout 60s"): it is the reason for every answer still open or not begun.
pub fn decode(keys: &[String], raw: &[u8], problem: Option<&str>) -> Decoded {
    let answers = Reader::new(keys.len()).finish(keys, raw, problem);
    render(keys, raw, answers, problem)
}

/// One answer of a framed stream, on its own: how a group of whole commands sent on one
/// channel gives each command its own output.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KeyAnswer {
    /// What arrived of it, each line ended by a newline.
    pub text: String,
    /// The query's exit status, when its answer arrived whole.
    pub exit: Option<u32>,
    /// Why it did not arrive whole; `None` when it did.
    pub unfinished: Option<String>,
    /// The host stopped reading it at the per-query cap ([`crate::catalogue::SECTION_CAP`]).
    pub cut: bool,
}

/// Each key's answer in the framed stream `raw`, in key order; `problem` as for
/// [`decode`].
pub fn answers(keys: &[String], raw: &[u8], problem: Option<&str>) -> Vec<KeyAnswer> {
    Reader::new(keys.len()).answers(keys, raw, problem)
}

/// A framed stream read as it arrives: each call to [`Reader::read`] reads only the whole
/// lines that came since the last one, so following a channel costs one pass over its
/// output however often it is looked at, and an answer is known whole the moment its end
/// line is read. Read in pieces, a stream ends with the answers it gives read at once; an
/// answer whole when its end line was read stays reported even if a later line of it (a
/// framing error) damages it.
#[derive(Debug)]
pub struct Reader {
    answers: Vec<Answer>,
    /// How many of the first keys' jobs the batch says it started.
    started: usize,
    /// The stream up to here (whole lines) has been read.
    read: usize,
}

impl Reader {
    /// A reader of the stream of a batch over `count` keys.
    pub fn new(count: usize) -> Self {
        Reader {
            answers: (0..count).map(|_| Answer::Waiting).collect(),
            started: 0,
            read: 0,
        }
    }

    /// Reads the whole lines of `raw` (the stream so far, which only ever grows) not read
    /// yet; returns the keys (0-based) whose answer they ended whole and that are still
    /// whole after them (a line of the answer arriving after its end damages it).
    pub fn read(&mut self, keys: &[String], raw: &[u8]) -> Vec<usize> {
        debug_assert!(raw.len() >= self.read, "a framed stream only grows");
        let mut ended = Vec::new();
        let mut from = self.read;
        while let Some(len) = raw.get(from..).and_then(|rest| rest.iter().position(|&b| b == b'\n')) {
            let line = from..from + len;
            from = line.end + 1;
            if let Some(n) = self.line(keys, raw, line) {
                ended.push(n);
            }
        }
        self.read = from;
        ended.retain(|&n| matches!(self.answers.get(n), Some(Answer::Ended(..))));
        ended
    }

    /// Answer `n` as its command's own output, when it has ended whole.
    pub fn whole(&self, raw: &[u8], n: usize) -> Option<KeyAnswer> {
        match self.answers.get(n)? {
            Answer::Ended(exit, lines) => {
                let mut text = Vec::new();
                push_lines(&mut text, &trimmed(raw, lines));
                Some(KeyAnswer {
                    text: into_text(text),
                    exit: Some(*exit),
                    unfinished: None,
                    cut: false,
                })
            }
            _ => None,
        }
    }

    /// Every key's answer once the stream has ended (`raw` whole, `problem` as for
    /// [`decode`]), in key order.
    pub fn answers(self, keys: &[String], raw: &[u8], problem: Option<&str>) -> Vec<KeyAnswer> {
        self.finish(keys, raw, problem)
            .into_iter()
            .map(|answer| {
                let cut = matches!(answer, Answer::Cut(_));
                let (exit, lines, unfinished) = settle(answer, raw, problem);
                let mut text = Vec::new();
                push_lines(&mut text, &lines);
                KeyAnswer {
                    text: into_text(text),
                    exit,
                    unfinished,
                    cut,
                }
            })
            .collect()
    }

    /// Reads the rest of the ended stream `raw`, and its last line when it lacks its
    /// newline: the stream stopped in the middle of a write (timeout, cap, lost
    /// connection), which `problem` tells; after a clean end it is a broken record.
    fn finish(mut self, keys: &[String], raw: &[u8], problem: Option<&str>) -> Vec<Answer> {
        self.read(keys, raw);
        if raw.len() > self.read && problem.is_none() {
            self.splice();
        }
        // Started, nothing printed yet: open, not waiting for a slot.
        for answer in self.answers.iter_mut().take(self.started) {
            if matches!(answer, Answer::Waiting) {
                *answer = Answer::Open(Vec::new());
            }
        }
        self.answers
    }

    /// One whole line of the stream (`line`, its place in `raw`, newline excluded); the
    /// key it ended whole, if it did.
    fn line(&mut self, keys: &[String], raw: &[u8], line: Span) -> Option<usize> {
        let text = raw.get(line.clone())?;
        if let Some(n) = started_line(text) {
            self.started = self.started.max(n.min(keys.len()));
            return None;
        }
        let Some((n, parsed)) = record(keys, text) else {
            self.splice();
            return None;
        };
        let answer = self.answers.get_mut(n)?;
        match parsed {
            Record::Text(at) => match answer {
                Answer::Open(lines) => lines.push(line.start + at..line.end),
                _ => damage(answer, "a line of it arrived outside its begin and end lines"),
            },
            Record::Begin => match answer {
                Answer::Waiting => *answer = Answer::Open(Vec::new()),
                _ => damage(answer, "its begin line arrived twice"),
            },
            Record::End(exit, count, size) => {
                end(answer, raw, exit, count, size);
                return matches!(answer, Answer::Ended(..)).then_some(n);
            }
            Record::Cut => match std::mem::replace(answer, Answer::Waiting) {
                Answer::Open(lines) => *answer = Answer::Cut(lines),
                other => {
                    *answer = other;
                    damage(answer, "its cut line arrived outside its answer");
                }
            },
        }
        None
    }

    /// A line that is no well-formed record: any answer still open may have lost a piece
    /// or gained one.
    fn splice(&mut self) {
        for answer in self.answers.iter_mut().filter(|a| matches!(a, Answer::Open(_))) {
            damage(
                answer,
                "the batch's output held a line that is no whole record (answers written at the same time were spliced), which may be a piece of this answer",
            );
        }
    }
}

/// The lines of `spans` in `raw`.
fn lines_of<'a>(raw: &'a [u8], spans: &[Span]) -> Vec<&'a [u8]> {
    spans.iter().map(|s| raw.get(s.clone()).unwrap_or_default()).collect()
}

/// A whole answer's lines without its trailing blank lines, as a shell's command
/// substitution drops them.
fn trimmed<'a>(raw: &'a [u8], spans: &[Span]) -> Vec<&'a [u8]> {
    let mut lines = lines_of(raw, spans);
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// An answer's exit status when whole, what arrived of it, and why it is not whole.
fn settle<'a>(answer: Answer, raw: &'a [u8], problem: Option<&str>) -> (Option<u32>, Vec<&'a [u8]>, Option<String>) {
    match answer {
        Answer::Ended(exit, lines) => (Some(exit), trimmed(raw, &lines), None),
        Answer::Waiting => (None, Vec::new(), Some(waiting_reason(problem))),
        Answer::Open(lines) => (None, lines_of(raw, &lines), Some(open_reason(problem))),
        Answer::Cut(lines) => (
            None,
            lines_of(raw, &lines),
            Some(format!(
                "printed more than {} KiB, the most one query may print; the host stopped reading it",
                crate::catalogue::SECTION_CAP / 1024
            )),
        ),
        Answer::Damaged(lines, why) => (None, lines_of(raw, &lines), Some(format!("arrived damaged: {why}"))),
    }
}

fn into_text(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// `0:started N`: the batch has started the jobs of its first N keys.
fn started_line(line: &[u8]) -> Option<usize> {
    std::str::from_utf8(line.strip_prefix(b"0:started ")?)
        .ok()?
        .parse()
        .ok()
}

/// One line of the stream: the key's index (0-based) and what it says.
enum Record {
    Begin,
    /// A line of the answer: where its text starts in the record.
    Text(usize),
    End(u32, usize, usize),
    Cut,
}

fn record(keys: &[String], line: &[u8]) -> Option<(usize, Record)> {
    let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
    let n: usize = std::str::from_utf8(line.get(..digits)?).ok()?.parse().ok()?;
    let key = keys.get(n.checked_sub(1)?)?;
    let rest = line.get(digits..)?;
    if rest.starts_with(b"|") {
        return Some((n - 1, Record::Text(digits + 1)));
    }
    let rest = std::str::from_utf8(rest.strip_prefix(b":")?).ok()?;
    let (word, rest) = rest.split_once(' ')?;
    let rest = rest.strip_prefix(key.as_str())?;
    let numbers = |rest: &str, names: &[&str]| -> Option<Vec<usize>> {
        let words: Vec<&str> = rest.split(' ').collect();
        if words.len() != names.len() * 2 + 1 || words.first() != Some(&"") {
            return None;
        }
        let mut out = Vec::new();
        for (pair, name) in words.get(1..)?.chunks(2).zip(names) {
            if pair.first() != Some(name) {
                return None;
            }
            out.push(pair.get(1)?.parse().ok()?);
        }
        Some(out)
    };
    let record = match word {
        "begin" if rest.is_empty() => Record::Begin,
        "end" => match numbers(rest, &["exit", "lines", "bytes"])?.as_slice() {
            [exit, count, size] => Record::End(u32::try_from(*exit).ok()?, *count, *size),
            _ => return None,
        },
        "cut" => {
            numbers(rest, &["lines", "bytes"])?;
            Record::Cut
        }
        _ => return None,
    };
    Some((n - 1, record))
}

/// The end line of an answer: whole when its count and size match what arrived (the
/// size in bytes, or in characters where the host's shell counts those).
fn end(answer: &mut Answer, raw: &[u8], exit: u32, count: usize, size: usize) {
    match std::mem::replace(answer, Answer::Waiting) {
        Answer::Open(lines) => {
            let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
            // Characters are counted only when the bytes do not match (a usual answer's do).
            let chars = || -> usize {
                lines
                    .iter()
                    .map(|l| raw.get(l.clone()).unwrap_or_default())
                    .map(|l| l.iter().filter(|&&b| b & 0xC0 != 0x80).count() + 1)
                    .sum()
            };
            if lines.len() == count && (size == bytes || size == chars()) {
                *answer = Answer::Ended(exit, lines);
            } else {
                let why = format!(
                    "its end line counts {count} lines and {size} bytes, but {} lines and {bytes} bytes arrived (answers written at the same time were spliced)",
                    lines.len()
                );
                *answer = Answer::Damaged(lines, why);
            }
        }
        other => {
            *answer = other;
            damage(answer, "its end line arrived outside its answer");
        }
    }
}

fn damage(answer: &mut Answer, why: &str) {
    let lines = match std::mem::replace(answer, Answer::Waiting) {
        Answer::Waiting => Vec::new(),
        Answer::Open(l) | Answer::Ended(_, l) | Answer::Cut(l) => l,
        Answer::Damaged(l, first) => {
            *answer = Answer::Damaged(l, first);
            return;
        }
    };
    *answer = Answer::Damaged(lines, why.to_string());
}

/// The sections, in key order: a whole answer with its end marker, any other with what
/// arrived of it and no end marker (so it reads as cut off), and why.
fn render(keys: &[String], raw: &[u8], answers: Vec<Answer>, problem: Option<&str>) -> Decoded {
    let mut out = Decoded::default();
    let mut text: Vec<u8> = Vec::new();
    for (key, answer) in keys.iter().zip(answers) {
        text.extend_from_slice(format!("==> {key} <==\n").as_bytes());
        let (exit, lines, reason) = settle(answer, raw, problem);
        push_lines(&mut text, &lines);
        match (exit, reason) {
            (_, Some(reason)) => out.unfinished.push(UnfinishedSection {
                key: key.clone(),
                reason,
            }),
            (Some(exit), None) => text.extend_from_slice(format!("<== {key} exit {exit} ==>\n").as_bytes()),
            (None, None) => {}
        }
    }
    out.stdout = into_text(text);
    out
}

fn push_lines(text: &mut Vec<u8>, lines: &[&[u8]]) {
    for l in lines {
        text.extend_from_slice(l);
        text.push(b'\n');
    }
}

fn waiting_reason(problem: Option<&str>) -> String {
    match problem {
        Some(p) => format!("{p} (it had not started: every slot of the batch was taken)"),
        None => "never started: the batch ended without running it".to_string(),
    }
}

fn open_reason(problem: Option<&str>) -> String {
    match problem {
        Some(p) => p.to_string(),
        None => "ended without its end line: its job on the host was killed".to_string(),
    }
}

/// The framed stream a host's batch prints for whole answers `(key, text, exit status)`
/// finishing in this order (the demo's simulated hosts answer with it).
pub fn encode(keys: &[String], answers: &[(usize, &str, u32)]) -> String {
    let mut out = String::new();
    for (n, text, exit) in answers {
        let Some(key) = keys.get(*n) else { continue };
        let i = n + 1;
        out.push_str(&format!("{i}:begin {key}\n"));
        let mut size = 0;
        let lines: Vec<&str> = if text.is_empty() {
            Vec::new()
        } else {
            text.strip_suffix('\n').unwrap_or(text).split('\n').collect()
        };
        for l in &lines {
            out.push_str(&format!("{i}|{l}\n"));
            size += l.len() + 1;
        }
        out.push_str(&format!(
            "{i}:end {key} exit {exit} lines {} bytes {size}\n",
            lines.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests;
