//! Reading the password and the home directory.
use super::*;

/// The password from `PVRDMA_DOCTOR_PASSWORD`, else (with `ask`) from one prompt on the
/// terminal without echo. Never from an argument, never printed.
pub(crate) fn read_password(ask: bool) -> anyhow::Result<Option<SecretString>> {
    if let Ok(p) = std::env::var(PASSWORD_ENV) {
        if !p.is_empty() {
            return Ok(Some(SecretString::from(p)));
        }
    }
    if ask {
        let p = rpassword::prompt_password("Password for the ESXi hosts (not echoed): ")
            .context("cannot read the password from the terminal")?;
        return Ok(Some(SecretString::from(p)));
    }
    Ok(None)
}

/// The home directory: `$HOME`, else the passwd entry's (which ssh always uses; see the
/// README for why `$HOME` comes first here).
pub(super) fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| pvrdma_ssh_config::current_user().map(|p| p.home))
        .unwrap_or_else(|| PathBuf::from("/root"))
}
