//! What every fuzz target runs, shared with the stable corpus replay
//! (`tests/suite/fuzz_corpus.rs`), so a checked-in input goes through exactly the code the fuzzer
//! ran it through.
//!
//! One function per parser family (every public parse entry point of `pvrdma-parsers`,
//! grouped by the command family it reads), plus [`diagnosis`]: a whole fleet capture run
//! through facts → diagnose → render, as a live host goes. Each function panics (= a crash
//! for libFuzzer, a failure for `cargo test`) when an invariant breaks:
//!
//! - no parser panics, whatever the bytes (read as the replay reads them: lossy UTF-8);
//! - a parse that succeeds is deterministic: the same text gives the same value twice;
//! - an error points inside the text: 1-based line and column on a real line, a snippet of
//!   at most 80 characters, a non-empty expectation;
//! - a batch of one section says what the single-output parser says of its body;
//! - the diagnosis's JSON is valid JSON of the documented schema, a host
//!   is `ok` only with every check passing (or warning) and every adapter on the HCA, the
//!   exit code agrees with the host statuses, and no `pass` check cites an output that
//!   failed or exited non-zero;
//! - the batch-frame decoder ([`frames`]) counts no answer as whole unless its own records
//!   add up: one begin line, then its text lines, then one end line whose line count and
//!   size are those of the text lines, nothing of it outside them, and no broken line
//!   (spliced writes) while it was open.
use pvrdma_engine::capture::{CaptureSource, ErrorKind, Failure, HostCapture, RawOutput, VmxFile};
use pvrdma_engine::catalogue::{self, CATALOGUE};
use pvrdma_engine::diagnose::{self, Diagnosis, HostStatus, Status, Verdict};
use pvrdma_engine::report::{self, Format};
use pvrdma_parsers as p;
use std::fmt::Debug;

/// What a fuzz target runs on one input.
pub type Target = fn(&[u8]);

/// The fuzz targets, by name: the corpus directory `fuzz/corpus/<name>/` of each is
/// replayed through the function next to it.
pub const TARGETS: &[(&str, Target)] = &[
    ("rdma", rdma),
    ("nic", nic),
    ("vswitch", vswitch),
    ("ip_interface", ip_interface),
    ("advanced", advanced),
    ("firewall", firewall),
    ("version", version),
    ("vm", vm),
    ("vsish", vsish),
    ("vmx", vmx),
    ("vmkping", vmkping),
    ("frames", frames),
    ("diagnosis", diagnosis),
];

/// Bytes as the replay of a capture reads them (`collect::replay::read_text`).
fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// Runs one entry point, checks the error's position, or that a success is deterministic
/// (parsing again gives the same value; failures, most fuzz inputs, are not parsed twice
/// to keep the executions per second up); returns the result for further checks.
fn parse<T: PartialEq + Debug>(input: &str, parser: fn(&str) -> Result<T, p::ParseError>) -> Result<T, p::ParseError> {
    let first = parser(input);
    match &first {
        Ok(value) => assert_eq!(
            parser(input).as_ref(),
            Ok(value),
            "the same text parsed twice gave two results"
        ),
        Err(e) => check_error(input, e),
    }
    first
}

/// An error names a real spot of the text it was given.
pub fn check_error(input: &str, e: &p::ParseError) {
    let line_count = input.split('\n').count();
    assert!(
        e.line >= 1 && e.line <= line_count,
        "{e}: line outside the input ({line_count} lines)"
    );
    let line = input.split('\n').nth(e.line - 1).unwrap_or("");
    assert!(
        e.column >= 1 && e.column <= line.chars().count() + 1,
        "{e}: column outside line {line:?}"
    );
    assert!(
        e.snippet.chars().count() <= 80,
        "{e}: snippet longer than 80 characters"
    );
    assert!(!e.expected.is_empty(), "{e}: empty expectation");
    assert!(!e.command.is_empty(), "{e}: no command id");
}

/// A parse result seen through the parser table: the value's debug text, or the error
/// (checked to point inside the text).
struct Checked<'t>(&'t str);

