#!/usr/bin/env bash
# Turns a support bundle a user sent (`pvrdma-doctor ... --bundle FILE.tar.gz`, redacted or
# not) into a sample scenario, in one step:
#   - samples/NAME/<host>/<id>.txt (the bundle's host folders, verbatim: the capture layout
#     the golden tests read);
#   - its line in tests/suite/golden.rs's SCENARIOS, with the exit code `analyze` gives;
#   - its golden reports (tests/suite/snapshots/suite__golden__NAME.{human,json}.snap),
#     written from `analyze`'s own output, to review with `git diff` like any report change;
#   - its entry in samples/README.md, marking where the capture comes from (ESXi version and
#     build, NICs and drivers, as the host printed them) so that it counts as a confirmed
#     format.
#
# Usage: scripts/sample-from-bundle.sh [--root DIR] [--bin PATH] BUNDLE NAME
#   --root DIR  the repository to write into (default: this script's repository)
#   --bin PATH  the pvrdma-doctor binary (default: target/debug/pvrdma-doctor, built first)
#
# The bundle is checked by `pvrdma-doctor analyze` before anything is written (checksums,
# no path leaving the archive, no links); a bundle it refuses, a NAME already taken or a
# bundle that is not pvrdma-doctor's stops the script and leaves the repository unchanged.
# A script rather than a subcommand: it edits the project's own test sources and docs,
# which a tool installed on an admin's machine has no business knowing about.
set -euo pipefail

usage() {
    sed -n '13,16s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

root="$(cd "$(dirname "$0")/.." && pwd)"
bin=""
while [ $# -gt 0 ]; do
    case "$1" in
    --root) root="$(cd "${2:?--root needs a directory}" && pwd)"; shift 2 ;;
    --bin) bin="${2:?--bin needs a path}"; shift 2 ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) echo "unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || usage
bundle="$1"
name="$2"

die() {
    echo "sample-from-bundle: $*" >&2
    exit 1
}

case "$name" in
'' | *[!a-z0-9-]* | -*) die "NAME must be lowercase letters, digits and dashes (a folder under samples/): '$name'" ;;
esac
[ -f "$bundle" ] || die "no such bundle: $bundle"
dest="$root/samples/$name"
golden="$root/tests/suite/golden.rs"
snapshots="$root/tests/suite/snapshots"
readme="$root/samples/README.md"
[ -e "$dest" ] && die "samples/$name exists already; choose another NAME"
[ -f "$golden" ] || die "$golden not found (is --root the repository?)"
grep -q '^const SCENARIOS' "$golden" || die "no SCENARIOS list in $golden"
[ -f "$readme" ] || die "$readme not found"

if [ -z "$bin" ]; then
    (cd "$root" && cargo build --quiet --bin pvrdma-doctor)
    bin="$root/target/debug/pvrdma-doctor"
fi
[ -x "$bin" ] || die "not an executable: $bin"

