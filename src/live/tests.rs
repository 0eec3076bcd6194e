use super::fanout::*;
use super::password::*;
use super::plan::*;
use super::*;
use secrecy::ExposeSecret;

#[test]
fn precedence_of_user_port_keys_and_known_hosts() {
    let home = tempfile::tempdir().unwrap();
    let cfg_path = home.path().join("config");
    std::fs::write(
        &cfg_path,
        "Host esx01\n  HostName 10.1.1.1\n  User cfguser\n  Port 2222\n  IdentityFile ~/.ssh/lab_rsa\n  ProxyJump jumper@bastion:2200\nHost bastion\n  ProxyJump ssh://outer.example:2022/\nHost loop\n  ProxyJump loop\n",
    )
    .unwrap();
    let config = SshConfig::load(&cfg_path, LocalContext::current(home.path())).unwrap();
    let opts = LiveOptions {
        identity_files: vec![PathBuf::from("/keys/cli_ecdsa")],
        login_user: Some("cliuser".into()),
        // `-l cliuser` is the second argument; the host arguments come after it.
        ssh_options: CommandLineOptions::ordered(vec![(1, pvrdma_ssh_config::CliOption::Login("cliuser".into()))])
            .unwrap(),
        target_positions: vec![3],
        ..LiveOptions::default()
    };
    let plan = |spec: &str| {
        let s = HostSpec {
            arg: Some(0),
            ..crate::hosts::parse_host_spec(spec).unwrap()
        };
        plan_host(&s, &opts, &config, home.path()).unwrap()
    };
    let job = plan("esx01");
    assert_eq!(job.label, "esx01");
    assert_eq!(job.target.hostname, "10.1.1.1");
    assert_eq!(job.target.port, 2222);
    assert_eq!(job.target.user, "cliuser", "-l beats the config");
    assert_eq!(
        job.target
            .identity_files
            .iter()
            .map(|i| i.path.clone())
            .collect::<Vec<_>>(),
        vec![
            PathBuf::from("/keys/cli_ecdsa"),
            home.path().join(".ssh/lab_rsa"),
            home.path().join(".ssh/id_ecdsa"),
            home.path().join(".ssh/id_rsa"),
            home.path().join(".ssh/id_ed25519"),
        ]
    );
    assert_eq!(
        job.target.policy.known_hosts.first(),
        Some(&home.path().join(".ssh/known_hosts"))
    );
    assert!(job
        .target
        .policy
        .known_hosts
        .contains(&PathBuf::from("/etc/ssh/ssh_known_hosts")));
    assert!(!job.target.policy.accept_new && !job.target.policy.insecure);
    // bastion's own ProxyJump (outer) comes first.
    let [outer, jump] = job.jumps.as_slice() else {
        panic!("two jumps expected: {:?}", job.jumps)
    };
    assert_eq!((outer.hostname.as_str(), outer.port), ("outer.example", 2022));
    assert_eq!((jump.hostname.as_str(), jump.port), ("bastion", 2200));
    assert_eq!(jump.user, "jumper");
    assert_eq!(jump.label, "jump host bastion:2200");

    let job = plan("admin@esx01:22");
    assert_eq!(
        (job.target.user.as_str(), job.target.port),
        ("cliuser", 22),
        "-l came first on the command line"
    );
    assert_eq!(job.label, "esx01:22");
    // The same argument before -l: its user wins, as with ssh.
    let first = HostSpec {
        arg: Some(0),
        ..crate::hosts::parse_host_spec("admin@esx01:22").unwrap()
    };
    let before = LiveOptions {
        target_positions: vec![0],
        ..opts.clone()
    };
    let job = plan_host(&first, &before, &config, home.path()).unwrap();
    assert_eq!(job.target.user, "admin");

    let s = crate::hosts::parse_host_spec("loop").unwrap();
    let err = plan_host(&s, &opts, &config, home.path()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Config);
    assert!(err.message.contains("loop"), "{}", err.message);

    let bare = LiveOptions::default();
    let s = crate::hosts::parse_host_spec("esx02").unwrap();
    let job = plan_host(&s, &bare, &config, home.path()).unwrap();
    assert_eq!((job.target.user.as_str(), job.target.port), ("root", 22));
    assert!(job.jumps.is_empty());
}

