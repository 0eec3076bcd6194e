use super::*;
use proptest::prelude::*;

fn names(s: &str) -> Vec<String> {
    expand(s).unwrap()
}

fn err(s: &str) -> SyntaxError {
    match expand(s) {
        Err(NodeSetError::Syntax(e)) => e,
        other => panic!("{s}: {other:?}"),
    }
}

#[test]
fn clustershell_syntax() {
    assert_eq!(names("esx01,esx02"), ["esx01", "esx02"]);
    assert_eq!(names("esx02,esx01"), ["esx02", "esx01"]);
    assert_eq!(names("esx[1-9/4]"), ["esx1", "esx5", "esx9"]);
    assert_eq!(names("esx[01-10/3]"), ["esx01", "esx04", "esx07", "esx10"]);
    assert_eq!(names("esx[1-2,7],db[1-2]"), ["esx1", "esx2", "esx7", "db1", "db2"]);
    assert_eq!(
        names("r[1-2]n[01-02].lab"),
        ["r1n01.lab", "r1n02.lab", "r2n01.lab", "r2n02.lab"]
    );
    assert_eq!(names("root@esx[1-2]:2222"), ["root@esx1:2222", "root@esx2:2222"]);
    // Blanks ClusterShell strips.
    assert_eq!(names("esx01, esx02"), ["esx01", "esx02"]);
    assert_eq!(names("esx[ 7-8]"), ["esx7", "esx8"]);
    // Digits next to a bracket join its numbers, as in ClusterShell.
    assert_eq!(names("esx1[8-9]"), ["esx18", "esx19"]);
    assert_eq!(names("esx[1-2]0"), ["esx10", "esx20"]);
}

#[test]
fn set_operators_evaluate_left_to_right() {
    assert_eq!(names("esx[1-5]!esx3"), ["esx1", "esx2", "esx4", "esx5"]);
    assert_eq!(names("esx[1-5]&esx[4-9]"), ["esx4", "esx5"]);
    assert_eq!(names("esx[1-3]^esx[3-4]"), ["esx1", "esx2", "esx4"]);
    // `a!b,c` is `(a!b),c`: left to right, no precedence.
    assert_eq!(names("esx[1-3]!esx2,esx2"), ["esx1", "esx2", "esx3"]);
    assert_eq!(names("esx[1-3],esx4!esx[1-2]"), ["esx3", "esx4"]);
}

#[test]
fn padding_rules_are_clustershells() {
    assert!(err("esx[1-010]").reason.contains("padding"));
    assert!(err("esx[001-10]").reason.contains("padding"));
    assert_eq!(names("esx[01-10]").len(), 10);
    assert_eq!(names("esx[9,09-10]"), ["esx9", "esx09", "esx10"]);
}

#[test]
fn errors_point_at_the_character() {
    let e = err("esx[a-c]");
    assert_eq!(e.at, 4);
    assert!(e.reason.contains("letter"), "{e}");
    assert_eq!(err("esx[1-3").at, 3);
    assert_eq!(err("esx1-3]").at, 6);
    assert_eq!(err("esx[5-1]").at, 4);
    assert_eq!(err("esx[1-9/0]").at, 8);
    assert_eq!(err("esx01,,esx02").at, 6);
    assert_eq!(err("esx[1-x]").at, 6);
    assert_eq!(err("esx[]").at, 4);
    let slash = err("esx[1/2]");
    assert_eq!(slash.at, 5, "{slash}");
    assert!(slash.reason.contains("step needs a range"), "{slash}");
    let colon = err("esx[1:4]");
    assert_eq!(colon.at, 5, "{colon}");
    assert!(colon.reason.contains("1-4"), "{colon}");
    assert!(err("esx[1-2][3]").reason.contains("right after"));
    assert!(err("esx01,").reason.contains("missing"));
    assert!(err("esx01!").reason.contains("both sides"));
    let shown = err("esx[1-3,b]").to_string();
    assert_eq!(shown.lines().nth(1), Some("    esx[1-3,b]"));
    assert_eq!(shown.lines().nth(2), Some("            ^"), "{shown}");
    assert!(matches!(expand("esx[1-99999]"), Err(NodeSetError::TooMany(_))));
    assert!(matches!(expand("a[1-200]b[1-200]"), Err(NodeSetError::TooMany(_))));
}

