//! How long every parser of the `by_id` table takes on the output of a big host: 500
//! running VMs with two PVRDMA adapters each for the per-VM outputs, i.e. what a live run
//! of the largest realistic host brings back; per-host lists (NICs, vmknics, rulesets, DCB
//! sections...) are the real sample's rows repeated under distinct names; single-record
//! outputs run on the sample. Prints figures; asserts nothing about speed (speed is
//! reported, never a test verdict), but exits non-zero when an input does not parse into
//! the expected number of items, so timed errors cannot pass for figures.
//!
//! Run: `cargo bench -p pvrdma-parsers --bench parse` (`-- NAME...` to time only some).
use std::hint::black_box;
use std::time::{Duration, Instant};

const VMS: u64 = 500;

/// `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it,
/// as a check that every input parses: then it prints no figures (debug-build timings
/// beside the README's release ones would only mislead).
fn timing() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// `println!` only when timing.
macro_rules! say {
    ($($t:tt)*) => {
        if timing() {
            println!($($t)*);
        }
    };
}

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
    // `cargo bench -p pvrdma-parsers --bench parse -- NAME...` times only the parsers whose
    // names contain one of the NAMEs (e.g. under `perf record`).
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
        return;
    }
    if !timing() {
        black_box(f(black_box(input)));
        return;
    }
    // Warm up, then time enough runs for a stable median. Each run repeats the call until
    // it takes about a millisecond, so that the sub-microsecond samples are not timer noise;
    // the times printed are per call.
    for _ in 0..3 {
        black_box(f(black_box(input)));
    }
    let t = Instant::now();
    black_box(f(black_box(input)));
    let once = t.elapsed().max(Duration::from_nanos(1));
    let reps = (Duration::from_millis(1).as_nanos() / once.as_nanos()).clamp(1, 100_000) as u32;
    let mut runs: Vec<Duration> = (0..31)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                black_box(f(black_box(input)));
            }
            t.elapsed() / reps
        })
        .collect();
    runs.sort();
    let median = runs.get(runs.len() / 2).copied().unwrap_or_default();
    let min = runs.first().copied().unwrap_or_default();
    let mib_s = input.len() as f64 / (1024.0 * 1024.0) / median.as_secs_f64();
    say!(
        "{name:<34} {:>8} KiB  median {:>9.3} ms  min {:>9.3} ms  {mib_s:>7.1} MiB/s",
        input.len() / 1024,
        median.as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3,
    );
}

// ---- inputs derived from the real samples of `samples/healthy-cluster/esx01/` ----

/// Per-host lists are repeated to at least this size, so the figure is throughput and not
/// the cost of one call.
const LIST_BYTES: usize = 64 * 1024;

fn sample(id: &str) -> String {
    let path = format!(
        "{}/../samples/healthy-cluster/esx01/{id}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("cannot read {path}: {e}");
        std::process::exit(1)
    })
}

/// A distinct name for the `n`th copy of `name`: its trailing number replaced by `n`
/// (`vmnic2` -> `vmnic17`), or `n` appended (`sshServer` -> `sshServer17`).
fn renamed(name: &str, n: usize) -> String {
    format!("{}{n}", name.trim_end_matches(|c: char| c.is_ascii_digit()))
}

/// An esxcli table with the sample's rows repeated until `LIST_BYTES`, each row's first
/// column (the key) renamed; that column is widened as esxcli widens it for longer names.
/// Returns the table and its number of rows.
fn table_input(id: &str) -> (String, usize) {
    let text = sample(id);
    let mut lines = text.lines();
    let (header, dash) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    let rows: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    let first = dash.find(' ').unwrap_or(dash.len());
    let mut names = Vec::new();
    let mut body_len = 0;
    while body_len < LIST_BYTES {
        let row = rows[names.len() % rows.len()];
        let name = renamed(row[..first].trim(), names.len());
        // A lower bound of the row's size (the column may widen further for later names).
        body_len += row.len() - first + name.len().max(first) + 1;
        names.push(name);
    }
    let w = names.iter().map(String::len).max().unwrap_or(0).max(first);
    let mut s = format!(
        "{:<w$}{}\n{}{}\n",
        &header[..first],
        &header[first..],
        "-".repeat(w),
        &dash[first..]
    );
    for (i, name) in names.iter().enumerate() {
        s += &format!("{name:<w$}{}\n", &rows[i % rows.len()][first..]);
    }
    (s, names.len())
}

