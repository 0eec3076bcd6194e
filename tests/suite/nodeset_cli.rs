//! ClusterShell groups on the command line, through the real binary: `@esxi` comes from
//! ClusterShell's own configuration (found through `CLUSTERSHELL_CFGDIR`, as `nodeset`
//! finds it), never read as a host named `esxi`.
use crate::support::client::Doctor;
use std::path::Path;

fn doctor(home: &Path) -> Doctor {
    Doctor::new()
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .env_remove("RUST_LOG")
        .env_remove("CLUSTERSHELL_CFGDIR")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg"))
}

fn hosts_of(stdout: &[u8]) -> Vec<String> {
    let json: serde_json::Value = serde_json::from_slice(stdout).expect("JSON report");
    json["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .map(|h| h["host"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_group_is_read_from_clustershell_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("groups.conf"),
        "[Main]\ndefault: local\n[local]\nmap: sed -n 's/^$GROUP: *//p' $CFGDIR/groups.txt\n",
    )
    .unwrap();
    // Port 9 on loopback refuses at once: the report names each host of the group.
    std::fs::write(cfg.join("groups.txt"), "esxi: 127.0.0.[1-3]:9\n").unwrap();
    let out = doctor(dir.path())
        .env("CLUSTERSHELL_CFGDIR", &cfg)
        .args(["--connect-timeout", "2s", "--format", "json", "@esxi!127.0.0.2:9"])
        .output();
    assert_eq!(
        hosts_of(&out.stdout),
        ["127.0.0.1:9", "127.0.0.3:9"],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_unknown_group_source_is_an_error_that_points_at_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = doctor(dir.path())
        .args(["--connect-timeout", "1s", "esx01,@nosuchsource:esxi"])
        .output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no group source \"nosuchsource\""), "{stderr}");
    assert!(stderr.contains("      ^"), "points at the group: {stderr}");
    assert!(out.stdout.is_empty());
}
