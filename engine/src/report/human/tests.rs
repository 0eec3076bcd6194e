use super::text::*;
use super::*;
use crate::capture::{ErrorKind, Failure};
use crate::diagnose::Vm;

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
        unparsed_outputs: Vec::new(),
        send_evidence: None,
        configuration_only: false,
        pvrdma_vmknic: None,
        uplinks: Vec::new(),
        fleet_failures: Vec::new(),
        record_errors: Vec::new(),
    };
    let d = Diagnosis {
        hosts: vec![host],
        ..Diagnosis::default()
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
    assert_eq!(host_text("a\u{202E}txt.exe"), "a\\u{202e}txt.exe");
    let long = "x".repeat(8 * 1024 * 1024);
    let shown = host_text(&long);
    assert!(shown.len() < 400, "{}", shown.len());
    assert!(
        shown.ends_with(&format!(
            "… ({} more characters, whole in --format json)",
            long.len() - MAX_HOST_TEXT
        )),
        "{shown}"
    );
    assert_eq!(host_text(&"y".repeat(MAX_HOST_TEXT)), "y".repeat(MAX_HOST_TEXT));
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
fn the_tools_own_text_is_escaped_but_never_shortened() {
    let advice = format!(
        "configure PFC {} (Mellanox: esxcli system module parameters set -m nmlx5_core -p \"pfctx=0x08 pfcrx=0x08\", then reboot)",
        "word ".repeat(60)
    );
    assert!(advice.chars().count() > MAX_HOST_TEXT);
    assert_eq!(clean(&advice), advice, "nothing is left out");
    assert_eq!(clean("bell\x07"), "bell\\u{7}");
    // Wrapped at any width, every word is still there, in order.
    for width in [40usize, 57, 80, 100] {
        let mut out = String::new();
        emit(&mut out, "  advice: ", "  advice: ", 10, &clean(&advice), width, |t| {
            t.to_string()
        });
        for line in out.lines() {
            assert!(line.width() <= width, "{width}: {line:?}");
        }
        let words: Vec<&str> = out.split_whitespace().skip(1).collect();
        assert_eq!(words.join(" "), advice.split_whitespace().collect::<Vec<_>>().join(" "));
        assert!(out.contains("reboot)"), "{out}");
    }
}

#[test]
fn wrapped_lines_never_start_or_end_with_the_space_they_broke_at() {
    let text = "the firewall is enabled and its pvrdma ruleset is disabled (the  ESXi 8.0 default)";
    for width in 5..40 {
        for line in wrap(text, width, width) {
            assert!(!line.starts_with(' ') && !line.ends_with(' '), "{width}: {line:?}");
            assert!(line.width() <= width, "{width}: {line:?}");
        }
    }
    // A word longer than the line is broken across lines, never dropped.
    let long = "x".repeat(95);
    assert_eq!(wrap(&long, 40, 40).concat(), long);
}

#[test]
fn a_word_to_copy_is_never_cut_but_stands_whole_on_its_own_line() {
    let pin = ["AB"; 32].join(":");
    let text = format!("vcenter east: https://vc02.example.com:8443/sdk as monitor, trusting exactly the certificate with SHA-256 thumbprint {pin}; every 1m");
    let out = wrap_whole_words("  ", 6, &text, 80);
    let lines: Vec<&str> = out.lines().collect();
    // The thumbprint (95 columns) is a line of its own, wider than the terminal.
    assert!(lines.contains(&format!("      {pin};").as_str()), "{out}");
    for line in lines.iter().filter(|l| !l.contains(&pin)) {
        assert!(line.width() <= 80, "{line:?} in\n{out}");
    }
    assert!(
        lines[0].starts_with("  vcenter east: https://vc02.example.com:8443/sdk"),
        "{out}"
    );
    assert!(lines[1..].iter().all(|l| l.starts_with("      ")), "{out}");
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(
        words,
        text.split_whitespace().collect::<Vec<_>>(),
        "nothing cut or lost"
    );
    // A long word first on the first line stays after the prefix, whole.
    let path = format!("/{}", "etc/pvrdma-doctor/".repeat(6));
    let out = wrap_whole_words("", 4, &format!("{path}: valid"), 40);
    assert_eq!(out, format!("{path}:\n    valid\n"));
}

#[test]
fn a_command_to_run_is_printed_whole_on_one_line() {
    let command = "esxcli network firewall ruleset set -e true -r pvrdma";
    // It fits beside its label.
    let mut out = String::new();
    emit_command(&mut out, "    run: ", "    run: ", 4, command, 80, |t| t.to_string());
    assert_eq!(out, format!("    run: {command}\n"));
    // It does not: the label alone, then the command whole on its own line.
    let mut out = String::new();
    let pad = " ".repeat(29);
    emit_command(
        &mut out,
        &format!("{pad}run: "),
        &format!("{pad}run: "),
        29,
        command,
        80,
        |t| t.to_string(),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines, [format!("{pad}run:"), format!("    {command}")]);
    // Wider than the terminal: still one line, at the margin.
    let mut out = String::new();
    emit_command(&mut out, "run: ", "run: ", 4, command, 40, |t| t.to_string());
    assert_eq!(out.lines().nth(1), Some(command));
}

/// A command wider than the terminal continues between words outside quotes, each line
/// ended with the shell's continuation, every line within the width, the long word whole.
#[test]
fn a_command_wider_than_the_terminal_continues_between_words_and_fits() {
    let command = "(Get-VM -Name 'a b c' -Id 'VirtualMachine-vm-213').ExtensionData.ReconfigVM((New-Object VMware.Vim.VirtualMachineConfigSpec -Property @{ MemoryReservationLockedToMax = $true }))";
    let pad = " ".repeat(29);
    let mut out = String::new();
    let label = format!("{pad}PowerCLI: ");
    emit_continued_command(&mut out, &label, 29, command, 80, " `", |t| t.to_string());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("{pad}PowerCLI:"));
    for line in &lines[1..] {
        assert!(line.width() <= 80, "{} columns: {line}\n{out}", line.width());
    }
    for line in &lines[1..lines.len() - 1] {
        assert!(line.ends_with(" `"), "{out}");
    }
    // Joined back, the continuations removed, it is the command as given.
    let joined: Vec<String> = lines[1..]
        .iter()
        .map(|l| l.trim_start().trim_end_matches(" `").to_string())
        .collect();
    assert_eq!(joined.join(" "), command);
    assert!(out.contains("'a b c'"), "a quoted value is never split: {out}");
}

