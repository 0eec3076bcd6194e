//! One keyword line checked as ssh(1) checks it, and its value recorded when it applies.
use super::*;

/// One keyword line (not `Host`, `Match`, `Include`): checks it as ssh does, and when
/// `active`, records a value not obtained yet.
pub(super) fn apply(
    opts: &mut Options,
    kw: Keyword,
    keyword: &str,
    rest: &str,
    origin: &Origin<'_>,
    active: bool,
) -> Result<(), ConfigError> {
    let args = lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
    let extra = || origin.error(format!("keyword {keyword} extra arguments at end of line"));
    let missing = || origin.error("Missing argument.");
    // The single argument of most keywords.
    let one = || -> Result<&String, ConfigError> {
        let a = args.first().filter(|a| !a.is_empty()).ok_or_else(missing)?;
        if args.len() > 1 {
            return Err(extra());
        }
        Ok(a)
    };
    // The single argument of a keyword with a fixed set of values, as `what` maps them.
    fn choice<T: Copy>(
        args: &[String],
        what: &[(&str, T)],
        origin: &Origin<'_>,
        extra: impl Fn() -> ConfigError,
    ) -> Result<T, ConfigError> {
        let a = args.first().ok_or_else(|| origin.error("missing argument."))?;
        let v = what
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(a))
            .map(|(_, v)| *v)
            .ok_or_else(|| origin.error(format!("unsupported option \"{a}\".")))?;
        if args.len() > 1 {
            return Err(extra());
        }
        Ok(v)
    }
    let flag = |what: &[(&str, bool)]| choice(&args, what, origin, extra);
    // One argument of a list keyword: never empty, and `none` only alone.
    let list_arg = |i: usize, a: &str| -> Result<(), ConfigError> {
        if a.is_empty() {
            return Err(origin.error(format!("keyword {keyword} empty argument")));
        }
        if a.eq_ignore_ascii_case("none") && (i > 0 || args.len() > 1) {
            return Err(origin.error(format!("keyword {keyword} \"none\" argument must appear alone.")));
        }
        Ok(())
    };
    const YES_NO: &[(&str, bool)] = &[("true", true), ("false", false), ("yes", true), ("no", false)];
    // Raw text after the keyword, for ProxyCommand and ProxyJump.
    let raw = rest.trim_start_matches([' ', '\t', '\r', '\n', '=']);
    match kw {
        Keyword::HostName => set_once(&mut opts.hostname, one()?, active),
        Keyword::User => set_once(&mut opts.user, one()?, active),
        Keyword::HostKeyAlias => set_once(&mut opts.host_key_alias, one()?, active),
        Keyword::IgnoreUnknown => set_once(&mut opts.ignore_unknown, one()?, active),
        Keyword::Port => {
            let a = one()?;
            let port = a2port(a)
                .filter(|&p| p > 0)
                .ok_or_else(|| origin.error(format!("Bad port '{a}'.")))?;
            if active && opts.port.is_none() {
                opts.port = Some(port);
            }
        }
        Keyword::IdentityFile => {
            let a = one()?;
            if active {
                if opts.identity_files.len() >= MAX_IDENTITY_FILES {
                    return Err(origin.error(format!("Too many identity files specified (max {MAX_IDENTITY_FILES}).")));
                }
                let entry = (a.clone(), origin.user_conf);
                if !opts.identity_files.contains(&entry) {
                    opts.identity_files.push(entry);
                }
            }
        }
        Keyword::UserKnownHostsFile | Keyword::GlobalKnownHostsFile => {
            for (i, a) in args.iter().enumerate() {
                list_arg(i, a)?;
            }
            let list = if kw == Keyword::UserKnownHostsFile {
                &mut opts.user_hostfiles
            } else {
                &mut opts.system_hostfiles
            };
            // ssh counts only the entries it keeps: an active line, the list still empty.
            if active && list.is_none() && args.len() > MAX_HOSTS_FILES {
                return Err(origin.error(format!("too many {keyword} entries.")));
            }
            if active && list.is_none() && !args.is_empty() {
                *list = Some(args.clone());
            }
        }
        Keyword::StrictHostKeyChecking => {
            use StrictHostKeyChecking as S;
            let what = [
                ("true", S::Yes),
                ("yes", S::Yes),
                ("ask", S::Yes),
                ("false", S::No),
                ("no", S::No),
                ("off", S::No),
                ("accept-new", S::AcceptNew),
            ];
            let v = choice(&args, &what, origin, extra)?;
            if active && opts.strict.is_none() {
                opts.strict = Some((v, origin.at()));
            }
        }
        Keyword::IdentitiesOnly => set_once(&mut opts.identities_only, &flag(YES_NO)?, active),
        Keyword::HashKnownHosts => set_once(&mut opts.hash_known_hosts, &flag(YES_NO)?, active),
        Keyword::CanonicalizeHostname => {
            let what = [
                ("true", Canonicalize::Yes),
                ("false", Canonicalize::No),
                ("yes", Canonicalize::Yes),
                ("no", Canonicalize::No),
                ("always", Canonicalize::Always),
            ];
            let v = choice(&args, &what, origin, extra)?;
            set_once(&mut opts.canonicalize_hostname, &v, active);
        }
        Keyword::CanonicalizeFallbackLocal => {
            set_once(&mut opts.canonicalize_fallback_local, &flag(YES_NO)?, active);
        }
        Keyword::CanonicalizeMaxDots => {
            let dots = values::integer(one()?).map_err(|e| origin.error(e))?;
            set_once(&mut opts.canonicalize_max_dots, &dots, active);
        }
        Keyword::CanonicalDomains => {
            for (i, a) in args.iter().enumerate() {
                list_arg(i, a)?;
                values::domain(a).map_err(|e| origin.error(e))?;
            }
            if active && opts.canonical_domains.is_none() {
                opts.canonical_domains = Some(args.into_iter().filter(|a| !a.eq_ignore_ascii_case("none")).collect());
            }
        }
        Keyword::ProxyCommand => {
            if active && opts.proxy_command.is_none() {
                opts.proxy_command = Some((raw.to_string(), origin.at()));
            }
        }
        Keyword::ProxyJump => {
            let jump = parse_jump(raw, origin.command_line)
                .map_err(|e| origin.error(format!("Invalid ProxyJump \"{raw}\" ({e})")))?;
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
        }
        Keyword::Flag => {
            flag(YES_NO)?;
        }
        Keyword::YesNo => {
            flag(&[("yes", true), ("no", false)])?;
        }
        Keyword::ConnectTimeout => {
            let secs = values::time(one()?).map_err(|e| origin.error(e))?;
            set_once(&mut opts.connect_timeout, &secs, active);
        }
        Keyword::Time => {
            values::time(one()?).map_err(|e| origin.error(e))?;
        }
        Keyword::Integer => {
            values::integer(one()?).map_err(|e| origin.error(e))?;
        }
        Keyword::LogLevel => {
            values::log_level(one()?).map_err(|e| origin.error(e))?;
        }
        Keyword::Single => {
            one()?;
        }
        Keyword::Other => {}
        Keyword::Host | Keyword::Match | Keyword::Include => {
            return Err(origin.error(format!("{keyword} directive not supported as a command-line option")));
        }
    }
    Ok(())
}

pub(super) fn set_once<T: Clone>(slot: &mut Option<T>, value: &T, active: bool) {
    if active && slot.is_none() {
        *slot = Some(value.clone());
    }
}
