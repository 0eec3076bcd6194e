//! The oracle for ssh_config: generated configurations and command lines, resolved by
//! pvrdma-doctor and by OpenSSH's `ssh -G` (the real client, Debian's openssh-client),
//! must agree on the host name, port, user, the whole ProxyJump chain (each hop as ssh
//! reaches it), the identity files, the known-hosts files and the connect timeout, or
//! both must refuse.
//!
//! `ssh -G` never reads this machine's config: every call has `-F` with the generated
//! file, and `HOME` points into a temporary directory (where relative `Include`s go).
//! Seeded and reproducible: `PVRDMA_SSH_DIFF_CASES` (default 2000) sets the number of
//! cases, `PVRDMA_SSH_DIFF_SEED` the seed; a failure is shrunk to a minimal config and
//! command line, printed whole.
//!
//! Differences kept on purpose (README, "ssh_config"): `ProxyCommand` is refused rather
//! than run; `Match exec` is refused when it would run; the default user is `root`
//! rather than the local user (here both sides are given the local user, so the rest is
//! compared); `host:port` arguments (ssh has none) are not generated.
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use pvrdma_ssh_config::{
    CliOption, CommandLineOptions, ConfigError, HostArg, HostConfig, JumpHost, LocalContext, SshConfig,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `ssh -G` printed, for the fields compared.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Resolved {
    hostname: String,
    user: String,
    port: String,
    identity_files: Vec<String>,
    user_known_hosts: String,
    global_known_hosts: String,
    proxy_jump: Option<String>,
    proxy_command: Option<String>,
    /// Seconds, or `none`.
    connect_timeout: String,
}

/// The identity files ssh lists when none is configured.
const DEFAULT_IDENTITIES: &[&str] = &[
    "~/.ssh/id_rsa",
    "~/.ssh/id_ecdsa",
    "~/.ssh/id_ecdsa_sk",
    "~/.ssh/id_ed25519",
    "~/.ssh/id_ed25519_sk",
    "~/.ssh/id_xmss",
    "~/.ssh/id_dsa",
];

struct Env {
    dir: tempfile::TempDir,
    local: LocalContext,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let uid = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout).unwrap();
        let entry = String::from_utf8(
            Command::new("getent")
                .args(["passwd", uid.trim()])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        let fields: Vec<&str> = entry.trim().split(':').collect();
        // gethostname(2), as ssh asks it (no `hostname` binary needed).
        let hostname = pvrdma_ssh_config::local_hostname();
        let local = LocalContext {
            // ssh takes `~` and `%d` from the passwd entry, Include's `~` from $HOME.
            home: PathBuf::from(fields[5]),
            include_home: dir.path().join("home"),
            local_user: fields[0].to_string(),
            uid: fields[2].parse().unwrap(),
            local_hostname: hostname,
            default_user: fields[0].to_string(),
        };
        Env { dir, local }
    }

    fn cfg_path(&self) -> PathBuf {
        self.dir.path().join("cfg")
    }

    /// Writes the case's files: the main config and the include files.
    fn write(&self, case: &Case) {
        for sub in ["home", "abs"] {
            let _ = std::fs::remove_dir_all(self.dir.path().join(sub));
        }
        std::fs::create_dir_all(self.dir.path().join("home/.ssh/inc")).unwrap();
        std::fs::create_dir_all(self.dir.path().join("abs")).unwrap();
        std::fs::write(self.cfg_path(), render(&case.main, self.dir.path())).unwrap();
        for (name, lines) in &case.includes {
            let path = if let Some(n) = name.strip_prefix("/ABS/") {
                self.dir.path().join("abs").join(n)
            } else {
                self.dir.path().join("home/.ssh").join(name)
            };
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, render(lines, self.dir.path())).unwrap();
        }
    }

    /// `ssh -G -F cfg ARGS`: `Err` with ssh's message when it refuses.
    fn ssh_g(&self, args: &[String]) -> Result<Resolved, String> {
        let out = Command::new("ssh")
            .arg("-G")
            .arg("-F")
            .arg(self.cfg_path())
            .args(args)
            .env("HOME", self.dir.path().join("home"))
            .env_remove("SSH_AUTH_SOCK")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("ssh (openssh-client) must be installed: scripts/install-test-deps.sh");
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let get = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix(' ')))
                .map(str::to_string)
        };
        let identity_files: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("identityfile "))
            .map(str::to_string)
            .collect();
        Ok(Resolved {
            hostname: get("hostname").unwrap_or_default(),
            user: get("user").unwrap_or_default(),
            port: get("port").unwrap_or_default(),
            identity_files: if identity_files == DEFAULT_IDENTITIES {
                Vec::new()
            } else {
                identity_files
            },
            // `none` (no file): ssh -G shows the word, pvrdma-doctor has an empty list.
            user_known_hosts: get("userknownhostsfile")
                .filter(|v| !v.eq_ignore_ascii_case("none"))
                .unwrap_or_default(),
            global_known_hosts: get("globalknownhostsfile").unwrap_or_default(),
            proxy_jump: get("proxyjump"),
            proxy_command: get("proxycommand"),
            connect_timeout: get("connecttimeout").unwrap_or_default(),
        })
    }

    /// pvrdma-doctor's resolution of the same input.
    fn ours(&self, case: &Case) -> Result<(SshConfig, HostConfig), ConfigError> {
        let config = SshConfig::load(&self.cfg_path(), self.local.clone())?;
        let (user, host) = match case.host.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, case.host.as_str()),
        };
        let options = CommandLineOptions::ordered(
            case.options
                .iter()
                .enumerate()
                .map(|(i, o)| (if i < case.host_at { i } else { i + 1 }, o.clone()))
                .collect(),
        )?;
        let arg = HostArg {
            host,
            user,
            port: None,
            position: case.host_at,
        };
        let cfg = config.resolve(&arg, &options)?;
        Ok((config, cfg))
    }
}

