use super::text::*;
use super::*;
use crate::capture::{ErrorKind, Failure};
use crate::diagnose::{Summary, Vm};

#[test]
fn text_from_a_host_cannot_reach_the_terminal_as_escape_sequences() {
    let hostile = "evil\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J";
    let host = HostDiagnosis {
        host: "esx01".to_string(),
        status: HostStatus::Error,
        error: Some(Failure::new(
            ErrorKind::KeyExchange,
            format!("no common algorithm; server offers {hostile}"),
        )),
        esxi_version: None,
        checks: Vec::new(),
        vms: vec![Vm {
            name: hostile.to_string(),
            world_id: Some(1),
            config_file: None,
            adapters: Vec::new(),
        }],
        adapters_error: Some(hostile.to_string()),
        vms_error: None,
        incomplete_outputs: Vec::new(),
        pvrdma_vmknic: None,
        fleet_failures: Vec::new(),
        record_errors: Vec::new(),
    };
    let d = Diagnosis {
        hosts: vec![host],
        fleet_checks: Vec::new(),
        transport: Default::default(),
        probes: Vec::new(),
        changes: None,
        summary: Summary::default(),
    };
    let text = render(&d, false);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(text.contains("evil\\u{1b}]52"), "the bytes stay visible: {text}");
    // Our own colours still work.
    assert!(render(&d, true).contains("\x1b[31m"));
}

#[test]
fn bidi_controls_are_escaped_and_long_host_text_is_shortened() {
    assert_eq!(clean("a\u{202E}txt.exe"), "a\\u{202e}txt.exe");
    let long = "x".repeat(8 * 1024 * 1024);
    let shown = clean(&long);
    assert!(shown.len() < 400, "{}", shown.len());
    assert!(
        shown.ends_with(&format!(
            "… ({} more characters, whole in --format json)",
            long.len() - MAX_HOST_TEXT
        )),
        "{shown}"
    );
    assert_eq!(clean(&"y".repeat(MAX_HOST_TEXT)), "y".repeat(MAX_HOST_TEXT));
}

#[test]
fn wrapping_never_exceeds_the_width() {
    let text = "a fairly long sentence with words and averyveryveryveryveryverylongwordthatmustbecut in it";
    for width in [10usize, 17, 40] {
        for line in wrap(text, width, width) {
            assert!(line.width() <= width, "{width}: {line:?}");
        }
    }
    assert_eq!(wrap("one two", 3, 3), ["one", "two"]);
}

#[test]
fn a_long_host_set_wraps_at_commas_and_pastes_back() {
    let hosts: Vec<String> = (1..=300)
        .filter(|n| n % 4 != 0)
        .map(|n| format!("esx{n:03}.dc1"))
        .collect();
    let set = crate::nodeset::fold(&hosts);
    let text = format!("--only-problems: 225 hosts without problems not shown: {set}");
    let lines = wrap(&text, 80, 76);
    assert!(lines.len() > 3, "{lines:?}");
    for line in &lines {
        assert!(line.width() <= 80, "{line:?}");
    }
    // Every line after the first is a node set on its own; together they are the hosts.
    let pasted = lines.join("\n    ");
    let tail = pasted.split("shown:").nth(1).unwrap();
    let mut back = crate::nodeset::expand(tail).unwrap();
    back.sort();
    let mut want = hosts.clone();
    want.sort();
    assert_eq!(back, want);
}

#[test]
fn a_folded_host_header_is_never_cut_and_pastes_back() {
    // 150 hosts failing the same way fold into one section; their set is over 200
    // characters, which is not host text and must not be shortened.
    let names: Vec<String> = (1..=200)
        .filter(|n| n % 4 != 0)
        .map(|n| format!("esx{n:03}.dc1"))
        .collect();
    let hosts: Vec<HostDiagnosis> = names
        .iter()
        .map(|n| HostDiagnosis {
            host: n.clone(),
            status: HostStatus::Unreachable,
            error: Some(Failure::new(ErrorKind::Unreachable, format!("{n}: connection refused"))),
            esxi_version: None,
            checks: Vec::new(),
            vms: Vec::new(),
            adapters_error: None,
            vms_error: None,
            incomplete_outputs: Vec::new(),
            pvrdma_vmknic: None,
            fleet_failures: Vec::new(),
            record_errors: Vec::new(),
        })
        .collect();
    let d = Diagnosis {
        hosts,
        fleet_checks: Vec::new(),
        transport: Default::default(),
        probes: Vec::new(),
        changes: None,
        summary: Summary::default(),
    };
    let text = render(&d, false);
    assert!(!text.contains("more characters"), "{text}");
    for line in text.lines() {
        assert!(line.width() <= 100, "{line:?}");
    }
    // The header is the lines before the " · unreachable" that ends it.
    let header: String = text.split(" · unreachable").next().unwrap().to_string();
    let set = header.trim_end_matches(&format!(" ({} hosts)", names.len())[..]);
    let mut back = crate::nodeset::expand(set).unwrap_or_else(|e| panic!("{e}\n{text}"));
    back.sort();
    assert_eq!(back, names);
}
