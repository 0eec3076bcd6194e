//! Documented exit codes of the program: the application layer's contract with scripts.
//! `--format nagios` answers with the monitoring-plugin codes instead (0 OK, 1 WARNING,
//! 2 CRITICAL, 3 UNKNOWN; see the plugin report's `State`).
/// All hosts reached, no failing check, every adapter on the HCA.
pub const HEALTHY: u8 = 0;
/// A failing check or a `tcp-fallback` adapter.
pub const PROBLEMS: u8 = 1;
/// Usage or internal error.
pub const USAGE: u8 = 2;
/// Nothing failed, but a host was unreachable, a check/verdict is unknown, or a VM-first
/// run's chosen VM was not diagnosed.
pub const INCOMPLETE: u8 = 3;
/// Nothing failed and nothing else is unknown, but a host was judged from its
/// configuration only (read through the vSphere API, without SSH): its configuration
/// predicts the HCA, its transport was not observed.
pub const CONFIGURATION_ONLY: u8 = 4;
/// Ctrl-C stopped the run (128 + SIGINT, as shells report it); the report covers
/// what was collected.
pub const INTERRUPTED: u8 = 130;

/// What an exit code means, in the words above, for a report that states its code (the
/// HTML page); `None` for a code this tool does not document.
pub fn meaning(code: u8) -> Option<&'static str> {
    Some(match code {
        HEALTHY => "all hosts reached, no failing check, every adapter on the HCA",
        PROBLEMS => "a failing check or a tcp-fallback adapter",
        USAGE => "usage or internal error",
        INCOMPLETE => "nothing failed, but a host was unreachable or a check or verdict is unknown",
        CONFIGURATION_ONLY => {
            "nothing failed and nothing else is unknown, but a host was judged from its configuration only \
             (read through the vSphere API, without SSH): its configuration predicts the HCA, its transport was not observed"
        }
        INTERRUPTED => "Ctrl-C stopped the run; the report covers what was collected",
        _ => return None,
    })
}