fn compare(ours: &HostConfig, ssh: &Resolved) -> Result<(), String> {
    let kh = |v: &[PathBuf]| v.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ");
    let mine = Resolved {
        hostname: ours.hostname.clone(),
        user: ours.user.clone(),
        port: ours.port.to_string(),
        identity_files: ours.identity_files_raw.clone(),
        user_known_hosts: kh(&ours.user_known_hosts_files),
        global_known_hosts: ours.global_known_hosts_files_raw.join(" "),
        proxy_jump: ours.jump.as_ref().map(JumpHost::display),
        proxy_command: ours.proxy_command.as_ref().map(|(c, _)| c.clone()),
        connect_timeout: ours
            .connect_timeout
            .map_or_else(|| "none".to_string(), |s| s.to_string()),
    };
    if &mine == ssh {
        Ok(())
    } else {
        Err(format!("pvrdma-doctor: {mine:#?}\nssh -G: {ssh:#?}"))
    }
}

/// One generated input.
#[derive(Debug, Clone)]
struct Case {
    main: Vec<Line>,
    includes: Vec<(String, Vec<Line>)>,
    options: Vec<CliOption>,
    host: String,
    /// The host argument stands before `options[host_at]`.
    host_at: usize,
}

/// One config line: keyword (as cased), separator, value, trailing comment, indent.
#[derive(Debug, Clone)]
struct Line {
    keyword: String,
    sep: &'static str,
    value: String,
    comment: bool,
    indent: bool,
}

fn render(lines: &[Line], base: &Path) -> String {
    let mut s = String::new();
    for l in lines {
        if l.indent {
            s.push_str("  ");
        }
        let value = l.value.replace("/ABS/", &format!("{}/abs/", base.display()));
        s.push_str(&format!("{}{}{}", l.keyword, l.sep, value));
        if l.comment {
            s.push_str(" # note: Host esx* all");
        }
        s.push('\n');
    }
    s
}

const HOST_PATTERNS: &[&str] = &[
    "esx01",
    "esx02",
    "ESX01",
    "esx*",
    "!esx02",
    "e?x0?",
    "esx01,esx02",
    "*",
    "!*",
    "bastion",
    "j*",
    "*.lab",
    "10.0.0.*",
    "\"esx01\"",
    "'esx*'",
    "db.lab",
    "real-esx01",
];

