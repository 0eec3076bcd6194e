#!/usr/bin/env python3
"""CHANGELOG.md (the Keep a Changelog layout) as the packages' own changelogs.

    scripts/changelog.py debian VERSION MAINTAINER EPOCH   # debian/changelog, newest first
    scripts/changelog.py rpm VERSION MAINTAINER EPOCH      # the lines of a spec's %changelog
    scripts/changelog.py check [FILE]                      # the layout only; exit 1 if broken

CHANGELOG.md is the one record of what changed for users; the .deb's changelog.Debian.gz
and the .rpm's %changelog (`rpm -q --changelog`) are written from it, so the three never
disagree. A release section is `## [X.Y.Z] - YYYY-MM-DD`; the section being prepared is
`## [Unreleased]`, and it is packaged as VERSION (the version Cargo.toml gives) dated by
EPOCH (the last commit's time, as the rest of the release is). Within a section, the
groups are Keep a Changelog's (`### Added`, `Changed`, `Deprecated`, `Removed`, `Fixed`,
`Security`) and each entry is one `- ` item (its following indented lines continue it).
Markdown that means nothing in a package changelog (backticks, links) is kept as text.
"""
import calendar
import re
import sys
import textwrap
import time
from pathlib import Path

GROUPS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
RELEASE = re.compile(r"^## \[(?P<version>Unreleased|\d+\.\d+\.\d+[^\]]*)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?\s*$")
LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")


class LayoutError(Exception):
    pass


def read(path):
    """The releases of the file, newest first: (version, date or None, [(group, entry)])."""
    releases = []
    group = None
    entry = None
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        where = f"{path}:{number}"
        if line.startswith("## "):
            m = RELEASE.match(line)
            if not m:
                raise LayoutError(f"{where}: a release heading is `## [X.Y.Z] - YYYY-MM-DD` or `## [Unreleased]`: {line!r}")
            if m["version"] != "Unreleased" and not m["date"]:
                raise LayoutError(f"{where}: release {m['version']} has no date")
            releases.append((m["version"], m["date"], []))
            group = entry = None
        elif line.startswith("### "):
            if not releases:
                raise LayoutError(f"{where}: a group before any release heading")
            group = line[4:].strip()
            if group not in GROUPS:
                raise LayoutError(f"{where}: unknown group {group!r} (Keep a Changelog has {', '.join(GROUPS)})")
            entry = None
        elif line.startswith("- "):
            if group is None:
                raise LayoutError(f"{where}: an entry outside a `### group`")
            entry = [line[2:].strip()]
            releases[-1][2].append((group, entry))
        elif line.startswith("  ") and line.strip() and entry is not None:
            entry.append(line.strip())
        elif line.strip() and releases and group is not None:
            raise LayoutError(f"{where}: text that is neither an entry nor its continuation: {line!r}")
    if not releases:
        raise LayoutError(f"{path}: no release section")
    return [(v, d, [(g, plain(" ".join(e))) for g, e in items]) for v, d, items in releases]


def plain(text):
    """Markdown's inline marks as a package changelog shows text."""
    return LINK.sub(r"\1", text).replace("`", "").replace("**", "")


def packaged(releases, version):
    """The releases a package of VERSION carries: Unreleased becomes VERSION, and any
    release newer than VERSION is left out."""
    out = []
    for v, date, items in releases:
        if v == "Unreleased":
            v = version
        if v == version and out and out[-1][0] == version:
            raise LayoutError(f"version {version} appears twice (as Unreleased and released)")
        out.append((v, date, items))
    while out and out[0][0] != version:
        out.pop(0)
    if not out:
        raise LayoutError(f"CHANGELOG.md has no section for {version} and no [Unreleased]")
    return out


def entry_lines(items, first, rest, width):
    lines = []
    for group, text in items:
        lines.extend(textwrap.wrap(f"{group}: {text}", width=width, initial_indent=first,
                                   subsequent_indent=rest, break_on_hyphens=False,
                                   break_long_words=False))
    return lines


def seconds(date, epoch):
    return epoch if date is None else calendar.timegm(time.strptime(date + " 12:00", "%Y-%m-%d %H:%M"))


def debian(releases, maintainer, epoch):
    out = []
    for version, date, items in releases:
        out.append(f"pvrdma-doctor ({version}-1) unstable; urgency=medium")
        out.append("")
        out.extend(entry_lines(items, "  * ", "    ", 80) or ["  * Release " + version + "."])
        out.append("")
        stamp = time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(seconds(date, epoch)))
        out.append(f" -- {maintainer}  {stamp}")
        out.append("")
    return "\n".join(out)


def rpm(releases, maintainer, epoch):
    out = []
    for version, date, items in releases:
        stamp = time.strftime("%a %b %d %Y", time.gmtime(seconds(date, epoch)))
        out.append(f"* {stamp} {maintainer} - {version}-1")
        # A line starting with `%` would be read as a macro: rpm's own escape is `%%`.
        out.extend(line.replace("%", "%%") for line in entry_lines(items, "- ", "  ", 78))
        out.append("")
    return "\n".join(out)


def main(argv):
    root = Path(__file__).resolve().parent.parent
    try:
        if argv[1:2] == ["check"]:
            read(argv[2] if len(argv) > 2 else root / "CHANGELOG.md")
            return 0
        releases = read(root / "CHANGELOG.md")
        kind, version, maintainer, epoch = argv[1], argv[2], argv[3], int(argv[4])
        chosen = packaged(releases, version)
        text = {"debian": debian, "rpm": rpm}[kind](chosen, maintainer, epoch)
    except (LayoutError, IndexError, KeyError, ValueError) as e:
        print(f"changelog.py: {e or __doc__}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
