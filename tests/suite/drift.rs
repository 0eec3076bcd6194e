//! A new ESXi release reshapes a table: a column added at the end or in the middle, two
//! columns swapped, every column wider, the header in another case. Whatever the drift,
//! no definite result may change: the drifted output either parses to the very same rows,
//! or it is reported as not parsed (and what rests on it is `unknown`). Every table of
//! every sample scenario is drifted every way; proptest varies the column names, places
//! and widths.
use proptest::prelude::*;
use pvrdma_engine::capture::HostCapture;
use pvrdma_engine::diagnose::{self, Diagnosis, Status, Verdict};
use std::path::Path;

/// How a table is drifted.
#[derive(Debug, Clone)]
enum Drift {
    /// Re-aligned as it is (every cell left-aligned, two spaces between columns): the
    /// baseline every other drift starts from.
    Realigned,
    AddAtEnd(String),
    /// A column before column `at` (1..columns).
    AddInMiddle(usize, String),
    Swap(usize, usize),
    Widen(usize),
    /// Not a drift ESXi makes: two columns' values swapped under an unchanged header. The
    /// rows then differ, and the check must say so (it can fail).
    SwapValuesOnly(usize, usize),
    UpperCaseHeader,
    LowerCaseHeader,
}

/// One esxcli table inside an output: its header line, dash row and rows, by line index.
struct Table {
    header: usize,
    rows: std::ops::Range<usize>,
    /// Start column (in characters) of each dash run.
    starts: Vec<usize>,
}

fn is_dash_row(line: &str) -> bool {
    line.contains("--") && line.chars().all(|c| c == '-' || c == ' ')
}

fn tables(lines: &[&str]) -> Vec<Table> {
    let mut out = Vec::new();
    for i in 1..lines.len() {
        if !is_dash_row(lines[i]) || lines[i - 1].trim().is_empty() {
            continue;
        }
        let chars: Vec<char> = lines[i].chars().collect();
        let starts: Vec<usize> = (0..chars.len())
            .filter(|&k| chars[k] == '-' && (k == 0 || chars[k - 1] == ' '))
            .collect();
        let end = (i + 1..lines.len())
            .find(|&k| {
                let l = lines[k];
                l.trim().is_empty() || l.starts_with("==>") || l.starts_with("<==")
            })
            .unwrap_or(lines.len());
        out.push(Table {
            header: i - 1,
            rows: i + 1..end,
            starts,
        });
    }
    out
}

/// The cells of `line` cut at the column starts (a cell runs to the next column's start).
fn cells(line: &str, starts: &[usize]) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let e = starts.get(k + 1).copied().unwrap_or(chars.len()).min(chars.len());
            chars
                .get(s.min(e)..e)
                .map(|c| c.iter().collect::<String>())
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect()
}

/// `text` with every table drifted by `drift`; `None` when it holds no table.
fn drift(text: &str, drift: &Drift) -> Option<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let found = tables(&lines);
    if found.is_empty() {
        return None;
    }
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    for t in &found {
        let mut grid: Vec<Vec<String>> = std::iter::once(t.header)
            .chain(t.rows.clone())
            .map(|i| cells(lines[i], &t.starts))
            .collect();
        let n = t.starts.len();
        let mut widen = 0;
        match drift {
            Drift::Realigned => {}
            Drift::AddAtEnd(name) | Drift::AddInMiddle(_, name) => {
                let at = match drift {
                    Drift::AddInMiddle(at, _) => (*at).clamp(1, n.max(1)),
                    _ => n,
                };
                for (r, row) in grid.iter_mut().enumerate() {
                    let at = at.min(row.len());
                    row.insert(at, if r == 0 { name.clone() } else { format!("{name}{r}") });
                }
            }
            Drift::Swap(a, b) => {
                let (a, b) = (a % n, b % n);
                for row in &mut grid {
                    if a < row.len() && b < row.len() {
                        row.swap(a, b);
                    }
                }
            }
            Drift::Widen(by) => widen = *by,
            Drift::SwapValuesOnly(a, b) => {
                for row in grid.iter_mut().skip(1) {
                    if *a < row.len() && *b < row.len() {
                        row.swap(*a, *b);
                    }
                }
            }
            Drift::UpperCaseHeader => grid[0] = grid[0].iter().map(|c| c.to_uppercase()).collect(),
            Drift::LowerCaseHeader => grid[0] = grid[0].iter().map(|c| c.to_lowercase()).collect(),
        }
        let columns = grid.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|k| {
                grid.iter()
                    .filter_map(|r| r.get(k))
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(2)
                    + widen
            })
            .collect();
        let render = |row: &[String]| {
            let mut line = String::new();
            for (k, w) in widths.iter().enumerate() {
                let cell = row.get(k).map(String::as_str).unwrap_or("");
                line.push_str(&format!("{cell:<w$}"));
                if k + 1 < widths.len() {
                    line.push_str("  ");
                }
            }
            line.trim_end().to_string()
        };
        out[t.header] = render(&grid[0]);
        out[t.header + 1] = widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  ");
        for (i, row) in t.rows.clone().zip(&grid[1..]) {
            out[i] = render(row);
        }
    }
    Some(out.join("\n"))
}

