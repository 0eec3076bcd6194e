//! Benchmark: per-host wall time, client CPU and peak memory of a live run against real
//! OpenSSH `sshd` on 127.0.0.1, started as the integration tests start it (ESXi 8's
//! algorithm lists, busybox `sh` login shell, fake `esxcli`/`vsish` on PATH), with a fake
//! `esxcli` that sleeps 1 s per call and a fake `vsish` that sleeps 0.05 s, as on a real
//! host.
//!
//! Each simulated host has N running VMs, a quarter of them (at least one) with a PVRDMA
//! adapter; the other outputs are `samples/healthy-cluster/esx01`'s. Many hosts are many
//! connections (distinct ssh_config aliases) to one sshd with `MaxStartups` raised.
//!
//! Needs what the sshd tests need (`scripts/install-test-deps.sh`, run as root).
//! `cargo run --release --example host_bench [-- RUNS [HOSTS...]]` (default 3 runs per
//! one-host figure, one run per fleet figure; each HOSTS adds a fleet of that many 40-VM
//! hosts) prints
//! medians: wall time of one host with 1, 40 and 200 VMs (collect + diagnose + render),
//! 200 hosts of 40 VMs, client CPU per host, and peak RSS of a 500-host run. Each figure
//! is measured in a child process of its own so that CPU and peak RSS are that run's.
//! `HOST_BENCH_FLEETS=0` measures only the one-host rows. `HOST_BENCH_KEY=rsa` logs in
//! with a 2048-bit RSA key instead of ECDSA P-256. `HOST_BENCH_OPENSSH=1` also runs,
//! after each run, the same hosts through OpenSSH as an admin's script would ask them: one
//! `ssh` per host, all hosts at once, the same commands one after another in its session;
//! its wall time and the ratio end the row (the server CPU column then counts both).
//! Prints figures; asserts only that every host was collected completely.
#[path = "../tests/support/mod.rs"]
mod support;

use pvrdma_doctor::live::{collect_live, LiveOptions};
use pvrdma_engine::catalogue;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use support::{keygen, test_user, Sshd, SshdOptions};

const ESXCLI_SECONDS: f64 = 1.0;
const VSISH_SECONDS: f64 = 0.05;
const HOSTS_PER_SSHD: usize = 100;

/// The fake commands' latency: `HOST_BENCH_LATENCY=ESXCLI,VSISH` (seconds) overrides the
/// real-host figures, e.g. `0,0` to see what a run costs besides waiting for the host.
fn latency() -> (f64, f64) {
    std::env::var("HOST_BENCH_LATENCY")
        .ok()
        .and_then(|v| {
            let (e, v) = v.split_once(',')?;
            Some((e.trim().parse().ok()?, v.trim().parse().ok()?))
        })
        .unwrap_or((ESXCLI_SECONDS, VSISH_SECONDS))
}

