//! Logging in on one hop as OpenSSH does: agent keys, identity files, then the password
//! through keyboard-interactive (ESXi's PAM path), then the `password` method.
//!
//! Every key, from the agent or a file, goes through one routine ([`Login::try_key`]), and
//! every attempt is written down with the server's answer, so a failure says exactly what
//! was offered and what came back. Guesses at causes (FIPS mode, lockdown mode) are given
//! as possible causes, and only when the server looks like ESXi.
use crate::ssh::endpoint::{Credentials, Endpoint, Identity, KeyOrigin};
use crate::ssh::error::{SshError, SshErrorKind};
use crate::ssh::key_files::{KeyFiles, Unusable};
use crate::ssh::known_hosts;
use crate::ssh::signer::{FileKey, RingSigner};
use crate::ssh::transport::{ClientHandler, ServerInfo};
use russh::client::{AuthResult, Handle, KeyboardInteractiveAuthResponse};
use russh::keys::agent::client::AgentClient;
use russh::keys::{Algorithm, HashAlg, PrivateKeyWithHashAlg, PublicKey};
use russh::MethodKind;
use secrecy::{ExposeSecret, SecretString};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How long listing the ssh-agent's keys may take; a live agent answers in milliseconds.
const AGENT_TIMEOUT: Duration = Duration::from_secs(3);

type Agent = AgentClient<tokio::net::UnixStream>;

/// The agent socket from `SSH_AUTH_SOCK`; unset or empty means no agent, as for ssh.
fn agent_socket() -> Option<PathBuf> {
    agent_socket_from(std::env::var_os("SSH_AUTH_SOCK"))
}

fn agent_socket_from(var: Option<OsString>) -> Option<PathBuf> {
    var.filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// Who signs for a key being offered.
enum Signer<'a> {
    Agent(&'a mut Agent),
    File(Arc<FileKey>),
}

/// The state of one login: what the server still allows, and what was tried.
struct Login<'a> {
    handle: &'a mut Handle<ClientHandler>,
    user: String,
    /// `None` until the server has told us; OpenSSH also starts by simply trying.
    remaining: Option<Vec<MethodKind>>,
    rsa_hash: Option<Option<HashAlg>>,
    /// Keys offered so far, to offer each once.
    tried: Vec<PublicKey>,
    /// One line per attempt: what was offered, what the server answered.
    attempts: Vec<String>,
    /// What was not offered, and why.
    notes: Vec<String>,
    /// An ed25519 key was refused (a known ESXi FIPS-mode cause).
    ed25519_refused: bool,
}

impl Login<'_> {
    fn allows(&self, m: MethodKind) -> bool {
        self.remaining.as_ref().is_none_or(|v| v.contains(&m))
    }

    async fn rsa_hash(&mut self) -> Option<HashAlg> {
        if let Some(h) = self.rsa_hash {
            return h;
        }
        // Old servers without server-sig-algs get SHA-256, which every ESXi 7+ accepts.
        let h = match self.handle.best_supported_rsa_hash().await {
            Ok(Some(h)) => h,
            _ => Some(HashAlg::Sha256),
        };
        self.rsa_hash = Some(h);
        h
    }

    /// Offers one key; `Ok(true)` when the server let us in. `what` says where the key
    /// comes from (`agent key`, a file path) for the attempt list.
    async fn try_key(&mut self, key: PublicKey, what: &str, signer: Signer<'_>) -> Result<bool, russh::Error> {
        if self.tried.iter().any(|k| k.key_data() == key.key_data()) {
            return Ok(false);
        }
        let hash = if key.algorithm().is_rsa() {
            self.rsa_hash().await
        } else {
            None
        };
        let offered = format!("{what} ({})", describe(&key));
        let result = match signer {
            Signer::Agent(agent) => self
                .handle
                .authenticate_publickey_with(self.user.clone(), key.clone(), hash, agent)
                .await
                .map_err(|e| format!("ssh-agent could not sign with it ({e})")),
            // ring signs what it can (see `signer`), russh the rest.
            Signer::File(file) => match file.ring(hash) {
                Some(ring) => self
                    .handle
                    .authenticate_publickey_with(self.user.clone(), key.clone(), hash, &mut RingSigner(ring))
                    .await
                    .map_err(|e| format!("could not sign with it ({e})")),
                None => Ok(self
                    .handle
                    .authenticate_publickey(self.user.clone(), PrivateKeyWithHashAlg::new(file.key.clone(), hash))
                    .await?),
            },
        };
        self.tried.push(key.clone());
        match result {
            Ok(AuthResult::Success) => return Ok(true),
            Ok(AuthResult::Failure {
                remaining_methods,
                partial_success,
            }) => {
                let remaining: Vec<MethodKind> = remaining_methods.to_vec();
                self.attempts
                    .push(format!("{offered}: {}", refusal(partial_success, &remaining)));
                if key.algorithm() == Algorithm::Ed25519 {
                    self.ed25519_refused = true;
                }
                self.remaining = Some(remaining);
            }
            Err(e) => self.attempts.push(format!("{offered}: {e}")),
        }
        Ok(false)
    }
}