/// A parse result as comparable text: the rows, or `None` for "did not parse".
struct Rows;
impl pvrdma_parsers::by_id::Visitor for Rows {
    type Output = Option<String>;
    fn visit<T: serde::Serialize + std::fmt::Debug>(self, r: Result<T, pvrdma_parsers::ParseError>) -> Option<String> {
        r.ok().map(|rows| format!("{rows:?}"))
    }
}

fn rows(id: &str, text: &str) -> Option<Option<String>> {
    pvrdma_parsers::by_id::parse_by_id(id, text, Rows)
}

/// A sample scenario read once: its captures and their diagnosis.
struct Scenario {
    path: std::path::PathBuf,
    captures: Vec<HostCapture>,
    diagnosis: Diagnosis,
}

fn scenarios() -> &'static [Scenario] {
    static ALL: std::sync::OnceLock<Vec<Scenario>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let mut paths: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.path()).collect();
        paths.sort();
        paths
            .into_iter()
            .filter(|p| p.is_dir())
            .filter_map(|path| {
                let captures = pvrdma_doctor::offline::load_captures(&path).ok()?;
                let diagnosis = diagnose::diagnose(&captures);
                Some(Scenario {
                    path,
                    captures,
                    diagnosis,
                })
            })
            .collect()
    })
}

/// Every (scenario, host, command id) whose sample output holds an esxcli table.
fn tabled_outputs() -> Vec<(&'static Scenario, String, String)> {
    let mut out = Vec::new();
    for scenario in scenarios() {
        for c in &scenario.captures {
            for (id, o) in &c.outputs {
                if rows(id, &o.stdout).is_some() && drift(&o.stdout, &Drift::Realigned).is_some() {
                    out.push((scenario, c.host.clone(), id.clone()));
                }
            }
        }
    }
    out
}

/// The definite results of a diagnosis: (host, check) → status and (host, VM, adapter) →
/// verdict, for pass/fail/warn and hca/tcp-fallback.
fn definite(d: &Diagnosis) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for h in &d.hosts {
        for c in &h.checks {
            if matches!(c.status, Status::Pass | Status::Fail | Status::Warn) {
                out.push((format!("{} {}", h.host, c.id), format!("{:?}", c.status)));
            }
        }
        for vm in &h.vms {
            for a in &vm.adapters {
                if matches!(a.verdict, Verdict::Hca | Verdict::TcpFallback) {
                    out.push((
                        format!("{} {} {}", h.host, vm.name, a.index),
                        format!("{:?}", a.verdict),
                    ));
                }
            }
        }
    }
    out
}

/// Drifts one output of one scenario and checks the promise; `Err` says what broke it.
fn check_drift(scenario: &Scenario, host: &str, id: &str, how: &Drift) -> Result<(), String> {
    let captures = &scenario.captures;
    let original = captures
        .iter()
        .find(|c| c.host == host)
        .and_then(|c| c.outputs.get(id))
        .map(|o| o.stdout.clone())
        .ok_or("no such output")?;
    let Some(drifted) = drift(&original, how) else {
        return Ok(());
    };
    let before = rows(id, &original).flatten();
    let after = rows(id, &drifted).flatten();
    let mut changed: Vec<HostCapture> = captures.to_vec();
    for c in changed.iter_mut().filter(|c| c.host == host) {
        if let Some(o) = c.outputs.get_mut(id) {
            o.stdout = drifted.clone();
        }
    }
    let d0 = &scenario.diagnosis;
    let d1 = diagnose::diagnose(&changed);
    let reported = d1
        .hosts
        .iter()
        .find(|h| h.host == host)
        .is_some_and(|h| h.unparsed_outputs.iter().any(|u| u.command == id));
    let where_ = format!("{} {host} {id} {how:?}:\n{drifted}", scenario.path.display());
    match (&before, &after) {
        (Some(b), Some(a)) if a != b => return Err(format!("parsed to other rows: {where_}")),
        (Some(_), None) if !reported => return Err(format!("did not parse and the report does not say so: {where_}")),
        _ => {}
    }
    let (r0, r1) = (definite(d0), definite(&d1));
    for (key, status) in &r1 {
        match r0.iter().find(|(k, _)| k == key) {
            Some((_, s)) if s == status => {}
            Some((_, s)) => return Err(format!("{key} went from {s} to {status}: {where_}")),
            None => return Err(format!("{key} became {status} only after the drift: {where_}")),
        }
    }
    // Whatever was definite and is no longer became unknown because the output was
    // reported as not parsed.
    if r0.len() != r1.len() && !reported {
        return Err(format!("a definite result was lost without a parse failure: {where_}"));
    }
    Ok(())
}