/// Writes a host with `vms` running VMs (a quarter with one PVRDMA adapter) into `dir`.
fn scenario(dir: &Path, vms: usize) -> anyhow::Result<()> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/healthy-cluster/esx01");
    for f in std::fs::read_dir(&base)? {
        let f = f?;
        std::fs::copy(f.path(), dir.join(f.file_name()))?;
    }
    let props_template = std::fs::read_to_string(base.join(format!("{}.txt", catalogue::PVRDMA_PROPERTIES)))?;
    // The sample's block, from its `{` line to its `}` line (not its section lines).
    let block: String = props_template
        .lines()
        .skip_while(|l| !l.ends_with('{'))
        .scan(false, |done, l| {
            let line = (!*done).then(|| format!("{l}\n"));
            *done = *done || l == "}";
            line
        })
        .collect();
    let (mut list, mut ls, mut ports, mut props) = (String::new(), String::new(), String::new(), String::new());
    let mut vmx = String::new();
    for i in 0..vms {
        let wid = 2_200_000 + i;
        let name = format!("hpc-node{i:03}");
        let _ = write!(
            list,
            "{name}\n   World ID: {wid}\n   Process ID: 0\n   VMX Cartel ID: {}\n   UUID: 42 31 0d 66 62 8c b0 5d-46 6f 24 42 52 c6 95 8f\n   Display Name: {name}\n   Config File: /vmfs/volumes/64f1c2a3-5d8e21b0-7c3a-ec0d9a7f3196/{name}/{name}.vmx\n\n",
            wid - 1
        );
        let _ = write!(
            ports,
            "==> {wid} <==\n   Port ID: {}\n   vSwitch: vSwitch0\n   Portgroup: VM Network\n   DVPort ID: \n   MAC Address: 00:50:56:8a:{:02x}:{:02x}\n   IP Address: 0.0.0.0\n   Team Uplink: vmnic0\n   Uplink Port ID: 33554434\n   Active Filters: \n\n",
            33_554_500 + i,
            i / 256,
            i % 256
        );
        let path = format!("/vmfs/volumes/64f1c2a3-5d8e21b0-7c3a-ec0d9a7f3196/{name}/{name}.vmx");
        let _ = write!(
            vmx,
            "==> {path} <==\nvirtualHW.version = \"19\"\nmemSize = \"16384\"\nsched.mem.pin = \"TRUE\"\ndisplayName = \"{name}\"\nethernet0.virtualDev = \"vmxnet3\"\nethernet0.present = \"TRUE\"\n"
        );
        if i.is_multiple_of(4) {
            let _ = write!(
                vmx,
                "ethernet1.virtualDev = \"vrdma\"\nethernet1.networkName = \"DPG-PVRDMA\"\nethernet1.addressType = \"vpx\"\nethernet1.generatedAddress = \"00:50:56:9a:{:02x}:{:02x}\"\nethernet1.present = \"TRUE\"\n",
                i / 256,
                i % 256
            );
        }
        let _ = writeln!(vmx, "<== {path} exit 0 ==>");
        if i.is_multiple_of(4) {
            let mac = format!("00:50:56:9a:{:02x}:{:02x}", i / 256, i % 256);
            let _ = writeln!(ls, "{wid}_0/");
            let _ = write!(
                ports,
                "   Port ID: {}\n   vSwitch: DSwitch-RDMA\n   Portgroup: DPG-PVRDMA\n   DVPort ID: 24\n   MAC Address: {mac}\n   IP Address: 0.0.0.0\n   Team Uplink: vmnic2\n   Uplink Port ID: 50331650\n   Active Filters: \n\n",
                50_331_700 + i
            );
            let body = block
                .replace("VMM leader ID of VM:2101874", &format!("VMM leader ID of VM:{wid}"))
                .replace("00:50:56:8a:9f:c2", &mac);
            let _ = write!(props, "==> {wid}_0 <==\n{body}");
        }
    }
    let file = |id: &str| dir.join(format!("{id}.txt"));
    // A healthy fleet: every host's PVRDMA vmknic gets its own address in one /16 (the
    // fake fills `@CONN@` from the connection's client port), as real hosts have; with one
    // shared address every host pair would be blocked, and the report would hold an
    // exception per adapter and peer host.
    let ipv4 = pvrdma_parsers::by_id::IPV4_GET.id;
    std::fs::remove_file(file(ipv4))?;
    // Columns as esxcli pads them; `@CONN@` (6 characters) becomes 7 (padded), so its cell
    // is written one character short.
    let row = |name: &str, ip: &str, mask: &str, bcast: &str, gw: &str| {
        format!(
            "{name:<4}  {ip:<15}  {mask:<13}  {bcast:<14}  {:<12}  {gw:<8}  {:>8}\n",
            "STATIC", "false"
        )
    };
    let conn_ip = format!("{:<14}", "10.10.@CONN@");
    let table = format!(
        "{}{}{}{}",
        row("Name", "IPv4 Address", "IPv4 Netmask", "IPv4 Broadcast", "Gateway")
            .replace("STATIC      ", "Address Type")
            .replace("   false", "DHCP DNS"),
        row(
            "----",
            &"-".repeat(15),
            &"-".repeat(13),
            &"-".repeat(14),
            &"-".repeat(8)
        )
        .replace("STATIC      ", &"-".repeat(12))
        .replace("   false", &"-".repeat(8)),
        row("vmk0", "10.0.0.11", "255.255.255.0", "10.0.0.255", "10.0.0.1"),
        row("vmk1", &conn_ip, "255.255.0.0", "10.10.255.255", "0.0.0.0"),
    );
    std::fs::write(dir.join(format!("{ipv4}.conn.txt")), table)?;
    std::fs::write(file(catalogue::VM_PROCESS_LIST), list)?;
    std::fs::write(file(catalogue::PVRDMA_DEVICES_LS), ls)?;
    std::fs::write(file(catalogue::VM_PORT_LIST), ports)?;
    std::fs::write(file(catalogue::PVRDMA_PROPERTIES), props)?;
    std::fs::write(file(catalogue::VMX_PVRDMA_LINES), vmx)?;
    Ok(())
}