const MATCH: &[&str] = &[
    "all",
    "!all",
    "host esx01",
    "host ESX01",
    "host 10.0.0.*",
    "host real-*",
    "originalhost esx*",
    "originalhost ESX01",
    "user root",
    "user admin",
    "!user admin",
    "localuser root",
    "localuser nobody",
    "host esx01,!esx02",
    "host \"esx*\"",
    "host=esx01",
    "final",
    "canonical",
    "!final",
    "final host esx01",
    "originalhost esx01 user admin",
    "host j*",
    "!host esx*",
];

/// Values ssh accepts (some only in some places: `%p` in HostName, for one).
const VALUES: &[(&str, &[&str])] = &[
    (
        "HostName",
        &[
            "10.0.0.1",
            "%h.lab",
            "real-%h",
            "%%h",
            "%h",
            "ESXI-REAL",
            "bastion.lab",
            "'quoted.lab'",
            "\"q%h\"",
            "10.0.0.7",
            "j1",
            "FE80::A",
            "::1",
            "010.0.0.1",
            "0:0::1",
            "10.1",
        ],
    ),
    (
        "User",
        &["admin", "'admin'", "\"ad min\"", "root", "op@corp", "%u", "Admin"],
    ),
    ("Port", &["2202", "\"2202\"", "ssh", "http", "+22", "022", "22"]),
    (
        "IdentityFile",
        &[
            "~/.ssh/id_%h",
            "/keys/%r@%h:%p",
            "%d/k",
            "\"/a b/key\"",
            "~/k_%n_%u_%i",
            "/k/%C",
            "/k/%l-%L",
            "/k/%k",
            "/k/%%",
            // `${VAR}` reads the environment, the same on both sides: `ssh -G` gets
            // this process's environment with only HOME changed (which this test, sharing
            // its process with others, must not set for itself).
            "${PATH}/k",
            "~root/k",
            "id_rel",
            "/k/x",
            "/k/x # the lab key",
        ],
    ),
    (
        "UserKnownHostsFile",
        &[
            "~/kh %d/kh2",
            "none",
            "\"/kh a\"",
            "/kh/%h-%p-%r-%n",
            "/kh/%u-%i-%l-%L-%C-%k",
            "${PATH}/kh",
            "'~/q'",
            "/kh/1 /kh/2 # fleet",
        ],
    ),
    (
        "GlobalKnownHostsFile",
        &["/etc/gkh", "~/gkh", "none", "/g1 /g2", "/g/%h"],
    ),
    (
        "ProxyJump",
        &[
            "j1",
            "j1,j2",
            "u@j1:2200",
            "ssh://u@j1:2222",
            "none",
            "none # c",
            "j1#c",
            "[10.0.0.9]:22",
            "j1:ssh",
            "j2 ,j1",
            "NONE",
            "esx01",
            "bastion",
            "j2,u@j1",
            "[::1]:2222",
            "u@[fe80::1]",
        ],
    ),
    ("ProxyCommand", &["none", "nc %h %p", "NONE"]),
    ("HostKeyAlias", &["ALIAS1", "alias2"]),
    ("IgnoreUnknown", &["Foo*", "foo,bar", "!foo*,*"]),
    ("Compression", &["yes"]),
    ("ServerAliveInterval", &["30"]),
    ("SendEnv", &["LANG LC_*"]),
    ("ForwardAgent", &["no"]),
    ("Protocol", &["2"]),
    ("UseRoaming", &["no"]),
    ("StrictHostKeyChecking", &["yes", "accept-new"]),
    ("IdentitiesOnly", &["yes", "no"]),
    ("CanonicalizeHostname", &["no", "yes", "always"]),
    ("CanonicalizeFallbackLocal", &["yes", "no"]),
    ("ConnectTimeout", &["10", "1m30s", "0"]),
    ("LogLevel", &["DEBUG3", "quiet"]),
    (
        "UserKnownHostsFile",
        &["/kh/1 /kh/2 /kh/3 /kh/4 /kh/5 /kh/6 /kh/7 /kh/8 /kh/9 /kh/10 /kh/11 /kh/12 /kh/13 /kh/14 /kh/15 /kh/16 /kh/17 /kh/18 /kh/19 /kh/20"],
    ),
    (
        "Include",
        &[
            "inc/*.conf",
            "inc/[ab].conf",
            "*/y.conf",
            "inc/?.conf",
            "/ABS/abs*.conf",
            "inc/.h*",
            "inc/nomatch*",
            "~/.ssh/inc/a.conf",
            "inc/a.conf inc/b.conf",
        ],
    ),
];

