//! Pipeline stage *collect*, live: the catalogue as a small dependency graph.
//!
//! Every command whose inputs are known starts at once, up to the channel window; a
//! command that needs another's output (the per-adapter batches need the vsish listing's
//! World IDs and adapter nodes) is built from that output and starts the moment it
//! arrives, ahead of independent commands still waiting for a channel (it is on the
//! critical path). Nothing is sent twice: the listing a batch is built from is the
//! listing that was collected.
//!
//! The scheduler knows nothing about SSH: it hands `(spec, command line)` to an executor
//! and learns from the [`Ran`] it gets back. A refused channel open is retried after a
//! short back-off (sshd frees a session slot a moment after the close, so the first
//! refusal is often that); a command refused again (the server's `MaxSessions` is lower
//! than the window) shrinks the window by one each time, down to one. After
//! [`OPEN_RETRIES`] refusals a command is retried only while no other channel is open,
//! [`OPEN_RETRIES`] more times, before it is given up.
use futures::stream::{FuturesUnordered, StreamExt};
use pvrdma_engine::capture::{ErrorKind, Failure, RawOutput};
use pvrdma_engine::catalogue::{self, CommandSpec};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// Refused channel opens tolerated while other channels are open, and again while the
/// command is the only one left.
const OPEN_RETRIES: usize = 5;

/// What running one command ended with, as the executor saw it.
#[derive(Debug)]
pub(crate) enum Ran {
    /// It ran (or timed out, or was cut): what it printed and how it ended.
    Done(RawOutput),
    /// The server refused the channel open; nothing ran. The text is the server's reason.
    Refused(String),
    /// The connection broke before it could run.
    Lost(Failure),
}

/// What to do with a command once its inputs are in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Launch {
    /// Send this command line.
    Run(String),
    /// Nothing to ask: the inputs name no item (no PVRDMA adapter). The output is recorded
    /// as empty, with this text as its command, so it reads as "none" rather than missing.
    Nothing(String),
    /// The inputs failed: the command cannot be built and is not sent.
    NotRun(Failure),
}

/// Builds `spec`'s command line from its inputs (`outputs`/`missing` of the host so far):
/// a batch reads its keys from the output it needs, as the catalogue declares.
fn launch(
    host: &str,
    spec: &CommandSpec,
    outputs: &BTreeMap<String, RawOutput>,
    missing: &BTreeMap<String, Failure>,
) -> Launch {
    let Some(batch) = spec.batch() else {
        return Launch::Run(spec.command.to_string());
    };
    let not_run = |why: String| not_run(host, spec, batch.keys.built_from(), why);
    let source = match clean_input(outputs, missing, batch.keys.needs()) {
        Ok(o) => o,
        Err(why) => return not_run(why),
    };
    let keys = match batch.keys.read(&source.stdout) {
        Ok(keys) => keys,
        Err(e) => return not_run(format!("did not parse ({})", e.spot())),
    };
    keyed_batch(spec, &keys, batch.keys.none(), || {
        not_run(batch.keys.unsafe_key().to_string())
    })
}

/// The batch `spec` over `keys`; `Nothing` (with `no_keys` as its note) when there is no
/// key, `bad_key()` when a key cannot reach a shell.
fn keyed_batch(spec: &CommandSpec, keys: &[String], no_keys: &str, bad_key: impl FnOnce() -> Launch) -> Launch {
    if keys.is_empty() {
        return Launch::Nothing(format!("(not sent: {no_keys})"));
    }
    match catalogue::batch_command(spec.id, keys) {
        Some(line) => Launch::Run(line),
        None => bad_key(),
    }
}

/// A dependent command that cannot be built: `built_from` says what from ("is built from
/// ...", "reads ..."), `why` what went wrong with it.
fn not_run(host: &str, spec: &CommandSpec, built_from: &str, why: String) -> Launch {
    Launch::NotRun(Failure::of_host(
        ErrorKind::CommandFailed,
        host,
        format!("`{}` was not run: it {built_from}, which {why}", spec.id),
    ))
}

