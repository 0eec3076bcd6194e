//! govmomi's vSphere simulator (the engine of VMware's `vcsim`) serving an inventory
//! over HTTPS on 127.0.0.1, for the tests of the vCenter client and of the commands that
//! use it. The program is `tests/vcsim/main.go`, built with Debian's `golang-go` and
//! `golang-github-vmware-govmomi-dev` (`scripts/install-test-deps.sh` installs them) once
//! per test run into the target directory, again when `main.go` changes.
//!
//! Started per test with the inventory a [`Spec`] describes (or a generated one of
//! thousands of hosts), killed on drop; every wait is bounded. Gate the tests that use it
//! like the other real-tool tests: `#[ignore = "needs …"]`, which scripts/test.sh runs.
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;

/// The inventory to serve.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Spec {
    pub datacenters: Vec<DatacenterSpec>,
    pub vms: Vec<VmSpec>,
}

impl Spec {
    /// One datacenter holding one cluster of `hosts`, and `vms`.
    pub fn one_cluster(datacenter: &str, cluster: &str, hosts: Vec<HostSpec>, vms: Vec<VmSpec>) -> Spec {
        Spec {
            datacenters: vec![DatacenterSpec {
                name: datacenter.into(),
                folder: String::new(),
                clusters: vec![ClusterSpec {
                    name: cluster.into(),
                    folder: String::new(),
                    hosts,
                }],
                standalone: vec![],
            }],
            vms,
        }
    }

