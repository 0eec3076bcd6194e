//! A real OpenSSH `sshd` on 127.0.0.1, configured like ESXi 8.0.2's (FIPS algorithm lists,
//! keyboard-interactive through PAM, a banner) with fake `esxcli`/`vsish` first on PATH
//! under busybox `sh`, answering from `samples/`. Started per test, killed on drop.
//!
//! The machine must have been prepared by `scripts/install-test-deps.sh` (sshd, busybox,
//! the PAM test user); when it was not, tests fail and say so rather than skip.
#![allow(dead_code)]
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const SSHD: &str = "/usr/sbin/sshd";
pub const TEST_SHELL: &str = "/usr/local/lib/pvrdma-doctor-test/sh";

pub fn test_user() -> String {
    std::env::var("PVRDMA_TEST_USER").unwrap_or_else(|_| "pvrdmatest".into())
}

pub fn test_password() -> String {
    std::env::var("PVRDMA_TEST_PASSWORD").unwrap_or_else(|_| "pvrdma-test-pw".into())
}

pub fn samples_host(scenario: &str, host: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(scenario)
        .join(host)
}

/// Fails the test, naming the script, when the machine lacks what the tests need.
pub fn require_test_deps() {
    let fix = "run `sudo scripts/install-test-deps.sh` first (it installs openssh-server and busybox and creates the PAM test user)";
    assert!(Path::new(SSHD).is_file(), "{SSHD} is missing: {fix}");
    assert!(Path::new(TEST_SHELL).exists(), "{TEST_SHELL} is missing: {fix}");
    let user = test_user();
    let ok = Command::new("id")
        .arg(&user)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "test user {user} does not exist: {fix}");
    assert!(
        nix_is_root(),
        "the sshd tests start sshd as root (it must switch to the test user): run cargo test as root, after {fix}"
    );
}

