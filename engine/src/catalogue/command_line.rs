//! The command lines of the concurrent batches: built from a catalogue row and its keys,
//! and read back into the keys they were built for.
use super::{spec, CommandSpec, Keys, CATALOGUE, VMX_PVRDMA_LINES};

/// The command line of the batch `id` over `keys` (World IDs for the port list,
/// `<World ID>_<index>` nodes for the properties, uplink names such as `vmnic2` for DCB,
/// `.vmx` paths for the inventory): the spec's functions, then `b KEY...`. `None` for an
/// id that is no batch, no key, or a key that cannot reach a shell intact: a key read
/// from a listing must be ASCII letters, digits and `_`; a path is single-quoted and
/// must not hold a newline or NUL.
pub fn batch_command(id: &str, keys: &[String]) -> Option<String> {
    let spec = spec(id)?;
    let batch = spec.batch()?;
    let functions = batch_functions_of(spec)?;
    if keys.is_empty() {
        return None;
    }
    if batch.keys == Keys::ConfigFiles {
        if keys.iter().any(|p| p.is_empty() || p.contains(['\n', '\0'])) {
            return None;
        }
        let quoted: Vec<String> = keys.iter().map(|p| sh_single_quote(p)).collect();
        return Some(batch_line(functions, quoted.iter().map(String::as_str)));
    }
    let valid = |k: &String| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !keys.iter().all(valid) {
        return None;
    }
    Some(batch_line(functions, keys.iter().map(String::as_str)))
}

/// `functions` then `b` and the shell words.
pub(super) fn batch_line<'w>(functions: &str, words: impl Iterator<Item = &'w str> + Clone) -> String {
    let len = functions.len() + words.clone().map(|w| w.len() + 1).sum::<usize>() + 1;
    let mut line = String::with_capacity(len);
    line.push_str(functions);
    line.push('b');
    for word in words {
        line.push(' ');
        line.push_str(word);
    }
    line
}

/// The keys a batch command line was built for, in the order of its `b` call (the
/// inverse of [`batch_command`] and [`vmx_lines_command`]), with the batch's id; `None`
/// for any other command line.
pub fn batch_keys(command: &str) -> Option<(&'static str, Vec<String>)> {
    if let Some(paths) = vmx_lines_keys(command) {
        return Some((VMX_PVRDMA_LINES, paths));
    }
    CATALOGUE.iter().filter(|s| s.is_listing_batch()).find_map(|spec| {
        let functions = batch_functions_of(spec)?;
        let keys = command.strip_prefix(functions)?.strip_prefix("b ")?;
        Some((spec.id, keys.split(' ').map(str::to_string).collect()))
    })
}

/// How a message names one query of a batch: "vsish properties of 1000900010_1".
pub fn batch_item_label(id: &str, key: &str) -> String {
    match spec(id).and_then(|s| s.batch()) {
        Some(b) => format!("{} {key}", b.item),
        None => format!("{id} of {key}"),
    }
}

/// The functions of a batch spec's command line (everything before its `b ...` call).
pub(super) fn batch_functions_of(spec: &CommandSpec) -> Option<&'static str> {
    spec.command.rsplit_once("b ").map(|(f, _)| f)
}

/// POSIX-sh single quotes: the text as one word, whatever it holds (spaces, brackets,
/// colons, `$`); an embedded `'` is closed, escaped and reopened.
fn sh_single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The `.vmx` inventory for these Config File paths, taken from the `vm process list`
/// the host already answered (so it is not run a second time): [`vmx_functions`], then
/// `b` and the quoted paths. `None` when a path cannot be one shell word (a newline).
pub fn vmx_lines_command(paths: &[String]) -> Option<String> {
    batch_command(VMX_PVRDMA_LINES, paths)
}

/// The paths of a [`vmx_lines_command`] line, in order; `None` for any other line.
fn vmx_lines_keys(command: &str) -> Option<Vec<String>> {
    let mut rest = command.strip_prefix(vmx_functions!())?.strip_prefix("b ")?;
    let mut keys = Vec::new();
    loop {
        // One word: single-quoted runs, joined by `\'` (an escaped quote).
        let mut word = String::new();
        let mut quoted = false;
        loop {
            if let Some(r) = rest.strip_prefix('\'') {
                let end = r.find('\'')?;
                word.push_str(r.get(..end)?);
                rest = r.get(end + 1..)?;
                quoted = true;
            } else if let Some(r) = rest.strip_prefix("\\'") {
                word.push('\'');
                rest = r;
                quoted = true;
            } else {
                break;
            }
        }
        if !quoted {
            return None;
        }
        keys.push(word);
        if rest.is_empty() {
            return Some(keys);
        }
        rest = rest.strip_prefix(' ')?;
    }
}
