//! The fake ESXi commands the test sshd puts first on PATH: `esxcli`, `vsish`, `vmkping`
//! and a `grep` for the `.vmx` reads, busybox `sh` scripts answering from `samples/`.
use super::set_mode;
use super::sshd::SshdOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes the fake commands into `<root>/bin` and the samples' batch sections into
/// `<root>/sections`; returns both folders.
pub(super) fn install(root: &Path, opts: &SshdOptions) -> (PathBuf, PathBuf) {
    let bin = root.join("bin");
    std::fs::create_dir(&bin).expect("bin dir");
    let (esxcli_delay, vsish_delay) = opts.latency.unwrap_or((0.0, 0.0));
    write_exec(&bin.join("esxcli"), &with_delay(&fake_esxcli(), esxcli_delay));
    write_exec(&bin.join("vsish"), &with_delay(&fake_vsish(), vsish_delay));
    write_exec(&bin.join("vmkping"), FAKE_VMKPING);
    write_exec(&bin.join("grep"), &fake_grep());
    let sections = root.join("sections");
    split_batch_samples(&opts.samples, &sections);
    (bin, sections)
}

/// Each section of the batch samples as a file `<sections>/<id>/<key>.exit<N>` (N = its
/// end marker's status, 0 without one), so a fake answers one key with a `cat` instead of
/// an `awk` over the whole sample: a simulated host with hundreds of VMs then costs the
/// benchmark machine little more than one with a few. Keys that cannot be a path are left
/// to the `awk` fallback.
fn split_batch_samples(samples: &Path, sections: &Path) {
    let batches = pvrdma_engine::catalogue::CATALOGUE.iter().filter(|s| s.is_batch());
    for id in batches.map(|s| s.id) {
        let Ok(text) = std::fs::read_to_string(samples.join(format!("{id}.txt"))) else {
            continue;
        };
        let mut found: Vec<(String, String, i64)> = Vec::new();
        let mut open: Option<usize> = None;
        for line in text.lines() {
            if let Some(key) = line.strip_prefix("==> ").and_then(|l| l.strip_suffix(" <==")) {
                open = Some(match found.iter().position(|(k, _, _)| k == key) {
                    Some(at) => at,
                    None => {
                        found.push((key.to_string(), String::new(), 0));
                        found.len() - 1
                    }
                });
                continue;
            }
            let Some(at) = open else { continue };
            let end = format!("<== {} exit ", found[at].0);
            if let Some(code) = line.strip_prefix(end.as_str()) {
                found[at].2 = code.trim_end_matches(" ==>").trim().parse().unwrap_or(0);
                open = None;
                continue;
            }
            found[at].1.push_str(line);
            found[at].1.push('\n');
        }
        for (key, body, code) in found {
            let relative = key.trim_start_matches('/');
            if relative.is_empty() || relative.split('/').any(|part| part == ".." || part == ".") {
                continue;
            }
            let file = sections.join(id).join(format!("{relative}.exit{code}"));
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent).expect("sections dir");
            }
            std::fs::write(&file, body).expect("section file");
        }
    }
    if sections.is_dir() {
        Command::new("chmod")
            .args(["-R", "a+rX"])
            .arg(sections)
            .status()
            .expect("chmod sections");
    }
}

fn write_exec(p: &Path, text: &str) {
    let mut f = std::fs::File::create(p).expect("create script");
    f.write_all(text.as_bytes()).expect("write script");
    set_mode(p, 0o755);
}

/// The script with a `sleep` before it answers (coreutils sleep takes fractions).
fn with_delay(script: &str, seconds: f64) -> String {
    if seconds <= 0.0 {
        return script.to_string();
    }
    script.replacen("\n", &format!("\nsleep {seconds}\n"), 1)
}

