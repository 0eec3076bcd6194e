//! One simulated ESXi host of `demo` and the scaling benchmark: its capture files, and
//! what it answers for a command line. Shared by the demo's SSH server and the simulated
//! network of `--probe`.
use pvrdma_engine::capture::folder;
use pvrdma_engine::catalogue::CATALOGUE;
use std::collections::BTreeMap;

/// One simulated host: its name and its capture files by file name.
#[derive(Debug, Clone)]
pub struct SimHost {
    pub name: String,
    pub(crate) files: BTreeMap<String, String>,
}

impl SimHost {
    /// A host whose capture is only a connection failure: its port is closed.
    pub(crate) fn is_down(&self) -> bool {
        folder::is_down(&|name| self.files.contains_key(name))
    }

    /// The captured stdout of catalogue command `id` (empty when not captured).
    pub(crate) fn stdout(&self, id: &str) -> &str {
        self.files.get(&folder::stdout_file(id)).map_or("", String::as_str)
    }

    /// What the host prints for a command line: (stdout, stderr, exit status). Anything
    /// outside the catalogue gets busybox's answer for an unknown command.
    pub(crate) fn answer(&self, command: &str) -> (String, String, u32) {
        if let Some((id, keys)) = pvrdma_engine::catalogue::batch_keys(command) {
            return (self.batch_answer(id, &keys), String::new(), 0);
        }
        if let Some(ids) = pvrdma_engine::catalogue::group_keys(command) {
            return (self.group_answer(&ids), String::new(), 0);
        }
        let Some(spec) = CATALOGUE.iter().find(|s| s.command == command) else {
            let word = command.split_whitespace().next().unwrap_or("");
            return (String::new(), format!("sh: {word}: not found\n"), 127);
        };
        let get =
            |name: &str| -> Result<Option<String>, std::convert::Infallible> { Ok(self.files.get(name).cloned()) };
        let Ok(files) = folder::read_output(spec.id, &get);
        match files {
            // A scenario's unreadable `.exit` answers 0, as the command most likely did.
            Some(files) => {
                let exit = files.exit_status().unwrap_or(0);
                (files.stdout, files.stderr, exit)
            }
            // Not captured in the scenario: the shape of a command ESXi does not know.
            None => (
                String::new(),
                format!("Error: Unknown command or namespace {command}\n"),
                1,
            ),
        }
    }
}

impl SimHost {
    /// What a group of catalogue commands prints: each command's answer (stderr after
    /// stdout, as `2>&1` merges them) framed as a host's batch frames it, the last command
    /// first, as a host whose queries finish in any order would send them.
    fn group_answer(&self, ids: &[String]) -> String {
        let answered: Vec<(String, u32)> = ids
            .iter()
            .map(|id| {
                let command = pvrdma_engine::catalogue::spec(id).map_or("", |s| s.command);
                let (stdout, stderr, exit) = self.answer(command);
                (format!("{stdout}{stderr}"), exit)
            })
            .collect();
        let order: Vec<(usize, &str, u32)> = answered
            .iter()
            .enumerate()
            .rev()
            .map(|(n, (text, exit))| (n, text.as_str(), *exit))
            .collect();
        pvrdma_engine::capture::frames::encode(ids, &order)
    }

    /// What a concurrent batch prints for `keys`: the captured section of each key (empty
    /// when the capture has none), framed as a host's batch frames it, in the order the
    /// queries finish (here: the last key first, so the client's sorting is exercised).
    fn batch_answer(&self, id: &str, keys: &[String]) -> String {
        let captured = self.stdout(id);
        let mut bodies: BTreeMap<&str, (String, u32)> = BTreeMap::new();
        let mut current: Option<&str> = None;
        for line in captured.lines() {
            if let Some(key) = line.strip_prefix("==> ").and_then(|l| l.strip_suffix(" <==")) {
                current = Some(key.trim());
                bodies.entry(key.trim()).or_default();
            } else if let Some((key, code)) = pvrdma_parsers::batch_end_marker(line) {
                if let Some(body) = bodies.get_mut(key) {
                    body.1 = code;
                }
                current = None;
            } else if let Some(body) = current.and_then(|k| bodies.get_mut(k)) {
                body.0.push_str(line);
                body.0.push('\n');
            }
        }
        let answers: Vec<(usize, &str, u32)> = keys
            .iter()
            .enumerate()
            .rev()
            .map(|(n, key)| {
                let (text, code) = bodies.get(key.as_str()).map_or(("", 0), |(t, c)| (t.as_str(), *c));
                (n, text, code)
            })
            .collect();
        pvrdma_engine::capture::frames::encode(keys, &answers)
    }
}
