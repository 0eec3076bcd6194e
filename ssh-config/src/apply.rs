//! One keyword line checked as ssh(1) checks it, and its value recorded when it applies.
use super::*;

/// One keyword line (not `Host`, `Match`, `Include`): checks it as ssh does, and when
/// `active`, records a value not obtained yet. One arm per keyword ssh reads for this
/// tool, then the classes of keywords only checked.
pub(super) fn apply(
    opts: &mut Options,
    kw: Keyword,
    keyword: &str,
    rest: &str,
    origin: &Origin<'_>,
    active: bool,
) -> Result<(), ConfigError> {
    let args = Args {
        list: lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?,
        keyword,
        origin,
    };
    // Raw text after the keyword, for ProxyCommand and ProxyJump.
    let raw = rest.trim_start_matches([' ', '\t', '\r', '\n', '=']);
    let error = |e| origin.error(e);
    match kw {
        Keyword::HostName => set_once(&mut opts.hostname, args.one()?, active),
        Keyword::User => set_once(&mut opts.user, args.one()?, active),
        Keyword::HostKeyAlias => set_once(&mut opts.host_key_alias, args.one()?, active),
        Keyword::IgnoreUnknown => set_once(&mut opts.ignore_unknown, args.one()?, active),
        Keyword::Port => {
            let a = args.one()?;
            let port = a2port(a)
                .filter(|&p| p > 0)
                .ok_or_else(|| origin.error(format!("Bad port '{a}'.")))?;
            set_once(&mut opts.port, &port, active);
        }
        Keyword::IdentityFile => add_identity_file(opts, args.one()?, origin, active)?,
        Keyword::UserKnownHostsFile => known_hosts_files(&mut opts.user_hostfiles, &args, active)?,
        Keyword::GlobalKnownHostsFile => known_hosts_files(&mut opts.system_hostfiles, &args, active)?,
        Keyword::StrictHostKeyChecking => {
            let v = args.choice(STRICT_HOST_KEY_CHECKING)?;
            if active && opts.strict.is_none() {
                opts.strict = Some((v, origin.at()));
            }
        }
        Keyword::IdentitiesOnly => set_once(&mut opts.identities_only, &args.choice(YES_NO)?, active),
        Keyword::HashKnownHosts => set_once(&mut opts.hash_known_hosts, &args.choice(YES_NO)?, active),
        Keyword::CanonicalizeHostname => {
            set_once(&mut opts.canonicalize_hostname, &args.choice(CANONICALIZE)?, active);
        }
        Keyword::CanonicalizeFallbackLocal => {
            set_once(&mut opts.canonicalize_fallback_local, &args.choice(YES_NO)?, active);
        }
        Keyword::CanonicalizeMaxDots => {
            let dots = values::integer(args.one()?).map_err(error)?;
            set_once(&mut opts.canonicalize_max_dots, &dots, active);
        }
        Keyword::CanonicalDomains => {
            args.check_list(|a| values::domain(a).map_err(error))?;
            if active && opts.canonical_domains.is_none() {
                let domains = args.list.iter().filter(|a| !a.eq_ignore_ascii_case("none"));
                opts.canonical_domains = Some(domains.cloned().collect());
            }
        }
        Keyword::ProxyCommand => {
            if active && opts.proxy_command.is_none() {
                opts.proxy_command = Some((raw.to_string(), origin.at()));
            }
        }
        Keyword::ProxyJump => proxy_jump(opts, raw, origin, active)?,
        Keyword::Flag => {
            args.choice(YES_NO)?;
        }
        Keyword::YesNo => {
            args.choice(&[("yes", true), ("no", false)])?;
        }
        Keyword::ConnectTimeout => {
            let secs = values::time(args.one()?).map_err(error)?;
            set_once(&mut opts.connect_timeout, &secs, active);
        }
        Keyword::Time => {
            values::time(args.one()?).map_err(error)?;
        }
        Keyword::Integer => {
            values::integer(args.one()?).map_err(error)?;
        }
        Keyword::LogLevel => {
            values::log_level(args.one()?).map_err(error)?;
        }
        Keyword::Single => {
            args.one()?;
        }
        Keyword::Other => {}
        Keyword::Host | Keyword::Match | Keyword::Include => {
            return Err(origin.error(format!("{keyword} directive not supported as a command-line option")));
        }
    }
    Ok(())
}

const YES_NO: &[(&str, bool)] = &[("true", true), ("false", false), ("yes", true), ("no", false)];

const STRICT_HOST_KEY_CHECKING: &[(&str, StrictHostKeyChecking)] = &[
    ("true", StrictHostKeyChecking::Yes),
    ("yes", StrictHostKeyChecking::Yes),
    ("ask", StrictHostKeyChecking::Yes),
    ("false", StrictHostKeyChecking::No),
    ("no", StrictHostKeyChecking::No),
    ("off", StrictHostKeyChecking::No),
    ("accept-new", StrictHostKeyChecking::AcceptNew),
];