impl p::by_id::Visitor for Checked<'_> {
    type Output = Result<String, p::ParseError>;
    fn visit<T: p::by_id::Serialize + Debug>(self, result: Result<T, p::ParseError>) -> Self::Output {
        if let Err(e) = &result {
            check_error(self.0, e);
        }
        result.map(|value| format!("{value:?}"))
    }
}

/// Runs every catalogue parser of `family` (the family column of the parser table,
/// `pvrdma_parsers::by_id`) with [`parse`]'s checks, so a new command's parser is fuzzed
/// in its family's target the moment it is in the table.
fn family_parsers(t: &str, family: &str) {
    for (id, _) in p::by_id::FAMILIES.iter().filter(|(_, f)| *f == family) {
        if let Some(Ok(value)) = p::by_id::parse_by_id(id, t, Checked(t)) {
            let again = p::by_id::parse_by_id(id, t, Checked(t));
            assert_eq!(
                again,
                Some(Ok(value)),
                "{id}: the same text parsed twice gave two results"
            );
        }
    }
}

pub fn rdma(data: &[u8]) {
    family_parsers(&text(data), "rdma");
}

/// The NIC list, the flow control of the HCA uplink (`lossless-network`) and the uplink
/// counters (one `nic stats get` as well as the batch).
pub fn nic(data: &[u8]) {
    let t = text(data);
    family_parsers(&t, "nic");
    let _ = parse(&t, p::nic_stats::parse_nic_stats);
}

pub fn vswitch(data: &[u8]) {
    family_parsers(&text(data), "vswitch");
}

pub fn ip_interface(data: &[u8]) {
    family_parsers(&text(data), "ip_interface");
}

pub fn advanced(data: &[u8]) {
    family_parsers(&text(data), "advanced");
}

pub fn firewall(data: &[u8]) {
    family_parsers(&text(data), "firewall");
}

pub fn version(data: &[u8]) {
    let t = text(data);
    family_parsers(&t, "version");
    if let Ok(v) = parse(&t, p::parse_system_version) {
        // Cheap consistency: numbers() reads the version string it was parsed with.
        assert_eq!(v.numbers(), v.clone().numbers());
    }
}

/// The body as the one section of a batch, when it cannot be read as more than one.
fn as_one_section(key: &str, body: &str) -> Option<String> {
    // No header and no end marker inside: then it is exactly one unmarked section.
    (!body.contains("==>") && !body.contains("<==")).then(|| format!("==> {key} <==\n{body}"))
}

pub fn vm(data: &[u8]) {
    let t = text(data);
    family_parsers(&t, "vm");
    let _ = parse(&t, p::parse_vm_process_records);
    let single = parse(&t, p::parse_vm_port_list);
    if let (Ok(ports), Some(batch)) = (single, as_one_section("4242", &t)) {
        let sections = parse(&batch, p::parse_vm_port_list_batch);
        assert_eq!(
            sections,
            Ok(vec![p::VmPorts {
                world_id: 4242,
                ports,
                error: None,
                cut_off: false,
            }]),
            "a port list read alone and as the one section of a batch differ"
        );
    }
}

pub fn vsish(data: &[u8]) {
    let t = text(data);
    family_parsers(&t, "vsish");
    let single = parse(&t, p::parse_pvrdma_properties);
    // A block that names another device (VMM leader ID, adapter index) is refused in a
    // batch section on purpose, so only blocks that could be 4242_1 are compared.
    let names_4242_1 =
        |p: &p::PvrdmaProperties| p.vmm_leader_id.is_none_or(|w| w == 4242) && p.adapter_index.is_none_or(|i| i == 1);
    if let (Ok(properties), Some(batch)) = (single.ok().filter(names_4242_1).ok_or(()), as_one_section("4242_1", &t)) {
        let sections = parse(&batch, p::parse_pvrdma_properties_batch);
        assert_eq!(
            sections,
            Ok(vec![p::PvrdmaPropertiesSection {
                device: p::PvrdmaDeviceId {
                    world_id: 4242,
                    index: 1,
                },
                properties: Ok(properties),
                cut_off: false,
            }]),
            "a properties block read alone and as the one section of a batch differ"
        );
    }
}

