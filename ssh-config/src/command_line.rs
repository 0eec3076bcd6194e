//! `-l`, `-p`, `-J`, `-o Key=Value` and the host argument: the command line, taken in
//! the order given, as ssh's getopt loop takes it. For the user and the port the first
//! value given wins across all of them (`-l a root@esx01` logs in as `a`;
//! `root@esx01 -l a` as `root`), and they are obtained before any config file.
use super::jump::{a2port, parse_jump, Jump};
use super::{apply, keywords, lexer, ConfigError, HostArg, Options, Origin};
use std::path::Path;

/// The ssh_config options this tool honours, which `-o` may set.
pub const HONOURED_OPTIONS: &[&str] = &[
    "HostName",
    "User",
    "Port",
    "IdentityFile",
    "IdentitiesOnly",
    "ProxyJump",
    "ProxyCommand",
    "UserKnownHostsFile",
    "GlobalKnownHostsFile",
    "StrictHostKeyChecking",
    "HashKnownHosts",
    "HostKeyAlias",
    "ConnectTimeout",
];

/// One connection option of the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliOption {
    /// `-l USER`
    Login(String),
    /// `-p PORT` (a number or a service name)
    Port(String),
    /// `-J HOPS`
    Jump(String),
    /// `-o Key=Value` (or `Key Value`)
    Option(String),
}

/// The connection options of the command line with their positions.
#[derive(Debug, Clone, Default)]
pub struct CommandLineOptions {
    items: Vec<(usize, CliOption)>,
}

impl CommandLineOptions {
    /// Options with their command-line positions (any order; they are sorted). Checked
    /// as ssh checks them before reading any config (a bad `-o`, `-J` twice or after a
    /// `ProxyCommand`, a bad port). An `-o` option this tool does not honour is an error
    /// rather than being silently dropped.
    pub fn ordered(mut items: Vec<(usize, CliOption)>) -> Result<Self, ConfigError> {
        items.sort_by_key(|(at, _)| *at);
        for (_, item) in &items {
            if let CliOption::Option(text) = item {
                let key = match lexer::keyword_and_rest(text) {
                    Ok(Some((key, _))) => key,
                    Ok(None) => return Err(ConfigError::CommandLine(format!("-o {text:?} is empty"))),
                    Err(key) => return Err(ConfigError::CommandLine(format!("-o {text:?}: no value after {key}"))),
                };
                let known = keywords::lookup(&key).is_some();
                if known && !HONOURED_OPTIONS.iter().any(|o| o.eq_ignore_ascii_case(&key)) {
                    return Err(ConfigError::CommandLine(format!(
                        "-o {text:?}: pvrdma-doctor does not use this option; it honours {}",
                        HONOURED_OPTIONS.join(", ")
                    )));
                }
            }
        }
        let out = CommandLineOptions { items };
        out.apply(&mut Options::default(), None)?;
        Ok(out)
    }

    /// `-p`, `-J` and `-o` in that order (for callers without positions).
    pub fn new(port: Option<&str>, jump: Option<&str>, options: &[String]) -> Result<Self, ConfigError> {
        let mut items = Vec::new();
        if let Some(p) = port {
            items.push(CliOption::Port(p.to_string()));
        }
        if let Some(j) = jump {
            items.push(CliOption::Jump(j.to_string()));
        }
        items.extend(options.iter().map(|o| CliOption::Option(o.clone())));
        Self::ordered(items.into_iter().enumerate().collect())
    }

    /// How ssh reaches a jump host: its own ssh gets `-l`, `-p` and `-J` for the hops
    /// before it, and none of the target's options.
    pub fn for_jump(user: Option<&str>, port: Option<u16>, extra: Option<&str>) -> Result<Self, ConfigError> {
        let mut items = Vec::new();
        if let Some(u) = user {
            items.push(CliOption::Login(u.to_string()));
        }
        if let Some(p) = port {
            items.push(CliOption::Port(p.to_string()));
        }
        if let Some(e) = extra {
            items.push(CliOption::Jump(e.to_string()));
        }
        Self::ordered(items.into_iter().enumerate().collect())
    }

    /// The `-l` user, if any (the first one).
    pub fn login_user(&self) -> Option<&str> {
        self.items.iter().find_map(|(_, i)| match i {
            CliOption::Login(u) => Some(u.as_str()),
            _ => None,
        })
    }

    /// Applies the options in order, with the host argument's `user@` and `:port` at its
    /// position, as ssh's getopt loop does.
    pub(super) fn apply(&self, opts: &mut Options, host: Option<&HostArg<'_>>) -> Result<(), ConfigError> {
        let mut host_done = host.is_none();
        for (n, (at, item)) in self.items.iter().enumerate() {
            if let Some(h) = host.filter(|h| !host_done && h.position < *at) {
                apply_host(opts, h);
                host_done = true;
            }
            apply_one(opts, item, n + 1)?;
        }
        if let Some(h) = host.filter(|_| !host_done) {
            apply_host(opts, h);
        }
        opts.user_from_command_line = opts.user.is_some();
        Ok(())
    }
}

fn apply_host(opts: &mut Options, h: &HostArg<'_>) {
    if opts.user.is_none() {
        opts.user = h.user.map(str::to_string);
    }
    if opts.port.is_none() {
        opts.port = h.port;
    }
}

fn apply_one(opts: &mut Options, item: &CliOption, n: usize) -> Result<(), ConfigError> {
    let refuse = |m: String| Err(ConfigError::CommandLine(m));
    match item {
        CliOption::Login(u) => {
            if opts.user.is_none() {
                opts.user = Some(u.clone());
            }
        }
        CliOption::Port(p) => {
            if opts.port.is_none() {
                match a2port(p).filter(|&n| n > 0) {
                    Some(port) => opts.port = Some(port),
                    None => return refuse(format!("-p: bad port '{p}'")),
                }
            }
        }
        CliOption::Jump(j) => {
            if opts.jump.is_some() {
                return refuse(
                    "Only a single -J option is permitted (use commas to separate multiple jump hops)".into(),
                );
            }
            if opts.proxy_command.is_some() {
                return refuse("Cannot specify -J with ProxyCommand".into());
            }
            match parse_jump(j, true) {
                Ok(Jump::None) => opts.jump = Some(Jump::None),
                Ok(via) => {
                    opts.jump = Some(via);
                    opts.proxy_command = Some(("none".into(), "-J".into()));
                }
                Err(e) => return refuse(format!("Invalid -J argument {j:?}: {e}")),
            }
        }
        CliOption::Option(text) => {
            let origin = Origin {
                file: Path::new("command line -o"),
                line: n,
                user_conf: true,
                command_line: true,
            };
            let (key, rest) = match lexer::keyword_and_rest(text) {
                Ok(Some(kr)) => kr,
                Ok(None) => return refuse(format!("-o {text:?} is empty")),
                Err(k) => return refuse(format!("-o {text:?}: no argument after keyword \"{k}\"")),
            };
            let Some(kw) = keywords::lookup(&key) else {
                return refuse(format!("-o {text:?}: Bad configuration option: {key}"));
            };
            apply(opts, kw, &key, rest, &origin, true).map_err(|e| match e {
                ConfigError::Syntax { message, .. } => ConfigError::CommandLine(format!("-o {text:?}: {message}")),
                other => other,
            })?;
        }
    }
    Ok(())
}