    /// A fleet to measure at scale: `hosts` hosts in ten clusters of one datacenter
    /// (`Scale`/`C0`…, `esx0000`…), each configured for PVRDMA as VMware's guide
    /// "Configure an ESXi Host for PVRDMA" asks, their VMkernel addresses unique across the
    /// fleet (the PVRDMA ones in one /21); `per_host` VMs on each (`vm00000`…), hardware
    /// 19, memory reserved and locked, one RoCE v2 PVRDMA adapter.
    pub fn pvrdma_fleet(hosts: usize, per_host: usize) -> Spec {
        assert!(hosts <= 2000, "at most 2,000 hosts fit the /21");
        let mut dc = DatacenterSpec {
            name: "Scale".into(),
            ..DatacenterSpec::default()
        };
        for c in 0..10.min(hosts) {
            dc.clusters.push(ClusterSpec {
                name: format!("C{c}"),
                folder: String::new(),
                hosts: Vec::new(),
            });
        }
        let mut vms = Vec::new();
        for i in 0..hosts {
            let (hi, lo) = (i / 250, i % 250 + 1);
            let mut pvrdma = PvrdmaSpec::healthy(0);
            pvrdma.vmknics[0].ip = format!("10.0.{hi}.{lo}");
            pvrdma.vmknics[0].netmask = "255.255.0.0".into();
            pvrdma.vmknics[1].ip = format!("192.168.{}.{lo}", 48 + hi);
            pvrdma.vmknics[1].netmask = "255.255.248.0".into();
            let name = format!("esx{i:04}");
            for v in 0..per_host {
                vms.push(VmSpec {
                    hw_version: "vmx-19".into(),
                    reserved_mb: 4096,
                    locked_to_max: true,
                    vrdma: vec!["rocev2".into()],
                    ..VmSpec::new(&format!("vm{:05}", i * per_host + v), &name, "")
                });
            }
            let clusters = dc.clusters.len();
            dc.clusters[i % clusters].hosts.push(HostSpec {
                pvrdma: Some(pvrdma),
                ..HostSpec::new(&name)
            });
        }
        Spec {
            datacenters: vec![dc],
            vms,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DatacenterSpec {
    pub name: String,
    /// The folders it is filed in under the root folder, `/`-separated; empty: none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub folder: String,
    pub clusters: Vec<ClusterSpec>,
    pub standalone: Vec<HostSpec>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ClusterSpec {
    pub name: String,
    /// The folders it is filed in under its datacenter's host folder; empty: none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub folder: String,
    pub hosts: Vec<HostSpec>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct HostSpec {
    pub name: String,
    pub maintenance: bool,
    /// `connected` (empty: the same), `disconnected` or `notResponding`.
    pub state: String,
    /// The host's PVRDMA configuration as vCenter reports it; `None`: the simulator's
    /// defaults (no RDMA device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pvrdma: Option<PvrdmaSpec>,
}

/// A host's configuration in `HostConfigInfo` (see `PvrdmaSpec` in `tests/vcsim/main.go`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PvrdmaSpec {
    /// `config.product.version`, e.g. `7.0.3`.
    pub version: String,
    pub build: String,
    pub rdma: Vec<RdmaSpec>,
    /// The `pvrdma` firewall ruleset enabled.
    pub firewall: bool,
    /// `Net.PVRDMAVmknic`; empty: unset.
    pub vmknic: String,
    pub vmknics: Vec<VmknicSpec>,
    pub dvs: Vec<DvsSpec>,
    /// Standard switches beside the simulator's own `vSwitch0` (uplink `vmnic0`, port
    /// groups `VM Network` and `Management Network`).
    pub vswitches: Vec<VswitchSpec>,
}

impl PvrdmaSpec {
    /// A host configured as the VMware guide "Configure an ESXi Host for PVRDMA" asks:
    /// ESXi 7.0.3, `vmrdma0` paired with `vmnic2`, active, RoCE v1 and v2; the ruleset
    /// on; `vmk1` (192.168.50.`last`/24, MTU 9000) tagged and on the vDS `dvs-rdma`
    /// whose only uplink is `vmnic2`.
    pub fn healthy(last: u8) -> PvrdmaSpec {
        PvrdmaSpec {
            version: "7.0.3".into(),
            build: "21930508".into(),
            rdma: vec![RdmaSpec {
                device: "vmrdma0".into(),
                driver: "nmlx5_rdma".into(),
                uplink: "vmnic2".into(),
                state: "active".into(),
                mtu: 4096,
                roce_v1: true,
                roce_v2: true,
            }],
            firewall: true,
            vmknic: "vmk1".into(),
            vmknics: vec![
                VmknicSpec {
                    device: "vmk0".into(),
                    ip: format!("10.0.0.{last}"),
                    netmask: "255.255.255.0".into(),
                    mtu: 1500,
                    ..VmknicSpec::default()
                },
                VmknicSpec {
                    device: "vmk1".into(),
                    ip: format!("192.168.50.{last}"),
                    netmask: "255.255.255.0".into(),
                    mtu: 9000,
                    dvs: DVS_UUID.into(),
                    ..VmknicSpec::default()
                },
            ],
            dvs: vec![DvsSpec {
                name: "dvs-rdma".into(),
                uuid: DVS_UUID.into(),
                mtu: 9000,
                uplinks: vec!["vmnic2".into()],
            }],
            vswitches: vec![],
        }
    }
}

/// The uuid of the vDS [`PvrdmaSpec::healthy`] puts its hosts on.
pub const DVS_UUID: &str = "50 2a 6b 1c 3d 4e 5f 60-71 82 93 a4 b5 c6 d7 e8";

#[derive(Debug, Clone, Default, Serialize)]
pub struct RdmaSpec {
    pub device: String,
    pub driver: String,
    /// The paired uplink (`vmnic2`).
    pub uplink: String,
    /// `active`, `down`...
    pub state: String,
    pub mtu: i32,
    pub roce_v1: bool,
    pub roce_v2: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct VmknicSpec {
    pub device: String,
    pub ip: String,
    pub netmask: String,
    pub mtu: i32,
    /// The uuid of the vDS it is a port of; empty: a standard portgroup.
    pub dvs: String,
    /// The standard portgroup it is on when not on a vDS; empty: `Management Network`.
    pub portgroup: String,
}

/// A standard switch (`HostVirtualSwitch`) and the port groups on it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VswitchSpec {
    pub name: String,
    pub mtu: i32,
    pub uplinks: Vec<String>,
    pub portgroups: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DvsSpec {
    pub name: String,
    pub uuid: String,
    pub mtu: i32,
    pub uplinks: Vec<String>,
}

impl HostSpec {
    pub fn new(name: &str) -> HostSpec {
        HostSpec {
            name: name.into(),
            ..HostSpec::default()
        }
    }

    pub fn in_maintenance(mut self) -> HostSpec {
        self.maintenance = true;
        self
    }

    pub fn state(mut self, state: &str) -> HostSpec {
        self.state = state.into();
        self
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct VmSpec {
    pub name: String,
    /// The host's name.
    pub host: String,
    /// `poweredOn` (empty: the same), `poweredOff` or `suspended`.
    pub power: String,
    /// `vmx-NN`; empty: the simulator's default.
    pub hw_version: String,
    pub reserved_mb: i64,
    pub locked_to_max: bool,
    /// One `VirtualVmxnet3Vrdma` adapter per entry, its `deviceProtocol` (`rocev2`).
    pub vrdma: Vec<String>,
    /// The uuid of the vDS the adapters' ports are on; empty: no port backing.
    pub dvs: String,
    /// Each adapter's MAC address, in order; missing: one the simulator makes up.
    pub macs: Vec<String>,
}

impl VmSpec {
    pub fn new(name: &str, host: &str, power: &str) -> VmSpec {
        VmSpec {
            name: name.into(),
            host: host.into(),
            power: power.into(),
            ..VmSpec::default()
        }
    }
}

/// A running simulator. `user`/`password` is the only login it accepts.
pub struct Vcsim {
    pub url: String,
    /// The server certificate's SHA-256, in vSphere's colon form.
    pub thumbprint: String,
    /// The PEM file of the CA that signed the server certificate.
    pub ca: PathBuf,
    pub user: String,
    pub password: String,
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    stderr: PathBuf,
    _dir: tempfile::TempDir,
}

const USER: &str = "monitor@vsphere.local";
/// Characters XML must escape, to prove the client escapes them.
const PASSWORD: &str = "p&ss<w>rd \"1\"";
const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

impl Vcsim {
    /// Serves `spec`; fails the test when the simulator is not up within two minutes.
    pub fn start(spec: &Spec) -> Vcsim {
        Self::start_within(spec, Duration::from_secs(120))
    }

    /// Serves `spec`, allowing `limit` to build it (thousands of hosts and VMs take
    /// minutes of the simulator's CPU on a loaded machine).
    pub fn start_within(spec: &Spec, limit: Duration) -> Vcsim {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("spec.json");
        std::fs::write(&path, serde_json::to_vec(spec).expect("spec as JSON")).expect("write the spec");
        Self::launch(dir, &[path.to_str().expect("UTF-8 path")], limit)
    }

    /// Serves `spec` with a self-signed certificate for 127.0.0.1 alone, which says it is
    /// a CA, as vCenter's and ESXi's own are; `ca` is that certificate.
    pub fn start_self_signed(spec: &Spec) -> Vcsim {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("spec.json");
        std::fs::write(&path, serde_json::to_vec(spec).expect("spec as JSON")).expect("write the spec");
        let spec = path.to_str().expect("UTF-8 path").to_string();
        Self::launch(dir, &["-self-signed", &spec], Duration::from_secs(120))
    }

    /// Serves `hosts` hosts in ten clusters of one datacenter (`Scale`/`C0`…`C9`, hosts
    /// `esx0000`…) and `vms` powered-on VMs (`vm00000`…) spread over them.
    pub fn start_scale(hosts: usize, vms: usize) -> Vcsim {
        let dir = tempfile::tempdir().expect("temp dir");
        let (h, v) = (hosts.to_string(), vms.to_string());
        // Creating 10,000 VMs takes the simulator about 30 s of CPU.
        Self::launch(dir, &["-scale-hosts", &h, "-scale-vms", &v], Duration::from_secs(900))
    }

    fn launch(dir: tempfile::TempDir, args: &[&str], limit: Duration) -> Vcsim {
        let binary = binary();
        let ca = dir.path().join("ca.pem");
        let stderr = dir.path().join("stderr.txt");
        let mut child = Command::new(&binary)
            .args(["-user", USER, "-password", PASSWORD, "-ca-out"])
            .arg(&ca)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = match lines.recv_timeout(limit) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the simulator did not start within {limit:?}: {}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
        };
        let info: serde_json::Value = serde_json::from_str(&first).expect("the simulator's JSON line");
        let field = |k: &str| {
            info[k]
                .as_str()
                .unwrap_or_else(|| panic!("no {k} in {first}"))
                .to_string()
        };
        Vcsim {
            url: field("url"),
            thumbprint: field("thumbprint"),
            ca: PathBuf::from(field("ca")),
            user: USER.into(),
            password: PASSWORD.into(),
            child,
            stdin,
            lines,
            stderr,
            _dir: dir,
        }
    }

    /// `127.0.0.1:port` of the URL.
    pub fn address(&self) -> String {
        let rest = self.url.trim_start_matches("https://");
        rest.split('/').next().unwrap_or(rest).to_string()
    }

    fn command(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").expect("write to the simulator");
        self.stdin.flush().expect("flush");
        let reply = self.lines.recv_timeout(REPLY_TIMEOUT).unwrap_or_else(|_| {
            panic!(
                "the simulator did not answer `{line}`: {}",
                std::fs::read_to_string(&self.stderr).unwrap_or_default()
            )
        });
        assert!(!reply.starts_with("error"), "`{line}`: {reply}");
        reply
    }

    /// The sessions open in the simulator's SessionManager.
    pub fn sessions(&mut self) -> usize {
        let reply = self.command("sessions");
        reply.parse().unwrap_or_else(|_| panic!("sessions: {reply}"))
    }

    /// The `SOAPAction` header of every request since the last call, in order (the API
    /// release each one asked answers for).
    pub fn soap_actions(&mut self) -> Vec<String> {
        let reply = self.command("actions");
        reply.split(',').filter(|a| !a.is_empty()).map(str::to_string).collect()
    }

    /// Moves a VM to another host, as DRS does (a relocation through the API).
    pub fn move_vm(&mut self, vm: &str, host: &str) {
        self.command(&format!("move {vm} {host}"));
    }

    pub fn set_maintenance(&mut self, host: &str, on: bool) {
        self.command(&format!("maintenance {host} {}", if on { "on" } else { "off" }));
    }

    /// `connected`, `disconnected` or `notResponding`.
    pub fn set_state(&mut self, host: &str, state: &str) {
        self.command(&format!("state {host} {state}"));
    }

    /// Renews the server's certificate (the same CA signs a new key, as a VMCA renewal
    /// does) and closes the connections open, as the services' restart does: its new
    /// SHA-256 thumbprint, in vSphere's colon form.
    pub fn new_certificate(&mut self) -> String {
        self.command("new-certificate")
    }

    /// Ends every session, as vCenter does when they sit idle too long.
    pub fn expire_sessions(&mut self) {
        self.command("expire-sessions");
    }

    /// The next `RetrievePropertiesEx` (of any session) answers a `SystemError` fault.
    pub fn fail_next_read(&mut self) {
        self.command("fail-next");
    }

    /// The next `RetrievePropertiesEx` answers only after `seconds`.
    pub fn delay_next_read(&mut self, seconds: u32) {
        self.command(&format!("delay-next {seconds}"));
    }
}

impl Drop for Vcsim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tests/vcsim/main.go`, from the root package or from a workspace member.
fn source() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        manifest.join("tests/vcsim/main.go"),
        manifest.join("../tests/vcsim/main.go"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .expect("tests/vcsim/main.go")
}

/// The simulator program, built once per run (and per version of its source) under the
/// target directory; a build by another test binary at the same time is harmless (each
/// renames its own result into place).
fn binary() -> PathBuf {
    static BUILT: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(|| Mutex::new(None))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.as_ref() {
        return path.clone();
    }
    let src = source();
    let text = std::fs::read(&src).expect("read main.go");
    let digest = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        h.finish()
    };
    // Tests and benches have cargo's scratch directory; examples use the workspace's target.
    let scratch = match option_env!("CARGO_TARGET_TMPDIR") {
        Some(dir) => PathBuf::from(dir),
        None => src.ancestors().nth(3).expect("the workspace").join("target/tmp"),
    };
    let out_dir = scratch.join("vcsim");
    std::fs::create_dir_all(&out_dir).expect("target dir");
    let target = out_dir.join(format!("vcsim-test-{digest:016x}"));
    if !target.exists() {
        let partial = out_dir.join(format!("vcsim-test-{digest:016x}.{}", std::process::id()));
        let output = Command::new("go")
            .args(["build", "-o"])
            .arg(&partial)
            .arg(&src)
            .env("GO111MODULE", "off")
            .env("GOPATH", "/usr/share/gocode")
            .env("GOCACHE", out_dir.join("go-cache"))
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run `go` ({e}): run scripts/install-test-deps.sh (golang-go, golang-github-vmware-govmomi-dev)")
            });
        assert!(
            output.status.success(),
            "building the simulator failed (needs golang-go and golang-github-vmware-govmomi-dev, scripts/install-test-deps.sh):\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::rename(&partial, &target).expect("move the simulator into place");
    }
    *built = Some(target.clone());
    target
}
