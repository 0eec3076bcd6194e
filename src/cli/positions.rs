//! Where each option and host stood on the command line: ssh takes the first value given
//! between `-l`, `-o User` and `user@host` (likewise for the port and the jump hosts), so
//! the order of the raw arguments matters. The same scan finds the subcommand's name,
//! so options written before it can be handed to it.
use std::ffi::OsString;

/// Positions on the command line of the options whose order matters to ssh. Filled by
/// [`super::try_parse_from`], on the arguments as the subcommand reads them.
#[derive(Debug, Clone, Default)]
pub(crate) struct ArgPositions {
    pub(crate) user: Vec<usize>,
    pub(crate) port: Vec<usize>,
    pub(crate) jump: Vec<usize>,
    pub(crate) options: Vec<usize>,
    pub(crate) hosts: Vec<usize>,
    pub(crate) hosts_file: Option<usize>,
}

/// One argument as clap reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Word {
    /// An option (its value, attached or the next argument, is part of it).
    Option(String),
    /// A positional argument; `true` after `--`.
    Positional(bool),
}

/// Reads `args` (the program name first) as clap would, looking options up in `cmds` in
/// order: long and short options, clustered short flags, attached or separate values,
/// `--`. Returns each word's index and kind; an unknown option is taken as a flag (clap
/// refuses it anyway).
fn scan(args: &[OsString], cmds: &[&clap::Command]) -> Vec<(usize, Word)> {
    let takes_value = |a: &clap::Arg| a.get_action().takes_values();
    let find = |pred: &dyn Fn(&clap::Arg) -> bool| {
        cmds.iter()
            .find_map(|c| c.get_arguments().find(|a| pred(a)))
            .map(|a| (a.get_id().to_string(), takes_value(a)))
    };
    let mut words = Vec::new();
    let mut only_positionals = false;
    let mut i = 1;
    while let Some(raw) = args.get(i) {
        let t = raw.to_string_lossy();
        if only_positionals || t == "-" || !t.starts_with('-') {
            words.push((i, Word::Positional(only_positionals)));
        } else if t == "--" {
            only_positionals = true;
        } else if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let found =
                find(&|a| a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|al| al.contains(&name)));
            let (id, value) = found.unwrap_or_else(|| (name.to_string(), false));
            words.push((i, Word::Option(id)));
            if value && !attached {
                i += 1;
            }
        } else {
            let count = t.chars().count();
            for (k, c) in t.chars().skip(1).enumerate() {
                let Some((id, value)) = find(&|a| a.get_short() == Some(c)) else {
                    continue;
                };
                words.push((i, Word::Option(id)));
                if value {
                    // The value is the rest of this word, or the next word.
                    if k + 2 == count {
                        i += 1;
                    }
                    break;
                }
            }
        }
        i += 1;
    }
    words
}

/// The arguments with the subcommand's name moved to the front, when options stand
/// before it (`pvrdma-doctor --format json analyze DIR` is `pvrdma-doctor analyze --format
/// json DIR`): the subcommand then accepts or refuses them as its own. A word is the
/// subcommand only when it is the first positional argument, before any `--`, so
/// `pvrdma-doctor esx01 demo` diagnoses two hosts.
pub(super) fn subcommand_first(args: Vec<OsString>, cmd: &clap::Command) -> Vec<OsString> {
    let mut cmds = vec![cmd];
    cmds.extend(cmd.get_subcommands());
    let first = scan(&args, &cmds)
        .into_iter()
        .find(|(_, w)| matches!(w, Word::Positional(_)));
    match first {
        Some((at, Word::Positional(false)))
            if at > 1 && cmd.find_subcommand(args[at].to_string_lossy().as_ref()).is_some() =>
        {
            let mut out = args;
            let name = out.remove(at);
            out.insert(1, name);
            out
        }
        _ => args,
    }
}

impl ArgPositions {
    /// Notes where each option and host stood in `args` (as [`subcommand_first`] left
    /// them): clap's own indices restart inside a subcommand, so they cannot order `-l`
    /// against a host.
    pub(super) fn from_args(args: &[OsString], cmd: &clap::Command) -> Self {
        let sub = args
            .get(1)
            .and_then(|a| cmd.find_subcommand(a.to_string_lossy().as_ref()));
        let skip = usize::from(sub.is_some());
        let mut out = ArgPositions::default();
        for (at, word) in scan(args, &[sub.unwrap_or(cmd)]) {
            match word {
                Word::Positional(_) if at > skip => out.hosts.push(at),
                Word::Positional(_) => {}
                Word::Option(id) => match id.as_str() {
                    "user" => out.user.push(at),
                    "port" => out.port.push(at),
                    "jump" => out.jump.push(at),
                    "options" => out.options.push(at),
                    "hosts_file" => out.hosts_file = out.hosts_file.or(Some(at)),
                    _ => {}
                },
            }
        }
        out
    }

    /// `-l`, `-p`, `-J` and each `-o` of `args`, each with where it stood (one the scan
    /// did not see goes after every other option, before the hosts that have no place).
    pub(crate) fn ssh_options(&self, args: &super::SshArgs) -> Vec<(usize, pvrdma_ssh_config::CliOption)> {
        use pvrdma_ssh_config::CliOption;
        let at = |list: &[usize], i: usize| list.get(i).copied().unwrap_or(usize::MAX - 1);
        let mut items = Vec::new();
        if let Some(u) = &args.user {
            items.push((at(&self.user, 0), CliOption::Login(u.clone())));
        }
        if let Some(p) = &args.port {
            items.push((at(&self.port, 0), CliOption::Port(p.clone())));
        }
        if let Some(j) = &args.jump {
            items.push((at(&self.jump, 0), CliOption::Jump(j.clone())));
        }
        for (i, o) in args.options.iter().enumerate() {
            items.push((at(&self.options, i), CliOption::Option(o.clone())));
        }
        items
    }
}