#[test]
fn each_jump_host_is_offered_only_its_own_keys() {
    let home = tempfile::tempdir().unwrap();
    let cfg_path = home.path().join("config");
    std::fs::write(
        &cfg_path,
        "Host esx01\n  IdentityFile ~/.ssh/esx_key\n  ProxyJump plainhop,bastion\nHost bastion\n  IdentityFile ~/.ssh/bastion_key\n  IdentityFile ~/.ssh/bastion_spare\n",
    )
    .unwrap();
    let config = SshConfig::load(&cfg_path, LocalContext::current(home.path())).unwrap();
    let paths =
        |e: &crate::ssh::endpoint::Endpoint| e.identity_files.iter().map(|i| i.path.clone()).collect::<Vec<_>>();
    let ssh_dir = home.path().join(".ssh");
    let defaults: Vec<PathBuf> = ["id_ecdsa", "id_rsa", "id_ed25519"]
        .iter()
        .map(|d| ssh_dir.join(d))
        .collect();
    let opts = LiveOptions {
        identity_files: vec![PathBuf::from("/keys/cli_ecdsa")],
        ..LiveOptions::default()
    };
    let spec = crate::hosts::parse_host_spec("esx01").unwrap();
    let job = plan_host(&spec, &opts, &config, home.path()).unwrap();
    let [plain, bastion] = job.jumps.as_slice() else {
        panic!("two jumps expected: {:?}", job.jumps)
    };
    // `-i` is the target's; the target keeps its configured keys and the defaults.
    let mut target = vec![PathBuf::from("/keys/cli_ecdsa"), ssh_dir.join("esx_key")];
    target.extend(defaults.clone());
    assert_eq!(paths(&job.target), target);
    // A hop with its own IdentityFiles gets those and nothing else: no `-i`, no defaults,
    // not the target's.
    assert_eq!(
        paths(bastion),
        vec![ssh_dir.join("bastion_key"), ssh_dir.join("bastion_spare")]
    );
    // A hop with none gets the defaults, as `ssh -G plainhop` lists them.
    assert_eq!(paths(plain), defaults);
    // Without the defaults (the demo, or `ssh_agent: false` in the exporter), a hop
    // without keys of its own is offered none rather than the target's.
    let only = LiveOptions {
        only_given_keys: true,
        ..opts.clone()
    };
    let job = plan_host(&spec, &only, &config, home.path()).unwrap();
    assert!(paths(&job.jumps[0]).is_empty(), "{:?}", job.jumps[0].identity_files);
    assert_eq!(
        paths(&job.jumps[1]),
        vec![ssh_dir.join("bastion_key"), ssh_dir.join("bastion_spare")]
    );
    assert_eq!(
        paths(&job.target),
        vec![PathBuf::from("/keys/cli_ecdsa"), ssh_dir.join("esx_key")]
    );
}

#[test]
fn config_accept_new_is_warned_about_once_naming_the_line() {
    let home = tempfile::tempdir().unwrap();
    let cfg_path = home.path().join("config");
    std::fs::write(
        &cfg_path,
        "Host esx*\n  StrictHostKeyChecking accept-new\nHost db*\n  StrictHostKeyChecking yes\n",
    )
    .unwrap();
    let config = SshConfig::load(&cfg_path, LocalContext::current(home.path())).unwrap();
    let plan = |specs: &[&str], opts: &LiveOptions| -> Vec<Result<HostJob, Failure>> {
        specs
            .iter()
            .map(|s| plan_host(&crate::hosts::parse_host_spec(s).unwrap(), opts, &config, home.path()))
            .collect()
    };
    let opts = LiveOptions::default();
    let jobs = plan(&["esx01", "esx02", "db1"], &opts);
    assert!(jobs
        .iter()
        .flatten()
        .all(|j| j.target.policy.accept_new == j.label.starts_with("esx")));
    let w = config_tofu_warning(&jobs).expect("warning");
    assert!(w.contains(&format!("{}:2", cfg_path.display())), "{w}");
    assert_eq!(w.matches(":2").count(), 1, "{w}");
    assert_eq!(w.lines().count(), 1);
    assert!(config_tofu_warning(&plan(&["db1"], &opts)).is_none());
    // --accept-new was asked for: nothing to warn about.
    let asked = LiveOptions {
        accept_new: true,
        ..LiveOptions::default()
    };
    assert!(config_tofu_warning(&plan(&["esx01"], &asked)).is_none());
}