#[test]
fn table_columns_shrink_widest_first_and_fit() {
    let row = |cells: [&str; 5]| cells.map(str::to_string);
    let cells = vec![
        row(["VM", "Host", "Adapter", "Verdict", "Reason"]),
        row([
            "hpc-node01",
            "esx01",
            "0",
            "tcp-fallback",
            &"• host check firewall-pvrdma failed: the firewall is disabled ".repeat(3),
        ]),
    ];
    for width in [40usize, 60, 80, 100, 200] {
        let widths = column_widths(&cells, width);
        let total: usize = widths.iter().sum::<usize>() + 16;
        assert!(total <= width.max(16 + 5), "{width}: {widths:?}");
        // The short columns keep their width while the reason can give.
        if width >= 80 {
            assert_eq!(&widths[..4], &[10, 5, 7, 12], "{width}");
        }
    }
}

#[test]
fn list_checks_fits_and_shows_each_batch_exactly_with_v() {
    let commands: Vec<&str> = crate::catalogue::CATALOGUE.iter().map(|s| s.command).collect();
    for width in [40usize, 80, 120] {
        for exact in [false, true] {
            let probe = list::ProbeListing {
                heading: "Path probe (only with --probe):".to_string(),
                id: "vmkping",
                commands: [
                    "vmkping -I <vmk> <peer ip>".to_string(),
                    "vmkping -I <vmk> -d -s <MTU-28> <peer ip>".to_string(),
                ],
                why: "from each host's PVRDMA vmknic to every other host's".to_string(),
                check_id: crate::diagnose::CheckId::VmknicReachability.id(),
                check_title: crate::diagnose::CheckId::VmknicReachability.title(),
            };
            let text = list::list_checks(width, exact, &probe);
            for line in text.lines() {
                // Only a command wider than the terminal itself is left wider.
                let whole_command = commands.contains(&line.trim()) && line.trim().width() > width - 8;
                assert!(line.width() <= width || whole_command, "{width} {exact}: {line:?}");
            }
        }
    }
    for spec in crate::catalogue::CATALOGUE.iter().filter(|s| s.is_batch()) {
        assert_eq!(list::script_lines(spec.command).join(" "), spec.command, "{}", spec.id);
        assert!(list::script_lines(spec.command).len() > 2, "{}", spec.id);
    }
}

