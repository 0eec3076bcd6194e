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
///
/// An ECDSA key whose private scalar is stored short (one P-256 key in 512, see
/// `src/ssh/keys.rs`) is thrown away and made again: tests that are not about that case
/// must not meet it by chance. The short case has its own checked-in fixtures
/// ([`short_scalar_key`]).
pub fn keygen(dir: &Path, name: &str, kind: &str) -> PathBuf {
    let path = dir.join(name);
    let bits: &[&str] = match kind {
        "rsa" => &["-b", "2048"],
        "ecdsa" => &["-b", "256"],
        _ => &[],
    };
    for _ in 0..64 {
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(path.with_extension("pub"));
        let st = Command::new("ssh-keygen")
            .args(["-q", "-N", "", "-t", kind])
            .args(bits)
            .arg("-f")
            .arg(&path)
            .status()
            .expect("run ssh-keygen");
        assert!(st.success(), "ssh-keygen failed");
        let text = std::fs::read_to_string(&path).expect("read the new key");
        match pvrdma_doctor::ssh::keys::ecdsa_scalar_len(&text) {
            Some((len, size)) if len < size => continue,
            _ => return path,
        }
    }
    panic!("ssh-keygen made 64 ECDSA keys in a row with a short scalar");
}

/// A checked-in ECDSA key (`curve` 256, 384 or 521) whose private scalar is stored
/// shorter than the curve size, copied into `dir` with mode 0600 (ssh-add refuses
/// group-readable keys); returns the private key path, its `.pub` next to it.
pub fn short_scalar_key(dir: &Path, curve: u16) -> PathBuf {
    let name = format!("short_p{curve}");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/keys")
        .join(&name);
    let dest = dir.join(&name);
    std::fs::copy(&src, &dest).expect("copy fixture key");
    std::fs::copy(src.with_extension("pub"), dest.with_extension("pub")).expect("copy fixture public key");
    set_mode(&dest, 0o600);
    let text = std::fs::read_to_string(&dest).expect("read fixture");
    let (len, size) = pvrdma_doctor::ssh::keys::ecdsa_scalar_len(&text).expect("an unencrypted ECDSA key");
    assert!(len < size, "{name} must have a short scalar ({len} of {size} bytes)");
    dest
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
            key_hang: Vec::new(),
            key_kill: Vec::new(),
            key_flood: Vec::new(),
            key_big: Vec::new(),
            big_delay: 0.5,
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
        write_exec(&bin.join("vmkping"), FAKE_VMKPING);
        let vmkping_dir = opts
            .vmkping
            .clone()
            .unwrap_or_else(|| dir.path().join("no-vmkping-answers"));
        write_exec(&bin.join("grep"), &fake_grep());
        let sections = dir.path().join("sections");
        split_batch_samples(&opts.samples, &sections);
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
             SetEnv PATH={bin}:/usr/bin:/bin FAKE_ESX_DIR={samples} FAKE_ESX_HANG={hang} FAKE_ESX_PIDS={pids}/hung FAKE_ESX_STALL={stall} FAKE_ESX_FLOOD={flood} FAKE_ESX_FLOOD_BYTES={flood_bytes} FAKE_ESX_KILL={kill} FAKE_ESX_FREEZE={freeze} FAKE_VMKPING_DIR={vmkping} FAKE_VMKPING_LOG={pids}/vmkping.log FAKE_ESX_SECTIONS={sections} FAKE_ESX_KEY_HANG={key_hang} FAKE_ESX_KEY_KILL={key_kill} FAKE_ESX_KEY_FLOOD={key_flood} FAKE_ESX_KEY_BIG={key_big} FAKE_ESX_BIG_DELAY={big_delay}\n",
            ecdsa = host_ecdsa.display(),
            rsa = host_rsa.display(),
            banner = if opts.banner.is_some() { dir.path().join("banner").display().to_string() } else { "none".to_string() },
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

    /// Every fake vmkping call: `<vmk> <d or -> <size or -> <ip>`, one per line.
    pub fn vmkping_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("pids/vmkping.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// A known_hosts line for this server.
    /// The sshd listener's process id (its sessions, shells and fake commands descend
    /// from it).
    #[allow(dead_code)] // used by the benchmarks, not by every test binary
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

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

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Each section of the batch samples as a file `<sections>/<id>/<key>.exit<N>` (N = its
/// end marker's status, 0 without one), so a fake answers one key with a `cat` instead of
/// an `awk` over the whole sample: a simulated host with hundreds of VMs then costs the
/// benchmark machine little more than one with a few. Keys that cannot be a path are left
/// to the `awk` fallback.
fn split_batch_samples(samples: &Path, sections: &Path) {
    use pvrdma_doctor::catalogue as cat;
    for id in [
        cat::VM_PORT_LIST,
        cat::PVRDMA_PROPERTIES,
        cat::NIC_DCB_STATUS,
        cat::VMX_PVRDMA_LINES,
    ] {
        let Ok(text) = std::fs::read_to_string(samples.join(format!("{id}.txt"))) else {
            continue;
        };
        let mut found: Vec<(String, String, i64)> = Vec::new();
        let mut open: Option<usize> = None;
        for line in text.lines() {
            if let Some(key) = line.strip_prefix("==> ").and_then(|l| l.strip_suffix(" <==")) {
                open = Some(match found.iter().position(|(k, _, _)| k == key) {
                    Some(at) => at,
                    None => {
                        found.push((key.to_string(), String::new(), 0));
                        found.len() - 1
                    }
                });
                continue;
            }
            let Some(at) = open else { continue };
            let end = format!("<== {} exit ", found[at].0);
            if let Some(code) = line.strip_prefix(end.as_str()) {
                found[at].2 = code.trim_end_matches(" ==>").trim().parse().unwrap_or(0);
                open = None;
                continue;
            }
            found[at].1.push_str(line);
            found[at].1.push('\n');
        }
        for (key, body, code) in found {
            let relative = key.trim_start_matches('/');
            if relative.is_empty() || relative.split('/').any(|part| part == ".." || part == ".") {
                continue;
            }
            let file = sections.join(id).join(format!("{relative}.exit{code}"));
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent).expect("sections dir");
            }
            std::fs::write(&file, body).expect("section file");
        }
    }
    if sections.is_dir() {
        Command::new("chmod")
            .args(["-R", "a+rX"])
            .arg(sections)
            .status()
            .expect("chmod sections");
    }
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
# on ID LIST: whether the comma list LIST names ID (or `all`).
on() { case ",$2," in *",$1,"*|*",all,"*) return 0 ;; esac; return 1; }
# The pid of this command's sshd session process (the first sshd* ancestor).
session() {
  p=$$
  while [ "${p:-1}" -gt 1 ]; do
    case "$(cat "/proc/$p/comm" 2>/dev/null)" in sshd*) echo "$p"; return ;; esac
    p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)
  done
}
# The sample's text: whole, or one batch section (ending with its end marker's status).
body() {
  if [ -n "$2" ]; then
    # The section split out at start (see split_batch_samples), else the sample's.
    for f in "${FAKE_ESX_SECTIONS:-/nonexistent}/$1/$2".exit*; do
      if [ -f "$f" ]; then cat "$f"; return "${f##*.exit}"; fi
    done
    awk -v k="==> $2 <==" -v e="<== $2 exit " '
      $0 == k { on = 1; next }
      on && index($0, e) == 1 { c = substr($0, length(e) + 1); sub(/ ==>$/, "", c); code = c + 0; on = 0; next }
      /^==> .* <==$/ { on = 0 }
      on { print }
      END { exit code }' "$d/$1.txt"
    return
  fi
  # A `.conn.txt` sample varies per connection (benchmarks: one host per connection):
  # `@CONN@` becomes two address octets taken from the client's port.
  if [ -f "$d/$1.conn.txt" ]; then
    p=${SSH_CONNECTION#* }; p=${p%% *}
    v="$((p / 250 % 250)).$((p % 250 + 1))"
    while [ ${#v} -lt 7 ]; do v="$v "; done
    sed "s/@CONN@/$v/g" "$d/$1.conn.txt"
    return 0
  fi
  [ -f "$d/$1.txt" ] || { echo "fake: no sample $1" >&2; return 1; }
  cat "$d/$1.txt"
  [ -f "$d/$1.stderr.txt" ] && cat "$d/$1.stderr.txt" >&2
  [ -f "$d/$1.exit" ] && return "$(cat "$d/$1.exit")"
  return 0
}
emit() {
  # One query of a batch misbehaving (the key is in "$2").
  if [ -n "$2" ]; then
    if on "$2" "$FAKE_ESX_KEY_HANG"; then echo $$ >> "$FAKE_ESX_PIDS"; exec sleep 3600; fi
    if on "$2" "$FAKE_ESX_KEY_KILL"; then echo "a first line"; kill -9 $$; fi
    if on "$2" "$FAKE_ESX_KEY_FLOOD"; then
      yes 'flood flood flood flood flood flood flood flood flood flood flood flood flood' | head -c "$FAKE_ESX_FLOOD_BYTES"
      exit 0
    fi
    if on "$2" "$FAKE_ESX_KEY_BIG"; then
      sleep "$FAKE_ESX_BIG_DELAY"
      body "$@" | sed '/^}$/d'
      awk 'BEGIN { for (i = 0; i < 500; i++) printf "   padding member %03d:%s\n", i, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789" }'
      echo "}"
      exit 0
    fi
  fi
  # A hung command records its pid so the test can kill it: exec keeps the pid.
  case ",$FAKE_ESX_HANG," in *",$1,"*) echo $$ >> "$FAKE_ESX_PIDS"; exec sleep 3600 ;; esac
  if on "$1" "$FAKE_ESX_FLOOD"; then
    yes 'flood flood flood flood flood flood flood flood flood flood flood flood flood' | head -c "$FAKE_ESX_FLOOD_BYTES"
    exit 0
  fi
  body "$@"
  rc=$?
  if on "$1" "$FAKE_ESX_STALL"; then echo $$ >> "$FAKE_ESX_PIDS"; exec sleep 3600; fi
  if on "$1" "$FAKE_ESX_KILL"; then sleep 0.5; kill -9 "$(session)"; exit 0; fi
  if on "$1" "$FAKE_ESX_FREEZE"; then
    s=$(session)
    echo "$s $$" >> "$FAKE_ESX_PIDS"
    sleep 0.5
    kill -STOP "$s"
    exec sleep 3600
  fi
  exit $rc
}
"#;

/// ESXi's `vmkping` as the probe calls it (`-I vmk [-d -s N] -c 3 -W 1 <ip>`), answering
/// from `$FAKE_VMKPING_DIR`; no file = no reply (a total loss, as a silent peer gives).
/// `FAKE_ESX_HANG=vmkping` makes it hang.
const FAKE_VMKPING: &str = r#"#!/bin/sh
# Test double for vmkping: answers from $FAKE_VMKPING_DIR/<ip>.<plain|jumbo>.txt
case ",$FAKE_ESX_HANG," in *",vmkping,"*) echo $$ >> "$FAKE_ESX_PIDS"; exec sleep 3600 ;; esac
vmk=-; df=-; size=-; ip=
while [ $# -gt 0 ]; do
  case "$1" in
    -I) vmk=$2; shift 2 ;;
    -d) df=d; shift ;;
    -s) size=$2; shift 2 ;;
    -c|-W) shift 2 ;;
    *) ip=$1; shift ;;
  esac
