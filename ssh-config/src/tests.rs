use super::*;

fn local(home: &Path) -> LocalContext {
    LocalContext {
        home: home.to_path_buf(),
        include_home: home.to_path_buf(),
        local_user: "alice".into(),
        uid: 1000,
        local_hostname: "client.example.org".into(),
        default_user: "root".into(),
    }
}

/// A config file with `text` in a fresh home directory.
fn config(text: &str) -> (tempfile::TempDir, SshConfig) {
    let home = tempfile::tempdir().unwrap();
    let f = home.path().join("config");
    std::fs::write(&f, text).unwrap();
    let cfg = SshConfig::load(&f, local(home.path())).unwrap();
    (home, cfg)
}

fn resolve(cfg: &SshConfig, host: &str) -> Result<HostConfig, ConfigError> {
    cfg.resolve(&HostArg::named(host), &CommandLineOptions::default())
}

fn ok(cfg: &SshConfig, host: &str) -> HostConfig {
    resolve(cfg, host).unwrap_or_else(|e| panic!("{host}: {e}"))
}

fn cli(items: &[CliOption]) -> CommandLineOptions {
    CommandLineOptions::ordered(items.iter().cloned().enumerate().collect()).unwrap()
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
    let cfg = SshConfig::load(&ssh.join("config"), local(home.path())).unwrap();
    let c = ok(&cfg, "esx01");
    assert_eq!(c.hostname, "10.0.0.1");
    assert_eq!(c.port, 2222);
    assert_eq!(c.user, "labadmin", "the included block comes first");
    assert_eq!(
        c.identity_files,
        vec![ssh.join("lab_rsa"), home.path().join(".ssh/id_10.0.0.1")]
    );
    let jump = c.jump.expect("ProxyJump");
    assert_eq!(
        (
            jump.user.as_deref(),
            jump.host.as_str(),
            jump.port,
            jump.extra.as_deref()
        ),
        (Some("root"), "jump2", Some(2200), Some("bastion"))
    );
    assert_eq!(c.strict_host_key_checking, Some(StrictHostKeyChecking::AcceptNew));
    assert!(c.identities_only);
    assert_eq!(
        c.user_known_hosts_files,
        vec![home.path().join("kh1"), PathBuf::from("/tmp/kh 2")]
    );
    assert_eq!(
        c.global_known_hosts_files,
        vec![
            PathBuf::from("/etc/ssh/ssh_known_hosts"),
            PathBuf::from("/etc/ssh/ssh_known_hosts2")
        ]
    );
    let other = ok(&cfg, "esx99");
    assert_eq!(other.user, "labadmin");
    assert_eq!(other.strict_host_key_checking, None);
    let plain = ok(&cfg, "db1");
    assert_eq!((plain.user.as_str(), plain.port), ("fallback", 22));
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
    let cfg = SshConfig::load(&ssh.join("config"), local(home.path())).unwrap();
    let other = ok(&cfg, "esx01");
    assert_eq!(other.user, "fallback");
    assert_eq!(other.jump, None);
    assert!(other.identity_files.is_empty());
    let lab = ok(&cfg, "esx-lab7");
    assert_eq!(lab.user, "labtop", "lines before any Host in the file");
    assert_eq!(lab.jump.map(|j| j.host), Some("evil-bastion".to_string()));
    assert_eq!(lab.port, 22, "the included Host db* does not match");
    // The enclosing block goes on after the Include.
    assert_eq!(lab.identity_files, vec![ssh.join("lab_key")]);
    // A matching block in the file still needs the enclosing block to match.
    assert_eq!(ok(&cfg, "db1").port, 22);
}

