//! Differential test: our node sets against ClusterShell's own `NodeSet` (the PyPI package
//! `ClusterShell`, which `nodeset` and `clush` use), on generated expressions. For each
//! expression both must refuse it, or both must give the same names in the same order and
//! the same folded text; for each generated list of names both must fold it the same.
//! Groups come from a ClusterShell configuration written here (a `groups.conf` source
//! with `map`/`all`/`list` shell commands, `groups.conf.d` sources, one with `mapall`, a
//! YAML autodir file),
//! found by both through `CLUSTERSHELL_CFGDIR`, as `nodeset` finds it.
//!
//! Seeded and reproducible; a failure is shrunk to a minimal expression. Case count:
//! `PVRDMA_NODESET_ORACLE_CASES` (default 2000), seed: `PVRDMA_NODESET_ORACLE_SEED`.
//! Deliberate differences (the README lists them) are not generated: negative indexes,
//! numbers beyond 64 bits, non-ASCII digits; an expression over our size limit
//! (10,000 names) is counted and skipped.
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use pvrdma_doctor::hosts::groups::GroupConfig;
use pvrdma_nodeset::NodeSetError;
use serde_json::Value;
use std::cell::RefCell;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

const GROUPS_CONF: &str = "\
# The test's own ClusterShell configuration (overrides any installed [Main] and [local]).
[Main]
default: local
confdir: $CFGDIR/groups.conf.d
autodir: $CFGDIR/groups.d

[local]
map: sed -n 's/^$GROUP:\\(.*\\)/\\1/p' $CFGDIR/local.groups
all: sed -n 's/^all:\\(.*\\)/\\1/p' $CFGDIR/local.groups
list: sed -n 's/^\\([0-9A-Za-z_-]*\\):.*/\\1/p' $CFGDIR/local.groups
";

const LOCAL_GROUPS: &str = "\
esxi: esx[01-04]
rack1: esx[01-02] db1
rack2: esx[03-06],db2
nested: @rack1,esx09
loop: @loop
all: esx[01-08],db[1-2]
";

const DC_CONF: &str = "\
[dc]
map: echo dc-$GROUP[1-3]
list: echo east west
";

const MAPALL_CONF: &str = "\
[ma]
mapall: printf 'g1: ma[1-2]\\ng2: ma3\\ng1: ma9\\n'
";

const CLUSTER_YAML: &str = "\
yaml:
  compute: 'node[1-8]'
  gpu: ['gpu1', 'gpu[2-3]']
  empty:
  all: 'node[1-8],gpu[1-3]'
  r1: 'node[1-4]!node3'
";

struct Oracle {
    next_id: u64,
    stdin: ChildStdin,
    lines: Receiver<String>,
    child: Child,
}

impl Oracle {
    fn start(cfg: &Path, home: &Path) -> Oracle {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/clustershell_oracle.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("xdg"))
            .env("CLUSTERSHELL_CFGDIR", cfg)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 with the ClusterShell package (scripts/install-test-deps.sh installs it)");
        let stdout = child.stdout.take().expect("oracle stdout");
        let stdin = child.stdin.take().expect("oracle stdin");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Oracle {
            next_id: 0,
            stdin,
            lines: rx,
            child,
        }
    }

    /// Asks and waits for the answer with the same id; answers to an earlier question
    /// that timed out are skipped, so one slow case cannot shift the answers of the next.
    fn ask(&mut self, request: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut request = request.clone();
        request["id"] = id.into();
        writeln!(self.stdin, "{request}").expect("write to the ClusterShell oracle");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let answer: Value = serde_json::from_str(&line).expect("oracle answers JSON");
                    if answer["id"] == id {
                        return answer;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("ClusterShell took over a minute on {request}"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the ClusterShell oracle exited (is the ClusterShell package installed?)")
                }
            }
        }
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    cfg: PathBuf,
    home: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    let home = dir.path().join("home");
    std::fs::create_dir_all(cfg.join("groups.conf.d")).unwrap();
    std::fs::create_dir_all(cfg.join("groups.d")).unwrap();
    std::fs::create_dir_all(home.join("xdg")).unwrap();
    std::fs::write(cfg.join("groups.conf"), GROUPS_CONF).unwrap();
    std::fs::write(cfg.join("local.groups"), LOCAL_GROUPS).unwrap();
    std::fs::write(cfg.join("groups.conf.d/dc.conf"), DC_CONF).unwrap();
    std::fs::write(cfg.join("groups.conf.d/ma.conf"), MAPALL_CONF).unwrap();
    std::fs::write(cfg.join("groups.d/cluster.yaml"), CLUSTER_YAML).unwrap();
    Setup { _dir: dir, cfg, home }
}

