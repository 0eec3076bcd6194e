//! `-p`, `-J` and `-o Key=Value`: ssh_config options given on the command line.
use super::{split_line, ConfigError, Directive};
use std::path::PathBuf;

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
];

/// Options given on the command line (`-p`, `-J`, `-o Key=Value`), in the order given;
/// they are obtained before any config file, so they win.
#[derive(Debug, Clone, Default)]
pub struct CommandLineOptions {
    pub(super) directives: Vec<Directive>,
}

impl CommandLineOptions {
    /// `port` is `-p`, `jump` is `-J`, `options` the `-o` values (`Key=Value` or
    /// `Key Value`). An option this tool does not honour is an error rather than being
    /// silently dropped.
    pub fn new(port: Option<u16>, jump: Option<&str>, options: &[String]) -> Result<Self, ConfigError> {
        let mut directives = Vec::new();
        let mut push = |key: &str, args: Vec<String>, n: usize| {
            directives.push(Directive {
                key: key.to_string(),
                args,
                file: PathBuf::from("command line"),
                line: n,
            })
        };
        if let Some(p) = port {
            push("port", vec![p.to_string()], 0);
        }
        if let Some(j) = jump {
            push("proxyjump", vec![j.to_string()], 0);
        }
        for (n, text) in options.iter().enumerate() {
            let bad = |message: String| ConfigError::Syntax {
                path: PathBuf::from("command line"),
                line: n + 1,
                message,
            };
            let Some((key, args)) = split_line(text).map_err(|m| bad(format!("-o {text:?}: {m}")))? else {
                return Err(bad(format!("-o {text:?} is empty")));
            };
            if !HONOURED_OPTIONS.iter().any(|o| o.eq_ignore_ascii_case(&key)) {
                return Err(bad(format!(
                    "-o {text:?}: pvrdma-doctor does not use this option; it honours {}",
                    HONOURED_OPTIONS.join(", ")
                )));
            }
            push(&key, args, n + 1);
        }
        Ok(CommandLineOptions { directives })
    }
}