#[test]
fn include_globs_as_glob3_does() {
    let home = tempfile::tempdir().unwrap();
    let ssh = home.path().join(".ssh");
    for d in ["inc", "site-a", "site-b"] {
        std::fs::create_dir_all(ssh.join(d)).unwrap();
    }
    std::fs::write(ssh.join("inc/a.conf"), "Host a\n  Port 2201\n").unwrap();
    std::fs::write(ssh.join("inc/b.conf"), "Host b\n  Port 2202\n").unwrap();
    std::fs::write(ssh.join("inc/c.conf"), "Host a\n  Port 2209\n").unwrap();
    std::fs::write(ssh.join("inc/.hidden.conf"), "Host *\n  User hidden\n").unwrap();
    std::fs::write(ssh.join("site-a/hosts"), "Host s\n  User from-a\n").unwrap();
    std::fs::write(ssh.join("site-b/hosts"), "Host s\n  User from-b\n").unwrap();
    std::fs::write(
        ssh.join("config"),
        "Include inc/[ab].conf inc/*.conf\nInclude site-*/hosts\nInclude nothing/*.conf\n",
    )
    .unwrap();
    let cfg = SshConfig::load(&ssh.join("config"), local(home.path())).unwrap();
    assert_eq!(
        ok(&cfg, "a").port,
        2201,
        "the character class picks a.conf, c.conf comes later"
    );
    assert_eq!(ok(&cfg, "b").port, 2202);
    assert_eq!(ok(&cfg, "x").user, "root", "* does not match a leading dot");
    assert_eq!(ok(&cfg, "s").user, "from-a", "wildcard directories, in order");
}

#[test]
fn comments_quotes_and_words_as_ssh_reads_them() {
    let (_home, cfg) = config(
        "Host bastion # jump box for esx*\n  HostName 10.9.9.9\n\
         Match originalhost db* # and esx*\n  Port 2300\n\
         Host esx01\n  User 'admin'\n  Port \"2202\"\n  IdentityFile /k/a # the lab key\n  UserKnownHostsFile /kh/one /kh/two # fleet\n\
         Host esx02\n  IdentityFile \"/k/with space\"\n\
         Host ESX03\n  User upper\n\
         Host esx03,esx04\n  User commas\n",
    );
    let e1 = ok(&cfg, "esx01");
    assert_eq!(e1.hostname, "esx01", "the comment on the Host line is no pattern");
    assert_eq!((e1.user.as_str(), e1.port), ("admin", 2202));
    assert_eq!(e1.identity_files, vec![PathBuf::from("/k/a")]);
    assert_eq!(
        e1.user_known_hosts_files,
        vec![PathBuf::from("/kh/one"), PathBuf::from("/kh/two")]
    );
    assert_eq!(ok(&cfg, "db1").port, 2300, "a comment on a Match line is allowed");
    assert_eq!(ok(&cfg, "esx02").identity_files, vec![PathBuf::from("/k/with space")]);
    assert_eq!(ok(&cfg, "esx03").user, "root", "Host patterns are case-sensitive");
    assert_eq!(ok(&cfg, "ESX03").user, "upper");
    assert_eq!(ok(&cfg, "esx04").user, "root", "a comma is part of a Host pattern");
    let (_home, cfg) = config("IdentityFile /k/a /k/b\n");
    let err = resolve(&cfg, "x").unwrap_err().to_string();
    assert!(err.contains(":1:") && err.contains("extra arguments"), "{err}");
}

#[test]
fn match_blocks_take_part_in_first_value_wins() {
    let (_home, cfg) = config(
        "Host esx*\n  HostName %h.LAB.example\n\
         Match host *.lab.example user root\n  Port 2201\n\
         Match originalhost esx0? !user admin\n  User labroot\n\
         Match !originalhost esx*\n  ProxyJump none\n\
         Match user ad* host esx0*\n  IdentitiesOnly yes\n\
         Match localuser alice\n  StrictHostKeyChecking accept-new\n\
         Host *\n  Port 22\n  User fallback\n",
    );
    let c = ok(&cfg, "esx01");
    assert_eq!(c.hostname, "esx01.lab.example", "lowercased, as ssh does");
    assert_eq!(c.port, 2201, "Match host sees HostName, before Host * sets 22");
    assert_eq!(c.user, "labroot");
    assert_eq!(c.strict_host_key_checking, Some(StrictHostKeyChecking::AcceptNew));
    assert!(!c.identities_only, "the config's own user is not admin");
    // A command-line user is what Match user sees.
    let admin = cfg
        .resolve(&HostArg::named("esx01"), &cli(&[CliOption::Login("admin".into())]))
        .unwrap();
    assert_eq!((admin.port, admin.user.as_str()), (22, "admin"));
    assert!(admin.identities_only);
    let db = ok(&cfg, "db1");
    assert_eq!((db.jump.clone(), db.port), (None, 22));
}