#[test]
fn a_group_without_configuration_is_an_error() {
    let e = err("@esxi");
    assert_eq!(e.at, 0);
    match expand_with("esx01,@esxi", &mut NoGroups) {
        Err(NodeSetError::Syntax(e)) => {
            assert_eq!(e.at, 6);
            assert!(e.reason.contains("@esxi"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn folding_reads_like_nodeset_f() {
    let hosts: Vec<String> = (1..=40).map(|n| format!("esx{n:02}")).collect();
    assert_eq!(fold(&hosts), "esx[01-40]");
    assert_eq!(fold(&["esx01", "esx02", "esx05", "db1"]), "db1,esx[01-02,05]");
    assert_eq!(fold(&["esx9", "esx10", "esx11"]), "esx[9-11]");
    assert_eq!(fold(&["esx09", "esx10", "esx9"]), "esx[9,09-10]");
    assert_eq!(fold(&["esx01"]), "esx01");
    assert_eq!(fold(&["bastion", "esx1.lab", "esx2.lab"]), "bastion,esx[1-2].lab");
    assert_eq!(fold(&["esx01:2222", "esx02:2222"]), "esx[01-02]:2222");
    assert_eq!(fold(&["esx01.dc1", "esx02.dc1"]), "esx[01-02].dc1");
    assert_eq!(fold(&["r1n01", "r1n02", "r2n01", "r2n02"]), "r[1-2]n[01-02]");
    assert_eq!(fold(&["[fe80::1]:22", "esx1"]), "esx1,[fe80::1]:22");
}

#[test]
fn long_sets_break_at_commas_into_sets_that_paste_back() {
    let hosts: Vec<String> = (1..=200).filter(|n| n % 3 != 0).map(|n| format!("esx{n:03}")).collect();
    let folded = fold(&hosts);
    assert!(folded.len() > 300, "{folded}");
    let lines = break_lines(&folded, 30, 60).unwrap();
    assert!(lines.len() > 4);
    for l in &lines {
        assert!(l.chars().count() <= 60, "{l}");
    }
    let mut back = names(&lines.join("\n    "));
    back.sort();
    let mut want = hosts.clone();
    want.sort();
    assert_eq!(back, want);
    assert_eq!(break_lines("esx[01-02]", 80, 80).unwrap(), ["esx[01-02]"]);
    assert!(break_lines("not a set [", 10, 10).is_none());
}

proptest! {
    /// Folding then expanding gives back the same names (as a set).
    #[test]
    fn fold_round_trips(nums in proptest::collection::vec((0u64..300, 0usize..4, 0u64..3), 1..40), prefix in "[a-z]{1,4}") {
        let names: Vec<String> = nums.iter().map(|(n, w, r)| format!("{prefix}{r}n{n:0w$}")).collect();
        let folded = fold(&names);
        let mut back = expand(&folded).unwrap();
        back.sort();
        back.dedup();
        let mut want = names.clone();
        want.sort();
        want.dedup();
        prop_assert_eq!(back, want, "folded: {}", folded);
    }

    /// Any text at all gives names or an error that points inside the text; never a panic.
    #[test]
    fn any_text_expands_or_points_at_its_error(text in "[a-c0-9\\[\\]\\-,!&^/: _%é@*?]{0,24}") {
        match expand(&text) {
            Ok(names) => prop_assert!(names.len() <= MAX_NAMES),
            Err(NodeSetError::Syntax(e)) => prop_assert!(e.at <= text.chars().count(), "{}", e),
            Err(NodeSetError::TooMany(_)) => {}
        }
        let _ = break_lines(&text, 5, 5);
        let _ = fold(&[text.as_str(), "esx01"]);
    }
}
