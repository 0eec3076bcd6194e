//! `Key: value` lines and the three shapes built from them: record lists with name lines,
//! blocks separated by blank lines, and a single structure.
use super::error::{end_of, fail, Fail, PResult};
use super::lines::{indent, is_blank, line_iter, trim, trim_end, trim_start};

/// `Key: value`, `Key: ` or `Key:` after any indentation. Splits on the first `": "`
/// because values (paths, names) contain colons, brackets and spaces.
pub(crate) fn key_value(l: &str) -> PResult<'_, (&str, &str)> {
    let i = l.trim_start_matches([' ', '\t']);
    // The first `": "`, found byte-wise: on lines this short a byte loop beats the
    // substring searcher (and nom's `take_until` built on it).
    let bytes = i.as_bytes();
    let mut from = 0;
    while let Some(c) = bytes.get(from..).and_then(|b| b.iter().position(|&x| x == b':')) {
        let at = from + c;
        if bytes.get(at + 1) == Some(&b' ') {
            let (key, value) = (i.get(..at).unwrap_or(""), i.get(at + 2..).unwrap_or(""));
            if !is_blank(key) {
                return Ok((end_of(l), (trim_end(key), trim(value))));
            }
            break;
        }
        from = at + 1;
    }
    match trim_end(i).strip_suffix(':') {
        Some(key) if !is_blank(key) => Ok((end_of(l), (trim_end(key), ""))),
        _ => Err(fail(i, "a `Key: value` line")),
    }
}

/// One `Key: value` line of a structure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field<'a> {
    pub key: &'a str,
    pub value: &'a str,
    /// The whole line, for error positions.
    pub line: &'a str,
    /// Entries of a nested list (`DVPort:` in a vDS record), each a list of fields.
    pub children: Vec<Vec<Field<'a>>>,
}

/// One `Key: value` line as a field without children.
fn field_line(l: &str) -> Result<Field<'_>, nom::Err<Fail<'_>>> {
    let (_, (key, value)) = key_value(l)?;
    Ok(Field {
        key,
        value,
        line: trim_start(l),
        children: Vec::new(),
    })
}

/// Looks a field up by name; esxcli field names are matched exactly but case-blind, as
/// option paths and names already are on the host.
pub(crate) fn find<'f, 'a>(fields: &'f [Field<'a>], key: &str) -> Option<&'f Field<'a>> {
    fields.iter().find(|f| f.key.eq_ignore_ascii_case(key))
}

pub(crate) fn value<'a>(fields: &[Field<'a>], key: &str) -> Option<&'a str> {
    find(fields, key).map(|f| f.value)
}

/// A record of a structure list: the name line and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record<'a> {
    pub name: &'a str,
    pub name_line: &'a str,
    pub fields: Vec<Field<'a>>,
}

/// A list of structures (`vm process list`, `ip interface list`, `vswitch ... list`):
///
/// ```text
/// vmk1
///    Name: vmk1
///    DVPort:
///          Client: vmnic2
///       
///          Client: vmk1
/// ```
///
/// A record starts at an unindented line after a blank (or whitespace-only) line, or at
/// any unindented line once the record's fields are indented; so the name line and the
/// blank separator may both be missing where copies lost them, and pasted copies that lost
/// all indentation still split at blank lines. Deeper-indented lines belong to the nested
/// list of the field above them; an entry ends where one of its keys comes again (blank or
/// whitespace-only lines between entries are cosmetic and never split an entry).
pub(crate) fn records(input: &str) -> PResult<'_, Vec<Record<'_>>> {
    let mut out: Vec<Record<'_>> = Vec::new();
    let mut separated = true;
    let mut base: Option<usize> = None;
    for l in line_iter(input) {
        if is_blank(l) {
            separated = true;
            continue;
        }
        let ind = indent(l);
        let starts_record = out.is_empty() || (ind == 0 && (separated || base.is_some_and(|b| b > 0)));
        if starts_record {
            if ind > 0 {
                return Err(fail(l, "a record name line (not indented)"));
            }
            out.push(Record {
                name: trim(l),
                name_line: l,
                // Room for a whole record: esxcli records have a dozen fields or fewer.
                fields: Vec::with_capacity(12),
            });
            base = None;
            separated = false;
            continue;
        }
        let field = field_line(l)?;
        let Some(rec) = out.last_mut() else {
            return Err(fail(l, "a record name line (not indented)"));
        };
        push_field(&mut rec.fields, &mut base, ind, field);
        separated = false;
    }
    Ok((end_of(input), out))
}

/// Each record names itself twice (the name line and its `Name:` field): a name line that
/// reads as a field (a copy whose indentation was flattened) or disagrees with `Name:` is a
/// layout a parser would only be guessing at, so it is an error.
pub(crate) fn check_record_names<'a>(recs: &[Record<'a>], expected: &'static str) -> Result<(), nom::Err<Fail<'a>>> {
    for r in recs {
        let t = r.name.trim();
        let key_like = t.ends_with(':') || t.contains(": ");
        let named = find(&r.fields, "Name").map(|f| f.value.trim());
        if key_like || named.is_some_and(|n| n != t) {
            return Err(fail(r.name_line, expected));
        }
    }
    Ok(())
}

/// Adds a field at its nesting level (see [`records`]).
fn push_field<'a>(fields: &mut Vec<Field<'a>>, base: &mut Option<usize>, ind: usize, field: Field<'a>) {
    let b = *base.get_or_insert(ind);
    if ind > b {
        if let Some(parent) = fields.last_mut() {
            // An entry ends where its first key comes again: a blank line inside an entry
            // (a wrapped copy) must not split one port's `Client:` from its `Port ID:`.
            let new_entry = parent.children.last().is_none_or(|e| find(e, field.key).is_some());
            if new_entry {
                parent.children.push(Vec::new());
            }
            if let Some(entry) = parent.children.last_mut() {
                entry.push(field);
                return;
            }
        }
    }
    fields.push(field);
}

/// Blocks of `Key: value` lines separated by blank lines, without name lines
/// (`network vm port list`, and the single structure of a `get` command).
pub(crate) fn blocks(input: &str) -> PResult<'_, Vec<Vec<Field<'_>>>> {
    let mut out: Vec<Vec<Field<'_>>> = Vec::new();
    let mut separated = true;
    for l in line_iter(input) {
        if is_blank(l) {
            separated = true;
            continue;
        }
        let field = field_line(l)?;
        match out.last_mut() {
            Some(block) if !separated && find(block, field.key).is_none() => block.push(field),
            _ => {
                // Room for a whole block, as for a record's fields.
                let mut block = Vec::with_capacity(12);
                block.push(field);
                out.push(block);
            }
        }
        separated = false;
    }
    Ok((end_of(input), out))
}

/// A single structure (`system version get`, `firewall get`): every non-blank line is a
/// field, with 0..n leading spaces because copies from web pages lose the indent.
pub(crate) fn structure(input: &str) -> PResult<'_, Vec<Field<'_>>> {
    let mut out = Vec::new();
    for l in line_iter(input).filter(|l| !is_blank(l)) {
        out.push(field_line(l)?);
    }
    if out.is_empty() {
        return Err(fail(input, "a `Key: value` line"));
    }
    Ok((end_of(input), out))
}
