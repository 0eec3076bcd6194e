//! `--format ansible` and `--format powercli`: reviewed plans of sample scenarios, every
//! scenario's playbook read by the real `ansible-playbook --syntax-check`, every script
//! parsed by tree-sitter's PowerShell grammar, and names that YAML, Jinja or PowerShell
//! would misread kept as plain values. PowerShell itself is not installed: the scripts
//! are not run by the suite.
use crate::support::client::Doctor;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The virtualenv scripts/install-test-deps.sh installs Ansible and tree-sitter into.
pub(crate) const VENV: &str = "/usr/local/lib/pvrdma-doctor-test/venv";

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

fn scenarios() -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(samples())
        .expect("samples/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.ends_with("vm-support"))
        .collect();
    all.sort();
    all
}

/// `program` under coreutils' `timeout`: sent TERM after `secs` seconds, KILL ten
/// seconds later, so no test waits on it for ever.
pub(crate) fn bounded(secs: u32, program: &str) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "10", &secs.to_string(), program]);
    cmd
}

/// A password planted where the run could read one: no plan may hold it.
const PLANTED: &str = "planted-S3cret-4711";

/// The plan `analyze` makes of `scenario`, run from the checkout's root so that a
/// scenario under it is named by its relative path (as the reviewed plans show it).
fn plan(scenario: &Path, format: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Doctor::new()
        .args(["analyze", "--format", format])
        .arg(scenario.strip_prefix(root).unwrap_or(scenario))
        .current_dir(root)
        .env("PVRDMA_DOCTOR_PASSWORD", PLANTED)
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", PLANTED)
        .timeout(std::time::Duration::from_secs(120))
        .output();
    assert!(
        out.stderr.is_empty(),
        "{}: {}",
        scenario.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8 plan");
    assert!(
        !text.contains(PLANTED),
        "{}: the password is in the plan",
        scenario.display()
    );
    text
}

/// The plan with its time and the tool's version replaced, as the other snapshots do.
fn normalised(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = l.replace(env!("CARGO_PKG_VERSION"), "VERSION");
            match l.find("# Made ") {
                Some(i) => match l.find(" from ") {
                    Some(j) => format!("{}# Made TIME{}", &l[..i], &l[j..]),
                    None => l,
                },
                None => l,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn plans_of_sample_scenarios_are_reviewed() {
    for scenario in [
        "firewall-pvrdma-disabled",
        "vmknic-untagged",
        "vm-support-vm-prerequisites",
        "healthy-cluster",
    ] {
        let path = samples().join(scenario);
        insta::assert_snapshot!(format!("{scenario}.ansible"), normalised(&plan(&path, "ansible")));
        insta::assert_snapshot!(format!("{scenario}.powercli"), normalised(&plan(&path, "powercli")));
    }
}

#[test]
#[ignore = "needs ansible-playbook (scripts/install-test-deps.sh installs it into a virtualenv): scripts/test.sh runs it"]
fn ansible_playbook_accepts_every_scenarios_plan() {
    let dir = tempfile::tempdir().expect("tempdir");
    for scenario in scenarios() {
        let text = plan(&scenario, "ansible");
        let file = dir.path().join("plan.yml");
        std::fs::write(&file, &text).expect("write the plan");
        let out = bounded(300, &format!("{VENV}/bin/ansible-playbook"))
            .arg("--syntax-check")
            .arg(&file)
            .env("ANSIBLE_LOCALHOST_WARNING", "false")
            .output()
            .expect("ansible-playbook runs");
        assert!(
            out.status.success(),
            "{}: {}\n{}\n{text}",
            scenario.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// tree-sitter's PowerShell grammar reads every file given: prints the position of each
/// ERROR or MISSING node, nothing when all parse.
const PARSE_POWERSHELL: &str = r#"
import sys, tree_sitter, tree_sitter_powershell
parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language()))
for path in sys.argv[1:]:
    tree = parser.parse(open(path, 'rb').read())
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == 'ERROR' or node.is_missing:
            print(path, node.start_point, node.type)
        stack.extend(node.children)
"#;

fn powershell_errors(files: &[PathBuf]) -> String {
    let out = bounded(300, &format!("{VENV}/bin/python"))
        .arg("-c")
        .arg(PARSE_POWERSHELL)
        .args(files)
        .output()
        .expect("python runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs tree-sitter's PowerShell grammar (scripts/install-test-deps.sh installs it into a virtualenv): scripts/test.sh runs it"]
fn every_scenarios_powercli_script_parses_as_powershell() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for (i, scenario) in scenarios().iter().enumerate() {
        let file = dir.path().join(format!("{i}.ps1"));
        std::fs::write(&file, plan(scenario, "powercli")).expect("write");
        files.push(file);
    }
    // The grammar finds what is broken: a script with an unclosed brace does not parse.
    let broken = dir.path().join("broken.ps1");
    std::fs::write(&broken, "try {\n    $x = Get-VMHost -Name 'a'\n").expect("write");
    assert!(!powershell_errors(std::slice::from_ref(&broken)).is_empty());
    let errors = powershell_errors(&files);
    assert!(errors.is_empty(), "{errors}");
}

/// A capture whose host, VM and vmknic names hold what YAML, Jinja, the shell and
/// PowerShell treat specially.
fn awkward_capture(dir: &Path) -> PathBuf {
    let name = "esx'01$(x)`y{{ z }}\"q\"";
    let src = samples().join("firewall-pvrdma-disabled");
    let host = std::fs::read_dir(&src)
        .expect("scenario")
        .filter_map(Result::ok)
        .find(|e| e.path().is_dir())
        .expect("a host folder")
        .path();
    let dest = dir.join("capture").join(name);
    std::fs::create_dir_all(&dest).expect("mkdir");
    for entry in walk(&host) {
        let rel = entry.strip_prefix(&host).expect("under the host");
        let to = dest.join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&entry, &to).expect("copy");
    }
    dir.join("capture")
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read_dir").filter_map(Result::ok) {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
#[ignore = "needs ansible's Python (PyYAML) and tree-sitter's PowerShell grammar (scripts/install-test-deps.sh): scripts/test.sh runs it"]
fn names_with_quotes_dollars_backticks_and_braces_stay_plain_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let capture = awkward_capture(dir.path());
    let name = "esx'01$(x)`y{{ z }}\"q\"";
    let yaml = plan(&capture, "ansible");
    let ps = plan(&capture, "powercli");
    assert!(
        yaml.contains("pvrdma_esxi: !unsafe \"esx'01$(x)`y{{ z }}\\\"q\\\"\""),
        "{yaml}"
    );
    // YAML reads the value back whole, and Ansible is told never to template it.
    let file = dir.path().join("plan.yml");
    std::fs::write(&file, &yaml).expect("write");
    let read = bounded(120, &format!("{VENV}/bin/python"))
        .arg("-c")
        .arg(
            "import sys, yaml\n\
             class L(yaml.SafeLoader): pass\n\
             L.add_constructor('!unsafe', lambda l, n: ('unsafe', l.construct_scalar(n)))\n\
             doc = yaml.load(open(sys.argv[1]), Loader=L)\n\
             for t in doc[0]['tasks']:\n\
             \x20   print(t['ansible.builtin.add_host']['pvrdma_esxi'][1])\n",
        )
        .arg(&file)
        .output()
        .expect("python");
    assert!(read.status.success(), "{}", String::from_utf8_lossy(&read.stderr));
    assert_eq!(String::from_utf8_lossy(&read.stdout).trim_end(), name);
    // Ansible runs the first play (its tasks are `always`; the changes are tagged by check,
    // so none runs and nothing is contacted): the name is never templated, only printed.
    let out = bounded(300, &format!("{VENV}/bin/ansible-playbook"))
        .args(["--tags", "always"])
        .arg(&file)
        .env("ANSIBLE_LOCALHOST_WARNING", "false")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("ansible-playbook runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains(&format!("TASK [{name}]")), "{said}");
    assert!(
        said.contains("localhost                  : ok=1    changed=0"),
        "{said}"
    );
    // PowerShell: a single-quoted string, the quote doubled; `$` and the backtick plain.
    assert!(ps.contains("'esx''01$(x)`y{{ z }}\"q\"'"), "{ps}");
    let script = dir.path().join("plan.ps1");
    std::fs::write(&script, &ps).expect("write");
    let errors = powershell_errors(&[script]);
    assert!(errors.is_empty(), "{errors}\n{ps}");
}
