#!/usr/bin/env bash
# Rebuilds vendor/russh from the russh release on crates.io and vendor/russh.patch, so the
# copy holds nothing but upstream's code and the patch (vendor/README.md says why).
#   scripts/vendor-russh.sh          rebuild vendor/russh
#   scripts/vendor-russh.sh --check  fail if vendor/russh is not exactly that
# To move to a newer russh: change VERSION, run it, mend the patch until it applies and
# builds, then save it with scripts/vendor-russh.sh --save-patch.
set -euo pipefail
VERSION=0.65.1
# The .crate's SHA-256, as crates.io's index lists it (Cargo.lock no longer pins it: the
# workspace uses the copy).
SHA256=94be3d86c71b9ed220a675c405e35c7a02565a009bf8da2e9cc13a700320a5c5
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The release from cargo's download cache, or fetched by cargo when it is not there; either
# way its bytes are checked against the pinned checksum.
cache="${CARGO_HOME:-$HOME/.cargo}/registry/cache"
found() { ls "$cache"/index.crates.io-*/"russh-$VERSION.crate" 2>/dev/null | head -1; }
if [ -z "$(found)" ]; then
    mkdir -p "$work/fetch/src"
    printf '[package]\nname = "fetch-russh"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nrussh = { version = "=%s", default-features = false }\n[workspace]\n' \
        "$VERSION" >"$work/fetch/Cargo.toml"
    touch "$work/fetch/src/lib.rs"
    cargo fetch --quiet --manifest-path "$work/fetch/Cargo.toml"
fi
crate=$(found)
echo "$SHA256  $crate" | sha256sum --check --quiet
tar xzf "$crate" -C "$work"
upstream="$work/russh-$VERSION"

# Only what the library needs: its sources, README and a manifest without the examples,
# tests, benches and their dev-dependencies (not shipped here, and never built as a
# dependency).
pristine="$work/pristine"
mkdir -p "$pristine"
cp -r "$upstream/src" "$upstream/README.md" "$pristine/"
python3 - "$upstream/Cargo.toml" "$pristine/Cargo.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
blocks = re.split(r'(?m)^(?=\[)', text)
keep = [b for b in blocks
        if not re.match(r'\[\[(example|test|bench)\]\]', b)
        and not re.match(r'\[(target\.[^\]]*\.)?dev-dependencies', b)]
open(sys.argv[2], 'w').write(''.join(keep))
PY

case "${1:-}" in
--save-patch)
    cp -r vendor/russh "$work/patched"
    { (cd "$work" && diff -ruN pristine patched) || true; } |
        sed -e 's|^diff -ruN pristine/\([^ ]*\) patched/.*|diff -ruN a/\1 b/\1|' \
            -e 's|^--- pristine/\([^\t]*\).*|--- a/\1|' \
            -e 's|^+++ patched/\([^\t]*\).*|+++ b/\1|' >vendor/russh.patch
    echo "saved vendor/russh.patch"
    exit 0
    ;;
esac

# Exactly as recorded: no fuzz, no backup files left behind when a hunk moves.
patch --quiet --batch --forward --fuzz=0 --no-backup-if-mismatch -p1 -d "$pristine" <vendor/russh.patch
case "${1:-}" in
--check)
    # File modes too, which diff does not compare.
    modes() { (cd "$1" && find . -printf '%M %p\n' | sort); }
    if ! diff -r "$pristine" vendor/russh >"$work/diff" ||
        ! diff <(modes "$pristine") <(modes vendor/russh) >>"$work/diff"; then
        cat "$work/diff" >&2
        echo "vendor/russh is not crates.io russh $VERSION with vendor/russh.patch;" \
            "run scripts/vendor-russh.sh (or --save-patch after a deliberate change)" >&2
        exit 1
    fi
    echo "vendor/russh: russh $VERSION with vendor/russh.patch"
    ;;
*)
    rm -rf vendor/russh
    cp -r "$pristine" vendor/russh
    echo "vendor/russh rebuilt: russh $VERSION with vendor/russh.patch"
    ;;
esac