#[test]
fn match_final_reads_the_files_again_with_the_host_found() {
    let (_home, cfg) = config(
        "Host esx01\n  HostName ESX01.lab\nMatch final host esx01.lab\n  Port 2400\nMatch canonical\n  User canon\nHost esx01.lab\n  User second-pass\n",
    );
    let c = ok(&cfg, "esx01");
    assert_eq!(c.port, 2400);
    assert_eq!(c.user, "canon", "canonical holds in the second pass");
    let (_home, cfg) = config("Host esx01.lab\n  User second-pass\nHost esx01\n  HostName esx01.lab\n");
    assert_eq!(ok(&cfg, "esx01").user, "root", "no second pass without Match final");
}

#[test]
fn exec_is_refused_only_when_it_would_run() {
    let home = tempfile::tempdir().unwrap();
    let f = home.path().join("config");
    let marker = home.path().join("ran");
    std::fs::write(
        &f,
        format!(
            "Host *\n  Port 22\nMatch host esx* exec \"touch {}\"\n  User viaexec\n",
            marker.display()
        ),
    )
    .unwrap();
    let cfg = SshConfig::load(&f, local(home.path())).unwrap();
    let err = resolve(&cfg, "esx01").unwrap_err().to_string();
    assert!(
        err.contains(":3:") && err.contains("Match exec is not supported"),
        "{err}"
    );
    assert!(!marker.exists(), "exec must never run");
    assert_eq!(ok(&cfg, "db1").user, "root", "exec is skipped after a false criterion");
    for bad in ["Match host\n", "Match tagged x\n", "Match all host x\n", "Match\n"] {
        std::fs::write(&f, bad).unwrap();
        assert!(resolve(&cfg, "esx01").is_err(), "{bad}");
    }
}

#[test]
fn values_ssh_refuses_are_refused() {
    for (text, needle) in [
        ("Host a\n  Port twenty\n", "twenty"),
        ("Port 0\n", "Bad port"),
        ("Port 65536\n", "Bad port"),
        ("User \"\"\n", "Missing argument"),
        ("User # nobody\n", "Missing argument"),
        ("Hostname\n", "no argument"),
        ("Host a\n  User \"unterminated\n", "invalid quotes"),
        ("Usre admin\n", "Bad configuration option: usre"),
        ("ProxyJump j1, j2\n", "Invalid ProxyJump"),
        ("UserKnownHostsFile none /kh\n", "must appear alone"),
        ("IdentitiesOnly maybe\n", "unsupported option"),
        ("Include ~/x\n", ""),
    ] {
        let (_home, cfg) = config(text);
        match resolve(&cfg, "a") {
            Err(e) => assert!(e.to_string().contains(needle), "{text}: {e}"),
            Ok(c) if text.starts_with("Include") => assert_eq!(c.user, "root"),
            Ok(c) => panic!("{text}: accepted as {c:?}"),
        }
    }
    let (_home, cfg) =
        config("Port ssh\nIgnoreUnknown Use*,Foo\nUseKeychain yes\nFoo bar\nCompression yes\nSendEnv LANG LC_*\n");
    assert_eq!(
        ok(&cfg, "a").port,
        22,
        "a service name, unknown keywords ignored, known ones accepted"
    );
    let (_home, cfg) = config("HostName %p\n");
    assert!(resolve(&cfg, "a").is_err(), "HostName only knows %h");
    // A quoted keyword keeps the `=` in its value; with a `:` ssh takes it for an address
    // and does not lowercase it.
    for (written, used) in [
        ("HostName 010.0.0.1", "8.0.0.1"),
        ("HostName 0:0::1", "::1"),
        ("HostName FE80::A", "FE80::A"),
        ("HostName Esx.Lab", "esx.lab"),
        ("\"HostName\"=FE80::A", "=FE80::A"),
        ("\"HostName\"=Esx", "=esx"),
    ] {
        let (_home, cfg) = config(&format!("{written}\n"));
        assert_eq!(ok(&cfg, "a").hostname, used, "as ssh writes an address or a name");
    }
    let (_home, cfg) = config("HostName %%h-%h\nIdentityFile /k/%x\n");
    let c = ok(&cfg, "a");
    assert_eq!(c.hostname, "%h-a");
    assert!(c.identity_file_error.is_some(), "ssh stops when it loads the key");
}