/// The output a dependent command is built from, when it is whole and exited 0; else why
/// not, worded to follow "which" (`was not collected`, `failed (...)`, `exited with ...`).
fn clean_input<'a>(
    outputs: &'a BTreeMap<String, RawOutput>,
    missing: &BTreeMap<String, Failure>,
    id: &str,
) -> Result<&'a RawOutput, String> {
    let Some(output) = outputs.get(id) else {
        return Err(match missing.get(id) {
            Some(f) => format!("was not collected ({})", f.message),
            None => "was not collected".to_string(),
        });
    };
    if let Some(f) = &output.failure {
        return Err(format!("failed ({})", f.message));
    }
    if let Some(problem) = output.outcome().problem() {
        return Err(problem);
    }
    if let Some(code) = output.exit_status.filter(|c| *c != 0) {
        let first = output
            .stderr
            .lines()
            .chain(output.stdout.lines())
            .map(str::trim)
            .find(|l| !l.is_empty());
        return Err(format!(
            "exited with status {code}: {}",
            first.unwrap_or("no error message")
        ));
    }
    Ok(output)
}

/// Everything the graph produced for one host.
#[derive(Debug, Default)]
pub(crate) struct Finished {
    /// Copies of the outputs that waiting commands are still to be built from (every
    /// output went to `on_done`).
    outputs: BTreeMap<String, RawOutput>,
    /// Ids of the finished outputs.
    settled: Vec<String>,
    pub(crate) missing: BTreeMap<String, Failure>,
}

type Event<'s> = Pin<Box<dyn Future<Output = Step> + Send + 's>>;

enum Step {
    /// What a command ran into (boxed: an output is large, a wake-up small).
    Ran(usize, usize, String, Box<Ran>),
    /// A refused command's back-off is over.
    Wake(usize, usize, String),
}

/// Runs `specs` as a dependency graph with at most `window` commands at once. `exec`
/// runs one command line; `on_done` sees each output as soon as it is in (so an
/// interrupted run keeps it). `host` names the host in messages.
pub(crate) async fn run<'s, E, F>(
    specs: &'s [CommandSpec],
    window: usize,
    host: &str,
    exec: E,
    on_done: &(dyn Fn(&str, RawOutput) + Send + Sync),
) -> Finished
where
    E: Fn(&'s CommandSpec, String) -> F,
    F: Future<Output = Ran> + Send + 's,
{
    let mut done = Finished::default();
    let mut window = window.max(1);
    let (mut waiting, mut ready) = first_queue(specs);
    let mut events: FuturesUnordered<Event<'s>> = FuturesUnordered::new();
    let mut busy = 0usize;
    loop {
        // Start what fits. A command refused OPEN_RETRIES times waits until it is alone.
        while busy < window {
            let pos = ready
                .iter()
                .position(|(_, attempts, _)| *attempts < OPEN_RETRIES || busy == 0);
            let Some((i, attempts, line)) = pos.and_then(|p| ready.remove(p)) else {
                break;
            };
            let Some(spec) = specs.get(i) else { continue };
            let fut = exec(spec, line.clone());
            busy += 1;
            events.push(Box::pin(
                async move { Step::Ran(i, attempts, line, Box::new(fut.await)) },
            ));
        }
        let Some(step) = events.next().await else { break };
        match step {
            Step::Wake(i, attempts, line) => ready.push_front((i, attempts, line)),
            Step::Ran(i, attempts, line, ran) => {
                busy = busy.saturating_sub(1);
                let Some(spec) = specs.get(i) else { continue };
                match *ran {
                    Ran::Done(out) => settle(specs, &mut done, spec.id, out, on_done),
                    Ran::Lost(f) => {
                        done.missing.insert(spec.id.to_string(), f);
                    }
                    Ran::Refused(why) => {
                        let attempts = attempts + 1;
                        match after_refusal(host, spec.id, attempts, &why, busy, &mut window) {
                            Err(gave_up) => {
                                done.missing.insert(spec.id.to_string(), gave_up);
                            }
                            Ok(pause) => events.push(Box::pin(async move {
                                tokio::time::sleep(pause).await;
                                Step::Wake(i, attempts, line)
                            })),
                        }
                        continue;
                    }
                }
                // Whatever this settled may free dependents.
                release(host, specs, &mut waiting, &mut ready, &mut done, on_done);
            }
        }
    }
    done
}

/// The commands to start (index, attempts so far, command line), those that others wait
/// for first since they are on the critical path; and the indexes of those whose inputs
/// are still out.
fn first_queue(specs: &[CommandSpec]) -> (Vec<usize>, VecDeque<(usize, usize, String)>) {
    let mut waiting: Vec<usize> = Vec::new();
    let mut ready: VecDeque<(usize, usize, String)> = VecDeque::new();
    let mut order: Vec<usize> = (0..specs.len()).collect();
    order.sort_by_key(|&i| {
        specs
            .get(i)
            .map(|s| !any_built_from(specs.iter(), s.id))
            .unwrap_or(true)
    });
    for i in order {
        let Some(spec) = specs.get(i) else { continue };
        // A dependency outside `specs` can never arrive: build from what there is.
        if spec.needs().iter().any(|n| specs.iter().any(|s| s.id == *n)) {
            waiting.push(i);
        } else {
            ready.push_back((i, 0, spec.command.to_string()));
        }
    }
    (waiting, ready)
}

/// After the server refused a session channel for `id` (`attempts` times now, `busy`
/// channels open): the pause before trying again, or the failure that gives up on it.
/// sshd frees a session slot a moment after the channel's close, so a first refusal is
/// most often a slot still held by a command that just ended: retry it as it is. A
/// command refused again means the server allows fewer channels: the window shrinks.
fn after_refusal(
    host: &str,
    id: &str,
    attempts: usize,
    why: &str,
    busy: usize,
    window: &mut usize,
) -> Result<Duration, Failure> {
    if attempts > 1 {
        *window = window.saturating_sub(1).max(1);
    }
    tracing::debug!("{host}: channel for `{id}` refused ({why}) with {busy} open; window now {window}");
    if attempts >= 2 * OPEN_RETRIES {
        return Err(Failure::of_host(
            ErrorKind::CommandFailed,
            host,
            format!(
                "the server refused a session channel for `{id}` {attempts} times ({why}); check MaxSessions in the host's sshd_config"
            ),
        ));
    }
    Ok(if attempts < OPEN_RETRIES {
        Duration::from_millis(20 * attempts as u64)
    } else {
        Duration::from_millis(100 * (attempts - OPEN_RETRIES + 1) as u64)
    })
}

/// Whether one of `specs` is built from the output of `id`.
fn any_built_from<'s>(mut specs: impl Iterator<Item = &'s CommandSpec>, id: &str) -> bool {
    specs.any(|s| s.needs() == Some(id))
}