#[test]
fn known_hosts_file_none_means_no_file_not_the_defaults() {
    let home = tempfile::tempdir().unwrap();
    let cfg_path = home.path().join("config");
    std::fs::write(
        &cfg_path,
        "Host esx01\n  UserKnownHostsFile /kh/fleet\n  GlobalKnownHostsFile none\nHost esx02\n  UserKnownHostsFile none\n",
    )
    .unwrap();
    let config = SshConfig::load(&cfg_path, LocalContext::current(home.path())).unwrap();
    let plan = |s: &str| {
        let spec = crate::hosts::parse_host_spec(s).unwrap();
        plan_host(&spec, &LiveOptions::default(), &config, home.path()).unwrap()
    };
    let one = plan("esx01");
    assert_eq!(one.target.policy.known_hosts, vec![PathBuf::from("/kh/fleet")]);
    assert_eq!(one.target.policy.learn_to, Some(PathBuf::from("/kh/fleet")));
    let two = plan("esx02");
    assert_eq!(
        two.target.policy.known_hosts,
        vec![
            PathBuf::from("/etc/ssh/ssh_known_hosts"),
            PathBuf::from("/etc/ssh/ssh_known_hosts2")
        ]
    );
    assert_eq!(two.target.policy.learn_to, None);
}

#[test]
fn proxycommand_fails_the_host_instead_of_connecting_directly() {
    let home = tempfile::tempdir().unwrap();
    let cfg_path = home.path().join("config");
    std::fs::write(
        &cfg_path,
        "Host esx01\n  ProxyCommand ssh -W %h:%p bastion\nHost esx02\n  ProxyJump bastion\n  ProxyCommand nc %h %p\nHost bastion\n  ProxyCommand none\nHost esx*\n  HostKeyAlias esx-key\n",
    )
    .unwrap();
    let config = SshConfig::load(&cfg_path, LocalContext::current(home.path())).unwrap();
    let plan = |s: &str| {
        let spec = crate::hosts::parse_host_spec(s).unwrap();
        plan_host(&spec, &LiveOptions::default(), &config, home.path())
    };
    let err = plan("esx01").unwrap_err();
    assert_eq!(err.kind, ErrorKind::Config);
    assert!(
        err.message.contains(&format!("{}:2", cfg_path.display()))
            && err.message.contains("ProxyCommand is not supported")
            && err.message.contains("ProxyJump"),
        "{}",
        err.message
    );
    // ProxyJump came first: ProxyCommand is ignored, as by ssh.
    let job = plan("esx02").unwrap();
    assert_eq!(job.jumps.len(), 1);
    assert_eq!(job.target.policy.host_key_alias.as_deref(), Some("esx-key"));
    assert_eq!(job.target.policy.key_name("10.0.0.2", 2222), ("esx-key", 22));
    assert!(plan("bastion").is_ok(), "ProxyCommand none");
}

#[test]
fn fanout_is_bounded_by_the_open_file_limit() {
    let n = fanout_limit(usize::MAX);
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct passed by pointer, which outlives the call.
    #[allow(unsafe_code)]
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    assert_eq!(got, 0);
    assert_eq!(lim.rlim_cur, lim.rlim_max, "soft limit raised to the hard one");
    assert_eq!(n as libc::rlim_t, (lim.rlim_cur - FD_RESERVE) / FDS_PER_HOST);
    assert_eq!(fanout_limit(3), 3);
    assert_eq!(fanout_limit(0), 1);
}

#[test]
fn password_comes_from_the_environment() {
    std::env::set_var(PASSWORD_ENV, "s3cret");
    let got = read_password(false).unwrap();
    std::env::remove_var(PASSWORD_ENV);
    assert_eq!(got.as_ref().map(|p| p.expose_secret()), Some("s3cret"));
    assert!(read_password(false).unwrap().is_none());
}

#[test]
fn the_login_limit_is_the_flag_else_the_longer_of_the_default_and_connect_timeout() {
    let secs = Duration::from_secs;
    let given = LiveOptions {
        connect_timeout: Some(secs(3)),
        ..LiveOptions::default()
    };
    let limit = login_limit(&given, Some(secs(30)));
    assert_eq!((limit.limit, limit.from_ssh_config), (secs(3), false));
    let none = LiveOptions::default();
    let limit = login_limit(&none, Some(secs(30)));
    assert_eq!((limit.limit, limit.from_ssh_config), (secs(30), true));
    // A shorter ConnectTimeout bounds each hop's handshake, not the login.
    let limit = login_limit(&none, Some(secs(3)));
    assert_eq!((limit.limit, limit.from_ssh_config), (DEFAULT_CONNECT_TIMEOUT, false));
    assert_eq!(login_limit(&none, None).limit, DEFAULT_CONNECT_TIMEOUT);
}
