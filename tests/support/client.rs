//! The client side of a test, as a user of pvrdma-doctor has it: a key, a known_hosts
//! file and an ssh config in a private home folder ([`Client`]), the in-process
//! collection's options from them ([`Client::options`]), and the binary run with them
//! ([`Doctor`], its result an [`Outcome`]).
use super::sshd::{Sshd, SshdOptions};
use super::{keygen, test_user};
use pvrdma_doctor::live::LiveOptions;
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// `127.0.0.1:<port>` of a test sshd, as a target on the command line.
pub fn target(sshd: &Sshd) -> String {
    format!("127.0.0.1:{}", sshd.port)
}

/// An ssh config block naming `sshd` as `name`.
pub fn alias(name: &str, sshd: &Sshd) -> String {
    format!("Host {name}\n  HostName 127.0.0.1\n  Port {}\n", sshd.port)
}

/// A temporary home with an ECDSA key (`id_test`), a known_hosts file trusting nobody
/// yet, and an ssh config whose `Host *` block logs in as the test user with that key
/// and that known_hosts (no global known_hosts file).
pub struct Client {
    pub dir: tempfile::TempDir,
    pub key: PathBuf,
    pub known_hosts: PathBuf,
    pub config: PathBuf,
}

impl Client {
    pub fn new() -> Client {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = keygen(dir.path(), "id_test", "ecdsa");
        let known_hosts = dir.path().join("known_hosts");
        std::fs::write(&known_hosts, "").expect("known_hosts");
        let config = dir.path().join("config");
        let c = Client {
            dir,
            key,
            known_hosts,
            config,
        };
        c.write_config("");
        c
    }

    /// Rewrites the ssh config: `extra` first (its values win), then the `Host *` block.
    pub fn write_config(&self, extra: &str) {
        std::fs::write(
            &self.config,
            format!(
                "{extra}\nHost *\n  User {user}\n  IdentityFile {key}\n  UserKnownHostsFile {kh}\n  GlobalKnownHostsFile {dir}/global_known_hosts\n",
                user = test_user(),
                key = self.key.display(),
                kh = self.known_hosts.display(),
                dir = self.dir.path().display(),
            ),
        )
        .expect("config");
    }

    /// Records the server's host key in known_hosts.
    pub fn trust(&self, sshd: &Sshd) {
        let mut text = std::fs::read_to_string(&self.known_hosts).unwrap_or_default();
        text.push_str(&sshd.known_hosts_line());
        std::fs::write(&self.known_hosts, text).expect("known_hosts");
    }

    /// Lets this client's key in on the server to be started with `opts`.
    pub fn authorize(&self, opts: &mut SshdOptions) {
        opts.authorized_keys.push(self.key.clone());
    }

    /// A server on `samples` that lets this client's key in.
    pub fn keyed_sshd(&self, samples: PathBuf) -> Sshd {
        let mut o = SshdOptions::new(samples);
        self.authorize(&mut o);
        Sshd::start(o)
    }

    /// The in-process collection of `targets` through this client's ssh config, with
    /// timeouts a loaded machine meets.
    pub fn options(&self, targets: &[String]) -> LiveOptions {
        LiveOptions {
            targets: targets.to_vec(),
            ssh_config: Some(self.config.clone()),
            // Never the machine's own /etc/ssh/ssh_config (and -F skips it anyway).
            system_ssh_config: self.dir.path().join("system_ssh_config"),
            connect_timeout: Some(Duration::from_secs(20)),
            command_timeout: Duration::from_secs(20),
            run_timeout: Some(Duration::from_secs(120)),
            ..LiveOptions::default()
        }
    }

    /// The binary with `-F <this config>` and this home.
    pub fn doctor(&self) -> Doctor {
        Doctor::new().config(&self.config).home(self.dir.path())
    }
}

/// One run of the pvrdma-doctor binary. By default neither an ssh-agent
/// (`SSH_AUTH_SOCK`) nor a password (`PVRDMA_DOCTOR_PASSWORD`) reaches it from the
/// environment of the test; [`Doctor::env`] gives them back on purpose.
pub struct Doctor {
    args: Vec<OsString>,
    /// In order: a value sets the variable, `None` removes it.
    envs: Vec<(OsString, Option<OsString>)>,
    dir: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
}

impl Default for Doctor {
    fn default() -> Self {
        Doctor::new()
    }
}

impl Doctor {
    pub fn new() -> Doctor {
        Doctor {
            args: Vec::new(),
            envs: Vec::new(),
            dir: None,
            stdin: None,
            timeout: Duration::from_secs(600),
        }
        .env_remove("SSH_AUTH_SOCK")
        .env_remove("PVRDMA_DOCTOR_PASSWORD")
    }

    /// `-F <path>`: the ssh config instead of `~/.ssh/config`.
    pub fn config(self, path: &Path) -> Doctor {
        self.arg("-F").arg(path)
    }

    /// `HOME`, where `~/.ssh` is looked for.
    pub fn home(self, dir: &Path) -> Doctor {
        self.env("HOME", dir)
    }