/// Lines ssh refuses somewhere (always, or only for some hosts or in some places).
const BAD_LINES: &[(&str, &str)] = &[
    ("HostName", "%p"),
    ("HostName", "a b"),
    ("User", "\"\""),
    ("User", "a;b"),
    ("Port", "0"),
    ("Port", "65536"),
    ("Port", "22x"),
    ("Port", "-1"),
    ("Port", "1 2"),
    ("IdentityFile", "a b"),
    ("IdentityFile", "/k/%x"),
    ("UserKnownHostsFile", "none /x"),
    ("UserKnownHostsFile", "/kh/%x"),
    ("UserKnownHostsFile", "/kh/${PVRDMA_SURELY_UNSET}"),
    ("GlobalKnownHostsFile", "none /x"),
    ("ProxyJump", "j1, j2"),
    ("ProxyJump", "bad@"),
    ("ProxyJump", "j1,,j2"),
    ("ProxyJump", "j1:0"),
    ("Fooo", "yes"),
    ("StrictHostKeyChecking", "bogus"),
    ("IdentitiesOnly", "maybe"),
    ("User", "'unclosed"),
    ("Match", "bogus x"),
    ("Match", "host"),
    ("Match", "all host x"),
    ("ConnectTimeout", "-1"),
    ("ServerAliveInterval", "soon"),
    ("LogLevel", "junk"),
    ("Ciphers", "aes128-ctr extra"),
    ("CanonicalDomains", "none extra"),
    // ssh reads a line up to a NUL byte.
    ("User", "admin\u{0} evil"),
    ("\u{0}Bogus", "yes"),
    (
        "GlobalKnownHostsFile",
        "/g/1 /g/2 /g/3 /g/4 /g/5 /g/6 /g/7 /g/8 /g/9 /g/10 /g/11 /g/12 /g/13 /g/14 /g/15 /g/16 /g/17 /g/18 /g/19 /g/20 /g/21 /g/22 /g/23 /g/24 /g/25 /g/26 /g/27 /g/28 /g/29 /g/30 /g/31 /g/32 /g/33",
    ),
];

const INCLUDE_FILES: &[&str] = &[
    "inc/a.conf",
    "inc/b.conf",
    "inc/c.conf",
    "inc/.hidden.conf",
    "x1/y.conf",
    "x2/y.conf",
    "/ABS/abs1.conf",
];

fn keyword_case(k: &str, style: u8) -> String {
    match style % 5 {
        0 => k.to_string(),
        1 => k.to_ascii_lowercase(),
        2 => k.to_ascii_uppercase(),
        // A quoted keyword keeps a following `=` in its value; the values pvrdma-doctor
        // does not check (README) are left out of that.
        3 if ![
            "ServerAliveInterval",
            "SendEnv",
            "ForwardAgent",
            "Protocol",
            "UseRoaming",
            "\u{0}Bogus",
        ]
        .contains(&k) =>
        {
            format!("\"{k}\"")
        }
        _ => k.to_string(),
    }
}

