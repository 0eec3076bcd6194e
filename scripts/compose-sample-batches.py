#!/usr/bin/env python3
"""Brings composed sample hosts up to the live batch format (run once per new scenario).

- Adds the `<== KEY exit N ==>` end marker to every section of the batched outputs
  (`esxcli_network_vm_port_list`, `vsish_pvrdma_properties`) that has none, as the
  catalogue's loops print it; exit 1 where the section holds the query's own error.
- Composes `esxcli_network_nic_stats_get.txt` when a host has none: one section per paired
  uplink of `esxcli_rdma_device_list.txt`, in the layout of the `nic stats get` capture of
  Broadcom KB 341594 (see samples/README.md); `lossless-network-off` carries that capture's
  own counters (its receive drops), the other hosts composed ones without drops or errors.
- Composes `vmx_pvrdma_lines.txt` from the host's own files when it has none: one section
  per running VM of `esxcli_vm_process_list.txt` (its Config File), with the `.vmx` keys the
  inventory reads, the PVRDMA adapters taken from the vsish listing and their port groups
  from the port list. Everything it writes is composed (see samples/README.md).

`samples/esxi67-healthy` stays without markers on purpose: it is the regression sample for
captures made before end markers existed.
"""
import re
import sys
import zlib
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


# The counters of Broadcom KB 341594's capture, in its order (`Total receive errors` and
# the rest are 0 there).
KB_COUNTERS = [
    ("Packets received", 701280499176), ("Packets sent", 687061948450),
    ("Bytes received", 664124780523852), ("Bytes sent", 676938646792793),
    ("Receive packets dropped", 2452783244), ("Transmit packets dropped", 0),
    ("Multicast packets received", 976222150), ("Broadcast packets received", 0),
    ("Multicast packets sent", 0), ("Broadcast packets sent", 0),
]
ERROR_COUNTERS = [
    "Total receive errors", "Receive length errors", "Receive over errors", "Receive CRC errors",
    "Receive frame errors", "Receive FIFO errors", "Receive missed errors", "Total transmit errors",
    "Transmit aborted errors", "Transmit carrier errors", "Transmit FIFO errors",
    "Transmit heartbeat errors", "Transmit window errors",
]


def paired_uplinks(text: str):
    """The `Paired Uplink` column of `esxcli rdma device list`, sorted, once each."""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        at = line.find("Paired Uplink")
        if at < 0 or n + 1 >= len(lines) or not lines[n + 1].startswith("-"):
            continue
        found = set()
        for row in lines[n + 2:]:
            words = row[at:].split()
            if words and re.fullmatch(r"[A-Za-z0-9_]+", words[0]):
                found.add(words[0])
        return sorted(found)
    return []


def compose_nic_stats(host: Path) -> None:
    target = host / "esxcli_network_nic_stats_get.txt"
    devices = host / "esxcli_rdma_device_list.txt"
    if target.exists() or not devices.exists():
        return
    out = []
    for uplink in paired_uplinks(devices.read_text()):
        if host.parent.name == "lossless-network-off":
            counters = KB_COUNTERS
        else:
            seed = zlib.crc32(f"{host.parent.name}/{host.name}/{uplink}".encode())
            packets = 40_000_000_000 + seed % 9_000_000_000
            counters = [
                ("Packets received", packets), ("Packets sent", packets - (seed >> 5) % 700_000_000 - 13_579),
                ("Bytes received", packets * 1187), ("Bytes sent", (packets - (seed >> 5) % 700_000_000 - 13_579) * 1163),
                ("Receive packets dropped", 0), ("Transmit packets dropped", 0),
                ("Multicast packets received", seed % 2_000_000), ("Broadcast packets received", seed % 9000),
                ("Multicast packets sent", seed % 4000), ("Broadcast packets sent", seed % 500),
            ]
        out.append(f"==> {uplink} <==")
        out.append(f"NIC statistics for {uplink}")
        out += [f"   {name}: {value}" for name, value in counters]
        out += [f"   {name}: 0" for name in ERROR_COUNTERS]
        out.append(f"<== {uplink} exit 0 ==>")
    target.write_text("\n".join(out) + ("\n" if out else ""))


def main(roots):
    for root in roots:
        for host in sorted(Path(root).glob("*/*/")):
            if host.parent.name == "vm-support":
                continue
            # The uplink queries came with end markers: every host has them.
            compose_nic_stats(host)
            if host.parent.name == "esxi67-healthy":
                continue
            for name in ("esxcli_network_vm_port_list.txt", "vsish_pvrdma_properties.txt"):
                if (host / name).exists():
                    add_markers(host / name)
            compose_vmx(host)


if __name__ == "__main__":
    main(sys.argv[1:] or ["samples"])