/// A record list (name line, indented `Key: value` fields) with the sample's records
/// repeated until `LIST_BYTES`, each record's name renamed wherever the record prints it
/// (name line, `Name:`), separated as the sample separates them (blank line or none).
fn record_input(id: &str) -> (String, usize) {
    let text = sample(id);
    let mut records: Vec<(&str, String)> = Vec::new();
    for l in text.lines() {
        if l.trim().is_empty() {
            continue;
        }
        if !l.starts_with([' ', '\t']) {
            records.push((l.trim(), String::new()));
        }
        if let Some((_, r)) = records.last_mut() {
            *r += l;
            r.push('\n');
        }
    }
    let sep = if text.contains("\n\n") { "\n" } else { "" };
    let mut s = String::new();
    let mut n = 0;
    while s.len() < LIST_BYTES {
        let (name, r) = &records[n % records.len()];
        if n > 0 {
            s += sep;
        }
        s += &r.replace(name, &renamed(name, n));
        n += 1;
    }
    (s, n)
}

/// A `==> key <==` ... `<== key exit N ==>` batch with the sample's sections repeated
/// `count` times (or until `LIST_BYTES` when `count` is 0); in each copy, `token(key)` (the
/// name the section is about) is renamed everywhere in the section, key included.
fn section_input(id: &str, count: usize, token: fn(&str) -> &str) -> (String, usize) {
    let text = sample(id);
    let mut sections: Vec<(&str, String)> = Vec::new();
    for l in text.lines() {
        if let Some(key) = l.strip_prefix("==> ").and_then(|k| k.strip_suffix(" <==")) {
            sections.push((token(key), String::new()));
        }
        if let Some((_, body)) = sections.last_mut() {
            *body += l;
            body.push('\n');
        }
    }
    let mut s = String::new();
    let mut n = 0;
    while if count > 0 { n < count } else { s.len() < LIST_BYTES } {
        let (name, body) = &sections[n % sections.len()];
        s += &body.replace(name, &renamed(name, n));
        n += 1;
    }
    (s, n)
}

/// The VM directory of a `.vmx` path: `/vmfs/volumes/ds/hpc-node01/hpc-node01.vmx` -> `hpc-node01`.
fn vm_dir(path: &str) -> &str {
    path.rsplit('/').nth(1).unwrap_or(path)
}