fn line() -> impl Strategy<Value = Line> {
    let kind = prop_oneof![
        3 => (0..HOST_PATTERNS.len(), proptest::collection::vec(0..HOST_PATTERNS.len(), 0..3))
            .prop_map(|(a, more)| ("Host".to_string(), std::iter::once(a).chain(more).map(|i| HOST_PATTERNS[i]).collect::<Vec<_>>().join(" "))),
        2 => (0..MATCH.len()).prop_map(|i| ("Match".to_string(), MATCH[i].to_string())),
        12 => (0..VALUES.len(), any::<prop::sample::Index>())
            .prop_map(|(k, v)| (VALUES[k].0.to_string(), v.get(VALUES[k].1).to_string())),
        1 => prop::sample::select(BAD_LINES.to_vec()).prop_map(|(k, v)| (k.to_string(), v.to_string())),
    ];
    (kind, any::<u8>(), 0..4usize, any::<bool>(), any::<bool>()).prop_map(
        |((keyword, value), style, sep, comment, indent)| Line {
            keyword: keyword_case(&keyword, style),
            sep: [" ", "=", " = ", "\t"][sep],
            value,
            comment: comment && style.is_multiple_of(3),
            indent,
        },
    )
}

const HOSTS: &[&str] = &[
    "esx01",
    "admin2@esx01",
    "esx01.lab.example.",
    "esx02",
    "ESX01",
    "bastion",
    "u@10.0.0.7",
    "j1",
    "db.lab",
];

fn cli_option() -> impl Strategy<Value = CliOption> {
    prop_oneof![
        prop::sample::select(vec!["admin", "other"]).prop_map(|u| CliOption::Login(u.to_string())),
        prop::sample::select(vec!["2222", "ssh", "2222", "http", "0"]).prop_map(|p| CliOption::Port(p.to_string())),
        prop::sample::select(vec!["j1", "j1,j2", "u@j3:2022", "none"]).prop_map(|j| CliOption::Jump(j.to_string())),
        prop::sample::select(vec![
            "User=ouser",
            "Port=2300",
            "Port=ssh",
            "HostName=oh.lab",
            "ProxyJump=j2",
            "ProxyJump=none",
            "ProxyCommand=none",
            "ProxyCommand=nc %h %p",
            "IdentityFile=/o/k",
            "UserKnownHostsFile=/o/kh",
            "GlobalKnownHostsFile=/o/gkh",
            "StrictHostKeyChecking=yes",
            "ConnectTimeout=7",
            "ConnectTimeout=2m",
            "user admin3",
        ])
        .prop_map(|o| CliOption::Option(o.to_string())),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(line(), 0..10),
        proptest::collection::vec(
            (
                prop::sample::select(INCLUDE_FILES.to_vec()),
                proptest::collection::vec(line(), 0..4),
            ),
            0..3,
        ),
        proptest::collection::vec(cli_option(), 0..4),
        prop::sample::select(HOSTS.to_vec()),
        0..5usize,
    )
        .prop_map(|(main, includes, options, host, at)| Case {
            host_at: at.min(options.len()),
            main,
            includes: includes.into_iter().map(|(n, l)| (n.to_string(), l)).collect(),
            options,
            host: host.to_string(),
        })
}

/// The command line ssh gets for a case (options and host in the generated order).
fn ssh_args(case: &Case) -> Vec<String> {
    let mut args = Vec::new();
    for (i, o) in case.options.iter().enumerate() {
        if i == case.host_at {
            args.push(case.host.clone());
        }
        match o {
            CliOption::Login(u) => args.extend(["-l".to_string(), u.clone()]),
            CliOption::Port(p) => args.extend(["-p".to_string(), p.clone()]),
            CliOption::Jump(j) => args.extend(["-J".to_string(), j.clone()]),
            CliOption::Option(o) => args.extend(["-o".to_string(), o.clone()]),
        }
    }
    if case.host_at >= case.options.len() {
        args.push(case.host.clone());
    }
    args
}

/// How ssh runs a jump host's ssh: `-l user -p port -J extra host`.
fn jump_args(j: &JumpHost) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(u) = &j.user {
        args.extend(["-l".to_string(), u.clone()]);
    }
    if let Some(p) = j.port {
        args.extend(["-p".to_string(), p.to_string()]);
    }
    if let Some(e) = &j.extra {
        args.extend(["-J".to_string(), e.clone()]);
    }
    args.push(j.host.clone());
    args
}

/// How the cases went, for the figures printed at the end.
#[derive(Default)]
struct Stats {
    both_refuse: std::cell::Cell<u32>,
    agree: std::cell::Cell<u32>,
    hops: std::cell::Cell<u32>,
    /// Why ssh refused, by message (file names and numbers dropped).
    reasons: std::cell::RefCell<std::collections::BTreeMap<String, u32>>,
}

