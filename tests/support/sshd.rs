//! The OpenSSH `sshd` of a test: on 127.0.0.1, configured like ESXi 8.0.2's, its user's
//! PATH starting with the fake ESXi commands (see `fakes`). Started per test, killed on drop.
use super::fakes;
use super::{keygen, keygen_sized, set_mode, test_user};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const SSHD: &str = "/usr/sbin/sshd";
pub const TEST_SHELL: &str = "/usr/local/lib/pvrdma-doctor-test/sh";

/// Fails the test, naming the script, when the machine lacks what the tests need.
pub fn require_test_deps() {
    let fix = "run `sudo scripts/install-test-deps.sh` first (it installs openssh-server and busybox and creates the PAM test user and its password file)";
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

pub struct SshdOptions {
    pub samples: PathBuf,
    pub max_sessions: Option<u32>,
    /// Catalogue ids whose fake command sleeps forever.
    pub hang: Vec<String>,
    /// Catalogue ids (or `all`) whose fake prints its whole sample, then hangs without
    /// exiting (in a batch: each iteration's query, so its end marker never comes).
    pub stall: Vec<String>,
    /// Catalogue ids (or `all`) whose fake prints `flood_bytes` of text instead.
    pub flood: Vec<String>,
    pub flood_bytes: usize,
    /// Catalogue ids whose fake prints its sample, then kills its own sshd session
    /// process (the connection drops in the middle of the command).
    pub kill_session: Vec<String>,
    /// Catalogue ids whose fake prints its sample, then SIGSTOPs its own sshd session
    /// process (a frozen server: the connection stays open, nothing more arrives).
    pub freeze: Vec<String>,
    /// Public keys allowed for the test user.
    pub authorized_keys: Vec<PathBuf>,
    pub allow_tcp_forwarding: bool,
    /// Put the fake esxcli/vsish on PATH (false = a plain Linux host).
    pub fake_esx: bool,
    /// Offer the `password` method instead of keyboard-interactive.
    pub password_method: bool,
    /// Replace ESXi's cipher list (to simulate a server the client cannot talk to).
    pub ciphers: Option<String>,
    /// Answers of the fake `vmkping`: `<ip>.plain.txt` / `<ip>.jumbo.txt` (+ `.exit`);
    /// an address without a file gets a total loss. `None` = an empty folder.
    pub vmkping: Option<PathBuf>,
    /// The pre-authentication banner (`None`: no banner, like a plain Linux server).
    pub banner: Option<String>,
    /// Seconds each fake `esxcli` / `vsish` call sleeps before answering (real esxcli
    /// takes about a second); `None` answers at once.
    pub latency: Option<(f64, f64)>,
    /// `MaxStartups` (concurrent unauthenticated connections); benchmarks raise it.
    pub max_startups: Option<String>,
    /// `MaxAuthTries` (sshd's default is 6); a bastion set to 1 drops a client that offers
    /// a key it does not know first.
    pub max_auth_tries: Option<u32>,
    /// Batch keys (a World ID, an adapter node, an uplink or a `.vmx` path) whose query
    /// misbehaves inside its batch, whatever the batch: it hangs, it is killed by SIGKILL
    /// after a first line, it floods (`flood_bytes`), or its answer is padded to about
    /// 40 KiB (members vsish does not know, inside its properties block) and printed
    /// after `big_delay` seconds, so that two such answers are written at the same time.
    pub key_hang: Vec<String>,
    pub key_kill: Vec<String>,
    pub key_flood: Vec<String>,
    pub key_big: Vec<String>,
    pub big_delay: f64,
    /// The host's ECDSA key size (256, 384 or 521; ESXi makes 256).
    pub host_ecdsa_bits: u16,
    /// Replace ESXi's key-exchange list (to force one curve).
    pub kex: Option<String>,
}

impl SshdOptions {
    pub fn new(samples: PathBuf) -> Self {
        SshdOptions {
            samples,
            max_sessions: None,
            hang: Vec::new(),
            stall: Vec::new(),
            flood: Vec::new(),
            flood_bytes: 20 * 1024 * 1024,
            kill_session: Vec::new(),
            freeze: Vec::new(),
            authorized_keys: Vec::new(),
            allow_tcp_forwarding: false,
            fake_esx: true,
            password_method: false,
            ciphers: None,
            vmkping: None,
            banner: Some("VMware ESXi 8.0.2 (test double)\n".into()),
            latency: None,
            max_startups: None,
            max_auth_tries: None,
            key_hang: Vec::new(),
            key_kill: Vec::new(),
            key_flood: Vec::new(),
            key_big: Vec::new(),
            big_delay: 0.5,
            host_ecdsa_bits: 256,
            kex: None,
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
        let host_ecdsa = keygen_sized(
            dir.path(),
            "ssh_host_ecdsa_key",
            "ecdsa",
            &opts.host_ecdsa_bits.to_string(),
        );
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
        let (bin, sections) = fakes::install(dir.path(), &opts);
        let vmkping_dir = opts
            .vmkping
            .clone()
            .unwrap_or_else(|| dir.path().join("no-vmkping-answers"));
        let ak = dir.path().join("authorized_keys");
        let mut keys = String::new();
        for k in &opts.authorized_keys {
            keys.push_str(&std::fs::read_to_string(k.with_extension("pub")).expect("pub key"));
        }
        std::fs::write(&ak, keys).expect("authorized_keys");
        set_mode(&ak, 0o644);
        std::fs::write(dir.path().join("banner"), opts.banner.clone().unwrap_or_default()).expect("banner");
        let samples = opts.samples.display().to_string();
        let config = format!(
            "ListenAddress 127.0.0.1\n\
             Port __PORT__\n\
             HostKey {ecdsa}\n\
             HostKey {rsa}\n\
             PidFile none\n\
             # ESXi 8.0.2's effective lists (a real host's, as in src/demo/fleet.rs)\n\
             Ciphers {ciphers}\n\
             HostKeyAlgorithms ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-256,rsa-sha2-512\n\
             KexAlgorithms {kex}\n\
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
             MaxAuthTries {auth_tries}\n\
             AllowUsers {user}\n\
             SetEnv PATH={bin}:/usr/bin:/bin FAKE_ESX_DIR={samples} FAKE_ESX_HANG={hang} FAKE_ESX_PIDS={pids}/hung FAKE_ESX_STALL={stall} FAKE_ESX_FLOOD={flood} FAKE_ESX_FLOOD_BYTES={flood_bytes} FAKE_ESX_KILL={kill} FAKE_ESX_FREEZE={freeze} FAKE_VMKPING_DIR={vmkping} FAKE_VMKPING_LOG={pids}/vmkping.log FAKE_ESX_SECTIONS={sections} FAKE_ESX_KEY_HANG={key_hang} FAKE_ESX_KEY_KILL={key_kill} FAKE_ESX_KEY_FLOOD={key_flood} FAKE_ESX_KEY_BIG={key_big} FAKE_ESX_BIG_DELAY={big_delay}\n",
            ecdsa = host_ecdsa.display(),
            rsa = host_rsa.display(),
            banner = if opts.banner.is_some() { dir.path().join("banner").display().to_string() } else { "none".to_string() },
            ak = ak.display(),
            fwd = if opts.allow_tcp_forwarding { "yes" } else { "no" },
            maxs = opts.max_sessions.unwrap_or(10),
            startups = opts.max_startups.clone().unwrap_or_else(|| "100:30:200".into()),
            auth_tries = opts.max_auth_tries.unwrap_or(6),
            user = test_user(),
            kex = opts.kex.clone().unwrap_or_else(|| {
                "ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256".into()
            }),
            ciphers = opts.ciphers.clone().unwrap_or_else(|| {
                "aes256-gcm@openssh.com,aes128-gcm@openssh.com,aes256-ctr,aes192-ctr,aes128-ctr".into()
            }),
            pw = if opts.password_method { "yes" } else { "no" },
            kbd = if opts.password_method { "no" } else { "yes" },
            bin = if opts.fake_esx { bin.display().to_string() } else { "/nonexistent".to_string() },
            pids = pids.display(),
            hang = list(&opts.hang),
            vmkping = vmkping_dir.display(),
            stall = list(&opts.stall),
            flood = list(&opts.flood),
            flood_bytes = opts.flood_bytes,
            kill = list(&opts.kill_session),
            freeze = list(&opts.freeze),
            sections = sections.display(),
            key_hang = list(&opts.key_hang),
            key_kill = list(&opts.key_kill),
            key_flood = list(&opts.key_flood),
            key_big = list(&opts.key_big),
            big_delay = opts.big_delay,
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

    #[allow(dead_code)] // unused by some of the binaries sharing this module
    /// Every fake vmkping call: `<vmk> <d or -> <size or -> <ip>`, one per line.
    pub fn vmkping_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("pids/vmkping.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[allow(dead_code)] // unused by some of the binaries sharing this module
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    #[allow(dead_code)] // unused by some of the binaries sharing this module
    /// The sshd listener's process id (its sessions, shells and fake commands descend
    /// from it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    #[allow(dead_code)] // unused by some of the binaries sharing this module
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
            // A frozen (SIGSTOPped) session process dies of SIGKILL too.
            let _ = Command::new("kill").args(["-9", pid]).stderr(Stdio::null()).status();
        }
    }
}

fn list(ids: &[String]) -> String {
    if ids.is_empty() {
        "none".to_string()
    } else {
        ids.join(",")
    }
}