/// What an admin's script would send each host over OpenSSH: every catalogue command one
/// after another in one session, the per-item queries in a `for` loop over the items the
/// host's listings name (read here from the scenario, as the script's own listing would).
fn sequential_script(samples: &Path) -> anyhow::Result<String> {
    let mut parts = Vec::new();
    for spec in catalogue::CATALOGUE {
        let Some(batch) = spec.batch() else {
            parts.push(spec.command.to_string());
            continue;
        };
        let listing = std::fs::read_to_string(samples.join(format!("{}.txt", batch.keys.needs())))?;
        let keys = batch
            .keys
            .read(&listing)
            .map_err(|e| anyhow::anyhow!("{}: {e}", spec.id))?;
        let Some(line) = catalogue::batch_command(spec.id, &keys) else {
            continue;
        };
        // The batch's own query (`q`) and its keys as shell words, without its framing.
        let (query, _) = line.split_once("f() {").unwrap_or_default();
        let (_, words) = line.rsplit_once("}; b ").unwrap_or_default();
        parts.push(format!("{query}for k in {words}; do q \"$k\"; done"));
    }
    Ok(parts.join("; "))
}

/// Every host at once, each with one OpenSSH `ssh` running [`sequential_script`]: the
/// wall time, in ms, until the last one ends.
fn openssh_fanout(config: &Path, hosts: usize, script: &str) -> anyhow::Result<f64> {
    let t0 = Instant::now();
    let children: Vec<std::process::Child> = (0..hosts)
        .map(|n| {
            Command::new("ssh")
                .arg("-F")
                .arg(config)
                .args(["-o", "BatchMode=yes", &format!("h{n:04}"), script])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
        })
        .collect::<Result<_, _>>()?;
    for mut c in children {
        let status = c.wait()?;
        anyhow::ensure!(status.success(), "ssh ended with {status}");
    }
    Ok(t0.elapsed().as_secs_f64() * 1e3)
}

fn usage() -> (f64, u64) {
    // SAFETY: getrusage writes into the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime) + secs(ru.ru_stime), ru.ru_maxrss as u64)
}

