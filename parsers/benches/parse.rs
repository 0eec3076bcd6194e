//! How long parsing takes for a big host: 500 running VMs with two PVRDMA adapters each,
//! i.e. the per-VM outputs a live run of the largest realistic host brings back.
//! Prints figures; asserts nothing (speed is reported, never a test verdict).
//!
//! Run: `cargo bench -p pvrdma-parsers --bench parse`.
use std::hint::black_box;
use std::time::{Duration, Instant};

const VMS: u64 = 500;

fn process_list() -> String {
    let mut s = String::new();
    for i in 0..VMS {
        let wid = 2_100_000 + i;
        s += &format!(
            "hpc-node{i:03} [rack 4]\n   World ID: {wid}\n   Process ID: 0\n   VMX Cartel ID: {}\n   UUID: 42 31 0d 66 62 8c b0 5d-46 6f 24 42 52 c6 95 8f\n   Display Name: hpc-node{i:03} [rack 4]\n   Config File: /vmfs/volumes/64f1c2a3-5d8e21b0-7c3a-ec0d9a7f3196/hpc-node{i:03} [rack 4]/hpc-node{i:03} [rack 4].vmx\n\n",
            wid - 1
        );
    }
    s
}

/// Batches as live runs print them: each section closed by its end marker.
fn port_batch() -> String {
    let mut s = String::new();
    for i in 0..VMS {
        if i > 0 {
            s += &format!("<== {} exit 0 ==>\n", 2_100_000 + i - 1);
        }
        s += &format!("==> {} <==\n", 2_100_000 + i);
        for a in 0..2 {
            s += &format!(
                "   Port ID: {}\n   vSwitch: DSwitch-RDMA\n   Portgroup: DPG-PVRDMA\n   DVPort ID: {}\n   MAC Address: 00:50:56:8a:{:02x}:{:02x}\n   IP Address: 0.0.0.0\n   Team Uplink: vmnic2\n   Uplink Port ID: 50331650\n   Active Filters: \n\n",
                50_331_700 + i * 2 + a,
                100 + i * 2 + a,
                i % 256,
                a
            );
        }
    }
    s += &format!("<== {} exit 0 ==>\n", 2_100_000 + VMS - 1);
    s
}

fn ls() -> String {
    (0..VMS)
        .flat_map(|i| (0..2).map(move |a| format!("{}_{a}/\n", 2_100_000 + i)))
        .collect()
}

fn properties_batch() -> String {
    let mut s = String::new();
    for i in 0..VMS {
        for a in 0..2 {
            let wid = 2_100_000 + i;
            s += &format!(
                "==> {wid}_{a} <==\nPVRDMA Device Properties {{\n   VMM leader ID of VM:{wid}\n   adapter index:{a}\n   MAC address:00:50:56:8a:{:02x}:{a:02x}\n   Physical HCA available:1\n   Namespace allocated:1\n   Hardware S/R available:0\n   MR tracing available:0\n   SRQ support enabled:1\n   MR Key extension enabled:1\n   Phys handles enabled:1\n   Native endpoints supported:0\n   Native vmotion supported:0\n   DMA accelerator enabled:0\n   DMA accelerator transfer threshold:32768\n   Prefer RoCE v1 over v2:0\n   RoCE version:2\n   Active MTU:4096\n}}\n<== {wid}_{a} exit 0 ==>\n",
                i % 256
            );
        }
    }
    s
}

fn measure<T>(name: &str, input: &str, f: impl Fn(&str) -> T) {
    // Warm up, then time enough runs for a stable median.
    for _ in 0..3 {
        black_box(f(black_box(input)));
    }
    let mut runs: Vec<Duration> = (0..31)
        .map(|_| {
            let t = Instant::now();
            black_box(f(black_box(input)));
            t.elapsed()
        })
        .collect();
    runs.sort();
    let median = runs.get(runs.len() / 2).copied().unwrap_or_default();
    let min = runs.first().copied().unwrap_or_default();
    let mib_s = input.len() as f64 / (1024.0 * 1024.0) / median.as_secs_f64();
    println!(
        "{name:<34} {:>8} KiB  median {:>9.3} ms  min {:>9.3} ms  {mib_s:>7.1} MiB/s",
        input.len() / 1024,
        median.as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3,
    );
}

fn main() {
    println!("{VMS} VMs, {} PVRDMA adapters", VMS * 2);
    let (pl, pb, l, prop) = (process_list(), port_batch(), ls(), properties_batch());
    measure("parse_vm_process_list", &pl, |i| {
        pvrdma_parsers::parse_vm_process_list(i).map(|v| v.len())
    });
    measure("parse_vm_port_list_batch", &pb, |i| {
        pvrdma_parsers::parse_vm_port_list_batch(i).map(|v| v.len())
    });
    measure("parse_pvrdma_device_ls", &l, |i| {
        pvrdma_parsers::parse_pvrdma_device_ls(i).map(|v| v.len())
    });
    measure("parse_pvrdma_properties_batch", &prop, |i| {
        pvrdma_parsers::parse_pvrdma_properties_batch(i).map(|v| v.len())
    });
    let firewall = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../samples/healthy-cluster/esx01/esxcli_network_firewall_ruleset_list.txt"
    ))
    .unwrap_or_default();
    measure("parse_firewall_ruleset_list (sample)", &firewall, |i| {
        pvrdma_parsers::parse_firewall_ruleset_list(i).map(|v| v.len())
    });
    // The results must be real parses, not errors timed by accident.
    let ok = pvrdma_parsers::parse_vm_process_list(&pl).map(|v| v.len()) == Ok(VMS as usize)
        && pvrdma_parsers::parse_pvrdma_properties_batch(&prop)
            .is_ok_and(|v| v.len() == 2 * VMS as usize && v.iter().all(|s| s.properties.is_ok()))
        && pvrdma_parsers::parse_vm_port_list_batch(&pb)
            .is_ok_and(|v| v.iter().all(|s| s.error.is_none() && s.ports.len() == 2));
    println!("inputs parsed without error: {ok}");
}
