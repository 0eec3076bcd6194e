use super::*;

#[test]
fn wildcards() {
    assert!(wildcard_match("esx*", "esx01"));
    assert!(wildcard_match("esx0?", "esx01"));
    assert!(!wildcard_match("esx0?", "esx011"));
    assert!(wildcard_match("*", ""));
    assert!(wildcard_match("*.lab", "esx01.lab"));
    assert!(!wildcard_match("*.lab", "esx01.prod"));
    assert!(!host_patterns_match(&["esx*".into(), "!esx99".into()], "esx99"));
    assert!(host_patterns_match(&["esx*".into(), "!esx99".into()], "esx01"));
}

#[test]
fn first_value_wins_identity_accumulates_include_and_jump() {
    let home = tempfile::tempdir().unwrap();
    let ssh = home.path().join(".ssh");
    std::fs::create_dir_all(ssh.join("conf.d")).unwrap();
    std::fs::write(
        ssh.join("conf.d/10-lab"),
        "Host esx*\n  User labadmin\n  IdentityFile ~/.ssh/lab_rsa\n",
    )
    .unwrap();
    std::fs::write(
        ssh.join("config"),
        "Include conf.d/*\n\
         Host esx01\n  HostName=10.0.0.1\n  Port 2222\n  User first\n  ProxyJump bastion,root@jump2:2200\n\
         Host esx* !esx99\n  User second\n  IdentitiesOnly yes\n  IdentityFile %d/.ssh/id_%h\n  StrictHostKeyChecking accept-new\n  UserKnownHostsFile ~/kh1 \"/tmp/kh 2\"\n\
         Match host foo\n  User never\n\
         Host *\n  Port 22\n  User fallback\n",
    )
    .unwrap();
    let cfg = SshConfig::load(&ssh.join("config"), home.path()).unwrap();
    let c = cfg.resolve("esx01").unwrap();
    assert_eq!(c.hostname.as_deref(), Some("10.0.0.1"));
    assert_eq!(c.port, Some(2222));
    assert_eq!(c.user.as_deref(), Some("labadmin"), "the included block comes first");
    assert_eq!(
        c.identity_files,
        vec![ssh.join("lab_rsa"), home.path().join(".ssh/id_10.0.0.1")]
    );
    assert_eq!(
        c.proxy_jump,
        Some(vec!["bastion".to_string(), "root@jump2:2200".to_string()])
    );
    assert_eq!(c.strict_host_key_checking, Some(StrictHostKeyChecking::AcceptNew));
    assert_eq!(c.identities_only, Some(true));
    assert_eq!(
        c.user_known_hosts_files,
        Some(vec![home.path().join("kh1"), PathBuf::from("/tmp/kh 2")])
    );
    assert_eq!(c.global_known_hosts_files, None);
    let other = cfg.resolve("esx99").unwrap();
    assert_eq!(other.user.as_deref(), Some("labadmin"));
    assert_eq!(other.strict_host_key_checking, None);
    let plain = cfg.resolve("db1").unwrap();
    assert_eq!(plain.user.as_deref(), Some("fallback"));
    assert_eq!(plain.port, Some(22));
}

#[test]
fn an_include_inside_a_non_matching_host_applies_to_no_other_host() {
    let home = tempfile::tempdir().unwrap();
    let ssh = home.path().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(
        ssh.join("lab.conf"),
        "User labtop\nHost *\n  User labstar\n  ProxyJump evil-bastion\nHost db*\n  Port 2200\n",
    )
    .unwrap();
    std::fs::write(
        ssh.join("config"),
        "Host esx-lab*\n  Include lab.conf\n  IdentityFile ~/.ssh/lab_key\nHost *\n  User fallback\n",
    )
    .unwrap();
    let cfg = SshConfig::load(&ssh.join("config"), home.path()).unwrap();
    let other = cfg.resolve("esx01").unwrap();
    assert_eq!(other.user.as_deref(), Some("fallback"));
    assert_eq!(other.proxy_jump, None);
    assert!(other.identity_files.is_empty());
    let lab = cfg.resolve("esx-lab7").unwrap();
    assert_eq!(lab.user.as_deref(), Some("labtop"), "lines before any Host in the file");
    assert_eq!(lab.proxy_jump, Some(vec!["evil-bastion".to_string()]));
    assert_eq!(lab.port, None, "the included Host db* does not match");
    // The enclosing block goes on after the Include.
    assert_eq!(lab.identity_files, vec![ssh.join("lab_key")]);
    // A matching block in the file still needs the enclosing block to match.
    assert_eq!(cfg.resolve("db1").unwrap().port, None);
}

#[test]
fn match_blocks_take_part_in_first_value_wins() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("config");
    std::fs::write(
        &f,
        "Host esx*\n  HostName %h.lab.example\n\
         Match host *.lab.example user root\n  Port 2201\n\
         Match originalhost esx0? !user admin\n  User labroot\n\
         Match !originalhost esx*\n  ProxyJump none\n\
         Match user ad* host esx0*\n  IdentitiesOnly yes\n\
         Match all\n  StrictHostKeyChecking accept-new\n\
         Host *\n  Port 22\n  User fallback\n",
    )
    .unwrap();
    let cfg = SshConfig::load(&f, dir.path()).unwrap();
    let c = cfg.resolve("esx01").unwrap();
    assert_eq!(c.port, Some(2201), "Match host sees HostName, before Host * sets 22");
    assert_eq!(c.user.as_deref(), Some("labroot"));
    assert_eq!(c.proxy_jump, None);
    assert_eq!(c.strict_host_key_checking, Some(StrictHostKeyChecking::AcceptNew));
    assert_eq!(c.identities_only, None, "the config's own user is not admin");
    // A command-line user is what Match user sees.
    let admin = cfg.resolve_for("esx01", Some("admin")).unwrap();
    assert_eq!(admin.port, Some(22));
    assert_eq!(admin.user.as_deref(), Some("fallback"));
    assert_eq!(admin.identities_only, Some(true));
    let db = cfg.resolve("db1").unwrap();
    assert_eq!(db.proxy_jump, Some(Vec::new()));
    assert_eq!(db.port, Some(22));
}