const EMIT: &str = r#"d=${FAKE_ESX_DIR:?}
# on ID LIST: whether the comma list LIST names ID (or `all`).
on() { case ",$2," in *",$1,"*|*",all,"*) return 0 ;; esac; return 1; }
# The pid of this command's sshd session process (the first sshd* ancestor).
session() {
  p=$$
  while [ "${p:-1}" -gt 1 ]; do
    case "$(cat "/proc/$p/comm" 2>/dev/null)" in sshd*) echo "$p"; return ;; esac
    p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)
  done
}
# The sample's text: whole, or one batch section (ending with its end marker's status).
body() {
  if [ -n "$2" ]; then
    # The section split out at start (see split_batch_samples), else the sample's.
    for f in "${FAKE_ESX_SECTIONS:-/nonexistent}/$1/$2".exit*; do
      if [ -f "$f" ]; then cat "$f"; return "${f##*.exit}"; fi
    done
    awk -v k="==> $2 <==" -v e="<== $2 exit " '
      $0 == k { on = 1; next }
      on && index($0, e) == 1 { c = substr($0, length(e) + 1); sub(/ ==>$/, "", c); code = c + 0; on = 0; next }
      /^==> .* <==$/ { on = 0 }
      on { print }
      END { exit code }' "$d/$1.txt"
    return
  fi
  # A `.conn.txt` sample varies per connection (benchmarks: one host per connection):
  # `@CONN@` becomes two address octets taken from the client's port.
  if [ -f "$d/$1.conn.txt" ]; then
    p=${SSH_CONNECTION#* }; p=${p%% *}
    v="$((p / 250 % 250)).$((p % 250 + 1))"
    while [ ${#v} -lt 7 ]; do v="$v "; done
    sed "s/@CONN@/$v/g" "$d/$1.conn.txt"
    return 0
  fi
  [ -f "$d/$1.txt" ] || { echo "fake: no sample $1" >&2; return 1; }
  cat "$d/$1.txt"
  [ -f "$d/$1.stderr.txt" ] && cat "$d/$1.stderr.txt" >&2
  [ -f "$d/$1.exit" ] && return "$(cat "$d/$1.exit")"
  return 0
}
emit() {
  # One query of a batch misbehaving (the key is in "$2").
  if [ -n "$2" ]; then
    if on "$2" "$FAKE_ESX_KEY_HANG"; then echo $$ >> "$FAKE_ESX_PIDS"; exec sleep 3600; fi
    if on "$2" "$FAKE_ESX_KEY_KILL"; then echo "a first line"; kill -9 $$; fi
    if on "$2" "$FAKE_ESX_KEY_FLOOD"; then
      yes 'flood flood flood flood flood flood flood flood flood flood flood flood flood' | head -c "$FAKE_ESX_FLOOD_BYTES"
      exit 0
    fi
    if on "$2" "$FAKE_ESX_KEY_BIG"; then
      sleep "$FAKE_ESX_BIG_DELAY"
      body "$@" | sed '/^}$/d'
      awk 'BEGIN { for (i = 0; i < 500; i++) printf "   padding member %03d:%s\n", i, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789" }'
      echo "}"
      exit 0
    fi
  fi
  # A hung command records its pid so the test can kill it: exec keeps the pid.
  case ",$FAKE_ESX_HANG," in *",$1,"*) echo $$ >> "$FAKE_ESX_PIDS"; exec sleep 3600 ;; esac
  if on "$1" "$FAKE_ESX_FLOOD"; then
    yes 'flood flood flood flood flood flood flood flood flood flood flood flood flood' | head -c "$FAKE_ESX_FLOOD_BYTES"
    exit 0
  fi
  body "$@"
  rc=$?
  if on "$1" "$FAKE_ESX_STALL"; then echo $$ >> "$FAKE_ESX_PIDS"; exec sleep 3600; fi
  if on "$1" "$FAKE_ESX_KILL"; then sleep 0.5; kill -9 "$(session)"; exit 0; fi
  if on "$1" "$FAKE_ESX_FREEZE"; then
    s=$(session)
    echo "$s $$" >> "$FAKE_ESX_PIDS"
    sleep 0.5
    kill -STOP "$s"
    exec sleep 3600
  fi
  exit $rc
}
"#;

/// ESXi's `vmkping` as the probe calls it (`-I vmk [-d -s N] -c 3 -W 1 <ip>`), answering
/// from `$FAKE_VMKPING_DIR`; no file = no reply (a total loss, as a silent peer gives).
/// `FAKE_ESX_HANG=vmkping` makes it hang.
const FAKE_VMKPING: &str = r#"#!/bin/sh
# Test double for vmkping: answers from $FAKE_VMKPING_DIR/<ip>.<plain|jumbo>.txt
case ",$FAKE_ESX_HANG," in *",vmkping,"*) echo $$ >> "$FAKE_ESX_PIDS"; exec sleep 3600 ;; esac
vmk=-; df=-; size=-; ip=
while [ $# -gt 0 ]; do
  case "$1" in
    -I) vmk=$2; shift 2 ;;
    -d) df=d; shift ;;
    -s) size=$2; shift 2 ;;
    -c|-W) shift 2 ;;
    *) ip=$1; shift ;;
  esac
