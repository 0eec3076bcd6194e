//! Benchmark: the HTML report of a large fleet, its size, and how long a browser takes to
//! draw it and to filter its adapter table.
//!
//! Builds HOSTS simulated hosts from `samples/healthy-cluster/esx01`, each running 4 VMs
//! with one PVRDMA adapter each: all on the HCA (`healthy`), or with the `pvrdma` firewall
//! ruleset off on every tenth host (`mixed`: those hosts' adapters fall back to TCP, and
//! every pair with them is `tcp`). Diagnoses them and renders the page as `analyze
//! --format html` does (the outputs behind the findings included), folded as the text
//! report folds (the default) and with `--no-fold`. Prints each page's size; then opens
//! each in headless Chromium (Debian's `chromium`, installed by
//! scripts/install-test-deps.sh), scripts on as a reader has them, and times, from the
//! start of the navigation, the first frame drawn after the load event (two animation
//! frames after `load`), and how long typing a host name into the adapter table's filter
//! takes to hide the other rows. Medians of RUNS loads, alternating with the
//! `healthy-cluster` sample's page, the baseline measured in the same run.
//!
//! `cargo run --release --example html_bench -- [RUNS] [HOSTS...]` (default: 5 runs, 100
//! and 1000 hosts)
#[path = "../tests/support/chromium.rs"]
#[allow(dead_code)]
mod chromium;

use pvrdma_engine::capture::{HostCapture, RawOutput};
use pvrdma_engine::report::{self, html, Format, RenderOptions};
use std::fmt::Write as _;
use std::path::Path;

const VMS: usize = 4;

fn output(id: &str, stdout: String) -> RawOutput {
    let mut o = RawOutput::new(id, id);
    o.stdout = stdout;
    o.exit_status = Some(0);
    o
}

/// Host `h` (from 0): its VMs, their ports, vsish nodes and `.vmx` lines, its own PVRDMA
/// vmknic address; `firewall_off` turns the `pvrdma` ruleset off and the adapters to TCP.
fn host(base: &HostCapture, h: usize, firewall_off: bool) -> HostCapture {
    let mut c = base.clone();
    c.host = format!("esx{:04}", h + 1);
    let (mut processes, mut ports, mut ls, mut props, mut vmx) = (
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    );
    for v in 0..VMS {
        let wid = 3_000_000 + h * 100 + v;
        let name = format!("hpc-{:04}-{v}", h + 1);
        let path = format!("/vmfs/volumes/ds/{name}/{name}.vmx");
        let mac = format!("00:50:56:{:02x}:{:02x}:{:02x}", h / 256, h % 256, v);
        let _ = write!(
            processes,
            "{name}\n   World ID: {wid}\n   Process ID: 0\n   VMX Cartel ID: {}\n   Display Name: {name}\n   Config File: {path}\n\n",
            wid - 1
        );
        let _ = write!(
            ports,
            "==> {wid} <==\n   Port ID: {}\n   vSwitch: DSwitch-RDMA\n   Portgroup: DPG-PVRDMA\n   DVPort ID: {}\n   MAC Address: {mac}\n   IP Address: 0.0.0.0\n   Team Uplink: vmnic2\n   Uplink Port ID: 50331650\n   Active Filters: \n\n<== {wid} exit 0 ==>\n",
            50_400_000 + v,
            24 + v
        );
        let _ = writeln!(ls, "{wid}_0/");
        let _ = write!(
            props,
            "==> {wid}_0 <==\nPVRDMA Device Properties {{\n   VMM leader ID of VM:{wid}\n   adapter index:0\n   MAC address:{mac}\n   Physical HCA available:{hca}\n   Namespace allocated:{hca}\n   Native endpoints supported:0\n   Prefer RoCE v1 over v2:0\n   RoCE version:2\n   Active MTU:4096\n}}\n<== {wid}_0 exit 0 ==>\n",
            hca = u8::from(!firewall_off)
        );
        let _ = write!(
            vmx,
            "==> {path} <==\nvirtualHW.version = \"19\"\nmemSize = \"16384\"\nsched.mem.min = \"16384\"\nsched.mem.pin = \"TRUE\"\ndisplayName = \"{name}\"\nethernet1.virtualDev = \"vrdma\"\nethernet1.networkName = \"DPG-PVRDMA\"\nethernet1.addressType = \"vpx\"\nethernet1.generatedAddress = \"{mac}\"\nethernet1.dvs.switchId = \"50 2b 7e 1c 9a 44 0f 63-d1 5e 8a 27 c3 90 4b 11\"\nethernet1.dvs.portId = \"{}\"\nethernet1.present = \"TRUE\"\n<== {path} exit 0 ==>\n",
            24 + v
        );
    }
    let edit = |c: &mut HostCapture, id: &str, from: &str, to: &str| {
        if let Some(o) = c.outputs.get_mut(id) {
            o.stdout = o.stdout.replace(from, to);
        }
    };
    // One /16 for the fleet, each host its own address, written in the table's columns.
    let ip = format!("10.10.{}.{}", h / 250, h % 250 + 1);
    let row = format!("vmk1  {ip:<12}  255.255.0.0    10.10.255.255   STATIC        0.0.0.0      false");
    let old = "vmk1  10.10.10.11   255.255.255.0  10.10.10.255    STATIC        0.0.0.0      false";
    edit(&mut c, "esxcli_network_ip_interface_ipv4_get", old, &row);
    if firewall_off {
        let on = "pvrdma                          true";
        let off = "pvrdma                         false";
        edit(&mut c, "esxcli_network_firewall_ruleset_list", on, off);
    }
    for (id, text) in [
        ("esxcli_vm_process_list", processes),
        ("esxcli_network_vm_port_list", ports),
        ("vsish_pvrdma_devices_ls", ls),
        ("vsish_pvrdma_properties", props),
        ("vmx_pvrdma_lines", vmx),
    ] {
        c.outputs.insert(id.to_string(), output(id, text));
    }
    c
}