#[test]
fn tokens_in_paths() {
    let (home, cfg) = config(
        "IdentityFile ~/.ssh/%r@%h:%p_%n_%u_%i_%L_%%\nUserKnownHostsFile %d/kh-%k ~root/kh\nGlobalKnownHostsFile ~/g-%h\nHostKeyAlias ALIAS\nUser bob\n",
    );
    let c = ok(&cfg, "Esx01");
    assert_eq!(
        c.identity_files,
        vec![home.path().join(".ssh/bob@esx01:22_Esx01_alice_1000_client_%")]
    );
    assert_eq!(
        c.user_known_hosts_files,
        vec![home.path().join("kh-alias"), PathBuf::from("/root/kh")]
    );
    assert_eq!(c.global_known_hosts_files_raw, vec!["~/g-%h".to_string()]);
    assert_eq!(c.global_known_hosts_files, vec![home.path().join("g-%h")]);
}

#[test]
fn command_line_order_decides_between_user_at_host_and_options() {
    let (_home, cfg) = config("Host esx01\n  User cfguser\n  Port 2222\n");
    let at = |position: usize, items: &[(usize, CliOption)]| {
        let arg = HostArg {
            host: "esx01",
            user: Some("root"),
            port: Some(2200),
            position,
        };
        cfg.resolve(&arg, &CommandLineOptions::ordered(items.to_vec()).unwrap())
            .unwrap()
    };
    let opts = [
        (1, CliOption::Login("l-user".into())),
        (3, CliOption::Option("Port 2300".into())),
        (5, CliOption::Option("User=o-user".into())),
    ];
    let c = at(0, &opts);
    assert_eq!((c.user.as_str(), c.port), ("root", 2200), "the host argument first");
    let c = at(2, &opts);
    assert_eq!((c.user.as_str(), c.port), ("l-user", 2200));
    let c = at(4, &opts);
    assert_eq!((c.user.as_str(), c.port), ("l-user", 2300));
    let c = cfg
        .resolve(&HostArg::named("esx01"), &cli(&[CliOption::Port("ssh".into())]))
        .unwrap();
    assert_eq!(c.port, 22);
    for bad in [
        vec![CliOption::Port("0".into())],
        vec![
            CliOption::Jump("a".into()),
            CliOption::Option("ProxyJump b".into()),
            CliOption::Jump("c".into()),
        ],
        vec![
            CliOption::Option("ProxyCommand nc %h %p".into()),
            CliOption::Jump("b".into()),
        ],
        vec![CliOption::Option("ProxyJump=b".into()), CliOption::Jump("c".into())],
        vec![CliOption::Jump("j$1".into())],
        vec![CliOption::Option("Host=x".into())],
        vec![CliOption::Option("ForwardAgent=yes".into())],
        vec![CliOption::Option("Usre=x".into())],
    ] {
        assert!(
            CommandLineOptions::ordered(bad.iter().cloned().enumerate().collect()).is_err(),
            "{bad:?}"
        );
    }
    // -J first: a later -o ProxyCommand is ignored, as by ssh.
    let c = cfg
        .resolve(
            &HostArg::named("esx01"),
            &cli(&[CliOption::Jump("b".into()), CliOption::Option("ProxyCommand nc".into())]),
        )
        .unwrap();
    assert_eq!((c.jump.map(|j| j.host), c.proxy_command), (Some("b".into()), None));
    let bad_user = cli(&[CliOption::Login("a;b".into())]);
    assert!(cfg.resolve(&HostArg::named("esx01"), &bad_user).is_err());
    assert!(resolve(&cfg, "-oProxyCommand=x").is_err());
}

