//! The batched command lines run by real shells: Debian's `sh` (dash) and busybox `sh`,
//! the shell ESXi gives an SSH session. Real files, real `grep`: what the fakes of the
//! sshd tests cannot show (they answer from samples, whatever the path).
use crate::support;

use pvrdma_doctor::catalogue::vmx_lines_command;
use std::process::Command;

const VMX: &str = "displayName = \"NAME\"\nvirtualHW.version = \"19\"\nmemSize = \"8192\"\nsched.mem.pin = \"TRUE\"\nethernet1.virtualDev = \"vrdma\"\nethernet1.present = \"TRUE\"\nuuid.bios = \"42 31\"\n";

/// Every running VM's `.vmx`, however its path is spelled, comes back as its own whole
/// section in the order asked, with a missing file as a section that carries grep's error
/// and a non-zero status, across more paths than there are pipeline stages.
#[test]
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
        let stdout = String::from_utf8_lossy(&out.stdout);
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