fn main() {
    use pvrdma_parsers::by_id::*;
    let mut checks: Vec<(&str, bool)> = Vec::new();

    say!("{VMS} VMs, {} PVRDMA adapters", VMS * 2);
    let (pl, pb, l, prop) = (process_list(), port_batch(), ls(), properties_batch());
    let (vmx, vmx_n) = section_input(VMX_PVRDMA_LINES.id, VMS as usize, vm_dir);
    measure("parse_vm_process_list", &pl, |i| {
        (VM_PROCESS_LIST.parse)(i).map(|v| v.len())
    });
    measure("parse_vm_process_records", &pl, |i| {
        (VM_PROCESS_RECORDS.parse)(i).map(|v| v.vms.len())
    });
    measure("parse_vm_port_list_batch", &pb, |i| {
        (VM_PORT_LIST.parse)(i).map(|v| v.len())
    });
    measure("parse_pvrdma_device_ls", &l, |i| {
        (PVRDMA_DEVICES_LS.parse)(i).map(|v| v.len())
    });
    measure("parse_pvrdma_properties_batch", &prop, |i| {
        (PVRDMA_PROPERTIES.parse)(i).map(|v| v.len())
    });
    measure("parse_vmx_pvrdma_lines", &vmx, |i| {
        (VMX_PVRDMA_LINES.parse)(i).map(|v| v.len())
    });
    checks.push((
        "vm_process_list",
        (VM_PROCESS_LIST.parse)(&pl).map(|v| v.len()) == Ok(VMS as usize),
    ));
    checks.push((
        "vm_process_records",
        (VM_PROCESS_RECORDS.parse)(&pl).is_ok_and(|v| v.vms.len() == VMS as usize && v.broken.is_empty()),
    ));
    checks.push((
        "vm_port_list_batch",
        (VM_PORT_LIST.parse)(&pb)
            .is_ok_and(|v| v.len() == VMS as usize && v.iter().all(|s| s.error.is_none() && s.ports.len() == 2)),
    ));
    checks.push((
        "pvrdma_device_ls",
        (PVRDMA_DEVICES_LS.parse)(&l).map(|v| v.len()) == Ok(2 * VMS as usize),
    ));
    checks.push((
        "pvrdma_properties_batch",
        (PVRDMA_PROPERTIES.parse)(&prop)
            .is_ok_and(|v| v.len() == 2 * VMS as usize && v.iter().all(|s| s.properties.is_ok())),
    ));
    checks.push((
        "vmx_pvrdma_lines",
        (VMX_PVRDMA_LINES.parse)(&vmx).is_ok_and(|v| v.len() == vmx_n && v.iter().all(|s| s.config.is_ok())),
    ));

    say!(
        "per-host lists: the sample's rows / records / sections repeated to >= {} KiB",
        LIST_BYTES / 1024
    );
    macro_rules! list {
        ($name:literal, $entry:ident, $input:expr) => {{
            let (input, n) = $input;
            measure($name, &input, |i| ($entry.parse)(i).map(|v| v.len()));
            checks.push(($name, ($entry.parse)(&input).map(|v| v.len()) == Ok(n)));
        }};
    }
    list!(
        "parse_rdma_device_list",
        RDMA_DEVICE_LIST,
        table_input(RDMA_DEVICE_LIST.id)
    );
    list!(
        "parse_rdma_device_protocol_list",
        RDMA_PROTOCOL_LIST,
        table_input(RDMA_PROTOCOL_LIST.id)
    );
    list!(
        "parse_rdma_device_vmknic_list",
        RDMA_VMKNIC_LIST,
        table_input(RDMA_VMKNIC_LIST.id)
    );
    list!("parse_nic_list", NIC_LIST, table_input(NIC_LIST.id));
    list!(
        "parse_nic_pause_params_list",
        NIC_PAUSE_PARAMS,
        table_input(NIC_PAUSE_PARAMS.id)
    );
    list!("parse_ip_interface_ipv4_get", IPV4_GET, table_input(IPV4_GET.id));
    list!(
        "parse_firewall_ruleset_list",
        FIREWALL_RULESET_LIST,
        table_input(FIREWALL_RULESET_LIST.id)
    );
    list!(
        "parse_ip_interface_list",
        IP_INTERFACE_LIST,
        record_input(IP_INTERFACE_LIST.id)
    );
    list!("parse_dvs_list", DVS_LIST, record_input(DVS_LIST.id));
    list!(
        "parse_standard_switch_list",
        STANDARD_SWITCH_LIST,
        record_input(STANDARD_SWITCH_LIST.id)
    );
    let (dcb, dcb_n) = section_input(NIC_DCB_STATUS.id, 0, |key| key);
    measure("parse_nic_dcb_status_batch", &dcb, |i| {
        (NIC_DCB_STATUS.parse)(i).map(|v| v.len())
    });
    checks.push((
        "nic_dcb_status_batch",
        (NIC_DCB_STATUS.parse)(&dcb).is_ok_and(|v| v.len() == dcb_n && v.iter().all(|s| s.state.is_ok())),
    ));

    // One fixed record per host: nothing to repeat, so these run on the sample itself and
    // their MiB/s is dominated by the per-call cost (error-text check, allocations), not
    // by throughput; compare their time per call, not their MiB/s.
    say!("single records: the sample itself (MiB/s here is per-call cost, not throughput)");
    let version = sample(SYSTEM_VERSION.id);
    let option = sample(PVRDMA_VMKNIC_OPTION.id);
    let fw = sample(FIREWALL_GET.id);
    let vmx_file = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../samples/vm-support/esx-esx01-2026-11-20--10.15-123456/vmfs/volumes/5cce4874-40c5c88e-a836-003048fc4ffe/hpc01/hpc01.vmx"
    ))
    .unwrap_or_default();
    measure("parse_system_version (sample)", &version, SYSTEM_VERSION.parse);
    measure("parse_advanced_option (sample)", &option, PVRDMA_VMKNIC_OPTION.parse);
    measure("parse_firewall_get (sample)", &fw, FIREWALL_GET.parse);
    measure("parse_vmx (vm-support sample)", &vmx_file, pvrdma_parsers::parse_vmx);
    checks.push(("system_version", (SYSTEM_VERSION.parse)(&version).is_ok()));
    checks.push(("advanced_option", (PVRDMA_VMKNIC_OPTION.parse)(&option).is_ok()));
    checks.push(("firewall_get", (FIREWALL_GET.parse)(&fw).is_ok()));
    checks.push((
        "vmx",
        pvrdma_parsers::parse_vmx(&vmx_file).is_ok_and(|c| c.pvrdma_adapters.len() == 1),
    ));

    // The results must be real parses, not errors timed by accident.
    let failed: Vec<&str> = checks.iter().filter(|c| !c.1).map(|c| c.0).collect();
    say!("inputs parsed without error: {}", failed.is_empty());
    if !failed.is_empty() {
        eprintln!("not parsed as expected: {}", failed.join(", "));
        std::process::exit(1);
    }
}