#[test]
fn counts_are_said_in_the_singular_when_there_is_one() {
    let mut d = Diagnosis {
        hosts: Vec::new(),
        ..Diagnosis::default()
    };
    d.summary.hosts = 1;
    let text = render(&d, false);
    assert!(text.contains("the host could not be reached"), "{text}");
    assert!(!text.contains("none of the 1"), "{text}");
    d.summary.hosts = 3;
    assert!(render(&d, false).contains("none of the 3 hosts"));
}

#[test]
fn a_long_host_set_wraps_at_commas_and_pastes_back() {
    let hosts: Vec<String> = (1..=300)
        .filter(|n| n % 4 != 0)
        .map(|n| format!("esx{n:03}.dc1"))
        .collect();
    let set = pvrdma_nodeset::fold(&hosts);
    let text = format!("--only-problems: 225 hosts without problems not shown: {set}");
    let lines = wrap(&text, 80, 76);
    assert!(lines.len() > 3, "{lines:?}");
    for line in &lines {
        assert!(line.width() <= 80, "{line:?}");
    }
    // Every line after the first is a node set on its own; together they are the hosts.
    let pasted = lines.join("\n    ");
    let tail = pasted.split("shown:").nth(1).unwrap();
    let mut back = pvrdma_nodeset::expand_with(tail, &mut pvrdma_nodeset::NoGroups).unwrap();
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
            error: Some(Failure::of_host(ErrorKind::Unreachable, n, "connection refused")),
            esxi_version: None,
            checks: Vec::new(),
            vms: Vec::new(),
            adapters_error: None,
            vms_error: None,
            incomplete_outputs: Vec::new(),
            unparsed_outputs: Vec::new(),
            send_evidence: None,
            configuration_only: false,
            pvrdma_vmknic: None,
            uplinks: Vec::new(),
            fleet_failures: Vec::new(),
            record_errors: Vec::new(),
        })
        .collect();
    let d = Diagnosis {
        hosts,
        ..Diagnosis::default()
    };
    let text = render(&d, false);
    assert!(!text.contains("more characters"), "{text}");
    for line in text.lines() {
        assert!(line.width() <= 100, "{line:?}");
    }
    // The header is the lines before the " · unreachable" that ends it.
    let header: String = text.split(" · unreachable").next().unwrap().to_string();
    let set = header.trim_end_matches(&format!(" ({} hosts)", names.len())[..]);
    let mut back =
        pvrdma_nodeset::expand_with(set, &mut pvrdma_nodeset::NoGroups).unwrap_or_else(|e| panic!("{e}\n{text}"));
    back.sort();
    assert_eq!(back, names);
}

/// The report with the default layout (100 columns, folded).
fn render(d: &Diagnosis, color: bool) -> String {
    render_with(
        d,
        &HumanOptions {
            color,
            ..HumanOptions::default()
        },
    )
}