pub fn vmx(data: &[u8]) {
    let t = text(data);
    let _ = parse(&t, p::vmx::parse_vmx);
    // The live `.vmx` inventory: the same lines, sectioned per Config File.
    family_parsers(&t, "vmx");
}

pub fn vmkping(data: &[u8]) {
    let t = text(data);
    let _ = parse(&t, p::parse_vmkping);
    let _ = parse(&t, p::parse_vmkping_probe);
}

/// The keys of a [`frames`] input: one of each kind a batch is run over (a World ID, an
/// adapter node, an uplink, a `.vmx` path with a space), and more of them.
pub const FRAME_KEYS: [&str; 8] = [
    "2101874",
    "2101874_0",
    "vmnic2",
    "'/vmfs/volumes/ds 1/hpc a/hpc a.vmx'",
    "2101990",
    "2101990_1",
    "vmnic3",
    "1",
];

/// The batch-frame decoder on a stream a host chose. Input: byte 0 picks how many of
/// [`FRAME_KEYS`] the batch ran over (1 to 8), byte 1 bit 0 whether the command ended
/// badly (a timeout), the rest is the stream. An answer the decoder counts as whole must
/// be one whose own records add up (checked here from the stream, independently of the
/// decoder), and its section must hold exactly its text lines and its end marker.
pub fn frames(data: &[u8]) {
    use pvrdma_engine::capture::frames::decode;
    let [count, flags, raw @ ..] = data else { return };
    let keys: Vec<String> = FRAME_KEYS[..usize::from(count % 8) + 1]
        .iter()
        .map(|k| k.to_string())
        .collect();
    let problem = (flags & 1 == 1).then_some("did not finish within --command-timeout 60s");
    let decoded = decode(&keys, raw, problem);
    assert_eq!(decoded, decode(&keys, raw, problem), "decoding is deterministic");

    let unfinished: Vec<&str> = decoded.unfinished.iter().map(|u| u.key.as_str()).collect();
    let mut in_order = keys.iter().filter(|k| unfinished.contains(&k.as_str()));
    for u in &unfinished {
        assert_eq!(
            in_order.next().map(String::as_str),
            Some(*u),
            "unfinished keys: each once, in key order"
        );
    }
    assert!(decoded.unfinished.iter().all(|u| !u.reason.is_empty()));

    // Only lines that ended with a newline are records; what follows the last newline
    // is a write the stream stopped in the middle of.
    let mut lines: Vec<&[u8]> = raw.split(|&b| b == b'\n').collect();
    lines.pop();
    let records: Vec<Option<FrameRecord>> = lines.iter().map(|l| frame_record(&keys, l)).collect();
    let mut whole_sections = 0;
    for (i, key) in keys.iter().enumerate() {
        if unfinished.contains(&key.as_str()) {
            continue;
        }
        whole_sections += 1;
        let mine: Vec<usize> = (0..lines.len())
            .filter(|&at| matches!(records[at], Some((n, _)) if n == i + 1))
            .collect();
        let (Some(&first), Some(&last)) = (mine.first(), mine.last()) else {
            panic!("{key}: counted whole without a record of its own");
        };
        assert!(
            matches!(records[first], Some((_, FrameLine::Begin))),
            "{key}: whole without its begin line first"
        );
        let Some((_, FrameLine::End(exit, count, size))) = records[last] else {
            panic!("{key}: whole without its end line last");
        };
        let text: Vec<&[u8]> = mine[1..mine.len() - 1]
            .iter()
            .map(|&at| match records[at] {
                Some((_, FrameLine::Text(t))) => t,
                _ => panic!("{key}: whole with a begin, end or cut line inside it"),
            })
            .collect();
        // Nothing broken while it was open: a line that is no record may be a piece of it.
        for at in first..=last {
            assert!(
                records[at].is_some() || frame_started(lines[at]),
                "{key}: whole although a broken line arrived while it was open"
            );
        }
        let bytes: usize = text.iter().map(|l| l.len() + 1).sum();
        let chars: usize = text
            .iter()
            .map(|l| l.iter().filter(|&&b| b & 0xC0 != 0x80).count() + 1)
            .sum();
        assert_eq!(text.len(), count, "{key}: whole, but its end line counts {count} lines");
        assert!(
            size == bytes || size == chars,
            "{key}: whole, but its end line says {size} bytes for {bytes} bytes ({chars} characters)"
        );
        // Its section: those lines (less trailing blank ones, as a shell's `$(...)`), its marker.
        let mut body = text;
        while body.last().is_some_and(|l| l.is_empty()) {
            body.pop();
        }
        let mut section = format!("==> {key} <==\n").into_bytes();
        for l in body {
            section.extend_from_slice(l);
            section.push(b'\n');
        }
        section.extend_from_slice(format!("<== {key} exit {exit} ==>\n").as_bytes());
        let section = String::from_utf8_lossy(&section);
        assert!(
            decoded.stdout.contains(section.as_ref()),
            "{key}: its section is not its lines"
        );
    }
    assert_eq!(whole_sections + unfinished.len(), keys.len());
}

