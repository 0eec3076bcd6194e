//! Headless Chromium (Debian's `chromium`, installed by scripts/install-test-deps.sh) for
//! the HTML report: a page rendered to a PNG or printed to a PDF, the DOM it built read
//! back, each run in a fresh profile with every request sent to a loopback [`Recorder`]
//! set as its proxy (loopback included). Each run is bounded in time, and its whole
//! process group (Chromium forks a zygote, renderers, a GPU process) is killed on every
//! path, a failed assertion included.
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What every run is given: the flags of a headless run as root (no sandbox, as CI runs),
/// with nothing of Chromium's own going to the network.
pub const FLAGS: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    // Services that fetch on their own schedule, whatever the page.
    "--disable-features=OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,Translate,MediaRouter",
];

/// How long one Chromium run may take before it is killed and the test fails.
pub const RUN_LIMIT: Duration = Duration::from_secs(90);

/// A loopback HTTP proxy that records the first line of every request it gets (`GET
/// http://host/path HTTP/1.1`, `CONNECT host:443 HTTP/1.1`) and answers 502. A connection
/// Chromium opens ahead of need and closes unused asks nothing, and is not recorded; one
/// it uses later is, whenever its request comes.
pub struct Recorder {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
    /// Connections being read.
    open: Arc<std::sync::atomic::AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Recorder {
    pub fn start() -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port for the recorder");
        listener.set_nonblocking(true).expect("non-blocking accept");
        let port = listener.local_addr().expect("its address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (seen_in, stop_in, open_in) = (seen.clone(), stop.clone(), open.clone());
        let thread = std::thread::spawn(move || {
            while !stop_in.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (seen, open) = (seen_in.clone(), open_in.clone());
                        open.fetch_add(1, Ordering::SeqCst);
                        std::thread::spawn(move || {
                            answer(stream, &seen);
                            open.fetch_sub(1, Ordering::SeqCst);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Recorder {
            port,
            seen,
            open,
            stop,
            thread: Some(thread),
        }
    }

    /// `--proxy-server` for Chromium.
    pub fn proxy(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The request lines seen since the last call, taken out, once every connection
    /// already made has been read (call it after the Chromium run ended).
    pub fn take(&self) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        // The acceptor polls every 20 ms: two rounds take what is queued.
        std::thread::sleep(Duration::from_millis(60));
        while self.open.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

/// The host a request line asks for: `CONNECT host:443 HTTP/1.1`, `GET http://host/x HTTP/1.1`.
pub fn host_of(request: &str) -> String {
    let target = request.split_whitespace().nth(1).unwrap_or("");
    let target = target.split_once("://").map_or(target, |(_, rest)| rest);
    let authority = target.split('/').next().unwrap_or("");
    authority.rsplit_once(':').map_or(authority, |(h, _)| h).to_string()
}

/// Reads one connection's request line (until the peer closes it, or [`RUN_LIMIT`]),
/// records it and answers 502.
fn answer(mut stream: std::net::TcpStream, seen: &Mutex<Vec<String>>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(RUN_LIMIT));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.contains(&b'\n') && head.len() < 8192 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    if head.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(&head);
    seen.lock().unwrap().push(text.lines().next().unwrap_or("").to_string());
    let _ = stream.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Kills a process group when dropped: the Chromium run it stands for is over, whatever
/// happened.
struct Group(i32);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: kill(2) on a process group this test started; no memory is involved.
        unsafe {
            libc::kill(-self.0, libc::SIGKILL);
        }
    }
}

/// What a run left.
pub struct Run {
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// A Chromium command with the common flags, a fresh profile in `dir` and `proxy`.
fn command(dir: &Path, proxy: &str) -> Command {
    let profile = dir.join(format!("profile-{}", next_id()));
    let mut c = Command::new("chromium");
    c.args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--proxy-server={proxy}"))
        // Loopback too goes through the proxy: a page may ask nothing of anyone.
        .arg("--proxy-bypass-list=<-loopback>")
        .stdin(Stdio::null())
        .process_group(0);
    c
}

fn next_id() -> usize {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Runs Chromium with `args` (the page's URL last), its output in files of `dir`; fails
/// the test when it does not end within [`RUN_LIMIT`] or ends in failure.
pub fn run(dir: &Path, proxy: &str, args: &[&str]) -> Run {
    let id = next_id();
    let (out, err) = (dir.join(format!("stdout-{id}")), dir.join(format!("stderr-{id}")));
    let mut c = command(dir, proxy);
    c.args(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let mut child = c
        .spawn()
        .expect("chromium runs (scripts/install-test-deps.sh installs Debian's chromium)");
    let _group = Group(child.id() as i32);
    let deadline = Instant::now() + RUN_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "chromium {args:?} did not end within {RUN_LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(25));
    };
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(status.success(), "chromium {args:?}: {status}\n{stderr}");
    Run {
        stdout: std::fs::read(&out).unwrap_or_default(),
        stderr,
    }
}

/// The DOM Chromium built of `url` with script execution disabled, serialized by its
/// DevTools DOM domain (no script runs to read it): what a reader with scripts off gets.
pub fn dom_without_scripts(dir: &Path, proxy: &str, url: &str) -> String {
    let mut browser = Browser::open(dir, proxy);
    browser.load(url, false);
    browser.outer_html()
}

/// A Chromium driven over its DevTools protocol (`--remote-debugging-pipe`: messages on
/// fds 3 and 4), one tab; killed with its process group when dropped, and every answer
/// awaited at most [`RUN_LIMIT`] from the start.
pub struct Browser {
    devtools: DevTools,
    session: String,
    /// Chromium itself, waited for once its process group is killed.
    child: std::process::Child,
}

impl Browser {
    pub fn open(dir: &Path, proxy: &str) -> Browser {
        let (to_chromium, from_chromium) = (pipe(), pipe());
        let (child_in, child_out) = (to_chromium.0, from_chromium.1);
        let mut c = command(dir, proxy);
        // The first tab blank, not the distribution's start page.
        let log = dir.join(format!("devtools-stderr-{}", next_id()));
        c.arg("--remote-debugging-pipe")
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        // SAFETY: between fork and exec only async-signal-safe calls (fcntl, dup2, close)
        // on descriptors this process owns; they become Chromium's fds 3 and 4.
        unsafe {
            c.pre_exec(move || {
                let a = libc::fcntl(child_in, libc::F_DUPFD, 10);
                let b = libc::fcntl(child_out, libc::F_DUPFD, 10);
                if a < 0 || b < 0 || libc::dup2(a, 3) < 0 || libc::dup2(b, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(a);
                libc::close(b);
                Ok(())
            });
        }
        let child = c.spawn().expect("chromium runs");
        // Killed with its group if what follows fails; reaped by [`Browser`]'s drop after.
        let group = Group(child.id() as i32);
        // Our ends only: the child's copies are closed here so that its exit ends the reads.
        // SAFETY: closing descriptors this process owns and no longer uses.
        unsafe {
            libc::close(child_in);
            libc::close(child_out);
        }
        let mut devtools = DevTools::over(file(to_chromium.1), file(from_chromium.0), log);
        let target = devtools.call(None, "Target.createTarget", serde_json::json!({"url": "about:blank"}));
        let attached = devtools.call(
            None,
            "Target.attachToTarget",
            serde_json::json!({"targetId": target["targetId"], "flatten": true}),
        );
        let session = attached["sessionId"].as_str().expect("a session").to_string();
        devtools.call(Some(&session), "Page.enable", serde_json::json!({}));
        let browser = Browser {
            devtools,
            session,
            child,
        };
        std::mem::forget(group);
        browser
    }

    /// Opens `url` in the tab, scripts on or off, and waits for its load event.
    pub fn load(&mut self, url: &str, scripts: bool) {
        let s = Some(self.session.as_str());
        let off = serde_json::json!({"value": !scripts});
        self.devtools.call(s, "Emulation.setScriptExecutionDisabled", off);
        self.devtools.call(s, "Page.navigate", serde_json::json!({"url": url}));
        self.devtools.wait_for(s, "Page.loadEventFired");
    }

    /// The document as HTML, serialized by the DOM domain.
    pub fn outer_html(&mut self) -> String {
        let s = Some(self.session.as_str());
        let doc = self
            .devtools
            .call(s, "DOM.getDocument", serde_json::json!({"depth": 0}));
        let html = self.devtools.call(
            s,
            "DOM.getOuterHTML",
            serde_json::json!({"nodeId": doc["root"]["nodeId"]}),
        );
        html["outerHTML"].as_str().expect("the document's HTML").to_string()
    }

    /// The value of a JavaScript expression in the page (a promise awaited), evaluated by
    /// DevTools (the page's policy does not apply to it).
    pub fn evaluate(&mut self, expression: &str) -> serde_json::Value {
        let s = Some(self.session.as_str());
        let params = serde_json::json!({"expression": expression, "awaitPromise": true, "returnByValue": true});
        let r = self.devtools.call(s, "Runtime.evaluate", params);
        assert!(r.get("exceptionDetails").is_none(), "{expression}: {r}");
        r["result"]["value"].clone()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.devtools.send(None, "Browser.close", serde_json::json!({}));
        drop(Group(self.child.id() as i32));
        let _ = self.child.wait();
    }
}

/// A pipe whose ends are closed on exec (only the dup'd fds 3 and 4 reach Chromium).
fn pipe() -> (i32, i32) {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2(2) writes two descriptors into the array it is given.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    (fds[0], fds[1])
}

fn file(fd: i32) -> std::fs::File {
    use std::os::fd::FromRawFd;
    // SAFETY: `fd` is a descriptor of ours, handed over to the File once.
    unsafe { std::fs::File::from_raw_fd(fd) }
}

/// A DevTools session over the pipe: calls by id, events by name, each awaited at most
/// [`RUN_LIMIT`].
struct DevTools {
    writer: std::fs::File,
    rx: std::sync::mpsc::Receiver<serde_json::Value>,
    next: u64,
    /// Chromium's stderr, for the message when it stops answering.
    log: std::path::PathBuf,
}

impl DevTools {
    /// A session over the pipe's two ends, its answers read by a thread of their own.
    fn over(writer: std::fs::File, reader: std::fs::File, log: std::path::PathBuf) -> DevTools {
        let (tx, rx) = std::sync::mpsc::channel::<serde_json::Value>();
        std::thread::spawn(move || {
            let mut reader = std::io::BufReader::new(reader);
            let mut message = Vec::new();
            while std::io::BufRead::read_until(&mut reader, 0, &mut message).unwrap_or(0) > 0 {
                message.pop_if(|b| *b == 0);
                if let Ok(v) = serde_json::from_slice(&message) {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
                message.clear();
            }
        });
        DevTools {
            writer,
            rx,
            next: 1,
            log,
        }
    }

    fn send(&mut self, session: Option<&str>, method: &str, params: serde_json::Value) -> std::io::Result<u64> {
        let id = self.next;
        self.next += 1;
        let mut message = serde_json::json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = s.into();
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.writer.write_all(&bytes)?;
        Ok(id)
    }

    fn next_message(&self, waiting_for: &str, deadline: Instant) -> serde_json::Value {
        let left = deadline.saturating_duration_since(Instant::now());
        self.rx.recv_timeout(left).unwrap_or_else(|e| {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            panic!("chromium's DevTools: no answer to {waiting_for} ({e}); its stderr:\n{log}")
        })
    }

    fn call(&mut self, session: Option<&str>, method: &str, params: serde_json::Value) -> serde_json::Value {
        let id = self
            .send(session, method, params)
            .expect("writing to chromium's DevTools pipe");
        let deadline = Instant::now() + RUN_LIMIT;
        loop {
            let m = self.next_message(method, deadline);
            if m["id"] == id {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
        }
    }

    fn wait_for(&mut self, session: Option<&str>, event: &str) {
        let deadline = Instant::now() + RUN_LIMIT;
        loop {
            let m = self.next_message(event, deadline);
            if m["method"] == event && session.is_none_or(|s| m["sessionId"] == s) {
                return;
            }
        }
    }
}

/// The pixels of a PNG Chromium wrote (8-bit RGB or RGBA, not interlaced), as RGB.
pub fn png_pixels(png: &[u8]) -> (usize, usize, Vec<[u8; 3]>) {
    assert_eq!(png.get(..8), Some(&b"\x89PNG\r\n\x1a\n"[..]), "not a PNG");
    let (mut width, mut height, mut channels) = (0usize, 0usize, 0usize);
    let mut data = Vec::new();
    let mut at = 8;
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let body = &png[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().unwrap()) as usize;
                height = u32::from_be_bytes(body[4..8].try_into().unwrap()) as usize;
                assert_eq!(body[8], 8, "8-bit samples");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    other => panic!("PNG colour type {other}"),
                };
                assert_eq!(body[12], 0, "not interlaced");
            }
            b"IDAT" => data.extend_from_slice(body),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&data[..])
        .read_to_end(&mut raw)
        .expect("the PNG's image data");
    let stride = width * channels;
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(width * height);
    for y in 0..height {
        let row = &raw[y * (stride + 1)..(y + 1) * (stride + 1)];
        let mut line = row[1..].to_vec();
        for x in 0..stride {
            let a = if x >= channels { line[x - channels] as i32 } else { 0 };
            let b = prev[x] as i32;
            let c = if x >= channels { prev[x - channels] as i32 } else { 0 };
            let add = match row[0] {
                0 => 0,
                1 => a,
                2 => b,
                3 => (a + b) / 2,
                4 => {
                    let p = a + b - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("PNG filter {f}"),
            };
            line[x] = (line[x] as i32 + add) as u8;
        }
        pixels.extend(line.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        prev = line;
    }
    (width, height, pixels)
}