    /// The server as a target (`127.0.0.1:<port>`).
    pub fn against(self, sshd: &Sshd) -> Doctor {
        self.arg(target(sshd))
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Doctor {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Doctor
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Doctor {
        self.envs.push((key.into(), Some(value.as_ref().to_owned())));
        self
    }

    /// Reads its hosts from the vSphere simulator `sim`: its URL, its account (the
    /// password from the environment, never the command line) and its CA trusted.
    pub fn reading(self, sim: &crate::support::vcsim::Vcsim) -> Doctor {
        self.logging_in_to(sim).arg("--vcenter-ca").arg(&sim.ca)
    }

    /// `sim`'s URL and account (the password from the environment), its certificate
    /// left to what the test gives.
    pub fn logging_in_to(self, sim: &crate::support::vcsim::Vcsim) -> Doctor {
        self.env("PVRDMA_DOCTOR_VCENTER_PASSWORD", &sim.password)
            .env_remove("PVRDMA_DOCTOR_VCENTER_USER")
            .args(["--vcenter", &sim.url, "--vcenter-user", &sim.user])
    }

    pub fn env_remove(mut self, key: &str) -> Doctor {
        self.envs.push((key.into(), None));
        self
    }

    /// The working directory of the run (relative paths in its arguments land there).
    pub fn current_dir(mut self, dir: &Path) -> Doctor {
        self.dir = Some(dir.to_owned());
        self
    }

    /// What the run reads on its standard input (by default: nothing, at once).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Doctor {
        self.stdin = Some(bytes.into());
        self
    }

    /// The command, for a test that needs the process itself (a terminal, a pipe of
    /// its own).
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(Doctor::binary());
        cmd.args(&self.args);
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        for (key, value) in &self.envs {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
        cmd
    }

    /// At most this long for [`Doctor::run`] (by default 10 minutes), then the run is
    /// killed and the test fails.
    pub fn timeout(mut self, limit: Duration) -> Doctor {
        self.timeout = limit;
        self
    }

    /// Runs it to the end, its output captured.
    pub fn run(&self) -> Outcome {
        Outcome::from(self.output())
    }

    /// [`Doctor::run`], the streams as bytes and the exit status whole.
    pub fn output(&self) -> std::process::Output {
        self.start(None, Duration::ZERO).wait_output(self.timeout)
    }

    /// The binary itself, for a test that hands it to another program (a shell, a
    /// terminal, a unit file) rather than running it.
    pub fn binary() -> PathBuf {
        // Cargo names the binary to integration tests only; the examples sharing this
        // module compile it without one.
        let Some(bin) = option_env!("CARGO_BIN_EXE_pvrdma-doctor") else {
            panic!("only an integration test can run the pvrdma-doctor binary");
        };
        PathBuf::from(bin)
    }

    /// Starts it and returns once a line of its stderr contains `line` (failing the test,
    /// with what it printed, when none does within `within` or it ends first).
    pub fn spawn_until(&self, line: &str, within: Duration) -> Running {
        self.start(Some(line), within)
    }

    fn start(&self, line: Option<&str>, within: Duration) -> Running {
        let mut child = self
            .command()
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run pvrdma-doctor");
        // Every stream is served beside the run, so none blocks it on a full pipe.
        if let (Some(mut pipe), Some(input)) = (child.stdin.take(), self.stdin.clone()) {
            std::thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        let mut stdout = child.stdout.take().expect("stdout");
        let stdout = std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = stdout.read_to_end(&mut all);
            all
        });
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (found, waiting) = mpsc::channel();
        let wanted = line.unwrap_or_default().as_bytes().to_vec();
        let collected = seen.clone();
        let reader = std::thread::spawn(move || loop {
            let mut l = Vec::new();
            match stderr.read_until(b'\n', &mut l) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let hit = !wanted.is_empty() && l.windows(wanted.len()).any(|w| w == wanted.as_slice());
            if let Ok(mut all) = collected.lock() {
                all.extend_from_slice(&l);
            }
            if hit {
                let _ = found.send(());
            }
        });
        if let Some(line) = line {
            if waiting.recv_timeout(within).is_err() {
                let _ = child.kill();
                let _ = child.wait();
                let text = seen
                    .lock()
                    .map(|s| String::from_utf8_lossy(&s).into_owned())
                    .unwrap_or_default();
                panic!("no stderr line containing {line:?} within {within:?}; stderr:\n{text}");
            }
        }
        Running {
            child,
            stdout: Some(stdout),
            reader: Some(reader),
            stderr: seen,
        }
    }
}

/// A run of the binary still going (from [`Doctor::spawn_until`]); killed when dropped
/// before it ended, so a test that fails half-way leaves no process behind.
pub struct Running {
    child: std::process::Child,
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Running {
    /// Sends SIGINT, as Ctrl-C in a terminal does.
    pub fn interrupt(&self) {
        self.signal("-INT");
    }

    /// Sends the signal `sig` (`-HUP`, `-TERM`...) with kill(1).
    pub fn signal(&self, sig: &str) {
        let st = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(st.success(), "kill {sig} failed");
    }

    /// What it printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .map(|s| String::from_utf8_lossy(&s).into_owned())
            .unwrap_or_default()
    }

    /// Waits for the end, at most `within` (then kills it and fails the test).
    pub fn wait(self, within: Duration) -> Outcome {
        Outcome::from(self.wait_output(within))
    }

    /// [`Running::wait`], the streams as bytes and the exit status whole.
    pub fn wait_output(mut self, within: Duration) -> std::process::Output {
        let deadline = std::time::Instant::now() + within;
        let status = loop {
            match self.child.try_wait().expect("wait") {
                Some(status) => break status,
                None if std::time::Instant::now() >= deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!("pvrdma-doctor still running after {within:?}");
                }
                // Polled: std has no wait with a timeout.
                None => std::thread::sleep(Duration::from_millis(10)),
            }
        };
        let stdout = self.stdout.take().and_then(|t| t.join().ok()).unwrap_or_default();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        let stderr = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        std::process::Output { status, stdout, stderr }
    }
}

/// What a run of the binary gave.
pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Outcome {
    fn from(out: std::process::Output) -> Outcome {
        Outcome {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Outcome {
    /// Stdout as JSON; fails the test showing both streams when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\nstderr: {}", self.stdout, self.stderr))
    }

    /// Stdout as JSON Lines (`watch --format json`), one value per line.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }
}