/// A well-formed line of the batch framing, as the host side writes it
/// (`catalogue::frame_functions`): the key's 1-based position and what it says.
type FrameRecord<'a> = (usize, FrameLine<'a>);

#[derive(Debug, Clone, Copy)]
enum FrameLine<'a> {
    Begin,
    Text(&'a [u8]),
    End(u32, usize, usize),
    Cut,
}

/// `N|TEXT`, `N:begin KEY`, `N:end KEY exit S lines L bytes B`, `N:cut KEY lines L bytes B`
/// with N a key's position (1-based) and KEY that key; anything else is no record.
fn frame_record<'a>(keys: &[String], line: &'a [u8]) -> Option<FrameRecord<'a>> {
    let digits = line.iter().position(|b| !b.is_ascii_digit()).unwrap_or(line.len());
    let n: usize = std::str::from_utf8(&line[..digits]).ok()?.parse().ok()?;
    let key = keys.get(n.checked_sub(1)?)?;
    let rest = &line[digits..];
    if let Some(text) = rest.strip_prefix(b"|") {
        return Some((n, FrameLine::Text(text)));
    }
    let rest = std::str::from_utf8(rest.strip_prefix(b":")?).ok()?;
    if rest == format!("begin {key}") {
        return Some((n, FrameLine::Begin));
    }
    let fields = |prefix: &str, names: &[&str]| -> Option<Vec<usize>> {
        let tail = rest.strip_prefix(prefix)?.strip_prefix(key.as_str())?;
        let words: Vec<&str> = tail.split(' ').collect();
        if words.len() != 2 * names.len() + 1 || !words[0].is_empty() {
            return None;
        }
        let mut out = Vec::new();
        for (i, name) in names.iter().enumerate() {
            if words[1 + 2 * i] != *name {
                return None;
            }
            out.push(words[2 + 2 * i].parse().ok()?);
        }
        Some(out)
    };
    if let Some(v) = fields("end ", &["exit", "lines", "bytes"]) {
        return Some((n, FrameLine::End(u32::try_from(v[0]).ok()?, v[1], v[2])));
    }
    fields("cut ", &["lines", "bytes"]).map(|_| (n, FrameLine::Cut))
}

/// The batch's own `0:started N` line.
fn frame_started(line: &[u8]) -> bool {
    line.strip_prefix(b"0:started ")
        .and_then(|n| std::str::from_utf8(n).ok())
        .is_some_and(|n| n.parse::<usize>().is_ok())
}

/// Separates the chunks of a [`diagnosis`] input (never valid UTF-8, so never inside text
/// a host printed once it has been read as text).
pub const CHUNK: u8 = 0xFF;
/// Separates stdout from stderr inside a chunk whose flags ask for a stderr.
pub const STDERR: u8 = 0xFE;

