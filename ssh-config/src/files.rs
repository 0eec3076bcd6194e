//! Reading a configuration file as ssh(1) does: its text, the ownership and mode it must
//! have, and glob escaping for `Include`.
use super::*;

/// A file's text (bytes that are not UTF-8 are replaced, as they cannot name anything
/// this tool uses).
pub(super) fn read_text(path: &Path) -> std::io::Result<String> {
    // A directory opens but reads as nothing, as with fopen().
    if path.is_dir() {
        return Ok(String::new());
    }
    std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// ssh refuses a user config file another user could have written.
pub(super) fn check_perm(path: &Path) -> Result<(), ConfigError> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let me = sys::current_user().map_or(0, |p| p.uid);
    let group_ok = meta.mode() & 0o020 == 0 || private_group(meta.gid(), meta.uid());
    if (meta.uid() != 0 && meta.uid() != me) || meta.mode() & 0o002 != 0 || !group_ok {
        return Err(ConfigError::Refused(format!(
            "Bad owner or permissions on {} (ssh refuses a config file that another user can write; chmod go-w it)",
            path.display()
        )));
    }
    Ok(())
}

/// Debian's ssh accepts a group-writable file when its group has exactly one member, the
/// file's owner (a user private group): no user but the owner has it as primary group
/// (`/etc/passwd`), and `/etc/group` lists no member or only the owner.
pub(super) fn private_group(gid: u32, owner: u32) -> bool {
    private_group_in(
        &std::fs::read_to_string("/etc/passwd").unwrap_or_default(),
        &std::fs::read_to_string("/etc/group").unwrap_or_default(),
        gid,
        owner,
    )
}

pub(super) fn private_group_in(passwd: &str, group: &str, gid: u32, owner: u32) -> bool {
    let users: Vec<(&str, u32, u32)> = passwd
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            Some((*f.first()?, f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?))
        })
        .collect();
    let Some(owner_name) = users.iter().find(|u| u.1 == owner).map(|u| u.0) else {
        return false;
    };
    let Some(members) = group.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.get(2)?.parse::<u32>().ok()? == gid).then(|| f.get(3).copied().unwrap_or(""))
    }) else {
        return false;
    };
    let mut count = 0;
    for (_, uid, primary) in &users {
        if *primary == gid {
            count += 1;
            if *uid != owner {
                return false;
            }
        }
    }
    let listed: Vec<&str> = members.split(',').filter(|m| !m.is_empty()).collect();
    if let Some(first) = listed.first() {
        count += 1;
        if *first != owner_name || listed.len() > 1 {
            return false;
        }
    }
    count > 0
}

/// Backslash-escapes glob(3) metacharacters in a fixed directory part.
pub(super) fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