analyze() {
    # The exit code is the verdict (0 ok, 1 problems, 3 unknown); 2 means refused.
    local code=0
    NO_COLOR='' "$bin" analyze --color never "$@" || code=$?
    return "$code"
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 1. The bundle must be one analyze accepts whole.
bundle_code=0
analyze --format json "$bundle" >"$work/bundle.json" 2>"$work/bundle.err" || bundle_code=$?
if [ "$bundle_code" -eq 2 ] || [ "$bundle_code" -gt 3 ]; then
    cat "$work/bundle.err" >&2
    die "analyze refused the bundle (exit $bundle_code); ask the user for it again"
fi

# 2. Unpack it (analyze checked every entry: relative paths, no links, checksums).
mkdir "$work/unpacked"
tar -xzf "$bundle" -C "$work/unpacked" --no-same-owner --no-same-permissions
[ -f "$work/unpacked/manifest.json" ] || die "not a pvrdma-doctor support bundle (no manifest.json): $bundle"
grep -q '"tool": *"pvrdma-doctor"' "$work/unpacked/manifest.json" || die "manifest.json is not pvrdma-doctor's: $bundle"
redacted=no
grep -q '"redacted": *true' "$work/unpacked/manifest.json" && redacted=yes

hosts=()
for d in "$work/unpacked"/*/; do
    [ -d "$d" ] && hosts+=("$(basename "$d")")
done
[ ${#hosts[@]} -gt 0 ] || die "the bundle holds no host folder"

# 3. The capture, verbatim, in a staging folder first so that a failure below leaves no
#    half-made scenario.
stage="$work/stage/$name"
mkdir -p "$stage"
for h in "${hosts[@]}"; do
    cp -R "$work/unpacked/$h" "$stage/$h"
done
chmod -R u+rwX,go+rX "$stage"

# 4. Its reports, as the golden test will compute them from samples/NAME.
code=0
analyze --format human "$stage" >"$work/human" 2>"$work/human.err" || code=$?
json_code=0
analyze --format json "$stage" >"$work/json" 2>"$work/json.err" || json_code=$?
if [ -s "$work/human.err" ] || [ -s "$work/json.err" ]; then
    cat "$work/human.err" "$work/json.err" >&2
    die "analyze of the unpacked capture wrote to stderr; the golden test would fail"
fi
[ "$code" -eq "$json_code" ] || die "analyze exits $code in human and $json_code in JSON"
[ "$code" -eq 2 ] && die "analyze refused the unpacked capture"
[ "$code" -eq "$bundle_code" ] ||
    die "the unpacked capture gives exit $code but the bundle gave $bundle_code"

# The origin of the capture, from the host's own outputs.
field() { # field FILE NAME -> value of `   NAME: value`
    sed -n "s/^ *$2: *//p" "$1" | head -n 1 | sed 's/ *$//'
}
nics() { # the `esxcli network nic list` table: "vmnicN driver (description)" per row
    awk '
        NR == 1 { next }
        NR == 2 {
            # The dash row gives each column: start and end.
            n = 0; i = 1
            while (i <= length($0)) {
                if (substr($0, i, 1) == "-") {
                    n++; start[n] = i
                    while (i <= length($0) && substr($0, i, 1) == "-") i++
                } else i++
            }
            next
        }
        n >= 10 && NF > 0 {
            col_name = substr($0, start[1], start[2] - start[1])
            col_driver = substr($0, start[3], start[4] - start[3])
            col_desc = substr($0, start[10])
            gsub(/^ +| +$/, "", col_name); gsub(/^ +| +$/, "", col_driver); gsub(/^ +| +$/, "", col_desc)
            printf "%s`%s` %s (%s)", (seen++ ? ", " : ""), col_name, col_driver, col_desc
        }
    ' "$1"
}
origin=""
for h in "${hosts[@]}"; do
    v="$stage/$h/esxcli_system_version_get.txt"
    n="$stage/$h/esxcli_network_nic_list.txt"
    line="- \`$h\`:"
    if [ -s "$v" ]; then
        build="$(field "$v" Build)"
        line="$line $(field "$v" Product) $(field "$v" Version) (build ${build#Releasebuild-}, update $(field "$v" Update), patch $(field "$v" Patch))"
    else
        line="$line no \`esxcli system version get\` output"
    fi
    if [ -s "$n" ]; then
        line="$line; NICs $(nics "$n")"
    fi
    [ -f "$stage/$h/host-error.json" ] && line="$line; the host could not be collected (\`host-error.json\`)"
    origin="$origin$line
"
done
case "$code" in
0) expected="every adapter judged, no problem, exit 0" ;;
1) expected="problems, exit 1" ;;
3) expected="some results unknown, exit 3" ;;
*) expected="exit $code" ;;
esac

# 5. Everything is known: write it into the repository.
mkdir -p "$snapshots"
snap() { # snap KIND EXPRESSION FILE
    {
        printf -- '---\nsource: tests/suite/golden.rs\nexpression: %s\n---\n' "$2"
        cat "$3"
    } >"$snapshots/suite__golden__$name.$1.snap"
}
snap human human "$work/human"
snap json json_text "$work/json"

awk -v entry="    (\"$name\", $code)," '
    /^const SCENARIOS/ { inside = 1 }
    inside && /^\];/ { print entry; inside = 0 }
    { print }
' "$golden" >"$work/golden.rs"
cat "$work/golden.rs" >"$golden"

if ! grep -q '^## Confirmed captures' "$readme"; then
    printf '\n## Confirmed captures\n\nScenarios made from support bundles of real hosts (`scripts/sample-from-bundle.sh`):\neach output is verbatim what the host printed, so its format is confirmed on that ESXi\nrelease and build.\n' >>"$readme"
fi
{
    host_list="$(printf '%s, ' "${hosts[@]}")"
    printf '\n### `%s` (%s) - expected: %s\n\n' "$name" "${host_list%, }" "$expected"
    printf '**Confirmed capture** from a support bundle written by pvrdma-doctor %s (redacted: %s):\n' \
        "$(sed -n 's/.*"tool_version": *"\([^"]*\)".*/\1/p' "$work/unpacked/manifest.json" | head -n 1)" "$redacted"
    printf '%s' "$origin"
} >>"$readme"

mv "$stage" "$dest"
echo "samples/$name: ${#hosts[@]} host(s), analyze exits $code"
echo "review: git diff -- samples/README.md tests/suite/golden.rs; tests/suite/snapshots/suite__golden__$name.*.snap"
echo "then: cargo test --test suite golden"
