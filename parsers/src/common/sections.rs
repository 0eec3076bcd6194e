//! `==> key <==` sections of a batched per-VM query.
use super::error::{end_of, fail, PResult};
use super::lines::{is_blank, split_line, trim, trim_end};

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

/// `==> key <==`: the key (untrimmed) between `==> ` and the first ` <==`, which must end
/// the line. (What nom's `all_consuming(delimited(tag, take_until, tag))` accepted.)
fn section_header(l: &str) -> Option<&str> {
    let inner = trim_end(l).strip_prefix("==> ")?;
    let (key, rest) = inner.split_once(" <==")?;
    rest.is_empty().then_some(key)
}

/// `<== key exit N ==>` (the key may itself contain ` exit `: the last one counts).
pub(crate) fn end_marker(l: &str) -> Option<(&str, u32)> {
    let inner = trim_end(l).strip_prefix("<== ")?.strip_suffix(" ==>")?;
    let (key, code) = inner.rsplit_once(" exit ")?;
    Some((trim(key), trim(code).parse().ok()?))
}

/// Splits a batch into sections. Text before the first header is an error: the loop
/// prints a header before anything else, so such text means the loop itself failed.
/// Each iteration of the catalogue's loops ends with `<== key exit N ==>`; when any section
/// has one, a section without its own is [`SectionEnd::Missing`] and its body stops at the
/// next header. Text between an end marker and the next header is not any section's.
pub(crate) fn sections<'a>(input: &'a str, expected: &'static str) -> PResult<'a, Vec<Section<'a>>> {
    // One pass over the lines, as offsets into the input (no `Vec` of lines, no
    // `offset_in`); only lines starting with `=` or `<` can be headers or end markers.
    // Sections without a marker of their own are pushed as `Legacy` and turned into
    // `Missing` at the end if any line anywhere was an end marker.
    let mut markers = false;
    let mut out: Vec<Section<'a>> = Vec::new();
    // The open section: key, header line, where its body starts.
    let mut open: Option<(&'a str, &'a str, usize)> = None;
    let slice = |from: usize, to: usize| input.get(from..to.max(from)).unwrap_or_else(|| end_of(input));
    let unmarked = |(key, header, from): (&'a str, &'a str, usize), to: usize| Section {
        key,
        header,
        body: slice(from, to),
        end: SectionEnd::Legacy,
    };
    let mut at = 0;
    while at < input.len() {
        let rest = input.get(at..).unwrap_or("");
        let (l, next) = split_line(rest);
        let line_at = at;
        at = input.len() - next.len();
        let first = l.as_bytes().first().copied();
        if first == Some(b'=') {
            if let Some(key) = section_header(l) {
                if let Some(o) = open.take() {
                    out.push(unmarked(o, line_at));
                }
                open = Some((trim(key), l, body_start(input, line_at + l.len())));
                continue;
            }
        } else if first == Some(b'<') {
            if let Some((key, code)) = end_marker(l) {
                markers = true;
                if let Some((k, h, from)) = open {
                    if k == key {
                        out.push(Section {
                            key: k,
                            header: h,
                            body: slice(from, line_at),
                            end: SectionEnd::Marker(code),
                        });
                        open = None;
                        continue;
                    }
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
    if markers {
        for s in &mut out {
            if s.end == SectionEnd::Legacy {
                s.end = SectionEnd::Missing;
            }
        }
    }
    Ok((end_of(input), out))
}

/// One answer of a batch whose query came with end markers (a per-uplink query): its key,
/// what it says or why it says nothing, and whether it was cut off.
pub(crate) struct Answer<'a, T> {
    pub key: &'a str,
    pub answer: Result<T, String>,
    pub cut_off: bool,
}

/// The sections of such a batch, each read by `read(key, body)` when its query exited 0.
/// A non-zero exit status is no answer (with the section's own error when `read` finds
/// one); a section without its end marker was cut off, whether others have theirs or not
/// (there is no capture of these queries without markers).
pub(crate) fn marked_answers<'a, T>(
    input: &'a str,
    header: &'static str,
    read: impl Fn(&str, &str) -> Result<T, String>,
) -> PResult<'a, Vec<Answer<'a, T>>> {
    let (rest, secs) = sections(input, header)?;
    let mut out = Vec::with_capacity(secs.len());
    for s in secs {
        if s.key.is_empty() {
            return Err(fail(s.header, header));
        }
        let (answer, cut_off) = match s.end {
            SectionEnd::Marker(0) => (read(s.key, s.body), false),
            SectionEnd::Marker(n) => match read(s.key, s.body) {
                Err(e) => (Err(format!("exit status {n}: {e}")), false),
                Ok(_) => (Err(format!("exit status {n}")), false),
            },
            SectionEnd::Missing | SectionEnd::Legacy => (
                Err(format!(
                    "its section has no end marker (`<== {} exit N ==>`): the output was cut off inside it",
                    s.key
                )),
                true,
            ),
        };
        out.push(Answer {
            key: s.key,
            answer,
            cut_off,
        });
    }
    Ok((rest, out))
}

/// Where a section's body starts: after its header line (which ends at `from`) and the
/// header's `\r\n` or `\n`.
fn body_start(input: &str, from: usize) -> usize {
    if input.get(from..).is_some_and(|r| r.starts_with("\r\n")) {
        from + 2
    } else if input.get(from..).is_some_and(|r| r.starts_with('\n')) {
        from + 1
    } else {
        from
    }
}