/// Two hosts' captures from one fuzz input: chunks separated by [`CHUNK`], each
/// `[selector, flags, payload...]`.
///
/// - selector: bit 7 picks the host (`esx-a`/`esx-b`); the low 7 bits modulo
///   `CATALOGUE.len() + 1` pick a catalogue id, or (the last value) a `.vmx` file.
/// - flags: bits 0-1 the exit status (0, 1, 255, none); bit 2 `truncated`; bit 3
///   `timeout_hit`; bit 4 a `failure` (timeout); bit 5 the payload holds stderr after a
///   [`STDERR`] byte; bit 6 the host came from a vm-support bundle instead of SSH; bit 7
///   the host also carries a connection error.
///
/// A later chunk for the same id replaces the earlier one.
pub fn captures(data: &[u8]) -> Vec<HostCapture> {
    let mut hosts = [
        HostCapture::new("esx-a", CaptureSource::Live),
        HostCapture::new("esx-b", CaptureSource::Live),
    ];
    for chunk in data.split(|&b| b == CHUNK) {
        let [selector, flags, payload @ ..] = chunk else {
            continue;
        };
        let host = &mut hosts[usize::from(selector >> 7)];
        if flags & 0x40 != 0 {
            host.source = CaptureSource::VmSupport;
        }
        if flags & 0x80 != 0 {
            host.error = Some(Failure::new(
                ErrorKind::Timeout,
                "SSH connection lost 2.1 s into the run",
            ));
        }
        let which = usize::from(selector & 0x7f) % (CATALOGUE.len() + 1);
        let Some(spec) = CATALOGUE.get(which) else {
            let n = host.vmx_files.len();
            host.vmx_files.push(VmxFile {
                path: format!("vmfs/volumes/ds1/vm{n}/vm{n}.vmx"),
                content: text(payload),
            });
            continue;
        };
        let (stdout, stderr) = match payload.iter().position(|&b| b == STDERR) {
            Some(at) if flags & 0x20 != 0 => (&payload[..at], &payload[at + 1..]),
            _ => (payload, &[][..]),
        };
        let output = RawOutput {
            stdout: text(stdout),
            stderr: text(stderr),
            exit_status: [Some(0), Some(1), Some(255), None][usize::from(flags & 3)],
            truncated: flags & 0x04 != 0,
            timeout_hit: flags & 0x08 != 0,
            failure: (flags & 0x10 != 0)
                .then(|| Failure::new(ErrorKind::Timeout, "did not finish within --command-timeout 60s")),
            ..RawOutput::new(spec.id, spec.command)
        };
        host.outputs.insert(spec.id.to_string(), output);
    }
    hosts
        .into_iter()
        .filter(|h| !h.outputs.is_empty() || !h.vmx_files.is_empty() || h.error.is_some())
        .collect()
}

/// The inverse of [`captures`] for one clean host: how the seed corpus is written.
pub fn encode(host: u8, outputs: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (id, body) in outputs {
        let selector = CATALOGUE.iter().position(|s| s.id == *id).unwrap_or(CATALOGUE.len());
        if !out.is_empty() {
            out.push(CHUNK);
        }
        out.push(u8::try_from(selector).unwrap_or(0) | (host << 7));
        out.push(0);
        out.extend_from_slice(body);
    }
    out
}

/// Whether an output did not complete cleanly (README, "When output breaks off"): a failure recorded by the
/// collector, a timeout, a cut at a cap, a live command without exit status, or a
/// non-zero exit of a single (non-batched) command; a batch's exit status only tells that
/// some iteration failed, which its sections carry. vm-support bundles record no exit
/// status at all, so there its absence is no mark.
fn unclean(output: &RawOutput, source: CaptureSource) -> bool {
    let batch = catalogue::spec(&output.id).is_some_and(|s| s.is_batch());
    let no_exit = output.exit_status.is_none() && source == CaptureSource::Live;
    output.failure.is_some()
        || output.truncated
        || output.timeout_hit
        || no_exit
        || (!batch && output.exit_status.is_some_and(|c| c != 0))
}

