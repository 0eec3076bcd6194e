#!/usr/bin/env python3
"""Brings composed sample hosts up to the live batch format (run once per new scenario).

- Adds the `<== KEY exit N ==>` end marker to every section of the batched outputs
  (`esxcli_network_vm_port_list`, `vsish_pvrdma_properties`) that has none, as the
  catalogue's loops print it; exit 1 where the section holds the query's own error.
- Composes `vmx_pvrdma_lines.txt` from the host's own files when it has none: one section
  per running VM of `esxcli_vm_process_list.txt` (its Config File), with the `.vmx` keys the
  inventory reads, the PVRDMA adapters taken from the vsish listing and their port groups
  from the port list. Everything it writes is composed (see samples/README.md).

`samples/esxi67-healthy` stays without markers on purpose: it is the regression sample for
captures made before end markers existed.
"""
import re
import sys
from pathlib import Path

ERROR = re.compile(r"^(Error|VSISH|.*mal-formed|.*not found)", re.M)


def add_markers(path: Path) -> None:
    text = path.read_text()
    if not text.strip() or re.search(r"^<== .* exit \d+ ==>$", text, re.M):
        return
    out, key, body = [], None, []

    def close():
        if key is not None:
            code = 1 if ERROR.search("\n".join(body)) else 0
            out.append(f"<== {key} exit {code} ==>")

    for line in text.splitlines():
        m = re.match(r"^==> (.*) <==$", line)
        if m:
            close()
            key, body = m.group(1), []
        elif key is not None:
            body.append(line)
        out.append(line)
    close()
    path.write_text("\n".join(out) + "\n")


def records(text: str):
    rec = {}
    for line in text.splitlines():
        if line and not line[0].isspace():
            if rec:
                yield rec
            rec = {"name": line.strip()}
        elif ":" in line:
            k, _, v = line.strip().partition(": ")
            rec[k.rstrip(":")] = v.strip()
    if rec:
        yield rec


def sections(text: str):
    key, body = None, []
    for line in text.splitlines():
        m = re.match(r"^==> (.*) <==$", line)
        if m:
            if key is not None:
                yield key, body
            key, body = m.group(1), []
        elif key is not None and not line.startswith("<== "):
            body.append(line)
    if key is not None:
        yield key, body


def compose_vmx(host: Path) -> None:
    target = host / "vmx_pvrdma_lines.txt"
    procs = host / "esxcli_vm_process_list.txt"
    if target.exists() or not procs.exists():
        return
    version = (host / "esxcli_system_version_get.txt").read_text() if (host / "esxcli_system_version_get.txt").exists() else ""
    hw = "19"
    m = re.search(r"Version: (\d+)\.(\d+)", version)
    if m and (int(m.group(1)), int(m.group(2))) < (6, 7):
        hw = "13" if (int(m.group(1)), int(m.group(2))) >= (6, 5) else "11"
    macs = {}  # world id -> [mac per adapter index]
    props = host / "vsish_pvrdma_properties.txt"
    if props.exists():
        for key, body in sections(props.read_text()):
            wid, _, idx = key.partition("_")
            mac = next((l.split(":", 1)[1].strip() for l in body if l.strip().startswith("MAC address:")), None)
            if mac and idx.isdigit():
                macs.setdefault(wid, {})[int(idx)] = mac
    portgroups = {}
    ports = host / "esxcli_network_vm_port_list.txt"
    if ports.exists():
        for _, body in sections(ports.read_text()):
            for rec in records("\n".join(["port"] + body)):
                if rec.get("MAC Address"):
                    portgroups[rec["MAC Address"].lower()] = rec.get("Portgroup", "")
    out = []
    for rec in records(procs.read_text()):
        path, name, wid = rec.get("Config File"), rec.get("Display Name"), rec.get("World ID")
        if not path:
            continue
        out.append(f"==> {path} <==")
        out.append(f'virtualHW.version = "{hw}"')
        out.append('memSize = "16384"')
        if wid in macs:
            out += ['sched.mem.min = "16384"', 'sched.mem.pin = "TRUE"']
        out.append(f'displayName = "{name}"')
        for idx, mac in sorted(macs.get(wid, {}).items()):
            n = idx + 1
            out += [f'ethernet{n}.virtualDev = "vrdma"',
                    f'ethernet{n}.networkName = "{portgroups.get(mac.lower(), "DPG-PVRDMA")}"',
                    f'ethernet{n}.addressType = "vpx"',
                    f'ethernet{n}.generatedAddress = "{mac}"',
                    f'ethernet{n}.present = "TRUE"']
        out.append(f"<== {path} exit 0 ==>")
    target.write_text("\n".join(out) + ("\n" if out else ""))


def main(roots):
    for root in roots:
        for host in sorted(Path(root).glob("*/*/")):
            if host.parent.name in ("esxi67-healthy", "vm-support"):
                continue
            for name in ("esxcli_network_vm_port_list.txt", "vsish_pvrdma_properties.txt"):
                if (host / name).exists():
                    add_markers(host / name)
            compose_vmx(host)


if __name__ == "__main__":
    main(sys.argv[1:] or ["samples"])