#[test]
fn unsupported_match_criteria_fail_only_the_hosts_they_could_select() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("config");
    let marker = dir.path().join("ran");
    std::fs::write(
        &f,
        format!(
            "Host *\n  Port 22\nMatch host esx* exec \"touch {}\"\n  User viaexec\nMatch canonical\n  User never\n",
            marker.display()
        ),
    )
    .unwrap();
    let cfg = SshConfig::load(&f, dir.path()).unwrap();
    let err = cfg.resolve("esx01").unwrap_err().to_string();
    assert!(
        err.contains(":3:") && err.contains("Match exec is not supported"),
        "{err}"
    );
    assert!(!marker.exists(), "exec must never run");
    // db1 is outside the exec block's host criterion, but Match canonical has no
    // host criterion so it could apply to anything.
    let err = cfg.resolve("db1").unwrap_err().to_string();
    assert!(err.contains(":5:") && err.contains("Match canonical"), "{err}");
    std::fs::write(&f, "Match host esx* localuser bob\n  User x\nHost *\n  User y\n").unwrap();
    let cfg = SshConfig::load(&f, dir.path()).unwrap();
    assert_eq!(cfg.resolve("db1").unwrap().user.as_deref(), Some("y"));
    std::fs::write(&f, "Match host\n").unwrap();
    assert!(SshConfig::load(&f, dir.path()).is_err());
}

#[test]
fn syntax_errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("config");
    std::fs::write(&f, "Host a\n  Port twenty\n").unwrap();
    let cfg = SshConfig::load(&f, dir.path()).unwrap();
    let err = cfg.resolve("a").unwrap_err().to_string();
    assert!(err.contains(":2:") && err.contains("twenty"), "{err}");
    std::fs::write(&f, "Host a\n  User \"unterminated\n").unwrap();
    assert!(SshConfig::load(&f, dir.path()).is_err());
}

#[test]
fn command_line_then_user_then_system_first_value_wins() {
    let home = tempfile::tempdir().unwrap();
    let ssh = home.path().join(".ssh");
    let etc = home.path().join("etc");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::create_dir_all(etc.join("ssh_config.d")).unwrap();
    std::fs::write(
        ssh.join("config"),
        "Host esx*\n  User useruser\n  IdentityFile ~/.ssh/user_key\n",
    )
    .unwrap();
    std::fs::write(
        etc.join("ssh_config"),
        "Include ssh_config.d/*.conf\nHost *\n  User sysuser\n  Port 2200\n  HashKnownHosts yes\n",
    )
    .unwrap();
    std::fs::write(
        etc.join("ssh_config.d/10-site.conf"),
        "Host esx*\n  ProxyJump site-bastion\n  IdentityFile /etc/keys/site\n",
    )
    .unwrap();
    let cfg = SshConfig::load_user_and_system(&ssh.join("config"), &etc.join("ssh_config"), home.path()).unwrap();
    let none = CommandLineOptions::default();
    let c = cfg.resolve_with("esx01", None, &none).unwrap();
    assert_eq!(
        c.user.as_deref(),
        Some("useruser"),
        "the user file comes before the system file"
    );
    assert_eq!(c.port, Some(2200), "the system file fills what the user file left");
    assert_eq!(c.proxy_jump, Some(vec!["site-bastion".to_string()]));
    assert_eq!(c.hash_known_hosts, Some(true));
    assert_eq!(
        c.identity_files,
        vec![ssh.join("user_key"), PathBuf::from("/etc/keys/site")]
    );
    let cli = CommandLineOptions::new(
        Some(22),
        Some("none"),
        &["User=cliuser".to_string(), "identityfile /k/cli".to_string()],
    )
    .unwrap();
    let c = cfg.resolve_with("esx01", None, &cli).unwrap();
    assert_eq!(c.user.as_deref(), Some("cliuser"));
    assert_eq!(c.port, Some(22));
    assert_eq!(c.proxy_jump, Some(Vec::new()), "-J none turns the site ProxyJump off");
    assert_eq!(c.identity_files.first(), Some(&PathBuf::from("/k/cli")));
    // Options the tool does not use are refused, naming what it honours.
    let err = CommandLineOptions::new(None, None, &["ForwardAgent=yes".to_string()]).unwrap_err();
    assert!(err.to_string().contains("ForwardAgent") && err.to_string().contains("HashKnownHosts"));
    assert!(CommandLineOptions::new(None, None, &["Port=abc".to_string()]).is_ok());
    assert!(cfg
        .resolve_with(
            "esx01",
            None,
            &CommandLineOptions::new(None, None, &["Port=abc".to_string()]).unwrap()
        )
        .is_err());
    // Neither file: the defaults.
    let empty = SshConfig::load_user_and_system(&ssh.join("nope"), &etc.join("nope"), home.path()).unwrap();
    assert_eq!(empty.resolve("esx01").unwrap(), HostConfig::default());
}
