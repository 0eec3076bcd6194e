//! A second front end in thirty lines: diagnose a directory of captured outputs
//! (`<host>/<command-id>.txt`, the layout of `samples/` and of an unpacked support bundle)
//! through the engine alone, with no SSH, async runtime or command-line crate.
//!
//! ```sh
//! cargo run -p pvrdma-engine --example diagnose_dir -- samples/firewall-pvrdma-disabled
//! ```
use pvrdma_engine::capture::{folder, CaptureSource, HostCapture, RawOutput};
use pvrdma_engine::catalogue::CATALOGUE;
use pvrdma_engine::{diagnose, report};
use std::path::Path;

fn read_host(dir: &Path, name: &str) -> std::io::Result<HostCapture> {
    let mut capture = HostCapture::new(name, CaptureSource::Directory);
    let get = |file: &str| -> std::io::Result<Option<String>> {
        match std::fs::read(dir.join(file)) {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    };
    for spec in CATALOGUE {
        if let Some(files) = folder::read_output(spec.id, &get)? {
            let mut raw = RawOutput::new(spec.id, spec.command);
            raw.exit_status = files.exit_status().ok();
            raw.stdout = files.stdout;
            raw.stderr = files.stderr;
            capture.outputs.insert(spec.id.to_string(), raw);
        }
    }
    Ok(capture)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args()
        .nth(1)
        .ok_or("usage: diagnose_dir DIR (one folder per host)")?;
    let mut hosts = Vec::new();
    for entry in std::fs::read_dir(&root)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            let name = entry.file_name().to_string_lossy().into_owned();
            hosts.push(read_host(&entry.path(), &name)?);
        }
    }
    hosts.sort_by(|a, b| a.host.cmp(&b.host));
    let diagnosis = diagnose::diagnose(&hosts);
    print!("{}", report::render(&diagnosis, report::Format::Human, false));
    std::process::exit(i32::from(diagnosis.exit_code()));
}
