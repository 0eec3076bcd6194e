//! What ssh asks the C library while reading its config: glob(3) for `Include`, the
//! passwd entry for `~user` and the local user, the host name for `%l`/`%L`, and the
//! services database for `Port ssh`. Calling the same functions (rather than
//! re-implementing them) is what makes `Include conf.d/[0-9]*.conf` or `Port https`
//! resolve exactly as they do for `ssh`.
use std::ffi::{CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// glob(3) without flags, as OpenSSH calls it once the path is anchored: `*`, `?`,
/// `[...]` classes, wildcards in any directory part, no match for a leading dot unless
/// written. `Ok(empty)` when nothing matches; `Err` when glob itself failed.
pub(crate) fn glob(pattern: &str) -> Result<Vec<PathBuf>, String> {
    let Ok(c_pattern) = CString::new(pattern) else {
        return Err("the path holds a NUL byte".into());
    };
    // SAFETY: glob_t is plain data that glob() fills in; zeroed is its documented
    // initial state.
    #[allow(unsafe_code)]
    let mut gl: libc::glob_t = unsafe { std::mem::zeroed() };
    // SAFETY: the pattern is a valid C string for the whole call, `gl` is owned here
    // and freed below with globfree() whatever glob() returned.
    #[allow(unsafe_code)]
    let r = unsafe { libc::glob(c_pattern.as_ptr(), 0, None, &mut gl) };
    let mut out = Vec::new();
    if r == 0 {
        for i in 0..gl.gl_pathc {
            // SAFETY: on success gl_pathv holds gl_pathc valid C strings.
            #[allow(unsafe_code)]
            let p = unsafe { *gl.gl_pathv.add(i) };
            if !p.is_null() {
                // SAFETY: non-null entries are NUL-terminated strings owned by `gl`.
                #[allow(unsafe_code)]
                let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
                out.push(PathBuf::from(OsStr::from_bytes(bytes)));
            }
        }
    }
    // SAFETY: frees what glob() allocated in `gl` (safe on a zeroed or failed glob_t).
    #[allow(unsafe_code)]
    unsafe {
        libc::globfree(&mut gl)
    };
    match r {
        0 => Ok(out),
        libc::GLOB_NOMATCH => Ok(Vec::new()),
        _ => Err(format!("glob failed for {pattern}")),
    }
}

/// A passwd entry: login name, uid and home directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passwd {
    pub name: String,
    pub uid: u32,
    pub home: PathBuf,
}

fn passwd_from(pw: &libc::passwd) -> Passwd {
    // SAFETY: getpw*_r filled `pw` with pointers into the buffer, NUL-terminated.
    #[allow(unsafe_code)]
    let (name, home) = unsafe { (CStr::from_ptr(pw.pw_name), CStr::from_ptr(pw.pw_dir)) };
    Passwd {
        name: String::from_utf8_lossy(name.to_bytes()).into_owned(),
        uid: pw.pw_uid,
        home: PathBuf::from(OsStr::from_bytes(home.to_bytes())),
    }
}

/// The passwd entry of the user running this program (ssh's `getpwuid(getuid())`).
pub fn current_user() -> Option<Passwd> {
    // SAFETY: getuid() cannot fail.
    #[allow(unsafe_code)]
    let uid = unsafe { libc::getuid() };
    lookup_passwd(&mut |pw, buf, len, res| {
        // SAFETY: every pointer is valid for the call; the buffer holds `len` bytes.
        #[allow(unsafe_code)]
        unsafe {
            libc::getpwuid_r(uid, pw, buf, len, res)
        }
    })
}

/// The passwd entry of `name` (for `~name/...`).
pub(crate) fn user_named(name: &str) -> Option<Passwd> {
    let c_name = CString::new(name).ok()?;
    lookup_passwd(&mut |pw, buf, len, res| {
        // SAFETY: as in `current_user`; `c_name` outlives the call.
        #[allow(unsafe_code)]
        unsafe {
            libc::getpwnam_r(c_name.as_ptr(), pw, buf, len, res)
        }
    })
}

type PwCall<'a> =
    dyn FnMut(*mut libc::passwd, *mut libc::c_char, libc::size_t, *mut *mut libc::passwd) -> libc::c_int + 'a;

fn lookup_passwd(call: &mut PwCall<'_>) -> Option<Passwd> {
    let mut size = 1024usize;
    while size <= 1 << 20 {
        let mut buf = vec![0 as libc::c_char; size];
        // SAFETY: plain data, filled by the call.
        #[allow(unsafe_code)]
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut res: *mut libc::passwd = std::ptr::null_mut();
        let r = call(&mut pw, buf.as_mut_ptr(), buf.len(), &mut res);
        if r == libc::ERANGE {
            size *= 4;
            continue;
        }
        if r != 0 || res.is_null() {
            return None;
        }
        return Some(passwd_from(&pw));
    }
    None
}

/// This machine's host name (`%l`; `%L` is the part before the first dot).
pub fn local_hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length.
    #[allow(unsafe_code)]
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(buf.get(..end).unwrap_or(&[])).into_owned()
}

/// The TCP port of a service name (`Port ssh`), from the services database as
/// getservbyname(3) reads it: `/etc/services`, name or alias, protocol `tcp`.
pub(crate) fn service_port(name: &str) -> Option<u16> {
    let text = std::fs::read_to_string("/etc/services").ok()?;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let (Some(service), Some(port_proto)) = (words.next(), words.next()) else {
            continue;
        };
        let Some((port, proto)) = port_proto.split_once('/') else {
            continue;
        };
        if proto != "tcp" {
            continue;
        }
        if service == name || words.any(|alias| alias == name) {
            return port.parse().ok();
        }
    }
    None
}

/// An IP address written in any form getaddrinfo(3) reads without DNS (`010.0.0.1`,
/// `0:0::1`, `fe80::1%eth0`), in the form getnameinfo(3) writes it back (`8.0.0.1`,
/// `::1`): what ssh connects to and prints for an address. `None` for a name.
pub(crate) fn numeric_address(name: &str) -> Option<String> {
    let c_name = CString::new(name).ok()?;
    // SAFETY: plain data; zeroed is the documented "no hints" state.
    #[allow(unsafe_code)]
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_flags = libc::AI_NUMERICHOST;
    hints.ai_socktype = libc::SOCK_STREAM;
    let mut res: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: valid C string and hints for the call; `res` is freed below.
    #[allow(unsafe_code)]
    let r = unsafe { libc::getaddrinfo(c_name.as_ptr(), std::ptr::null(), &hints, &mut res) };
    if r != 0 || res.is_null() {
        return None;
    }
    let mut host = [0 as libc::c_char; 1025];
    // SAFETY: `res` is a valid list from getaddrinfo; its first entry's address is
    // readable for ai_addrlen bytes; the output buffer is writable for its length.
    #[allow(unsafe_code)]
    let (single, named) = unsafe {
        let ai = &*res;
        let single = ai.ai_next.is_null();
        let named = libc::getnameinfo(
            ai.ai_addr,
            ai.ai_addrlen,
            host.as_mut_ptr(),
            host.len() as libc::socklen_t,
            std::ptr::null_mut(),
            0,
            libc::NI_NUMERICHOST,
        );
        libc::freeaddrinfo(res);
        (single, named)
    };
    if !single || named != 0 {
        return None;
    }
    // SAFETY: getnameinfo wrote a NUL-terminated string into `host`.
    #[allow(unsafe_code)]
    let text = unsafe { CStr::from_ptr(host.as_ptr()) };
    Some(text.to_string_lossy().into_owned())
}