#[test]
fn jump_hops_are_reached_as_ssh_reaches_them() {
    let (_home, cfg) = config(
        "Host b\n  ProxyJump never-used\n  User b-user\nHost a\n  ProxyJump outer\nHost c\n  Port 2022\nHost loop\n  ProxyJump loop\n",
    );
    let options = cli(&[CliOption::Jump("a,admin@b:2200,c".into())]);
    let t = cfg.resolve(&HostArg::named("esx01"), &options).unwrap();
    let c = t.jump.clone().unwrap();
    assert_eq!((c.host.as_str(), c.extra.as_deref()), ("c", Some("a,admin@b:2200")));
    let c_cfg = cfg.resolve_jump(&c).unwrap();
    assert_eq!(c_cfg.port, 2022, "the hop's own config applies");
    let b = c_cfg.jump.clone().unwrap();
    assert_eq!((b.host.as_str(), b.extra.as_deref()), ("b", Some("a")));
    let b_cfg = cfg.resolve_jump(&b).unwrap();
    assert_eq!((b_cfg.user.as_str(), b_cfg.port), ("admin", 2200));
    assert_eq!(
        b_cfg.jump.clone().map(|j| j.host),
        Some("a".into()),
        "not b's own ProxyJump"
    );
    let a_cfg = cfg.resolve_jump(&b_cfg.jump.unwrap()).unwrap();
    assert_eq!(
        a_cfg.jump.map(|j| j.host),
        Some("outer".into()),
        "the first hop follows its own ProxyJump"
    );
    let err = resolve(&cfg, "loop").unwrap_err().to_string();
    assert!(err.contains("jumphost loop via loop"), "{err}");
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
    let cfg = SshConfig::load_user_and_system(&ssh.join("config"), &etc.join("ssh_config"), local(home.path()));
    let c = ok(&cfg, "esx01");
    assert_eq!(c.user, "useruser", "the user file comes before the system file");
    assert_eq!(c.port, 2200, "the system file fills what the user file left");
    assert_eq!(c.jump.clone().map(|j| j.host), Some("site-bastion".into()));
    assert!(c.hash_known_hosts);
    assert_eq!(
        c.identity_files,
        vec![ssh.join("user_key"), PathBuf::from("/etc/keys/site")]
    );
    let options = CommandLineOptions::new(
        Some("22"),
        Some("none"),
        &["User=cliuser".to_string(), "identityfile /k/cli".to_string()],
    )
    .unwrap();
    let c = cfg.resolve(&HostArg::named("esx01"), &options).unwrap();
    assert_eq!((c.user.as_str(), c.port), ("cliuser", 22));
    assert_eq!(c.jump, None, "-J none turns the site ProxyJump off");
    assert_eq!(c.identity_files.first(), Some(&PathBuf::from("/k/cli")));
    // Options the tool does not use are refused, naming what it honours.
    let err = CommandLineOptions::new(None, None, &["ForwardAgent=yes".to_string()]).unwrap_err();
    assert!(err.to_string().contains("ForwardAgent") && err.to_string().contains("HashKnownHosts"));
    assert!(CommandLineOptions::new(None, None, &["Port=abc".to_string()]).is_err());
    // A group-writable user config is accepted only when its group is the owner's
    // private group (Debian's ssh); a world-writable one never. (Files are read, and
    // their modes checked, once per load.)
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let reload = || SshConfig::load_user_and_system(&ssh.join("config"), &etc.join("ssh_config"), local(home.path()));
    std::fs::set_permissions(ssh.join("config"), std::fs::Permissions::from_mode(0o664)).unwrap();
    let meta = std::fs::metadata(ssh.join("config")).unwrap();
    assert_eq!(
        resolve(&reload(), "esx01").is_ok(),
        private_group(meta.gid(), meta.uid())
    );
    std::fs::set_permissions(ssh.join("config"), std::fs::Permissions::from_mode(0o646)).unwrap();
    let err = resolve(&reload(), "esx01").unwrap_err().to_string();
    assert!(err.contains("Bad owner or permissions"), "{err}");
    // Neither file, or -F none: the defaults.
    let empty = SshConfig::load_user_and_system(&ssh.join("nope"), &etc.join("nope"), local(home.path()));
    let none = SshConfig::load(Path::new("none"), local(home.path())).unwrap();
    for cfg in [empty, none] {
        let c = ok(&cfg, "Esx01");
        assert_eq!(
            (c.hostname.as_str(), c.user.as_str(), c.port, c.jump),
            ("esx01", "root", 22, None)
        );
        assert_eq!(
            c.user_known_hosts_files,
            vec![
                home.path().join(".ssh/known_hosts"),
                home.path().join(".ssh/known_hosts2")
            ]
        );
    }
}

/// The simulated resolver: names under `lab.example` resolve, nothing else does.
fn lab_resolves(name: &str) -> bool {
    name.trim_end_matches('.').ends_with(".lab.example")
}

