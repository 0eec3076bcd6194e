//! Every option a user sees does something. The walk goes over the clap command tree, so
//! a new option cannot slip in untested: each option of each subcommand (and of the
//! default job) needs an entry below whose arguments, given on top of a base line, change
//! what the job runs with (its [`Setup`]); every option of another subcommand is refused
//! with a usage error that names the subcommand.
use super::setup::Setup;
use crate::terminal::Terminal;
use std::collections::BTreeSet;

/// A terminal on both streams, so `--color` and `--no-progress` have something to change.
const TERMINAL: Terminal = Terminal {
    stdout: true,
    stderr: true,
    width: 100,
    no_color: false,
};

/// One option's effect: `(option id, the line without it, the line with it)`, both after
/// the subcommand's name.
type Effect = (&'static str, Vec<&'static str>, Vec<&'static str>);

/// The line with `extra` after `base`.
fn with(base: &[&'static str], extra: &[&'static str]) -> Vec<&'static str> {
    base.iter().chain(extra).copied().collect()
}

/// `(id, extra)` pairs: the option given on top of `base`.
fn on(base: &[&'static str], pairs: &[(&'static str, &[&'static str])]) -> Vec<Effect> {
    pairs
        .iter()
        .map(|(id, extra)| (*id, base.to_vec(), with(base, extra)))
        .collect()
}

fn ssh(base: &[&'static str]) -> Vec<Effect> {
    on(
        base,
        &[
            ("ssh_config", &["-F", "cfg"]),
            ("user", &["-l", "admin"]),
            ("identity", &["-i", "key"]),
            ("port", &["-p", "2222"]),
            ("jump", &["-J", "bastion"]),
            ("options", &["-o", "Port=2200"]),
            ("accept_new", &["--accept-new"]),
            ("insecure_skip_host_key_check", &["--insecure-skip-host-key-check"]),
            ("ask_password", &["--ask-password"]),
        ],
    )
}

fn run(base: &[&'static str]) -> Vec<Effect> {
    let mut v = on(
        base,
        &[
            ("parallel", &["--parallel", "3"]),
            ("connect_timeout", &["--connect-timeout", "3s"]),
            ("command_timeout", &["--command-timeout", "3s"]),
            ("host_output_budget", &["--host-output-budget", "1MiB"]),
            ("total_output_budget", &["--total-output-budget", "1MiB"]),
            ("timeout", &["-t", "9s"]),
            ("no_progress", &["--no-progress"]),
            ("probe", &["--probe"]),
            ("verbose", &["-v"]),
        ],
    );
    v.push((
        "probe_sample",
        with(base, &["--probe"]),
        with(base, &["--probe", "--probe-sample", "2"]),
    ));
    v
}

fn layout(base: &[&'static str]) -> Vec<Effect> {
    on(
        base,
        &[
            ("color", &["--color", "never"]),
            ("only_problems", &["--only-problems"]),
            ("no_fold", &["--no-fold"]),
            ("baseline", &["--baseline", "old.json"]),
        ],
    )
}

fn report(base: &[&'static str]) -> Vec<Effect> {
    let mut v = layout(base);
    v.extend(on(
        base,
        &[
            ("format", &["--format", "json"]),
            // The plans: each format a report of its own.
            ("format", &["--format", "ansible"]),
            ("format", &["--format", "powercli"]),
            ("output_file", &["--output", "report.txt"]),
        ],
    ));
    let nagios = with(base, &["--format", "nagios"]);
    for (id, extra) in [
        ("warning", &["-w", "2"][..]),
        ("critical", &["-c", "3"]),
        ("unreachable_state", &["--unreachable-state", "critical"]),
    ] {
        v.push((id, nagios.clone(), with(&nagios, extra)));
    }
    v
}

fn bundle(base: &[&'static str]) -> Vec<Effect> {
    let b = with(base, &["--bundle", "b.tgz"]);
    vec![
        ("bundle", base.to_vec(), b.clone()),
        ("redact", b.clone(), with(&b, &["--redact"])),
        ("force", b.clone(), with(&b, &["--force"])),
    ]
}

/// The hosts from vCenter: each option on top of a line that reads vc01 as `u`.
fn vcenter() -> Vec<Effect> {
    const VC: &[&str] = &["--vcenter", "vc01", "--vcenter-user", "u"];
    let mut v = vec![
        (
            "vcenter",
            VC.to_vec(),
            vec!["--vcenter", "vc02:8443", "--vcenter-user", "u"],
        ),
        (
            "vcenter_user",
            VC.to_vec(),
            vec!["--vcenter", "vc01", "--vcenter-user", "v"],
        ),
    ];
    v.extend(on(
        VC,
        &[
            ("vcenter_password_file", &["--vcenter-password-file", "pw"]),
            ("vcenter_ca", &["--vcenter-ca", "ca.pem"]),
            (
                "vcenter_thumbprint",
                &[
                    "--vcenter-thumbprint",
                    "AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99",
                ],
            ),
            ("cluster", &["--cluster", "HPC"]),
            ("vm", &["--vm", "hpc-node07"]),
            ("vcenter_timeout", &["--vcenter-timeout", "2m"]),
            ("include_maintenance", &["--include-maintenance"]),
            ("include_disconnected", &["--include-disconnected"]),
        ],
    ));
    v
}

/// The one-shot run's options, from `base` (one host).
fn check(base: &[&'static str]) -> Vec<Effect> {
    let mut v = vec![
        ("hosts", vec!["--hosts-file", "f"], vec!["--hosts-file", "f", "esx02"]),
        ("hosts_file", base.to_vec(), with(base, &["--hosts-file", "f"])),
    ];
    v.extend(vcenter());
    const VC: &[&str] = &["--vcenter", "vc01", "--vcenter-user", "u"];
    v.push(("no_ssh", VC.to_vec(), with(VC, &["--no-ssh"])));
    v.extend(ssh(base));
    v.extend(run(base));
    v.extend(report(base));
    v.extend(bundle(base));
    v
}

/// Every subcommand's entries; `""` is the default job.
fn effects() -> Vec<(&'static str, Vec<Effect>)> {
    let mut top = check(&["esx01"]);
    top.push((
        "list_checks",
        vec!["esx01", "--format", "json"],
        vec!["--list-checks", "--format", "json"],
    ));
    top.push(("generate", vec!["--list-checks"], vec!["--generate", "man"]));
    let mut watch = vec![
        ("hosts", vec!["--hosts-file", "f"], vec!["--hosts-file", "f", "esx02"]),
        ("hosts_file", vec!["esx01"], vec!["esx01", "--hosts-file", "f"]),
        ("format", vec!["esx01"], vec!["esx01", "--format", "json"]),
        ("interval", vec!["esx01"], vec!["esx01", "--interval", "1m"]),
        ("until_change", vec!["esx01"], vec!["esx01", "--until-change"]),
        ("count", vec!["esx01"], vec!["esx01", "--count", "2"]),
        ("demo", vec!["esx01"], vec!["esx01", "--demo"]),
        ("scenario", vec!["--demo"], vec!["--demo", "--scenario", "dir"]),
        ("latency", vec!["--demo"], vec!["--demo", "--latency", "1s"]),
    ];
    watch.extend(vcenter());
    watch.push((
        "no_ssh",
        vec!["--vcenter", "vc01", "--vcenter-user", "u"],
        vec!["--vcenter", "vc01", "--vcenter-user", "u", "--no-ssh"],
    ));
    watch.extend(ssh(&["esx01"]));
    watch.extend(run(&["esx01"]));
    watch.extend(layout(&["esx01"]));
    let mut demo = vec![
        ("hosts", vec![], vec!["esx01"]),
        ("scenario", vec![], vec!["--scenario", "dir"]),
        ("latency", vec![], vec!["--latency", "1s"]),
        ("serve", vec![], vec!["--serve"]),
        ("listen", vec!["--serve"], vec!["--serve", "--listen", "127.0.0.1:1"]),
        ("ssh_dir", vec!["--serve"], vec!["--serve", "--ssh-dir", "dir"]),
        (
            "web_config",
            vec!["--serve"],
            vec!["--serve", "--web.config.file", "w.yml"],
        ),
    ];
    demo.extend(run(&[]));
    demo.extend(report(&[]));
    demo.extend(bundle(&[]));
    let mut analyze = vec![("path", vec!["a"], vec!["b"])];
    analyze.extend(report(&["DIR"]));
    let serve = on(
        &["--config", "c.yml"],
        &[
            ("listen", &["--listen", "127.0.0.1:1"]),
            ("web_config", &["--web.config.file", "w.yml"]),
            ("check_config", &["--check-config"]),
            ("verbose", &["-v"]),
        ],
    )
    .into_iter()
    .chain([("config", vec!["--config", "a.yml"], vec!["--config", "b.yml"])])
    .collect();
    let mut hosts = vcenter();
    hosts.push((
        "verbose",
        vec!["--vcenter", "vc01", "--vcenter-user", "u"],
        vec!["--vcenter", "vc01", "--vcenter-user", "u", "-v"],
    ));
    hosts.push((
        "format",
        vec!["--vcenter", "vc01", "--vcenter-user", "u"],
        vec!["--vcenter", "vc01", "--vcenter-user", "u", "--format", "json"],
    ));
    vec![
        ("", top),
        ("check", check(&["esx01"])),
        ("hosts", hosts),
        ("analyze", analyze),
        ("watch", watch),
        ("demo", demo),
        ("serve", serve),
    ]
}

/// The full command line for subcommand `sub` (`""`: none).
fn line(sub: &str, args: &[&str]) -> Vec<String> {
    let mut v = vec!["pvrdma-doctor".to_string()];
    if !sub.is_empty() {
        v.push(sub.to_string());
    }
    v.extend(args.iter().map(|a| a.to_string()));
    v
}

/// The set-up of a line, as text (every field the job runs with).
fn setup_of(line: &[String]) -> String {
    let cli = crate::cli::try_parse_from(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    let setup = Setup::new(cli, &TERMINAL).unwrap_or_else(|e| panic!("{line:?}: {e:#}"));
    format!("{setup:?}")
}

/// The command of `sub` in the clap tree.
fn command_of(sub: &str) -> clap::Command {
    let cmd = crate::cli::command();
    if sub.is_empty() {
        return cmd;
    }
    cmd.find_subcommand(sub).expect("a subcommand").clone()
}

fn option_ids(cmd: &clap::Command) -> BTreeSet<String> {
    cmd.get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| id != "help" && id != "version")
        .collect()
}

#[test]
fn every_option_of_every_subcommand_changes_what_its_job_runs_with() {
    let table = effects();
    let subs: BTreeSet<String> = std::iter::once(String::new())
        .chain(
            crate::cli::command()
                .get_subcommands()
                .map(|s| s.get_name().to_string()),
        )
        .collect();
    let listed: BTreeSet<String> = table.iter().map(|(s, _)| s.to_string()).collect();
    assert_eq!(subs, listed, "every subcommand needs its entries");
    for (sub, entries) in &table {
        let cmd = command_of(sub);
        let ids: BTreeSet<String> = entries.iter().map(|(id, _, _)| id.to_string()).collect();
        assert_eq!(
            option_ids(&cmd),
            ids,
            "`{sub}`: the options and the entries differ (an option without an entry, or an entry for an option it lacks)"
        );
        for (id, before, after) in entries {
            let (before, after) = (line(sub, before), line(sub, after));
            // The entry must give this very option.
            let matches = command_of("")
                .try_get_matches_from(&after)
                .unwrap_or_else(|e| panic!("{after:?}: {e}"));
            let m = if sub.is_empty() {
                &matches
            } else {
                matches.subcommand_matches(sub).expect("the subcommand")
            };
            assert_eq!(
                m.value_source(id),
                Some(clap::parser::ValueSource::CommandLine),
                "`{sub}` {id}: {after:?} does not give it"
            );
            assert_ne!(
                setup_of(&before),
                setup_of(&after),
                "`{sub}` {id}: {after:?} runs the same job as {before:?}: the option does nothing"
            );
        }
    }
}

#[test]
fn an_option_of_another_subcommand_is_a_usage_error_naming_this_one() {
    let table = effects();
    let all: Vec<clap::Arg> = std::iter::once(crate::cli::command())
        .chain(crate::cli::command().get_subcommands().cloned())
        .flat_map(|c| c.get_arguments().cloned().collect::<Vec<_>>())
        .filter(|a| !a.is_positional() && a.get_id() != "help" && a.get_id() != "version")
        .collect();
    for (sub, entries) in &table {
        let own = option_ids(&command_of(sub));
        // A line the subcommand accepts: its first entry's.
        let base = &entries[0].1;
        for arg in all.iter().filter(|a| !own.contains(a.get_id().as_str())) {
            let long = format!("--{}", arg.get_long().expect("a long name"));
            let mut extra = vec![long.as_str()];
            if arg.get_action().takes_values() {
                extra.push("1");
            }
            let mut l = line(sub, base);
            l.extend(extra.iter().map(|s| s.to_string()));
            let err = match crate::cli::try_parse_from(&l) {
                Ok(_) => panic!("`{sub}` accepts {long}, which it does not use: {l:?}"),
                Err(e) => e.render().to_string(),
            };
            let name = format!("pvrdma-doctor {sub}").trim_end().to_string();
            assert!(err.contains(&format!("Usage: {name}")), "{l:?}: {err}");
            assert!(err.contains(&long), "{l:?}: {err}");
        }
    }
}