/// `ECDSA-SHA2-NISTP256 SHA256:...`: the key type and fingerprint, never the comment
/// (it often holds the admin's local user and machine name).
fn describe(key: &PublicKey) -> String {
    format!("{} {}", key.algorithm().as_str(), known_hosts::fingerprint(key))
}

fn method_names(methods: &[MethodKind]) -> String {
    let names: Vec<&str> = methods.iter().map(<&str>::from).collect();
    if names.is_empty() {
        "nothing more".to_string()
    } else {
        names.join(", ")
    }
}

/// The server's answer to a refused attempt, in words.
fn refusal(partial_success: bool, remaining: &[MethodKind]) -> String {
    if partial_success {
        format!(
            "accepted, but the server requires another method as well (it allows: {})",
            method_names(remaining)
        )
    } else {
        format!("refused by the server (it still allows: {})", method_names(remaining))
    }
}

/// Lists the agent's keys, bounded in time: a stale SSH_AUTH_SOCK whose listener never
/// answers must not use up the connect timeout and hide that the keys on disk would work.
async fn list_agent(socket: &Path) -> Result<(Agent, Vec<PublicKey>), String> {
    let listed = tokio::time::timeout(AGENT_TIMEOUT, async {
        let mut agent = AgentClient::connect_uds(socket)
            .await
            .map_err(|e| format!("ssh-agent at SSH_AUTH_SOCK={} unreachable ({e})", socket.display()))?;
        let ids = agent
            .request_identities()
            .await
            .map_err(|e| format!("ssh-agent did not list its keys ({e})"))?;
        Ok::<_, String>((agent, ids))
    })
    .await
    .unwrap_or_else(|_| {
        Err(format!(
            "ssh-agent did not answer within {} (SSH_AUTH_SOCK may be stale)",
            pvrdma_engine::duration::text(AGENT_TIMEOUT)
        ))
    })?;
    let (agent, ids) = listed;
    Ok((agent, ids.into_iter().map(|id| id.public_key().into_owned()).collect()))
}

/// Logs in on `hop`; on failure the error lists every attempt and the server's answers.
/// The order is OpenSSH's: the agent's keys, the identity files, then the password.
pub(crate) async fn authenticate(
    hop: &Endpoint,
    handle: &mut Handle<ClientHandler>,
    creds: &Credentials,
    is_target: bool,
    server: &ServerInfo,
) -> Result<(), SshError> {
    let mut login = Login {
        handle,
        user: hop.user.clone(),
        remaining: None,
        rsa_hash: None,
        tried: Vec::new(),
        attempts: Vec::new(),
        notes: Vec::new(),
        ed25519_refused: false,
    };
    let broken = |e: russh::Error| {
        SshError::at(
            SshErrorKind::Auth,
            hop,
            format!("the connection broke during authentication ({e})"),
        )
    };
    let agent_socket = if creds.use_agent { agent_socket() } else { None };
    if let Some(socket) = &agent_socket {
        if login.with_agent(hop, socket, &creds.keys).await.map_err(broken)? {
            return Ok(());
        }
    }
    if login.with_identity_files(hop, &creds.keys).await.map_err(broken)? {
        return Ok(());
    }
    if login.with_password(creds, is_target).await.map_err(broken)? {
        return Ok(());
    }
    if login.tried.is_empty() {
        let agent = match (creds.use_agent, &agent_socket) {
            (false, _) => "",
            (true, None) => "no ssh-agent (SSH_AUTH_SOCK is not set), ",
            (true, Some(_)) => "no usable agent key, ",
        };
        login.notes.insert(
            0,
            format!(
                "no key was offered: {agent}no readable key in -i, IdentityFile or ~/.ssh/id_ecdsa, id_rsa, id_ed25519"
            ),
        );
    }
    Err(auth_failure(hop, is_target, server, &login))
}