#[test]
fn a_trailing_dot_name_that_resolves_is_canonicalized_and_the_files_read_again() {
    let text = "Host esx01.lab.example\n  User admin\n  Port 2222\nHost *\n  CanonicalizeHostname yes\n";
    let (_dir, cfg) = config(text);
    let cfg = cfg.with_resolver(lab_resolves);
    let c = ok(&cfg, "esx01.lab.example.");
    assert_eq!(
        (c.hostname.as_str(), c.user.as_str(), c.port),
        ("esx01.lab.example", "admin", 2222)
    );
    // Behind a jump host `yes` leaves the name alone, as ssh does; `always` does not.
    let (_dir, jumped) = config(&format!("{text}  ProxyJump bastion\n"));
    let c = ok(&jumped.with_resolver(lab_resolves), "esx01.lab.example.");
    assert_eq!(c.hostname, "esx01.lab.example.");
    let (_dir, always) = config(
        &text
            .replace("yes", "always")
            .replace("Host *\n", "Host *\n  ProxyJump bastion\n"),
    );
    let c = ok(&always.with_resolver(lab_resolves), "esx01.lab.example.");
    assert_eq!((c.hostname.as_str(), c.user.as_str()), ("esx01.lab.example", "admin"));
    // A name that does not resolve keeps its dot (fallback to the local resolver).
    let c = ok(&cfg, "esx09.other.");
    assert_eq!(c.hostname, "esx09.other.");
}

#[test]
fn canonicalization_without_fallback_refuses_a_name_it_cannot_canonicalize() {
    let (_dir, cfg) = config("CanonicalizeHostname yes\nCanonicalizeFallbackLocal no\n");
    let cfg = cfg.with_resolver(lab_resolves);
    for host in ["esx01", "esx01.lab", "nowhere.example."] {
        let e = resolve(&cfg, host).unwrap_err().to_string();
        assert!(e.contains("Could not resolve host"), "{host}: {e}");
    }
    // An address, a resolving FQDN and a name with more dots than CanonicalizeMaxDots pass.
    assert_eq!(ok(&cfg, "10.0.0.1").hostname, "10.0.0.1");
    assert_eq!(ok(&cfg, "esx01.lab.example.").hostname, "esx01.lab.example");
    assert_eq!(ok(&cfg, "esx01.lab.example").hostname, "esx01.lab.example");
}

#[test]
fn nul_bytes_end_a_line_as_in_ssh() {
    // A line starting with NUL is empty; a value ends at its NUL.
    let (_dir, cfg) = config("\0Bogus keyword\nHost esx01\n  User admin\0 evil\n");
    let c = ok(&cfg, "esx01");
    assert_eq!(c.user, "admin");
}

#[test]
fn up_to_32_known_hosts_files_and_more_only_where_ssh_keeps_them() {
    let files = |n: usize| (0..n).map(|i| format!("/kh/{i}")).collect::<Vec<_>>().join(" ");
    let (_dir, cfg) = config(&format!(
        "UserKnownHostsFile {}\nGlobalKnownHostsFile {}\n",
        files(32),
        files(20)
    ));
    assert_eq!(ok(&cfg, "esx01").user_known_hosts_files.len(), 32);
    let (_dir, cfg) = config(&format!("UserKnownHostsFile {}\n", files(33)));
    assert!(resolve(&cfg, "esx01").is_err());
    // An inactive line is not counted.
    let (_dir, cfg) = config(&format!("Host other\n  UserKnownHostsFile {}\n", files(33)));
    assert!(resolve(&cfg, "esx01").is_ok());
}

#[test]
fn a_user_private_group_may_write_the_config_as_debian_allows() {
    let passwd = "root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\nbob:x:1001:100::/home/bob:/bin/sh\ncarol:x:1002:100::/home/carol:/bin/sh\n";
    let group = "root:x:0:\nalice:x:1000:\nusers:x:100:\nshared:x:200:alice,bob\nsolo:x:300:alice\n";
    assert!(private_group_in(passwd, group, 1000, 1000), "alice's own group");
    assert!(
        !private_group_in(passwd, group, 100, 1001),
        "bob shares users with carol"
    );
    assert!(!private_group_in(passwd, group, 200, 1000), "two listed members");
    assert!(private_group_in(passwd, group, 300, 1000), "alice alone, listed");
    assert!(
        !private_group_in(passwd, group, 300, 1001),
        "listed member is not the owner"
    );
    assert!(!private_group_in(passwd, group, 999, 1000), "unknown group");
}

mod values;