fn ours(setup: &Setup) -> GroupConfig {
    GroupConfig::from_files(GroupConfig::default_files(
        Some(&setup.home),
        Some(&setup.home.join("xdg")),
        Some(&setup.cfg),
    ))
}

fn runner(cases: u32) -> TestRunner {
    let seed: u64 = std::env::var("PVRDMA_NODESET_ORACLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

fn cases() -> u32 {
    std::env::var("PVRDMA_NODESET_ORACLE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

// ---- generators ----

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => (0u32..13).prop_map(|n| n.to_string()),
        3 => (0u32..13, 2usize..4).prop_map(|(n, w)| format!("{n:0w$}")),
        1 => (0u32..120).prop_map(|n| n.to_string()),
        1 => Just("00".to_string()),
    ]
}

fn range_item() -> impl Strategy<Value = String> {
    let pair = || {
        (number(), number(), any::<bool>()).prop_map(|(a, b, keep)| {
            let (x, y) = (a.parse::<u32>().unwrap_or(0), b.parse::<u32>().unwrap_or(0));
            if keep || x <= y {
                (a, b)
            } else {
                (b, a)
            }
        })
    };
    prop_oneof![
        6 => number(),
        8 => pair().prop_map(|(a, b)| format!("{a}-{b}")),
        2 => (pair(), 1u32..4).prop_map(|((a, b), s)| format!("{a}-{b}/{s}")),
        2 => prop::sample::select(vec![
            "", "a-c", "1/2", "1:4", " 3", "2 ", "1-", "x", "3-5/0", "0-0", "1_0", "+2", "0-00", "1-010", "001-10",
            "1 - 3", "2/1", "1-3/", "07-7", "7-07",
        ])
        .prop_map(str::to_string),
    ]
}

fn bracket() -> impl Strategy<Value = String> {
    prop::collection::vec(range_item(), 1..4).prop_map(|v| format!("[{}]", v.join(",")))
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["esx", "r", "n", ".dc", "db", "-", "node", "gpu", "x", "%", "a.b"]).prop_map(str::to_string),
        3 => number(),
        4 => bracket(),
        1 => prop::sample::select(vec!["]", "[", " ", "[1]]", "a@b"]).prop_map(str::to_string),
    ]
}

fn operand() -> impl Strategy<Value = String> {
    let text = prop::sample::select(vec!["esx", "r", "db", "node", "gpu", "x"]).prop_map(str::to_string);
    prop_oneof![
        8 => (text, prop::collection::vec(piece(), 0..4)).prop_map(|(t, v)| format!("{t}{}", v.concat())),
        2 => prop::collection::vec(piece(), 1..4).prop_map(|v| v.concat()),
        3 => prop::sample::select(vec![
            "@esxi", "@rack1", "@rack2", "@nested", "@rack[1-2]", "@yaml:compute", "@yaml:gpu", "@yaml:empty",
            "@yaml:r1", "@dc:east", "@dc:x", "@unknown", "@*", "@yaml:*", "@@yaml", "@@local", "@nosuch:g",
            "@loop", "@dc:*", "@local:esxi", "@:esxi", "@ma:g1", "@ma:g[1-2]", "@ma:*", "@@ma", "@ma:none",
        ])
        .prop_map(str::to_string),
        1 => prop::sample::select(vec!["esx0*", "*", "db?", "node*", "gpu[1-2]*", "esx[01-02]?", "*1"])
            .prop_map(str::to_string),
    ]
}

fn expression() -> impl Strategy<Value = String> {
    let op = prop::sample::select(vec![",", ",", ",", "!", "&", "^", ", ", " ,", " ! ", ",,"]);
    (
        operand(),
        prop::collection::vec((op, operand()), 0..4),
        prop::sample::select(vec!["", "", "", " ", "\t"]),
    )
        .prop_map(|(first, rest, pad)| {
            let mut s = format!("{pad}{first}");
            for (o, x) in rest {
                s.push_str(o);
                s.push_str(&x);
            }
            s.push_str(pad);
            s
        })
}

fn name_list() -> impl Strategy<Value = Vec<String>> {
    let name = || {
        (
            prop::sample::select(vec!["esx", "r", "node", "db", "x-", ""]),
            number(),
            prop::option::of((prop::sample::select(vec!["n", ".dc", "-ib"]), number())),
            prop::sample::select(vec!["", "", ".lab", ":2222"]),
        )
            .prop_map(|(p, a, b, s)| match b {
                Some((m, n)) => format!("{p}{a}{m}{n}{s}"),
                None => format!("{p}{a}{s}"),
            })
    };
    prop_oneof![
        3 => prop::collection::vec(name(), 1..30),
        1 => prop::collection::vec(name(), 30..200),
    ]
}

