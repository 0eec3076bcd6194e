//! A misspelt subcommand (`demoo`, `analyse DIR`) reads as a host name; it is pointed out
//! only when the line cannot be hosts or the name does not resolve, so a real host called
//! `demoo` still works.

/// `pvrdma-doctor <subcommand> <rest>` when the first host word is one edit (a letter
/// added, dropped, changed, or two swapped) away from a subcommand's name.
pub(super) fn meant_subcommand(hosts: &[String]) -> Option<String> {
    let (first, rest) = hosts.split_first()?;
    let name = ["analyze", "demo", "check"]
        .into_iter()
        .find(|name| *name != first && one_edit_apart(first, name))?;
    let mut line = format!("pvrdma-doctor {name}");
    for word in rest {
        line.push(' ');
        line.push_str(word);
    }
    Some(line)
}

/// Whether `a` becomes `b` by one insertion, deletion, substitution or transposition of
/// adjacent characters.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (da, db) = (a.len() - prefix - suffix, b.len() - prefix - suffix);
    match (da, db) {
        (0, 1) | (1, 0) | (1, 1) => true,
        (2, 2) => a.get(prefix) == b.get(prefix + 1) && a.get(prefix + 1) == b.get(prefix),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_one_edit_from_a_subcommand_is_pointed_out() {
        let hosts = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            meant_subcommand(&hosts(&["demoo"])).as_deref(),
            Some("pvrdma-doctor demo")
        );
        assert_eq!(
            meant_subcommand(&hosts(&["analyse", "samples/x"])).as_deref(),
            Some("pvrdma-doctor analyze samples/x")
        );
        assert_eq!(
            meant_subcommand(&hosts(&["anaylze", "d"])).as_deref(),
            Some("pvrdma-doctor analyze d")
        );
        assert_eq!(
            meant_subcommand(&hosts(&["chek"])).as_deref(),
            Some("pvrdma-doctor check")
        );
        assert_eq!(
            meant_subcommand(&hosts(&["dem"])).as_deref(),
            Some("pvrdma-doctor demo")
        );
        // Two edits away, the subcommand itself, or an ordinary host name: nothing.
        for word in ["deemoo", "demo", "esx01", "memos", ""] {
            assert_eq!(meant_subcommand(&hosts(&[word])), None, "{word}");
        }
        assert_eq!(meant_subcommand(&[]), None);
    }
}
