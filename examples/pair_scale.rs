//! Benchmark: the size, time and memory of the JSON report for a large PVRDMA fleet.
//!
//! Builds HOSTS simulated hosts (default 4) from `samples/healthy-cluster/esx01`, each
//! running VMS VMs (default 250) with ADAPTERS PVRDMA adapters each (default 2), all on
//! the HCA; then diagnoses them and renders the JSON report, as `analyze --format json`
//! does. Prints the report size and the time taken; run it under `/usr/bin/time -v` for
//! the peak memory (maximum resident set size):
//!
//! `cargo build --release --example pair_scale && /usr/bin/time -v target/release/examples/pair_scale [HOSTS VMS ADAPTERS]`
use pvrdma_engine::capture::{HostCapture, RawOutput};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

fn output(id: &str, stdout: String) -> RawOutput {
    let mut o = RawOutput::new(id, id);
    o.stdout = stdout;
    o.exit_status = Some(0);
    o
}

fn host(base: &HostCapture, h: usize, vms: usize, adapters: usize) -> HostCapture {
    let mut c = base.clone();
    c.host = format!("esx{:02}", h + 1);
    let (mut processes, mut ports, mut ls, mut props) = (String::new(), String::new(), String::new(), String::new());
    for v in 0..vms {
        let wid = 3_000_000 + h * 100_000 + v;
        let _ = write!(
            processes,
            "hpc-{h:02}-{v:03}\n   World ID: {wid}\n   Process ID: 0\n   VMX Cartel ID: {}\n   Display Name: hpc-{h:02}-{v:03}\n   Config File: /vmfs/volumes/ds/hpc-{h:02}-{v:03}/hpc-{h:02}-{v:03}.vmx\n\n",
            wid - 1
        );
        let _ = writeln!(ports, "==> {wid} <==");
        for a in 0..adapters {
            let mac = format!("00:50:56:{:02x}:{:02x}:{:02x}", h, v % 256, (v / 256) * 16 + a);
            let _ = write!(
                ports,
                "   Port ID: {}\n   vSwitch: DSwitch-RDMA\n   Portgroup: DPG-PVRDMA\n   DVPort ID: {}\n   MAC Address: {mac}\n   IP Address: 0.0.0.0\n   Team Uplink: vmnic2\n   Uplink Port ID: 50331650\n   Active Filters: \n\n",
                50_400_000 + v * 8 + a,
                v * 8 + a
            );
            let _ = writeln!(ls, "{wid}_{a}/");
            let _ = write!(
                props,
                "==> {wid}_{a} <==\nPVRDMA Device Properties {{\n   VMM leader ID of VM:{wid}\n   adapter index:{a}\n   MAC address:{mac}\n   Physical HCA available:1\n   Namespace allocated:1\n   Native endpoints supported:0\n   Prefer RoCE v1 over v2:0\n   RoCE version:2\n   Active MTU:4096\n}}\n"
            );
        }
    }
    let ip = format!("10.10.10.{}", 11 + h);
    let ipv4 = base
        .outputs
        .get("esxcli_network_ip_interface_ipv4_get")
        .map(|o| o.stdout.replace("10.10.10.11", &ip))
        .unwrap_or_default();
    for (id, text) in [
        ("esxcli_vm_process_list", processes),
        ("esxcli_network_vm_port_list", ports),
        ("vsish_pvrdma_devices_ls", ls),
        ("vsish_pvrdma_properties", props),
        ("esxcli_network_ip_interface_ipv4_get", ipv4),
    ] {
        c.outputs.insert(id.to_string(), output(id, text));
    }
    c
}

fn main() -> anyhow::Result<()> {
    let arg = |n: usize, default: usize| std::env::args().nth(n).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (hosts, vms, adapters) = (arg(1, 4), arg(2, 250), arg(3, 2));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/healthy-cluster/esx01");
    let base = pvrdma_doctor::offline::load_captures(&dir)?
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("{} holds no host", dir.display()))?;
    let captures: Vec<HostCapture> = (0..hosts).map(|h| host(&base, h, vms, adapters)).collect();
    let t0 = Instant::now();
    let diagnosis = pvrdma_engine::diagnose::diagnose(&captures);
    let json = pvrdma_engine::report::render(&diagnosis, pvrdma_engine::report::Format::Json, false);
    let took = t0.elapsed();
    anyhow::ensure!(
        diagnosis.summary.hca == hosts * vms * adapters,
        "expected every adapter on the HCA: {}",
        pvrdma_engine::report::summary::line(&diagnosis)
    );
    println!(
        "{hosts} hosts x {vms} VMs x {adapters} adapters: diagnose + JSON {:.3} s, JSON {} bytes ({:.1} MB); {}",
        took.as_secs_f64(),
        json.len(),
        json.len() as f64 / 1_000_000.0,
        pvrdma_engine::report::summary::line(&diagnosis)
    );
    Ok(())
}
