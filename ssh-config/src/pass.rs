//! One reading of the files for one host: `Host` and `Match` blocks, `Include`, and the
//! first value of each keyword kept, as ssh(1) reads them.
use super::*;

impl Pass<'_> {
    pub(super) fn read_all(&mut self, opts: &mut Options) -> Result<(), ConfigError> {
        let config = self.config;
        for top in &config.files {
            let file = config.cache.file(&top.path);
            let lexed = match &file.read {
                Ok(l) => l,
                // ssh skips `~/.ssh/config` and the system file when it cannot open them;
                // only `-F FILE` must be readable.
                Err(_) if !top.user_conf || top.check_perm => continue,
                Err((kind, text)) => {
                    return Err(ConfigError::Read {
                        path: top.path.clone(),
                        error: cache::CachedFile::error(*kind, text),
                    })
                }
            };
            if top.check_perm {
                if let Some(refused) = &file.perm {
                    return Err(ConfigError::Refused(refused.clone()));
                }
            }
            let mut active = true;
            let flags = Flags {
                user_conf: top.user_conf,
                never_match: false,
            };
            let include_dir = if top.user_conf {
                None
            } else {
                Some(top.path.parent().unwrap_or(Path::new("/etc/ssh")).to_path_buf())
            };
            self.read_text(opts, &top.path, lexed, &mut active, flags, include_dir.as_deref(), 0)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_text(
        &mut self,
        opts: &mut Options,
        path: &Path,
        lexed: &cache::Lexed,
        active: &mut bool,
        flags: Flags,
        system_dir: Option<&Path>,
        depth: usize,
    ) -> Result<(), ConfigError> {
        for (line, cut) in lexed.lines() {
            let origin = Origin {
                file: path,
                line: *line,
                user_conf: flags.user_conf,
                command_line: false,
            };
            let (keyword, rest) = match cut {
                Ok((keyword, range)) => (keyword, lexed.rest(range)),
                Err(k) => return Err(origin.error(format!("no argument after keyword \"{k}\""))),
            };
            match keywords::lookup(keyword) {
                Some(Keyword::Host) => {
                    let words = lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
                    if flags.never_match {
                        if words.first().is_some_and(String::is_empty) {
                            return Err(origin.error("keyword host empty argument"));
                        }
                        *active = false;
                    } else {
                        *active = matching::host_line_matches(&words, &self.host).map_err(|m| origin.error(m))?;
                    }
                }
                Some(Keyword::Match) => {
                    lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
                    let state = matching::MatchState {
                        host: &match_host(opts, &self.host, self.final_pass)?,
                        original_host: self.original_host,
                        user: opts.user.as_deref().unwrap_or(&self.config.local.default_user),
                        local_user: &self.config.local.local_user,
                        final_pass: self.final_pass,
                    };
                    let outcome = matching::match_line(rest, &state).map_err(|m| origin.error(m))?;
                    self.wants_final |= outcome.wants_final;
                    if outcome.leftover {
                        return Err(origin.error("keyword match extra arguments at end of line"));
                    }
                    *active = outcome.applies && !flags.never_match;
                }
                Some(Keyword::Include) => {
                    let words = lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
                    for word in words {
                        self.include(opts, &origin, &word, active, flags, system_dir, depth)?;
                    }
                }
                Some(kw) => apply(opts, kw, keyword, rest, &origin, *active)?,
                None => {
                    let ignored = opts
                        .ignore_unknown
                        .as_deref()
                        .is_some_and(|list| matching::ignored_keyword(list, keyword));
                    if !ignored {
                        return Err(origin.error(format!("Bad configuration option: {keyword}")));
                    }
                    lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn include(
        &mut self,
        opts: &mut Options,
        origin: &Origin<'_>,
        word: &str,
        active: &mut bool,
        flags: Flags,
        system_dir: Option<&Path>,
        depth: usize,
    ) -> Result<(), ConfigError> {
        if word.is_empty() {
            return Err(origin.error("keyword include empty argument"));
        }
        if word.starts_with('~') && !flags.user_conf {
            return Err(origin.error(format!("bad include path {word}.")));
        }
        let local = &self.config.local;
        let pattern = if word.starts_with('/') {
            word.to_string()
        } else if word.starts_with('~') {
            tilde_expand(word, &local.include_home).map_err(|e| origin.error(e))?
        } else if flags.user_conf {
            format!("{}/.ssh/{word}", glob_escape(&local.include_home.to_string_lossy()))
        } else {
            let dir = system_dir.unwrap_or(Path::new("/etc/ssh"));
            format!("{}/{word}", glob_escape(&dir.to_string_lossy()))
        };
        let files = self.config.cache.glob(&pattern).map_err(|e| origin.error(e))?;
        let outer = *active;
        for file in files {
            if depth + 1 > MAX_INCLUDE_DEPTH {
                return Err(origin.error("Too many recursive configuration includes"));
            }
            let cached = self.config.cache.file(&file);
            let lexed = match &cached.read {
                Ok(l) => l,
                Err((std::io::ErrorKind::NotFound, _)) => continue,
                Err((_, e)) => return Err(origin.error(format!("Can't open user config file {}: {e}", file.display()))),
            };
            if let Some(refused) = &cached.perm {
                return Err(ConfigError::Refused(refused.clone()));
            }
            let inner = Flags {
                user_conf: flags.user_conf,
                never_match: flags.never_match || !outer,
            };
            self.read_text(opts, &file, lexed, active, inner, system_dir, depth + 1)?;
            // A Match in the included file does not change the including block's state.
            *active = outer;
        }
        Ok(())
    }
}

/// What `Match host` compares with when the line is reached: `HostName` so far with
/// `%h` expanded, else the host.
fn match_host(opts: &Options, host: &str, final_pass: bool) -> Result<String, ConfigError> {
    match &opts.hostname {
        Some(h) if final_pass => Ok(h.clone()),
        Some(h) => {
            percent_expand(h, &[('h', host)], false).map_err(|e| ConfigError::Refused(format!("HostName {h:?}: {e}")))
        }
        None => Ok(host.to_string()),
    }
}