done
echo "$vmk $df $size $ip" >> "$FAKE_VMKPING_LOG"
kind=plain; [ "$df" = d ] && kind=jumbo
f="$FAKE_VMKPING_DIR/$ip.$kind.txt"
if [ -f "$f" ]; then
  cat "$f"
  [ -f "$f.exit" ] && exit "$(cat "$f.exit")"
  exit 0
fi
[ "$size" = - ] && size=56
printf 'PING %s (%s): %s data bytes

--- %s ping statistics ---
3 packets transmitted, 0 packets received, 100%% packet loss
' "$ip" "$ip" "$size" "$ip"
exit 2
"#;

/// The `case "$a" in` arms (`a` = the fake's arguments, `"$*"`) of the fake `name`,
/// derived from the catalogue: each command line `name` runs answers its sample; each
/// batch query `name` runs answers the asked key's section, the key taken from the
/// arguments where the query puts its `"$1"`.
fn catalogue_arms(name: &str) -> String {
    let mut arms = String::new();
    for spec in pvrdma_engine::catalogue::CATALOGUE {
        let after_name = |line: &'static str| line.strip_prefix(name).and_then(|r| r.strip_prefix(' '));
        match spec.query() {
            Some(query) => {
                let Some(args) = after_name(query) else { continue };
                let words = shell_words(args);
                let (before, after) = words.split_once("$1").expect("a batch query holds its key as \"$1\"");
                let (before, after) = (double_quoted(before), double_quoted(after));
                arms.push_str(&format!(
                    "  {before}*{after}) k=${{a#{before}}}; k=${{k%{after}}}; emit {} \"$k\" ;;\n",
                    spec.id
                ));
            }
            None if !spec.command.contains(';') => {
                if let Some(args) = after_name(spec.command) {
                    arms.push_str(&format!("  {}) emit {} ;;\n", double_quoted(args), spec.id));
                }
            }
            None => {}
        }
    }
    arms
}

/// The arguments of a shell command line as `"$*"` joins them: quotes removed (the
/// catalogue's queries quote words whole, never with escapes inside).
fn shell_words(line: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ' ') if out.ends_with(' ') => {}
            _ => out.push(c),
        }
    }
    out
}

/// `text` as one double-quoted shell word (literal in a `case` pattern).
fn double_quoted(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `esxcli` answering every catalogue command line and batch query it runs from
/// `$FAKE_ESX_DIR`.
fn fake_esxcli() -> String {
    format!(
        "#!/bin/sh\n# Test double: answers from samples.\n{EMIT}a=\"$*\"\ncase \"$a\" in\n{}  *) echo \"Error: Unknown command or namespace $*\" >&2; exit 1 ;;\nesac\n",
        catalogue_arms("esxcli")
    )
}

/// `grep` that answers the `.vmx` reads of the catalogue's `vmx_pvrdma_lines` batch from
/// that sample (the `/vmfs/...` paths do not exist here) and is the real grep otherwise.
fn fake_grep() -> String {
    format!(
        "#!/bin/sh\n# Test double: .vmx reads answer from samples.\n{EMIT}a=\"$*\"\ncase \"$a\" in\n{}esac\nexec /usr/bin/grep \"$@\"\n",
        catalogue_arms("grep")
    )
}

fn fake_vsish() -> String {
    format!(
        "#!/bin/sh\n# Test double: answers from samples.\n{EMIT}a=\"$*\"\ncase \"$a\" in\n{}  *) echo \"VSISHPath_Form():Extraneous '$3' in path.\" >&2; exit 1 ;;\nesac\n",
        catalogue_arms("vsish")
    )
}
