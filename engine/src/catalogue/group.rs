//! The single-answer commands that share one channel: one command line runs them at once
//! on the host as a framed batch, and each answer comes back on its own.
use super::*;

/// Whether `spec` is sent with the others of its kind on one channel ([`group_command`]):
/// a whole answer that no other command is built from. Each channel costs the client a
/// round of SSH messages (open, exec, its reply, end of output, exit status, close) and
/// the wake-ups that go with them, most of a host's client CPU when every command had its
/// own; grouped, eleven commands share one. The listings that other commands are built
/// from keep their own channel, so their dependents start the moment they arrive,
/// whatever the rest of the group is doing. The distributed switch list keeps its own
/// channel too: it lists every DVPort of the host (about 100 bytes each), so a large host
/// can print more than a query of a group may ([`SECTION_CAP`]); alone, it has the
/// per-command cap.
pub fn is_grouped(spec: &CommandSpec) -> bool {
    spec.framing == Framing::Whole && spec.id != DVS_LIST && !CATALOGUE.iter().any(|s| s.needs() == Some(spec.id))
}

/// How the group of single-answer commands is named where it shows as one: `-v` lines,
/// `--list-checks`. It is never an output of its own: each command's answer is.
pub const GROUPED_COMMANDS: &str = "grouped_commands";

/// What the group runs, for `--list-checks`.
pub const GROUPED_WHY: &str = "the single-answer commands that no other command is built from, run at once on one channel; each answer comes back framed on its own, with its own exit status, so a hung one costs only its own answer";

/// The ids of the catalogue's grouped commands, in catalogue order.
pub fn grouped_ids() -> Vec<&'static str> {
    CATALOGUE.iter().filter(|s| is_grouped(s)).map(|s| s.id).collect()
}

/// The one command line that runs every grouped command ([`group_command`] of
/// [`grouped_ids`]); `None` when fewer than two are grouped (each then goes alone).
pub fn grouped_command() -> Option<String> {
    let ids = grouped_ids();
    group_command(&ids).filter(|_| ids.len() >= 2)
}

/// How a group's command line starts: a `case` that runs one command per key.
const GROUP_OPEN: &str = "q() { case \"$1\" in ";

/// The functions of a group after its `case`: the batch framing, so each command's answer
/// travels on its own and one hung command costs only its own answer.
const GROUP_FRAMING: &str = concat!("esac; }; ", frame_functions!());

/// One command line that runs the grouped commands `ids` (see [`is_grouped`]) at once, as
/// a concurrent batch whose keys are the ids: `q` runs the command of its key (exactly the
/// catalogue's line, `2>&1` as in every batch), and the answers come back framed.
/// `None` when an id is not a grouped command.
pub fn group_command(ids: &[&str]) -> Option<String> {
    let mut line = String::from(GROUP_OPEN);
    for id in ids {
        let spec = spec(id).filter(|s| is_grouped(s))?;
        line.push_str(spec.id);
        line.push_str(") ");
        line.push_str(spec.command);
        line.push_str(" ;; ");
    }
    line.push_str(GROUP_FRAMING);
    Some(batch_line(&line, ids.iter().copied()))
}

/// The ids a [`group_command`] line runs, in order; `None` for any other line.
pub fn group_keys(command: &str) -> Option<Vec<String>> {
    let (_, keys) = command.strip_prefix(GROUP_OPEN)?.split_once(GROUP_FRAMING)?;
    let ids: Vec<&str> = keys.strip_prefix("b ")?.split(' ').collect();
    let rebuilt = group_command(&ids)?;
    (rebuilt == command).then(|| ids.into_iter().map(str::to_string).collect())
}

/// Whether `command` is a line the catalogue sends: a command as written, a concurrent
/// batch, or a group of single-answer commands. What a simulated host or an audit of the
/// lines sent accepts, and nothing else.
pub fn is_catalogue_line(command: &str) -> bool {
    CATALOGUE.iter().any(|s| s.command == command) || batch_keys(command).is_some() || group_keys(command).is_some()
}