fn nix_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// True once *this* sshd says it listens. A successful TCP connect is not enough: if
/// the port was taken meanwhile, the connect reaches the other process while ours
/// dies on bind(), and the test would talk to a stranger.
fn wait_listening(child: &mut std::process::Child, port: u16, log_path: &Path) -> bool {
    let start = Instant::now();
    let ready = format!("Server listening on 127.0.0.1 port {}", port);
    while start.elapsed() < Duration::from_secs(10) {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if std::fs::read_to_string(log_path).unwrap_or_default().contains(&ready)
            && TcpStream::connect(("127.0.0.1", port)).is_ok()
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    l.local_addr().expect("local addr").port()
}

/// Generates an OpenSSH key pair with ssh-keygen; returns the private key path.
pub fn keygen(dir: &Path, name: &str, kind: &str) -> PathBuf {
    let path = dir.join(name);
    let bits: &[&str] = match kind {
        "rsa" => &["-b", "2048"],
        "ecdsa" => &["-b", "256"],
        _ => &[],
    };
    let st = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-t", kind])
        .args(bits)
        .arg("-f")
        .arg(&path)
        .status()
        .expect("run ssh-keygen");
    assert!(st.success(), "ssh-keygen failed");
    path
}

pub struct SshdOptions {
    pub samples: PathBuf,
    pub max_sessions: Option<u32>,
    /// Catalogue ids whose fake command sleeps forever.
    pub hang: Vec<String>,
    /// Public keys allowed for the test user.
    pub authorized_keys: Vec<PathBuf>,
    pub allow_tcp_forwarding: bool,
    /// Put the fake esxcli/vsish on PATH (false = a plain Linux host).
    pub fake_esx: bool,
    /// Offer the `password` method instead of keyboard-interactive.
    pub password_method: bool,
    /// Replace ESXi's cipher list (to simulate a server the client cannot talk to).
    pub ciphers: Option<String>,
    /// Seconds each fake `esxcli` / `vsish` call sleeps before answering (real esxcli
    /// takes about a second); `None` answers at once.
    pub latency: Option<(f64, f64)>,
    /// `MaxStartups` (concurrent unauthenticated connections); benchmarks raise it.
    pub max_startups: Option<String>,
}

impl SshdOptions {
    pub fn new(samples: PathBuf) -> Self {
        SshdOptions {
            samples,
            max_sessions: None,
            hang: Vec::new(),
            authorized_keys: Vec::new(),
            allow_tcp_forwarding: false,
            fake_esx: true,
            password_method: false,
            ciphers: None,
            latency: None,
            max_startups: None,
        }
    }
}

pub struct Sshd {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
    /// The host's ECDSA public key, `ecdsa-sha2-nistp256 AAAA...`.
    pub host_key_pub: String,
}

impl Sshd {
    pub fn start(opts: SshdOptions) -> Sshd {
        require_test_deps();
        let dir = tempfile::Builder::new()
            .prefix("pvrdma-sshd-")
            .tempdir()
            .expect("tempdir");
        // The test user's shell must read the fake commands and samples.
        set_mode(dir.path(), 0o755);
        let host_ecdsa = keygen(dir.path(), "ssh_host_ecdsa_key", "ecdsa");
        let host_rsa = keygen(dir.path(), "ssh_host_rsa_key", "rsa");
        let host_key_pub = std::fs::read_to_string(host_ecdsa.with_extension("pub"))
            .expect("host pub")
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        let pids = dir.path().join("pids");
        std::fs::create_dir(&pids).expect("pids dir");
        // The fake runs as the test user and must be able to record its pid here.
        set_mode(&pids, 0o1777);
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("bin dir");
        let (esxcli_delay, vsish_delay) = opts.latency.unwrap_or((0.0, 0.0));
        write_exec(&bin.join("esxcli"), &with_delay(&fake_esxcli(), esxcli_delay));
        write_exec(&bin.join("vsish"), &with_delay(&fake_vsish(), vsish_delay));
        let ak = dir.path().join("authorized_keys");
        let mut keys = String::new();
        for k in &opts.authorized_keys {
            keys.push_str(&std::fs::read_to_string(k.with_extension("pub")).expect("pub key"));
        }
        std::fs::write(&ak, keys).expect("authorized_keys");
        set_mode(&ak, 0o644);
        std::fs::write(dir.path().join("banner"), "VMware ESXi 8.0.2 (test double)\n").expect("banner");
        let samples = opts.samples.display().to_string();
        let config = format!(
            "ListenAddress 127.0.0.1\n\
             Port __PORT__\n\
             HostKey {ecdsa}\n\
             HostKey {rsa}\n\
             PidFile none\n\
             # ESXi 8.0.2's effective lists (research file, section 16)\n\
             Ciphers {ciphers}\n\
             HostKeyAlgorithms ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-256,rsa-sha2-512\n\
             KexAlgorithms ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256\n\
             MACs hmac-sha2-256,hmac-sha2-512\n\
             PubkeyAcceptedAlgorithms ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256\n\
             PasswordAuthentication {pw}\n\
             KbdInteractiveAuthentication {kbd}\n\
             UsePAM yes\n\
             PermitRootLogin no\n\
             Banner {banner}\n\
             # The key files live under /tmp, which StrictModes would reject.\n\
             StrictModes no\n\
             AuthorizedKeysFile {ak}\n\
             AllowTcpForwarding {fwd}\n\
             MaxSessions {maxs}\n\
             MaxStartups {startups}\n\
             AllowUsers {user}\n\
             SetEnv PATH={bin}:/usr/bin:/bin FAKE_ESX_DIR={samples} FAKE_ESX_HANG={hang} FAKE_ESX_PIDS={pids}/hung\n",
            ecdsa = host_ecdsa.display(),
            rsa = host_rsa.display(),
            banner = dir.path().join("banner").display(),
            ak = ak.display(),
            fwd = if opts.allow_tcp_forwarding { "yes" } else { "no" },
            maxs = opts.max_sessions.unwrap_or(10),
            startups = opts.max_startups.clone().unwrap_or_else(|| "100:30:200".into()),
            user = test_user(),
            ciphers = opts.ciphers.clone().unwrap_or_else(|| {
                "aes256-gcm@openssh.com,aes128-gcm@openssh.com,aes256-ctr,aes192-ctr,aes128-ctr".into()
            }),
            pw = if opts.password_method { "yes" } else { "no" },
            kbd = if opts.password_method { "no" } else { "yes" },
            bin = if opts.fake_esx { bin.display().to_string() } else { "/nonexistent".to_string() },
            pids = pids.display(),
            hang = if opts.hang.is_empty() { "none".to_string() } else { opts.hang.join(",") },
        );
        let cfg_path = dir.path().join("sshd_config");
        std::fs::create_dir_all("/run/sshd").ok();
        // A free port can be taken by another process between free_port() and sshd's bind
        // (parallel tests, other sshds on the machine); then sshd exits and we try another.
        let mut last_log = String::new();
        for _ in 0..5 {
            let port = free_port();
            std::fs::write(&cfg_path, config.replace("__PORT__", &port.to_string())).expect("sshd_config");
            let log_path = dir.path().join("sshd.log");
            let log = std::fs::File::create(&log_path).expect("log");
            let mut child = Command::new(SSHD)
                .arg("-D")
                .arg("-e")
                .arg("-f")
                .arg(&cfg_path)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("start sshd");
            if wait_listening(&mut child, port, &log_path) {
                return Sshd {
                    child,
                    port,
                    dir,
                    host_key_pub,
                };
            }
            last_log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("sshd could not listen on a free port in 5 attempts: {last_log}");
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// A known_hosts line for this server.
    pub fn known_hosts_line(&self) -> String {
        format!("[127.0.0.1]:{} {}\n", self.port, self.host_key_pub)
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Fake commands told to hang would otherwise sleep on after the test.
        let hung = std::fs::read_to_string(self.dir.path().join("pids/hung")).unwrap_or_default();
        for pid in hung.split_whitespace() {
            let _ = Command::new("kill").args(["-9", pid]).stderr(Stdio::null()).status();
        }
    }
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn write_exec(p: &Path, text: &str) {
    let mut f = std::fs::File::create(p).expect("create script");
    f.write_all(text.as_bytes()).expect("write script");
    set_mode(p, 0o755);
}

/// The script with a `sleep` before it answers (coreutils sleep takes fractions).
fn with_delay(script: &str, seconds: f64) -> String {
    if seconds <= 0.0 {
        return script.to_string();
    }
    script.replacen("\n", &format!("\nsleep {seconds}\n"), 1)
}

const EMIT: &str = r#"d=${FAKE_ESX_DIR:?}
emit() {
  # A hung command records its pid so the test can kill it: exec keeps the pid.
  case ",$FAKE_ESX_HANG," in *",$1,"*) echo $$ >> "$FAKE_ESX_PIDS"; exec sleep 3600 ;; esac
  if [ -n "$2" ]; then
    awk -v k="==> $2 <==" '$0 == k { on = 1; next } /^==> .* <==$/ { on = 0 } on' "$d/$1.txt"
    exit 0
  fi
  [ -f "$d/$1.txt" ] || { echo "fake: no sample $1" >&2; exit 1; }
  cat "$d/$1.txt"
  [ -f "$d/$1.stderr.txt" ] && cat "$d/$1.stderr.txt" >&2
  [ -f "$d/$1.exit" ] && exit "$(cat "$d/$1.exit")"
  exit 0
}
"#;

/// `esxcli` answering every simple catalogue command line from `$FAKE_ESX_DIR`.
fn fake_esxcli() -> String {
    let mut s = format!("#!/bin/sh\n# Test double: answers from samples.\n{EMIT}case \"$*\" in\n");
    for spec in pvrdma_doctor::catalogue::CATALOGUE {
        if let Some(args) = spec.command.strip_prefix("esxcli ") {
            if !spec.command.contains(';') {
                s.push_str(&format!("  \"{args}\") emit {} ;;\n", spec.id));
            }
        }
    }
    s.push_str(&format!(
        "  \"network vm port list -w \"*) emit {} \"$6\" ;;\n",
        pvrdma_doctor::catalogue::VM_PORT_LIST
    ));
    s.push_str("  *) echo \"Error: Unknown command or namespace $*\" >&2; exit 1 ;;\nesac\n");
    s
}

fn fake_vsish() -> String {
    format!(
        "#!/bin/sh\n# Test double: answers from samples.\n{EMIT}case \"$*\" in\n\
         \"-e ls /vmkModules/vrdma/pvrdmaDevices/\") emit {ls} ;;\n\
         \"-e cat /vmkModules/vrdma/pvrdmaDevices/\"*/properties) n=${{3#/vmkModules/vrdma/pvrdmaDevices/}}; emit {props} \"${{n%/properties}}\" ;;\n\
         *) echo \"VSISHPath_Form():Extraneous '$3' in path.\" >&2; exit 1 ;;\nesac\n",
        ls = pvrdma_doctor::catalogue::PVRDMA_DEVICES_LS,
        props = pvrdma_doctor::catalogue::PVRDMA_PROPERTIES,
    )
}