fn children_cpu() -> f64 {
    // SAFETY: getrusage writes into the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// A cgroup (v1 `cpuacct`) holding the sshd servers and everything they start: counts
/// the simulated hosts' CPU whether or not each process is reaped by its parent (sshd's
/// sessions do not hand their shells' CPU up the way `RUSAGE_CHILDREN` needs).
struct CpuGroup(std::path::PathBuf);

impl CpuGroup {
    fn new(servers: &[Sshd]) -> Option<CpuGroup> {
        let dir = Path::new("/sys/fs/cgroup/cpuacct").join(format!("pvrdma-host-bench-{}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let group = CpuGroup(dir);
        for s in servers {
            std::fs::write(group.0.join("cgroup.procs"), s.pid().to_string()).ok()?;
        }
        Some(group)
    }

    fn seconds(&self) -> Option<f64> {
        let ns: u64 = std::fs::read_to_string(self.0.join("cpuacct.usage"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        Some(ns as f64 / 1e9)
    }
}

impl Drop for CpuGroup {
    fn drop(&mut self) {
        // Emptied once the servers are gone; retried briefly as the last processes exit.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// One measurement in this process: `hosts` hosts of `vms` VMs, `runs` times. Prints
/// `wall_ms cpu_ms_per_host maxrss_kib` medians on one line.
fn child(vms: usize, hosts: usize, runs: usize) -> anyhow::Result<()> {
    let samples = tempfile::tempdir()?;
    scenario(samples.path(), vms)?;
    let client = tempfile::tempdir()?;
    // `HOST_BENCH_KEY=rsa` (or ed25519): the user key's type; ECDSA P-256 by default.
    let key_type = std::env::var("HOST_BENCH_KEY").unwrap_or_else(|_| "ecdsa".to_string());
    let key = keygen(client.path(), "id_bench", &key_type);
    // One sshd per 100 hosts: a single sshd resets connections beyond a few hundred.
    let servers: Vec<Sshd> = (0..hosts.div_ceil(HOSTS_PER_SSHD))
        .map(|_| {
            let mut o = SshdOptions::new(samples.path().to_path_buf());
            o.authorized_keys.push(key.clone());
            o.latency = Some(latency());
            o.max_startups = Some(format!("{}", HOSTS_PER_SSHD * 2 + 10));
            Sshd::start(o)
        })
        .collect();
    // Host-key generation (ssh-keygen) is reaped by now: only the servers' run is counted.
    let server_cpu_before = children_cpu();
    let group = CpuGroup::new(&servers);
    let kh = client.path().join("known_hosts");
    std::fs::write(&kh, servers.iter().map(Sshd::known_hosts_line).collect::<String>())?;
    let config = client.path().join("config");
    let mut text = String::new();
    for n in 0..hosts {
        let port = servers.get(n / HOSTS_PER_SSHD).map_or(0, |s| s.port);
        let _ = write!(
            text,
            "Host h{n:04}\n  HostName 127.0.0.1\n  Port {port}\n  User {}\n  IdentityFile {}\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile none\n",
            test_user(),
            key.display(),
            kh.display()
        );
    }
    std::fs::write(&config, text)?;
    let opts = LiveOptions {
        targets: (0..hosts).map(|n| format!("h{n:04}")).collect(),
        ssh_config: Some(config.clone()),
        only_given_keys: true,
        connect_timeout: Some(Duration::from_secs(60)),
        command_timeout: Duration::from_secs(60),
        ..LiveOptions::default()
    };
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    // `HOST_BENCH_OPENSSH=1`: after each run, the same hosts through OpenSSH as a script
    // would ask them (wall time only), against the same sshd.
    let openssh = std::env::var("HOST_BENCH_OPENSSH").as_deref() == Ok("1");
    let script = if openssh {
        sequential_script(samples.path())?
    } else {
        String::new()
    };
    let mut openssh_walls = Vec::new();
    // (client CPU per host, peak RSS) when collection alone is done, before diagnosis.
    let mut collected: Vec<(f64, u64)> = Vec::new();
    for _ in 0..runs {
        let (cpu0, _) = usage();
        let t0 = Instant::now();
        let run = collect_live(&opts)?;
        let (cpu_collect, rss_collect) = usage();
        collected.push(((cpu_collect - cpu0) * 1e3 / hosts as f64, rss_collect));
        let diagnosis = pvrdma_engine::diagnose::diagnose(&run.captures);
        let rss_diagnosed = usage().1;
        let report = pvrdma_engine::report::render(&diagnosis, pvrdma_engine::report::Format::Human, false);
        tracing::debug!("report:\n{report}");
        tracing::info!(
            "peak RSS: {} KiB collected, {} KiB diagnosed, {} KiB rendered",
            rss_collect,
            rss_diagnosed,
            usage().1
        );
        let wall = t0.elapsed();
        let (cpu1, _) = usage();
        std::hint::black_box(report);
        for c in &run.captures {
            anyhow::ensure!(c.error.is_none(), "{}: {:?}", c.host, c.error);
            anyhow::ensure!(
                c.outputs.len() == catalogue::CATALOGUE.len() && c.outputs.values().all(|o| o.failure.is_none()),
                "{}: incomplete: missing {:?}",
                c.host,
                c.missing
            );
        }
        walls.push(wall.as_secs_f64() * 1e3);
        cpus.push((cpu1 - cpu0) * 1e3 / hosts as f64);
        if openssh {
            openssh_walls.push(openssh_fanout(&config, hosts, &script)?);
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or_default()
    };
    let rss = usage().1;
    // The simulated hosts' CPU (sshd, shells, fake commands): sshd's children are reaped
    // by it, and it is reaped here, so it all lands in RUSAGE_CHILDREN. A second lets the
    // last sessions end and be reaped by their sshd before it is stopped.
    std::thread::sleep(Duration::from_secs(1));
    let counted = group.as_ref().and_then(CpuGroup::seconds);
    drop(servers);
    let server = counted.unwrap_or_else(|| children_cpu() - server_cpu_before) * 1e3 / (hosts * runs) as f64;
    let (collect_cpu, collect_rss) = collected.first().copied().unwrap_or_default();
    println!(
        "{:.0} {:.2} {} {:.1} {:.2} {} {:.0}",
        median(walls),
        median(cpus),
        rss,
        server,
        collect_cpu,
        collect_rss,
        median(openssh_walls)
    );
    Ok(())
}

type Figures = (f64, f64, u64, f64, f64, u64, f64);

fn measure(vms: usize, hosts: usize, runs: usize) -> anyhow::Result<Figures> {
    let out = Command::new(std::env::current_exe()?)
        .args(["--child", &vms.to_string(), &hosts.to_string(), &runs.to_string()])
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace();
    let mut next = || it.next().unwrap_or("0").to_string();
    Ok((
        next().parse()?,
        next().parse()?,
        next().parse()?,
        next().parse()?,
        next().parse()?,
        next().parse()?,
        next().parse()?,
    ))
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        // `RUST_LOG=pvrdma_doctor=debug` shows the collection's events (logins, refusals).
        if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
            tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .init();
        }
        let n = |i: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(1);
        return child(n(2), n(3), n(4));
    }
    let runs: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let (esxcli, vsish) = latency();
    println!(
        "fake esxcli {esxcli} s per call, vsish {vsish} s; real OpenSSH sshd on 127.0.0.1; medians of {runs} runs"
    );
    println!(
        "{:<24} {:>8} {:>16} {:>13} {:>16} {:>16} {:>10}",
        "case", "wall ms", "client CPU/host", "peak RSS MiB", "of which collect", "server CPU/host", "CPU floor"
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let mut single: Vec<(usize, f64)> = Vec::new();
    // Fleets run once: one run is a minute of simulated-host CPU on a small machine.
    // More fleet sizes of 40-VM hosts (`host_bench RUNS 10 20 50`): where the simulated
    // hosts' CPU starts to bound the wall time on this machine.
    let extra = args
        .iter()
        .skip(2)
        .filter_map(|a| a.parse::<usize>().ok())
        .map(|h| (40, h, 1));
    let cases = [(1, 1, runs), (40, 1, runs), (200, 1, runs)]
        .into_iter()
        .chain(extra)
        // `HOST_BENCH_FLEETS=0`: only the one-host rows (the fleets take minutes of CPU).
        .chain(if std::env::var("HOST_BENCH_FLEETS").as_deref() == Ok("0") {
            Vec::new()
        } else {
            vec![(40, 200, 1), (1, 500, 1)]
        });
    for (vms, hosts, r) in cases {
        let (wall, cpu, rss, server, collect_cpu, collect_rss, openssh) = measure(vms, hosts, r)?;
        let label = format!("{hosts} host(s) x {vms} VMs");
        let base = |v: usize| single.iter().find(|(n, _)| *n == v).map(|(_, w)| *w);
        let ratio = match (hosts, base(vms), base(1)) {
            (1, _, Some(b)) if vms > 1 => format!("  {:.2}x the 1-VM host", wall / b),
            (h, Some(b), _) if h > 1 => format!("  {:.2}x one host of {vms} VMs", wall / b),
            _ => String::new(),
        };
        let ratio = match openssh {
            o if o > 0.0 => format!("{ratio}  OpenSSH fan-out {o:.0} ms ({:.1}x this run)", o / wall),
            _ => ratio,
        };
        if hosts == 1 {
            single.push((vms, wall));
        }
        // The least wall time the machine's cores allow for the CPU this run needed
        // (client plus simulated hosts): a fleet above it is bound by the simulation.
        let floor = (cpu + server) * hosts as f64 / cores;
        println!(
            "{label:<24} {wall:>8.0} {:>13.2} ms {:>13.1} {:>7.2} ms {:>4.0} MiB {:>13.0} ms {:>7.0} ms{ratio}",
            cpu,
            rss as f64 / 1024.0,
            collect_cpu,
            collect_rss as f64 / 1024.0,
            server,
            floor
        );
    }
    Ok(())
}