/// The whole diagnosis of the hosts in `data` (see [`captures`]): facts → diagnose → the
/// JSON and human reports, asserting that nothing passes or reads `hca` on an output
/// (or, in a batch, a section) that did not complete cleanly.
pub fn diagnosis(data: &[u8]) {
    let captures = captures(data);
    let d = diagnose::diagnose(&captures);
    for (h, capture) in d.hosts.iter().zip(&captures) {
        check_host(h, capture);
    }
    check_exit_code(&d);
    let json = report::render(&d, Format::Json, false);
    match serde_json::from_str::<serde_json::Value>(&json) {
        Ok(v) => assert_eq!(
            v.get("schema").and_then(|s| s.as_str()),
            Some("pvrdma-doctor/report/v1"),
            "JSON report without its schema"
        ),
        Err(e) => panic!("the JSON report is not JSON ({e}): {json}"),
    }
    // Colour or not by the input's length: both paths, at the cost of one rendering.
    let human = report::render(&d, Format::Human, data.len() % 2 == 1);
    for h in &d.hosts {
        assert!(
            human.contains(&h.host),
            "the human report does not name host {}",
            h.host
        );
    }
}

fn check_host(h: &diagnose::HostDiagnosis, capture: &HostCapture) {
    assert_eq!(h.host, capture.host);
    let adapters = || h.vms.iter().flat_map(|v| &v.adapters);
    if h.status == HostStatus::Ok {
        assert!(
            h.checks.iter().all(|c| matches!(c.status, Status::Pass | Status::Warn)),
            "{}: host ok with a failing or unknown check",
            h.host
        );
        assert!(
            adapters().all(|a| a.verdict == Verdict::Hca),
            "{}: host ok with an adapter not on the HCA",
            h.host
        );
        assert!(
            capture.error.is_none(),
            "{}: host ok although its collection failed",
            h.host
        );
    }
    let is_unclean = |id: &str| capture.outputs.get(id).is_some_and(|o| unclean(o, capture.source));
    for c in h.checks.iter().filter(|c| c.status == Status::Pass) {
        for e in &c.evidence {
            assert!(
                !is_unclean(e.command),
                "{}: check {} passes on the output of {}, which did not complete cleanly",
                h.host,
                c.id,
                e.command
            );
        }
    }
    // A batch is evidence section by section: an adapter reads `hca` only from its own
    // section, and only when that section is whole: it ended with its end marker if the
    // batch did not complete cleanly, and the collection did not list it as unfinished.
    if let Some(props) = capture.outputs.get(catalogue::PVRDMA_PROPERTIES) {
        let marked = props.stdout.lines().any(|l| p::batch_end_marker(l).is_some());
        let whole: Vec<String> = p::parse_pvrdma_properties_batch(&props.stdout)
            .map(|sections| {
                sections
                    .iter()
                    .filter(|s| !s.cut_off && (marked || !unclean(props, capture.source)))
                    .map(|s| format!("{}_{}", s.device.world_id, s.device.index))
                    .filter(|key| !props.unfinished.iter().any(|u| &u.key == key))
                    .collect()
            })
            .unwrap_or_default();
        for vm in &h.vms {
            for a in vm.adapters.iter().filter(|a| a.verdict == Verdict::Hca) {
                let key = vm.world_id.map(|w| format!("{w}_{}", a.index)).unwrap_or_default();
                assert!(
                    whole.contains(&key),
                    "{}: verdict hca for {key} without a whole section of its own in the vsish batch",
                    h.host
                );
            }
        }
    }
}

fn check_exit_code(d: &Diagnosis) {
    let code = d.exit_code();
    if code == pvrdma_engine::exit::HEALTHY {
        assert!(
            d.hosts.iter().all(|h| h.status == HostStatus::Ok),
            "exit 0 with a host that is not ok"
        );
    }
    if d.hosts.iter().any(|h| h.status == HostStatus::Problems) {
        assert_eq!(
            code,
            pvrdma_engine::exit::PROBLEMS,
            "a host with problems but exit {code}"
        );
    }
}
