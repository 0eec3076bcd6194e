//! What to send when a host printed something this version cannot read: the command that
//! writes a redacted support bundle of that host alone, with the connection options of
//! the run (so it logs in where and as whom the run did), for the report to print under
//! the host. `analyze` of that bundle shows the same failure offline, and
//! `scripts/sample-from-bundle.sh` turns it into a sample with its golden report.
use crate::cli::{ArgPositions, HostArgs, SshArgs};
use crate::hosts::HostSpec;
use pvrdma_engine::diagnose::{shell_quote, Diagnosis};

/// A live run's connection options and host arguments, where each stood on the command
/// line: what the bundle command repeats. `analyze` has none (the default): its command
/// names the host alone, as the capture labels it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Evidence {
    pub(crate) ssh: SshArgs,
    pub(crate) hosts: HostArgs,
    pub(crate) positions: ArgPositions,
}

/// Sets `send_evidence` on every host of `diagnosis` with an output that did not parse;
/// `targets` are the hosts as the run read them.
pub(crate) fn attach_bundle_commands(diagnosis: &mut Diagnosis, args: &Evidence, targets: &[HostSpec]) {
    // A host read from stdin is named by its label: the command is typed anew, and
    // stdin is not there to read it from again.
    let from_stdin = |s: &HostSpec| match s.arg {
        Some(i) => args.hosts.hosts.get(i).is_some_and(|h| h == "-"),
        None => args.hosts.hosts_file.as_deref() == Some(std::path::Path::new("-")),
    };
    for host in &mut diagnosis.hosts {
        if host.unparsed_outputs.is_empty() {
            continue;
        }
        let spec = targets.iter().find(|s| s.label() == host.host && !from_stdin(s));
        host.send_evidence = Some(bundle_command(args, &host.host, spec));
    }
}

/// `pvrdma-doctor` with the run's connection options, in the order they were given (of
/// `-l` and `user@host` the first wins, as with ssh), `--redact --bundle FILE` and the host.
pub(crate) fn bundle_command(run: &Evidence, label: &str, spec: Option<&HostSpec>) -> String {
    let pos = &run.positions;
    let args = &run.ssh;
    // (position on the command line, words)
    let mut words: Vec<(usize, Vec<String>)> = Vec::new();
    let mut add = |at: usize, flag: &str, value: String| words.push((at, vec![flag.to_string(), value]));
    if let Some(f) = &args.ssh_config {
        add(0, "-F", f.display().to_string());
    }
    for i in &args.identity {
        add(0, "-i", i.display().to_string());
    }
    for (at, option) in pos.ssh_options(args) {
        use pvrdma_ssh_config::CliOption;
        match option {
            CliOption::Login(v) => add(at, "-l", v),
            CliOption::Port(v) => add(at, "-p", v),
            CliOption::Jump(v) => add(at, "-J", v),
            CliOption::Option(v) => add(at, "-o", v),
        }
    }
    let flags: [(bool, &str); 3] = [
        (args.accept_new, "--accept-new"),
        (args.insecure_skip_host_key_check, "--insecure-skip-host-key-check"),
        (args.ask_password, "--ask-password"),
    ];
    for (_, flag) in flags.iter().filter(|(on, _)| *on) {
        words.push((0, vec![flag.to_string()]));
    }
    let (host_at, host_word) = match spec {
        Some(s) => {
            let at = match s.arg {
                Some(arg) => pos.hosts.get(arg).copied().unwrap_or(usize::MAX),
                None => pos.hosts_file.unwrap_or(usize::MAX),
            };
            (at, s.to_string())
        }
        None => (usize::MAX, label.to_string()),
    };
    words.push((host_at, vec![host_word]));
    words.sort_by_key(|(at, _)| *at);
    let mut line = String::from("pvrdma-doctor --redact --bundle ");
    line.push_str(&shell_quote(&format!("{}-evidence.tar.gz", file_stem(label))));
    for word in words.iter().flat_map(|(_, w)| w) {
        line.push(' ');
        line.push_str(&shell_quote(word));
    }
    line
}

/// A host label as a file name: letters, digits, `.`, `-` and `_`; anything else (`:` of
/// a port, `[]` of an IPv6 address) becomes `_`.
fn file_stem(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Evidence {
        let cli = crate::cli::try_parse_from(std::iter::once("pvrdma-doctor").chain(args.iter().copied())).unwrap();
        Evidence {
            ssh: cli.check.ssh,
            hosts: cli.check.hosts,
            positions: cli.check.positions,
        }
    }

    fn command_for(args: &[&str], label: &str) -> String {
        let run = run(args);
        let specs = crate::hosts::collect_targets(&run.hosts.hosts, None, &mut std::io::empty()).unwrap();
        let spec = specs.iter().find(|s| s.label() == label);
        bundle_command(&run, label, spec)
    }

    #[test]
    fn the_bundle_command_logs_in_as_the_run_did() {
        assert_eq!(
            command_for(&["esx[01-02]"], "esx02"),
            "pvrdma-doctor --redact --bundle esx02-evidence.tar.gz esx02"
        );
        // user@host before -l: the host's user wins, as in the run.
        assert_eq!(
            command_for(
                &["admin@esx01:2222", "-l", "root", "-F", "/tmp/my config"],
                "esx01:2222"
            ),
            "pvrdma-doctor --redact --bundle esx01_2222-evidence.tar.gz -F '/tmp/my config' admin@esx01:2222 -l root"
        );
        assert_eq!(
            command_for(
                &["-l", "root", "-J", "bastion", "-o", "Port=2200", "-i", "k.pem", "esx03"],
                "esx03"
            ),
            "pvrdma-doctor --redact --bundle esx03-evidence.tar.gz -i k.pem -l root -J bastion -o Port=2200 esx03"
        );
    }

    #[test]
    fn a_host_the_run_cannot_name_again_keeps_its_label() {
        assert_eq!(
            bundle_command(&run(&["-"]), "[fe80::1]:22", None),
            "pvrdma-doctor --redact --bundle _fe80__1__22-evidence.tar.gz '[fe80::1]:22'"
        );
    }
}