/// The page `analyze --format html` writes of these captures.
fn page(captures: &[HostCapture], fold: bool) -> (String, String) {
    let d = pvrdma_engine::diagnose::diagnose(captures);
    let mut options = RenderOptions::default();
    options.human.fold = fold;
    options.html = html::HtmlOptions {
        provenance: html::Provenance {
            sources: html::Provenance::count_sources(captures),
            read_from: Some("fleet".to_string()),
            ..html::Provenance::default()
        },
        outputs: Some(std::sync::Arc::new(html::Outputs::behind(&d, captures))),
    };
    let text = report::render_with(&d, Format::Html, &options).text;
    (text, report::summary::line(&d))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Milliseconds from the navigation's start to the first frame after `load`.
const DRAWN: &str = "new Promise(done => { const drawn = () => requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))); if (document.readyState === 'complete') drawn(); else addEventListener('load', drawn); })";

/// Milliseconds the filter takes to show only the rows with `word` (the script's own
/// handler, on an `input` event, as typing gives it), and the count it shows.
fn filter(word: &str) -> String {
    format!(
        "new Promise(done => {{ const box = document.querySelector('[data-filter-for=\"adapter-table\"] input'); const t0 = performance.now(); box.value = '{word}'; box.dispatchEvent(new Event('input')); requestAnimationFrame(() => done([performance.now() - t0, document.querySelector('[data-filter-for=\"adapter-table\"] output').textContent])); }})"
    )
}

fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let runs = args.first().copied().unwrap_or(5).max(1);
    let fleets: Vec<usize> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        vec![100, 1000]
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let base = pvrdma_doctor::offline::load_captures(&root.join("samples/healthy-cluster/esx01"))?
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("no host in the sample"))?;
    let dir = tempfile::tempdir()?;
    // HTML_BENCH_KEEP=DIR keeps the pages there, to look at.
    let keep = std::env::var_os("HTML_BENCH_KEEP").map(std::path::PathBuf::from);
    let baseline = dir.path().join("baseline.html");
    let sample = pvrdma_doctor::offline::load_captures(&root.join("samples/healthy-cluster"))?;
    std::fs::write(&baseline, page(&sample, true).0)?;
    let baseline = format!("file://{}", baseline.display());
    let recorder = chromium::Recorder::start();
    let mut browser = chromium::Browser::open(dir.path(), &recorder.proxy());
    println!("| page | size | drawn (median of {runs}) | baseline drawn | filter 1 host |");
    println!("|---|---|---|---|---|");
    for hosts in fleets {
        for (kind, every) in [("healthy", usize::MAX), ("mixed", 10)] {
            let captures: Vec<HostCapture> = (0..hosts).map(|h| host(&base, h, h % every == every - 1)).collect();
            for fold in [true, false] {
                let (text, line) = page(&captures, fold);
                let file = dir.path().join(format!("{hosts}-{kind}-{fold}.html"));
                std::fs::write(&file, &text)?;
                if let Some(keep) = &keep {
                    std::fs::write(keep.join(file.file_name().unwrap_or_default()), &text)?;
                }
                let url = format!("file://{}", file.display());
                let (mut drawn, mut base_drawn) = (Vec::new(), Vec::new());
                for _ in 0..runs {
                    browser.load(&url, true);
                    drawn.push(browser.evaluate(DRAWN).as_f64().unwrap_or(f64::NAN));
                    browser.load(&baseline, true);
                    base_drawn.push(browser.evaluate(DRAWN).as_f64().unwrap_or(f64::NAN));
                }
                browser.load(&url, true);
                let filtered = browser.evaluate(&filter(&format!("esx{:04}", hosts / 2 + 1)));
                println!(
                    "| {hosts} hosts × {VMS} VMs, {kind}, {} | {:.2} MB | {:.0} ms | {:.0} ms | {:.0} ms ({}) |",
                    if fold { "folded" } else { "--no-fold" },
                    text.len() as f64 / 1_000_000.0,
                    median(drawn),
                    median(base_drawn),
                    filtered[0].as_f64().unwrap_or(f64::NAN),
                    filtered[1].as_str().unwrap_or("")
                );
                eprintln!("  {line}");
            }
        }
    }
    Ok(())
}