// ---- the comparisons ----

#[derive(Default, Debug)]
struct Tally {
    both_refuse: u32,
    both_accept: u32,
    over_limit: u32,
}

fn compare_expression(
    oracle: &mut Oracle,
    groups: &mut GroupConfig,
    expr: &str,
    tally: &mut Tally,
) -> Result<(), TestCaseError> {
    let mine = pvrdma_nodeset::evaluate(expr, groups);
    if matches!(mine, Err(NodeSetError::TooMany(_))) {
        tally.over_limit += 1;
        return Ok(());
    }
    let theirs = oracle.ask(&serde_json::json!({ "expr": expr }));
    match (mine, theirs.get("error")) {
        (Err(_), Some(_)) => tally.both_refuse += 1,
        (Err(e), None) => {
            return Err(TestCaseError::fail(format!(
                "{expr:?}: we refuse ({e}), ClusterShell gives {}",
                theirs["fold"]
            )))
        }
        (Ok((names, fold)), Some(err)) => {
            return Err(TestCaseError::fail(format!(
                "{expr:?}: we give {fold:?} ({} names), ClusterShell refuses: {err}",
                names.len()
            )))
        }
        (Ok((names, fold)), None) => {
            let want: Vec<String> = serde_json::from_value(theirs["names"].clone()).unwrap_or_default();
            if names != want {
                return Err(TestCaseError::fail(format!(
                    "{expr:?}: names differ\n  ours:         {names:?}\n  ClusterShell: {want:?}"
                )));
            }
            if theirs["fold"].as_str() != Some(fold.as_str()) {
                return Err(TestCaseError::fail(format!(
                    "{expr:?}: folded text differs: ours {fold:?}, ClusterShell {}",
                    theirs["fold"]
                )));
            }
            tally.both_accept += 1;
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs ClusterShell: scripts/test.sh runs it"]
fn expressions_read_as_clustershell_reads_them() {
    let setup = setup();
    let oracle = RefCell::new(Oracle::start(&setup.cfg, &setup.home));
    let groups = RefCell::new(ours(&setup));
    let tally = RefCell::new(Tally::default());
    // Hand-picked cases first: the classes of the problems found by hand.
    for expr in [
        "esx[1-010]",
        "esx[001-10]",
        "esx01, esx02",
        "esx[ 7-18]",
        "esx[1/2]",
        "esx[1:4]",
        "esx01.dc1,esx02.dc1",
        "r1n01,r1n02,r2n01,r2n02",
        "@esxi",
        "@esxi!esx02",
        "@rack1&@esxi",
        "@rack1^@rack2",
        "@nested",
        "@loop",
        "esx1[8-10]",
        "esx[1-2]0",
        "x[1-2]y[1-2],x3y1!x1y2",
        "esx*",
        "@yaml:gpu,@yaml:compute!node[2-7]",
        "@ma:g1,@@ma",
        "@ma:*",
    ] {
        compare_expression(
            &mut oracle.borrow_mut(),
            &mut groups.borrow_mut(),
            expr,
            &mut tally.borrow_mut(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let n = cases();
    runner(n)
        .run(&expression(), |expr| {
            compare_expression(
                &mut oracle.borrow_mut(),
                &mut groups.borrow_mut(),
                &expr,
                &mut tally.borrow_mut(),
            )
        })
        .unwrap_or_else(|e| panic!("differs from ClusterShell: {e}"));
    let t = tally.borrow();
    eprintln!("node set oracle: {n} generated expressions: {t:?}");
    // The generator must exercise both sides, or the comparison proves little.
    assert!(t.both_accept > n / 5 && t.both_refuse > n / 20, "{t:?}");
}

#[test]
#[ignore = "needs ClusterShell: scripts/test.sh runs it"]
fn folding_matches_nodeset_fold() {
    let setup = setup();
    let oracle = RefCell::new(Oracle::start(&setup.cfg, &setup.home));
    let n = (cases() / 4).max(1);
    runner(n)
        .run(&name_list(), |names| {
            let theirs = oracle.borrow_mut().ask(&serde_json::json!({ "fold": names }));
            let mine = pvrdma_nodeset::fold_names(&names);
            if theirs["fold"].as_str() != Some(mine.as_str()) {
                return Err(TestCaseError::fail(format!(
                    "{names:?}: ours {mine:?}, ClusterShell {}",
                    theirs["fold"]
                )));
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("folds differently from ClusterShell: {e}"));
}