#[test]
fn a_vm_first_report_opens_with_its_vms_within_80_columns() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/esxi80-mixed-fleet");
    let captures = crate::capture::folder::read_dir_for_tests(&dir).expect("sample loads");
    let scope = crate::diagnose::Selection::default().only_vms(["hpc-node01", "rank [1]: mpi job"].map(String::from));
    let d = crate::diagnose::diagnose_selected(&captures, &scope);
    let text = render_with(
        &d,
        &HumanOptions {
            width: 80,
            ..HumanOptions::default()
        },
    );
    let head: Vec<&str> = text.lines().take(3).collect();
    assert!(
        head[0].starts_with("VMs: hpc-node01, \"rank [1]: mpi job\": only their adapters"),
        "{text}"
    );
    // esx03 could not be read, so the VM not seen is not called stopped.
    let rest = head[1..].join(" ");
    assert!(
        rest.contains("not seen running: \"rank [1]: mpi job\"; the VM list of esx03 could not be read"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.width() <= 80), "{text}");
    assert!(!text.contains("hpc-node02"), "{text}");
}

#[test]
fn vm_names_that_hold_a_separator_are_quoted_and_plain_ones_stay_bare() {
    let names = [
        "db:primary",
        "hpc node 08",
        "web, cache",
        "rank: 1",
        "a; b",
        "say \"hi\"",
        " padded",
        "back\\slash",
        "ends:",
        "",
    ]
    .map(String::from);
    assert_eq!(
        super::name_list(&names),
        r#"db:primary, hpc node 08, "web, cache", "rank: 1", "a; b", "say \"hi\"", " padded", "back\\slash", "ends:", """#
    );
}

/// A report of hosts that could not be diagnosed, each with its failure.
fn failed_hosts(failures: Vec<(&str, Failure)>) -> Diagnosis {
    Diagnosis {
        hosts: failures
            .into_iter()
            .map(|(h, f)| HostDiagnosis::not_diagnosed(h, HostStatus::Unreachable, f, Vec::new()))
            .collect(),
        ..Diagnosis::default()
    }
}

/// The host lines of a report of hosts that could not be diagnosed (one line each).
fn host_lines(d: &Diagnosis) -> Vec<String> {
    render(d, false)
        .lines()
        .filter(|l| l.contains(" · unreachable · "))
        .map(str::to_string)
        .collect()
}

#[test]
fn hosts_failing_the_same_way_share_one_line_and_others_keep_theirs() {
    let refused = "authentication as \"root\" failed.";
    let d = failed_hosts(vec![
        ("esx01", Failure::of_host(ErrorKind::Auth, "esx01:22", refused)),
        ("esx02", Failure::of_host(ErrorKind::Auth, "esx02:22", refused)),
        // Same words, another kind: not the same failure.
        ("esx03", Failure::of_host(ErrorKind::KeyExchange, "esx03:22", refused)),
        (
            "esx04",
            Failure::of_host(ErrorKind::Unreachable, "esx04:22", "cannot connect to 10.0.0.4:22"),
        ),
    ]);
    assert_eq!(
        host_lines(&d),
        [
            "esx[01-02] (2 hosts) · unreachable · auth: authentication as \"root\" failed.",
            "esx03 · unreachable · key-exchange: authentication as \"root\" failed.",
            "esx04 · unreachable · cannot connect to 10.0.0.4:22",
        ]
    );
    // Without folding each host has its line, under its own name only.
    let text = render_with(
        &d,
        &HumanOptions {
            fold: false,
            ..HumanOptions::default()
        },
    );
    assert!(
        text.contains("esx01 · unreachable · auth: authentication as \"root\" failed.\n"),
        "{text}"
    );
    assert!(!text.contains("esx01:22"), "the title names the host: {text}");
}