fn every_drift(columns: usize) -> Vec<Drift> {
    let mut all = vec![
        Drift::Realigned,
        Drift::AddAtEnd("Added".into()),
        Drift::Widen(3),
        Drift::UpperCaseHeader,
        Drift::LowerCaseHeader,
    ];
    for at in 1..columns {
        all.push(Drift::AddInMiddle(at, "Added".into()));
    }
    // Neighbours and the two ends; proptest swaps any two.
    for a in 0..columns.saturating_sub(1) {
        all.push(Drift::Swap(a, a + 1));
    }
    if columns > 2 {
        all.push(Drift::Swap(0, columns - 1));
    }
    all
}

#[test]
fn every_table_of_every_sample_survives_every_drift() {
    let outputs = tabled_outputs();
    assert!(outputs.len() > 50, "only {} tables found under samples/", outputs.len());
    let mut parsed_alike = 0;
    let mut failures = Vec::new();
    let mut not_parsed = 0;
    for (scenario, host, id) in &outputs {
        let text = &scenario.captures.iter().find(|c| &c.host == host).unwrap().outputs[id].stdout;
        let lines: Vec<&str> = text.split('\n').collect();
        let columns = tables(&lines).iter().map(|t| t.starts.len()).max().unwrap_or(0);
        // Re-aligning alone must keep the rows, or every other drift proves nothing.
        let realigned = drift(text, &Drift::Realigned).unwrap();
        assert_eq!(
            rows(id, &realigned).flatten(),
            rows(id, text).flatten(),
            "{} {host} {id}: re-aligned\n{realigned}",
            scenario.path.display()
        );
        for how in every_drift(columns) {
            if let Err(e) = check_drift(scenario, host, id, &how) {
                failures.push(e);
            } else if rows(id, &drift(text, &how).unwrap()).flatten() == rows(id, text).flatten() {
                parsed_alike += 1;
            } else {
                not_parsed += 1;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} drifts broke the promise; first:\n{}",
        failures.len(),
        failures[0]
    );
    eprintln!(
        "{} tables: {parsed_alike} drifts parsed alike, {not_parsed} reported as not parsed",
        outputs.len()
    );
    // Most drifts (added and swapped columns, widths) are read by the header.
    assert!(
        parsed_alike > outputs.len() * 3,
        "only {parsed_alike} drifts parsed alike"
    );
}

#[test]
fn the_check_catches_a_table_read_into_other_rows() {
    let outputs = tabled_outputs();
    let caught = outputs
        .iter()
        .filter(|(_, _, id)| id == "esxcli_rdma_device_list")
        .filter(|(s, h, id)| check_drift(s, h, id, &Drift::SwapValuesOnly(0, 1)).is_err())
        .count();
    assert!(
        caught > 0,
        "swapping two columns' values under their header went unnoticed"
    );
}

fn any_drift() -> impl Strategy<Value = Drift> {
    let name = "[A-Z][a-z]{1,8}( [A-Z][a-z]{1,6})?";
    prop_oneof![
        name.prop_map(Drift::AddAtEnd),
        (1usize..8, name).prop_map(|(at, n)| Drift::AddInMiddle(at, n)),
        (0usize..8, 0usize..8).prop_map(|(a, b)| Drift::Swap(a, b)),
        (1usize..40).prop_map(Drift::Widen),
        Just(Drift::UpperCaseHeader),
        Just(Drift::LowerCaseHeader),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random names, places and widths on a random table of the samples.
    #[test]
    fn no_drift_changes_a_definite_result(pick in any::<prop::sample::Index>(), how in any_drift()) {
        let outputs = tabled_outputs();
        let (scenario, host, id) = &outputs[pick.index(outputs.len())];
        if let Err(e) = check_drift(scenario, host, id, &how) {
            prop_assert!(false, "{}", e);
        }
    }
}