const CANONICALIZE: &[(&str, Canonicalize)] = &[
    ("true", Canonicalize::Yes),
    ("false", Canonicalize::No),
    ("yes", Canonicalize::Yes),
    ("no", Canonicalize::No),
    ("always", Canonicalize::Always),
];

/// A keyword line's arguments, split as ssh splits them, read with ssh's own errors.
struct Args<'a> {
    list: Vec<String>,
    keyword: &'a str,
    origin: &'a Origin<'a>,
}

impl Args<'_> {
    fn extra(&self) -> ConfigError {
        self.origin
            .error(format!("keyword {} extra arguments at end of line", self.keyword))
    }

    /// The single argument of most keywords.
    fn one(&self) -> Result<&String, ConfigError> {
        let a = self
            .list
            .first()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| self.origin.error("Missing argument."))?;
        if self.list.len() > 1 {
            return Err(self.extra());
        }
        Ok(a)
    }

    /// The single argument of a keyword with a fixed set of values, as `what` maps them.
    fn choice<T: Copy>(&self, what: &[(&str, T)]) -> Result<T, ConfigError> {
        let a = self
            .list
            .first()
            .ok_or_else(|| self.origin.error("missing argument."))?;
        let v = what
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(a))
            .map(|(_, v)| *v)
            .ok_or_else(|| self.origin.error(format!("unsupported option \"{a}\".")))?;
        if self.list.len() > 1 {
            return Err(self.extra());
        }
        Ok(v)
    }

    /// The arguments of a list keyword, each checked by `each` after ssh's own rules:
    /// never empty, and `none` only alone.
    fn check_list(&self, each: impl Fn(&str) -> Result<(), ConfigError>) -> Result<(), ConfigError> {
        let keyword = self.keyword;
        for (i, a) in self.list.iter().enumerate() {
            if a.is_empty() {
                return Err(self.origin.error(format!("keyword {keyword} empty argument")));
            }
            if a.eq_ignore_ascii_case("none") && (i > 0 || self.list.len() > 1) {
                return Err(self
                    .origin
                    .error(format!("keyword {keyword} \"none\" argument must appear alone.")));
            }
            each(a)?;
        }
        Ok(())
    }
}

/// `IdentityFile`: every one is kept (up to ssh's limit), each once.
fn add_identity_file(opts: &mut Options, file: &str, origin: &Origin<'_>, active: bool) -> Result<(), ConfigError> {
    if !active {
        return Ok(());
    }
    if opts.identity_files.len() >= MAX_IDENTITY_FILES {
        return Err(origin.error(format!("Too many identity files specified (max {MAX_IDENTITY_FILES}).")));
    }
    let entry = (file.to_string(), origin.user_conf);
    if !opts.identity_files.contains(&entry) {
        opts.identity_files.push(entry);
    }
    Ok(())
}

/// `UserKnownHostsFile`, `GlobalKnownHostsFile`: the first list given.
fn known_hosts_files(list: &mut Option<Vec<String>>, args: &Args<'_>, active: bool) -> Result<(), ConfigError> {
    args.check_list(|_| Ok(()))?;
    // ssh counts only the entries it keeps: an active line, the list still empty.
    if active && list.is_none() && args.list.len() > MAX_HOSTS_FILES {
        return Err(args.origin.error(format!("too many {} entries.", args.keyword)));
    }
    if active && list.is_none() && !args.list.is_empty() {
        *list = Some(args.list.clone());
    }
    Ok(())
}

/// `ProxyJump`: `none`, or the jump hosts, which void any later `ProxyCommand`.
fn proxy_jump(opts: &mut Options, raw: &str, origin: &Origin<'_>, active: bool) -> Result<(), ConfigError> {
    let jump =
        parse_jump(raw, origin.command_line).map_err(|e| origin.error(format!("Invalid ProxyJump \"{raw}\" ({e})")))?;
    match jump {
        Jump::None => {
            if active && opts.jump.is_none() {
                opts.jump = Some(Jump::None);
            }
        }
        via @ Jump::Via { .. } => {
            if active && opts.proxy_command.is_none() && opts.jump.is_none() {
                opts.jump = Some(via);
                // As ssh: a ProxyJump makes any later ProxyCommand void.
                opts.proxy_command = Some(("none".into(), origin.at()));
            }
        }
    }
    Ok(())
}

pub(super) fn set_once<T: Clone>(slot: &mut Option<T>, value: &T, active: bool) {
    if active && slot.is_none() {
        *slot = Some(value.clone());
    }
}