fn bump(c: &std::cell::Cell<u32>) {
    c.set(c.get() + 1);
}

/// Compares one case, following the jump chain hop by hop.
fn check(env: &Env, case: &Case, stats: &Stats) -> Result<(), String> {
    env.write(case);
    let describe = |why: String| {
        let cfg = std::fs::read_to_string(env.cfg_path()).unwrap_or_default();
        let inc: String = case
            .includes
            .iter()
            .map(|(n, l)| format!("--- include {n}:\n{}", render(l, env.dir.path())))
            .collect();
        format!(
            "{why}\n--- command line: ssh -G -F cfg {:?}\n--- cfg:\n{cfg}{inc}",
            ssh_args(case)
        )
    };
    let ssh = env.ssh_g(&ssh_args(case));
    let ours = env.ours(case);
    let (config, mut cfg) = match (ours, ssh) {
        (Err(_), Err(e)) => {
            let first = e.lines().next().unwrap_or("").to_string();
            let key: String = first
                .split(['"', '\''])
                .step_by(2)
                .collect::<String>()
                .chars()
                .filter(|c| !c.is_ascii_digit())
                .collect();
            let key = key.rsplit(": ").next().unwrap_or("").to_string();
            *stats.reasons.borrow_mut().entry(key).or_default() += 1;
            bump(&stats.both_refuse);
            return Ok(());
        }
        (Ok(_), Err(e)) => return Err(describe(format!("ssh refuses ({e}), pvrdma-doctor accepts"))),
        (Err(e), Ok(r)) => return Err(describe(format!("pvrdma-doctor refuses ({e}), ssh accepts: {r:#?}"))),
        (Ok((config, cfg)), Ok(r)) => {
            compare(&cfg, &r).map_err(|d| describe(format!("target differs:\n{d}")))?;
            bump(&stats.agree);
            (config, cfg)
        }
    };
    for depth in 0..4 {
        let Some(j) = cfg.jump.clone() else {
            return Ok(());
        };
        let ssh = env.ssh_g(&jump_args(&j));
        match (config.resolve_jump(&j), ssh) {
            (Err(_), Err(_)) => return Ok(()),
            (Ok(_), Err(e)) => {
                return Err(describe(format!(
                    "hop {depth} ({j:?}): ssh refuses ({e}), pvrdma-doctor accepts"
                )))
            }
            (Err(e), Ok(_)) => {
                return Err(describe(format!(
                    "hop {depth} ({j:?}): pvrdma-doctor refuses ({e}), ssh accepts"
                )))
            }
            (Ok(next), Ok(r)) => {
                compare(&next, &r).map_err(|d| describe(format!("hop {depth} ({j:?}) differs:\n{d}")))?;
                bump(&stats.hops);
                cfg = next;
            }
        }
    }
    Ok(())
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
#[ignore = "needs OpenSSH's ssh -G: scripts/test.sh runs it"]
fn ssh_config_resolution_matches_ssh_g() {
    let env = Env::new();
    let cases = env_number("PVRDMA_SSH_DIFF_CASES", 2000) as u32;
    let seed = env_number("PVRDMA_SSH_DIFF_SEED", 21);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes));
    let stats = Stats::default();
    let result = runner.run(&case(), |c| check(&env, &c, &stats).map_err(TestCaseError::fail));
    if result.is_ok() {
        eprintln!(
            "ssh_config differential: {cases} cases (seed {seed}) agree with ssh -G: {} resolved alike, {} refused by both, {} jump hops compared",
            stats.agree.get(),
            stats.both_refuse.get(),
            stats.hops.get()
        );
    }
    if std::env::var_os("PVRDMA_SSH_DIFF_REASONS").is_some() {
        eprintln!("{:#?}", stats.reasons.borrow());
    }
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, minimal)) => {
            panic!("smallest disagreement with ssh -G (seed {seed}):\n{why}\n{minimal:#?}")
        }
        Err(e) => panic!("{e}"),
    }
}
