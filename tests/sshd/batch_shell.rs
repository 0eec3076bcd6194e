//! The batched command lines run by real shells: Debian's `sh` (dash) and busybox `sh`,
//! the shell ESXi gives an SSH session. Real files, real `grep`: what the fakes of the
//! sshd tests cannot show (they answer from samples, whatever the path). And the raw
//! stream of a batch whose queries hang, or write large answers at the same time.
use crate::support;

use pvrdma_engine::capture::frames::decode;
use pvrdma_engine::catalogue::{batch_keys, vmx_lines_command};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VMX: &str = "displayName = \"NAME\"\nvirtualHW.version = \"19\"\nmemSize = \"8192\"\nsched.mem.pin = \"TRUE\"\nethernet1.virtualDev = \"vrdma\"\nethernet1.present = \"TRUE\"\nuuid.bios = \"42 31\"\n";

/// Every running VM's `.vmx`, however its path is spelled, comes back as its own whole
/// section in the order asked, with a missing file as a section that carries grep's error
/// and a non-zero status, across more paths than there are pipeline stages.
#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn vmx_inventory_reads_every_path_whole_in_order_under_dash_and_busybox() {
    support::require_test_deps();
    let dir = tempfile::tempdir().expect("tempdir");
    let names = [
        "hpc [rack 4]",
        "it's: a \"vm\"",
        "$(reboot) `x`",
        "plain",
        "a;b|c&d",
        "tab\there",
        "star *",
        "back\\slash",
        "dash -n",
        "unicode é",
        "eleven",
    ];
    let mut paths = Vec::new();
    for (n, name) in names.iter().enumerate() {
        let vm = dir.path().join(name);
        std::fs::create_dir_all(&vm).expect("vm dir");
        let path = vm.join(format!("{name}.vmx"));
        std::fs::write(&path, VMX.replace("NAME", &format!("vm{n}"))).expect("vmx");
        paths.push(path.display().to_string());
    }
    let missing = dir.path().join("gone/gone.vmx").display().to_string();
    paths.insert(3, missing.clone());
    let line = vmx_lines_command(&paths).expect("command line");
    for shell in [&["sh"][..], &["busybox", "sh"][..]] {
        let out = Command::new(shell[0])
            .args(&shell[1..])
            .args(["-c", &line])
            .output()
            .expect("shell runs");
        let (_, keys) = batch_keys(&line).expect("a batch line");
        let decoded = decode(&keys, &out.stdout, None);
        assert!(decoded.unfinished.is_empty(), "{shell:?}: {decoded:?}");
        let stdout = decoded.stdout;
        let sections = pvrdma_parsers::parse_vmx_pvrdma_lines(&stdout).expect("inventory parses");
        let got: Vec<&str> = sections.iter().map(|s| s.config_file.as_str()).collect();
        assert_eq!(got, paths, "{shell:?}: {stdout}");
        for (n, s) in sections.iter().filter(|s| s.config_file != missing).enumerate() {
            assert!(!s.cut_off, "{shell:?}: {s:?}");
            let config = s.config.as_ref().expect("section reads");
            assert_eq!(config.display_name, Some(format!("vm{n}")), "{shell:?}");
            assert_eq!(config.hardware_version, Some(19));
            assert_eq!(config.pvrdma_adapters.len(), 1);
        }
        let gone = sections
            .iter()
            .find(|s| s.config_file == missing)
            .expect("missing file's section");
        assert!(gone.config.is_err(), "{shell:?}: {gone:?}");
        assert!(!stdout.contains("uuid.bios"), "only the PVRDMA lines are read");
    }
}

/// A stand-in `q` for a batch of 200 keys: `hang*` never answers, `big*` answers 800
/// lines (about 40 KiB), written line by line at the same moment as the other `big*`,
/// any other key answers two lines at once.
const STAND_IN: &str = "q() { case $1 in hang*) sleep 60 ;; big*) i=0; while [ $i -lt 800 ]; do printf '%s line %03d %s\\n' \"$1\" $i 0123456789abcdef0123456789abcdef; i=$((i+1)); done ;; *) printf 'answer %s\\n\\n  indented\\n' \"$1\" ;; esac; }; ";

/// The batch line for `keys` with the stand-in query in place of the `.vmx` grep.
fn stand_in_line(keys: &[String]) -> String {
    let line = vmx_lines_command(keys).expect("line");
    let (_, rest) = line.split_once("; }; f() {").expect("functions");
    let (functions, _) = rest.rsplit_once("b ").expect("the call");
    // Plain words: the stand-in keys need no quotes.
    format!("{STAND_IN}f() {{{functions}b {}", keys.join(" "))
}

/// Runs `line` under `shell` until every answer but the hung ones has arrived (or 30 s),
/// then kills the shell's process group; returns the raw stream.
fn run_until_answered(shell: &[&str], line: &str, keys: &[String], hung: usize) -> Vec<u8> {
    let mut child = Command::new(shell[0])
        .args(&shell[1..])
        .args(["-c", line])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("shell runs");
    let mut stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut raw = Vec::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        while let Ok(chunk) = rx.recv_timeout(Duration::from_millis(100)) {
            raw.extend_from_slice(&chunk);
        }
        let d = decode(keys, &raw, Some("stopped by the test"));
        if d.unfinished.len() <= hung {
            break;
        }
    }
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.wait();
    let _ = reader.join();
    raw
}

/// Hung queries at the first, a middle and the last key withhold only their own
/// answers; two large answers written at the same time interleave line by line in the
/// stream and both arrive whole; under dash and busybox `sh`.
#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn hung_queries_cost_their_own_answers_and_large_ones_interleave_whole() {
    support::require_test_deps();
    let mut keys: Vec<String> = (0..200).map(|n| format!("k{n:03}")).collect();
    for (at, name) in [(0, "hang0"), (100, "hang1"), (199, "hang2"), (40, "big0"), (41, "big1")] {
        keys[at] = name.to_string();
    }
    let line = stand_in_line(&keys);
    for shell in [&["sh"][..], &["busybox", "sh"][..]] {
        let raw = run_until_answered(shell, &line, &keys, 3);
        let d = decode(&keys, &raw, Some("did not finish within --command-timeout 60s"));
        let open: Vec<&str> = d.unfinished.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(open, ["hang0", "hang1", "hang2"], "{shell:?}: {d:?}");
        for big in ["big0", "big1"] {
            let header = format!("==> {big} <==\n");
            let at = d.stdout.find(&header).expect("big section");
            let section = &d.stdout[at..];
            let end = section.find(&format!("<== {big} exit 0 ==>")).expect("end marker");
            assert_eq!(section[..end].lines().count(), 801, "{shell:?}");
            assert!(section[..end].len() > 30_000, "tens of KiB");
        }
        // The two were written at the same time: their records alternate in the stream.
        let text = String::from_utf8_lossy(&raw);
        let tags: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split_once('|').map(|(n, _)| n))
            .filter(|n| *n == "41" || *n == "42")
            .collect();
        let switches = tags.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(
            switches > 2,
            "{shell:?}: the large answers were not written at the same time"
        );
    }
}