/// Hands a finished output to `on_done` (moved: outputs are the bulk of a flooding fleet's
/// memory) and keeps a copy only when another command is built from it (the listing),
/// until [`release`] has built them.
fn settle(
    specs: &[CommandSpec],
    done: &mut Finished,
    id: &str,
    out: RawOutput,
    on_done: &(dyn Fn(&str, RawOutput) + Send + Sync),
) {
    if any_built_from(specs.iter(), id) {
        done.outputs.insert(id.to_string(), out.clone());
    }
    done.settled.push(id.to_string());
    on_done(id, out);
}

/// Moves every waiting command whose inputs are all settled to the front of the queue
/// (or settles it without running when it has nothing to ask or cannot be built).
fn release(
    host: &str,
    specs: &[CommandSpec],
    waiting: &mut Vec<usize>,
    ready: &mut VecDeque<(usize, usize, String)>,
    done: &mut Finished,
    on_done: &(dyn Fn(&str, RawOutput) + Send + Sync),
) {
    loop {
        let settled = |id: &str| done.settled.iter().any(|s| s == id) || done.missing.contains_key(id);
        let Some(pos) = waiting.iter().position(|&i| {
            specs.get(i).is_some_and(|s| {
                s.needs()
                    .iter()
                    .all(|n| settled(n) || !specs.iter().any(|x| x.id == *n))
            })
        }) else {
            // A copy no waiting command is built from is dead weight (a flooding host's
            // listing can be megabytes).
            done.outputs
                .retain(|id, _| any_built_from(waiting.iter().filter_map(|&i| specs.get(i)), id));
            return;
        };
        let i = waiting.remove(pos);
        let Some(spec) = specs.get(i) else { continue };
        match launch(host, spec, &done.outputs, &done.missing) {
            // A dependent that runs `esxcli` (a second's wait on a real host) is on the
            // critical path and goes first; a quick one (vsish, grep) fits in later.
            Launch::Run(line) if spec.quick => ready.push_back((i, 0, line)),
            Launch::Run(line) => ready.push_front((i, 0, line)),
            Launch::Nothing(note) => {
                // Nothing to ask is a complete answer: "no item", exit 0.
                let mut out = RawOutput::new(spec.id, note);
                out.exit_status = Some(0);
                settle(specs, done, spec.id, out, on_done);
            }
            Launch::NotRun(f) => {
                done.missing.insert(spec.id.to_string(), f);
            }
        }
    }
}

#[cfg(test)]
mod tests;