#[test]
fn a_host_named_like_words_of_the_message_folds_all_the_same() {
    // `timeout` is in the run timeout's words, `auth` starts `authentication`, and `jump`
    // starts the message of a jump host's failure, which names no host of the report.
    let stopped =
        |h: &str| Failure::run_timeout("2s", crate::capture::RunStage::Connecting, "; raise --timeout").told_of(h);
    let jump = || {
        Failure::new(
            ErrorKind::Unreachable,
            "jump host bastion:22: cannot connect to 10.0.0.9:22",
        )
    };
    let refused = "authentication as \"auth\" failed.";
    let d = failed_hosts(vec![
        ("timeout", stopped("timeout")),
        ("esx02", stopped("esx02")),
        ("jump", jump()),
        ("esx04", jump()),
        ("auth", Failure::of_host(ErrorKind::Auth, "auth:22", refused)),
        ("esx06", Failure::of_host(ErrorKind::Auth, "esx06:22", refused)),
    ]);
    assert_eq!(
        host_lines(&d),
        [
            "esx02,timeout (2 hosts) · unreachable · timeout: the whole run hit --timeout 2s while connecting and",
            "esx04,jump (2 hosts) · unreachable · jump host bastion:22: cannot connect to 10.0.0.9:22",
            "auth,esx06 (2 hosts) · unreachable · auth: authentication as \"auth\" failed.",
        ]
    );
}