impl Login<'_> {
    /// Offers the agent's keys (only those of the identity files under
    /// `IdentitiesOnly`); `Ok(true)` when one let us in.
    async fn with_agent(&mut self, hop: &Endpoint, socket: &Path, files: &KeyFiles) -> Result<bool, russh::Error> {
        let (mut agent, keys) = match list_agent(socket).await {
            Ok(listed) => listed,
            Err(e) => {
                self.notes.push(e);
                return Ok(false);
            }
        };
        if keys.is_empty() {
            self.notes.push("the ssh-agent holds no keys".into());
        }
        let wanted: Vec<PublicKey> = hop
            .identity_files
            .iter()
            .filter_map(|i| files.get(&i.path).public().cloned())
            .collect();
        for key in keys {
            if hop.identities_only && !wanted.iter().any(|w| w.key_data() == key.key_data()) {
                continue;
            }
            if !self.allows(MethodKind::PublicKey) {
                break;
            }
            if self.try_key(key, "agent key", Signer::Agent(&mut agent)).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Offers the private keys of `-i`, `IdentityFile` and the default files that the
    /// agent did not offer already; says why a file was skipped. `Ok(true)` when one let
    /// us in.
    async fn with_identity_files(&mut self, hop: &Endpoint, files: &KeyFiles) -> Result<bool, russh::Error> {
        for Identity { path, origin } in &hop.identity_files {
            let file = files.get(path);
            // Already offered by the agent: an encrypted key loaded with ssh-add, or a key
            // named by its public half only (`-i key.pub`, the private half in the agent).
            if file
                .public()
                .is_some_and(|p| self.tried.iter().any(|k| k.key_data() == p.key_data()))
            {
                continue;
            }
            if !file.exists {
                match origin {
                    KeyOrigin::Default => {}
                    KeyOrigin::Config => self.notes.push(format!(
                        "{} (IdentityFile in ssh config) does not exist",
                        path.display()
                    )),
                    KeyOrigin::CommandLine => self.notes.push(format!(
                        "-i {}: no such file, and the ssh-agent did not offer its key",
                        path.display()
                    )),
                }
                continue;
            }
            if file.public_itself.is_some() {
                self.notes.push(format!(
                    "{} is a public key: its private half must be in the ssh-agent, which did not offer it",
                    path.display()
                ));
                continue;
            }
            if !self.allows(MethodKind::PublicKey) {
                self.notes.push(format!(
                    "{} not offered: the server no longer accepts public keys",
                    path.display()
                ));
                continue;
            }
            let key = match &file.private {
                Some(Ok(k)) => k.clone(),
                Some(Err(Unusable::Encrypted(e))) => {
                    self.notes.push(e.clone());
                    continue;
                }
                Some(Err(Unusable::Other(e))) => {
                    self.notes.push(format!("{e}; not offered"));
                    continue;
                }
                None => continue,
            };
            let public = key.key.public_key().clone();
            let what = path.display().to_string();
            if self.try_key(public, &what, Signer::File(key)).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Sends the password by keyboard-interactive, then by the password method, as far
    /// as the server allows them; without a password, says why none was sent. `Ok(true)`
    /// when it let us in.
    async fn with_password(&mut self, creds: &Credentials, is_target: bool) -> Result<bool, russh::Error> {
        let password_methods = self.allows(MethodKind::KeyboardInteractive) || self.allows(MethodKind::Password);
        let password = match &creds.password {
            Some(password) => password,
            None if !is_target => {
                self.notes.push(
                    "jump hosts are logged in to with keys or the agent only, never with the ESXi password".into(),
                );
                return Ok(false);
            }
            None if password_methods => {
                self.notes
                    .push("no password given (set PVRDMA_DOCTOR_PASSWORD or use --ask-password)".into());
                return Ok(false);
            }
            None => return Ok(false),
        };
        let mut sent = false;
        if self.allows(MethodKind::KeyboardInteractive) {
            sent = true;
            match keyboard_interactive(self.handle, &self.user, password).await? {
                KbdOutcome::Success => return Ok(true),
                KbdOutcome::Refused(r) => {
                    self.attempts.push(format!(
                        "password by keyboard-interactive: refused by the server (it still allows: {})",
                        method_names(&r)
                    ));
                    self.remaining = Some(r);
                }
                KbdOutcome::NotAPasswordPrompt(prompt) => {
                    self.attempts.push(format!(
                        "keyboard-interactive: the server asked {prompt:?}, which is not a password prompt, so it was not answered (use a key for hosts with two-factor login)"
                    ));
                    // The exchange was abandoned mid-way: nothing else can follow on it.
                    self.remaining = Some(Vec::new());
                }
            }
        }
        if self
            .remaining
            .as_ref()
            .is_some_and(|r| r.contains(&MethodKind::Password))
        {
            sent = true;
            match self
                .handle
                .authenticate_password(self.user.clone(), password.expose_secret())
                .await?
            {
                AuthResult::Success => return Ok(true),
                AuthResult::Failure { remaining_methods, .. } => self.attempts.push(format!(
                    "password by the password method: refused by the server (it still allows: {})",
                    method_names(&remaining_methods)
                )),
            }
        }
        if !sent {
            self.notes.push(format!(
                "the password was not sent: the server accepts neither keyboard-interactive nor password (it allows: {})",
                method_names(self.remaining.as_deref().unwrap_or_default())
            ));
        }
        Ok(false)
    }
}

fn auth_failure(hop: &Endpoint, is_target: bool, server: &ServerInfo, login: &Login<'_>) -> SshError {
    let user = &login.user;
    let mut text = format!("authentication as {user:?} failed.");
    if !login.attempts.is_empty() {
        text.push_str(" Attempts: ");
        let list: Vec<String> = login
            .attempts
            .iter()
            .enumerate()
            .map(|(n, a)| format!("{}) {a}", n + 1))
            .collect();
        text.push_str(&list.join("; "));
        text.push('.');
    }
    if !login.notes.is_empty() {
        text.push_str(" Also: ");
        text.push_str(&login.notes.join("; "));
        text.push('.');
    }
    let esxi = server.looks_like_esxi();
    if esxi && is_target {
        text.push_str(&format!(
            " To fix: put an RSA or ECDSA public key in /etc/ssh/keys-{user}/authorized_keys on the host, or give the password."
        ));
    } else {
        let place = if is_target { "server" } else { "jump host" };
        text.push_str(&format!(
            " To fix: add one of your public keys to {user}'s authorized_keys on the {place}, or check the user name."
        ));
    }
    if esxi {
        let mut causes: Vec<String> = Vec::new();
        if login.ed25519_refused {
            causes.push(
                "ESXi in FIPS mode (the 8.0 default) refuses ed25519 keys even when they are in authorized_keys; use an RSA or ECDSA key".into(),
            );
        }
        if !login.attempts.is_empty() {
            causes.push(format!(
                "if the key or password is right, the host may be in lockdown mode: add {user:?} to its Exception Users"
            ));
        }
        if !causes.is_empty() {
            text.push_str(" Possible causes (the server looks like ESXi): ");
            text.push_str(&causes.join("; "));
            text.push('.');
        }
    }
    SshError::at(SshErrorKind::Auth, hop, text)
}

/// How a keyboard-interactive exchange ended.
enum KbdOutcome {
    Success,
    /// Refused, with what the server still allows.
    Refused(Vec<MethodKind>),
    /// A hidden prompt that is not a password prompt (an OTP, a verification code): the
    /// ESXi password must not be typed into it, so the exchange stops there.
    NotAPasswordPrompt(String),
}

/// True for a prompt that asks for the password (ESXi's PAM asks "Password: ").
fn is_password_prompt(prompt: &str) -> bool {
    prompt.to_ascii_lowercase().contains("password")
}

/// The answers to one info request: the password for hidden password prompts, nothing for
/// echoed ones (informational); `Err(prompt)` for a hidden prompt that is not a password.
fn answers_for<'a>(
    prompts: impl IntoIterator<Item = (&'a str, bool)>,
    password: &SecretString,
) -> Result<Vec<String>, String> {
    prompts
        .into_iter()
        .map(|(prompt, echo)| {
            if echo {
                Ok(String::new())
            } else if is_password_prompt(prompt) {
                Ok(password.expose_secret().to_string())
            } else {
                Err(prompt.to_string())
            }
        })
        .collect()
}

/// Answers the server's password prompts with the password, and nothing else.
async fn keyboard_interactive(
    handle: &mut Handle<ClientHandler>,
    user: &str,
    password: &SecretString,
) -> Result<KbdOutcome, russh::Error> {
    let mut reply = handle
        .authenticate_keyboard_interactive_start(user, None::<String>)
        .await?;
    // PAM may ask more than once (e.g. an empty info round); a server that keeps asking
    // after this many rounds is not going to accept the password.
    for _ in 0..6 {
        match reply {
            KeyboardInteractiveAuthResponse::Success => return Ok(KbdOutcome::Success),
            KeyboardInteractiveAuthResponse::Failure { remaining_methods, .. } => {
                return Ok(KbdOutcome::Refused(remaining_methods.to_vec()))
            }
            KeyboardInteractiveAuthResponse::InfoRequest { prompts, .. } => {
                let answers = match answers_for(prompts.iter().map(|p| (p.prompt.as_str(), p.echo)), password) {
                    Ok(a) => a,
                    Err(prompt) => return Ok(KbdOutcome::NotAPasswordPrompt(prompt)),
                };
                reply = handle.authenticate_keyboard_interactive_respond(answers).await?;
            }
        }
    }
    Ok(KbdOutcome::Refused(Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_answers_only_password_prompts() {
        let pw = SecretString::from("hunter2-secret".to_string());
        assert_eq!(
            answers_for([("Password: ", false), ("Banner", true)], &pw),
            Ok(vec!["hunter2-secret".to_string(), String::new()])
        );
        assert_eq!(
            answers_for([("(root@esx01) PASSWORD for root:", false)], &pw),
            Ok(vec!["hunter2-secret".to_string()])
        );
        // A second factor must never receive the ESXi password.
        assert_eq!(
            answers_for([("Password: ", false), ("Verification code: ", false)], &pw),
            Err("Verification code: ".to_string())
        );
    }

    #[test]
    fn debug_output_never_shows_the_password() {
        let c = Credentials {
            use_agent: true,
            password: Some(SecretString::from("hunter2-secret".to_string())),
            keys: Default::default(),
        };
        assert!(!format!("{c:?}").contains("hunter2-secret"));
    }

    #[test]
    fn an_empty_ssh_auth_sock_means_no_agent() {
        assert_eq!(agent_socket_from(None), None);
        assert_eq!(agent_socket_from(Some(OsString::new())), None);
        assert_eq!(
            agent_socket_from(Some(OsString::from("/tmp/agent.sock"))),
            Some(PathBuf::from("/tmp/agent.sock"))
        );
    }

    #[test]
    fn refusals_say_what_the_server_still_allows() {
        let r = refusal(false, &[MethodKind::PublicKey, MethodKind::KeyboardInteractive]);
        assert_eq!(
            r,
            "refused by the server (it still allows: publickey, keyboard-interactive)"
        );
        assert!(refusal(true, &[MethodKind::Password]).contains("requires another method"));
        assert!(refusal(false, &[]).contains("nothing more"));
    }
}