done
echo "$vmk $df $size $ip" >> "$FAKE_VMKPING_LOG"
kind=plain; [ "$df" = d ] && kind=jumbo
f="$FAKE_VMKPING_DIR/$ip.$kind.txt"
if [ -f "$f" ]; then
  cat "$f"
  [ -f "$f.exit" ] && exit "$(cat "$f.exit")"
  exit 0
fi
[ "$size" = - ] && size=56
printf 'PING %s (%s): %s data bytes

--- %s ping statistics ---
3 packets transmitted, 0 packets received, 100%% packet loss
' "$ip" "$ip" "$size" "$ip"
exit 2
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
    s.push_str(&format!(
        "  \"network nic dcb status get -n \"*) emit {} \"$7\" ;;\n",
        pvrdma_doctor::catalogue::NIC_DCB_STATUS
    ));
    s.push_str("  *) echo \"Error: Unknown command or namespace $*\" >&2; exit 1 ;;\nesac\n");
    s
}

/// `grep` that answers the `.vmx` reads of the catalogue's `vmx_pvrdma_lines` loop from
/// that sample (the `/vmfs/...` paths do not exist here) and is the real grep otherwise.
fn fake_grep() -> String {
    format!(
        "#!/bin/sh\n# Test double: .vmx reads answer from samples.\n{EMIT}eval \"f=\\${{$#}}\"\ncase \"$f\" in /vmfs/*) emit {vmx} \"$f\" ;; esac\nexec /usr/bin/grep \"$@\"\n",
        vmx = pvrdma_doctor::catalogue::VMX_PVRDMA_LINES,
    )
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