#[test]
fn a_failure_from_an_older_report_reads_back_and_is_shown_whole_per_host() {
    // Written before failures kept their detail: no `detail` field.
    let old = |h: &str| format!(r#"{{"kind":"timeout","message":"{h}:22: no SSH login within 10s"}}"#);
    let failures: Vec<Failure> = ["esx01", "esx02"]
        .iter()
        .map(|h| serde_json::from_str(&old(h)).expect("an old failure reads"))
        .collect();
    assert!(failures.iter().all(|f| f.detail.is_none()));
    let again: Vec<String> = failures.iter().map(|f| serde_json::to_string(f).unwrap()).collect();
    assert_eq!(again, [old("esx01"), old("esx02")], "written back as it was read");
    // Nothing tells which part names the host, so each host keeps its whole message.
    let d = failed_hosts(vec![("esx01", failures[0].clone()), ("esx02", failures[1].clone())]);
    assert_eq!(
        host_lines(&d),
        [
            "esx01 · unreachable · timeout: esx01:22: no SSH login within 10s",
            "esx02 · unreachable · timeout: esx02:22: no SSH login within 10s",
        ]
    );
    // A failure with its detail is written with it, and reads back the same.
    let new = Failure::of_host(ErrorKind::Timeout, "esx01:22", "no SSH login within 10s");
    assert_eq!(new.message, "esx01:22: no SSH login within 10s");
    let text = serde_json::to_string(&new).unwrap();
    assert!(text.contains(r#""detail":"no SSH login within 10s""#), "{text}");
    assert_eq!(serde_json::from_str::<Failure>(&text).unwrap(), new);
}

/// The lines of the table's VM column, header and frame left out.
fn vm_column(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with('│'))
        .skip(1)
        .filter_map(|l| l.split('│').nth(1).map(|cell| cell.trim().to_string()))
        .filter(|cell| !cell.is_empty())
        .collect()
}

/// One host whose VMs `names` each have adapter 0 on the HCA: one table row, its VM cell
/// a list of names.
fn vms_on_the_hca(names: &[&str]) -> Diagnosis {
    let vms = names
        .iter()
        .map(|n| (*n, vec![crate::diagnose::fixtures::adapter(0, Verdict::Hca)]))
        .collect();
    Diagnosis {
        hosts: vec![crate::diagnose::fixtures::host("esx01", HostStatus::Ok, vms)],
        ..Diagnosis::default()
    }
}

#[test]
fn a_list_of_vm_names_wraps_between_names_never_inside_one() {
    let d = vms_on_the_hca(&["cfd-solver-a", "mpi-worker:03", "hpc node 01"]);
    let options = HumanOptions {
        width: 80,
        ..HumanOptions::default()
    };
    let text = render_with(&d, &options);
    assert_eq!(
        vm_column(&text),
        ["cfd-solver-a,", "mpi-worker:03,hpc node 01", "(3 VMs)"],
        "{text}"
    );
}

#[test]
fn only_a_name_wider_than_its_column_is_broken_and_visibly() {
    let long = "solver cluster node with a name far longer than its column";
    let d = vms_on_the_hca(&["cfd-solver-a", long]);
    for width in [80usize, 100] {
        let options = HumanOptions {
            width,
            ..HumanOptions::default()
        };
        let text = render_with(&d, &options);
        let mut lines = vm_column(&text);
        assert_eq!(lines.first().map(String::as_str), Some("cfd-solver-a,"), "{text}");
        // The count follows the last name, on its line.
        let last = lines.pop().unwrap();
        lines.push(
            last.strip_suffix(" (2 VMs)")
                .expect("the count ends the cell")
                .to_string(),
        );
        // Every line of the long name but its last ends in the mark; read back, the
        // lines are the name.
        let (last, before) = lines[1..].split_last().unwrap();
        assert!(!before.is_empty(), "{text}");
        assert!(before.iter().all(|l| l.ends_with(CONTINUED)), "{text}");
        assert!(!last.ends_with(CONTINUED), "{text}");
        let read: Vec<&str> = lines[1..].iter().map(|l| l.trim_end_matches(CONTINUED)).collect();
        assert_eq!(read.join(" "), long, "{text}");
    }
}

/// esx01 read through the vSphere API alone: `host_xml` as its configuration, one VM.
fn configuration_only(host_xml: &str) -> Diagnosis {
    const VM: &str = include_str!("../../../../parsers/tests/fixtures/vsphere_vm_config.xml");
    let capture = crate::capture::from_vsphere("esx01", host_xml.to_string(), &[VM.to_string()], 12);
    crate::diagnose::diagnose(&[capture])
}

const API_HOST: &str = include_str!("../../../../parsers/tests/fixtures/vsphere_host_config.xml");

#[test]
fn a_healthy_configuration_only_host_is_called_so_not_incomplete() {
    let d = configuration_only(API_HOST);
    // The JSON status stays what it is: the transport was not observed.
    assert_eq!(d.hosts[0].status, HostStatus::Incomplete);
    let text = render(&d, false);
    assert!(text.contains("\nesx01 · configuration only (no SSH) · ESXi "), "{text}");
    assert!(!text.contains("incomplete"), "{text}");
    assert!(
        crate::report::summary::line(&d).starts_with("1 host: 1 configuration only (esx01);"),
        "{}",
        crate::report::summary::line(&d)
    );
    // With something against it, the status is said as before.
    let disabled = API_HOST.replacen("<key>pvrdma</key>", "<key>pvrdma</key><enabled>false</enabled>", 1);
    let d = configuration_only(&disabled);
    let text = render(&d, false);
    assert!(
        text.contains("\nesx01 · problems · configuration only (no SSH) · ESXi "),
        "{text}"
    );
    assert!(crate::report::summary::line(&d).starts_with("1 host: 1 with problems (esx01);"));
}

#[test]
fn the_table_fits_a_narrow_terminal_whatever_the_names() {
    let d = vms_on_the_hca(&["Server 2016 Vcenter", "uranium-esx36 [knagaraju] FGT_VM64_ESXI"]);
    for width in [40usize, 50, 60] {
        let options = HumanOptions {
            width,
            ..HumanOptions::default()
        };
        let text = render_with(&d, &options);
        for line in text.lines().filter(|l| l.starts_with(['╭', '│', '├', '╰'])) {
            assert!(line.width() <= width, "{width}: {line:?}\n{text}");
        }
    }
}
