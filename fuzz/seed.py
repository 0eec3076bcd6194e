#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/.

Seeds: every sample output under samples/ (by catalogue id, into its parser family's
target), the files of the vm-support sample, every fenced block of an optional Markdown
file of captured ESXi outputs given as the argument (into every parser target: the
fuzzer keeps what reaches new code), and for `diagnosis` each sample scenario's hosts, two at a time,
in the chunk layout `harness::captures` reads. Files are named by their SHA-1, as
libFuzzer names what it finds, so seeding twice adds nothing.

Usage: python3 fuzz/seed.py [captures.md]   (from the repository root)
"""
import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
CAPTURES = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None
CHUNK, STDERR = b"\xff", b"\xfe"

# The parser family (fuzz target) of each catalogue id: the family column of the parser
# table, parsers/src/by_id.rs, so a new command's samples are seeded with no edit here.
TABLE = (ROOT / "parsers" / "src" / "by_id.rs").read_text()
FAMILY = dict(re.findall(r'= "(\w+)" => [\w:]+ in "(\w+)";', TABLE))
PARSER_TARGETS = sorted(set(FAMILY.values()) | {"vmx"})
# vm-support bundle files (commands/localcli_<name>.txt) by catalogue id.
LOCALCLI = {
    "system-version-get": "esxcli_system_version_get",
    "rdma-device-list": "esxcli_rdma_device_list",
    "rdma-device-protocol-list": "esxcli_rdma_device_protocol_list",
    "rdma-device-vmknic-list": "esxcli_rdma_device_vmknic_list",
    "network-nic-list": "esxcli_network_nic_list",
    "network-vswitch-dvs-vmware-list": "esxcli_network_vswitch_dvs_vmware_list",
    "network-vswitch-standard-list": "esxcli_network_vswitch_standard_list",
    "network-ip-interface-list": "esxcli_network_ip_interface_list",
    "network-ip-interface-ipv4-get": "esxcli_network_ip_interface_ipv4_get",
    "system-settings-advanced-list--d": "esxcli_system_settings_advanced_list_pvrdmavmknic",
    "network-firewall-get": "esxcli_network_firewall_get",
    "network-firewall-ruleset-list": "esxcli_network_firewall_ruleset_list",
    "vm-process-list": "esxcli_vm_process_list",
}


def catalogue_order():
    """Catalogue ids in CATALOGUE order (the selector byte): the rows of
    engine/src/catalogue.rs, their ids from the parser table."""
    ids = dict(re.findall(r'^\s+(\w+): [^=]+= "(\w+)" =>', TABLE, re.M))
    body = (ROOT / "engine" / "src" / "catalogue.rs").read_text().split("pub static CATALOGUE", 1)[1]
    return [ids[name] for name in re.findall(r"\bid: (\w+),", body)]


def write(target, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def chunk(order, host, cid, stdout, stderr=b"", exit_status=0, host_error=False):
    selector = (order.index(cid) if cid in order else len(order)) | (host << 7)
    flags = {0: 0, 1: 1, None: 3}.get(exit_status, 2)
    if stderr:
        flags |= 0x20
        stdout = stdout + STDERR + stderr
    if host_error:
        flags |= 0x80
    return bytes([selector, flags]) + stdout


def host_chunks(order, host, d):
    out = []
    host_error = (d / "host-error.json").is_file()
    for f in sorted(d.glob("*.txt")):
        if f.name.endswith(".stderr.txt"):
            continue
        cid = f.stem
        stderr_file = d / f"{cid}.stderr.txt"
        exit_file = d / f"{cid}.exit"
        out.append(chunk(order, host, cid, f.read_bytes(),
                         stderr_file.read_bytes() if stderr_file.is_file() else b"",
                         int(exit_file.read_text().strip()) if exit_file.is_file() else 0,
                         host_error))
    if host_error and not out:
        out.append(chunk(order, host, order[0], b"", exit_status=None, host_error=True))
    return out


def main():
    order = catalogue_order()
    samples = ROOT / "samples"
    for f in samples.rglob("*.txt"):
        if f.name.endswith(".stderr.txt"):
            continue
        target = FAMILY.get(f.stem)
        if target:
            write(target, f.read_bytes())
    vmx_chunks = []
    for f in samples.rglob("*"):
        if not f.is_file():
            continue
        if f.suffix == ".vmx":
            write("vmx", f.read_bytes())
            vmx_chunks.append(bytes([len(order), 0]) + f.read_bytes())
        m = re.fullmatch(r"localcli_(.+)\.txt", f.name)
        if m and m.group(1) in LOCALCLI:
            write(FAMILY[LOCALCLI[m.group(1)]], f.read_bytes())
    if CAPTURES is not None:
        blocks = re.findall(r"^```[^\n]*\n(.*?)^```", CAPTURES.read_text(), re.S | re.M)
        for b in blocks:
            for t in PARSER_TARGETS:
                write(t, b.encode())
    # diagnosis: every scenario, its hosts two at a time (host bit 0 and 1).
    for scenario in sorted(p for p in samples.iterdir() if p.is_dir()):
        hosts = sorted(p for p in scenario.iterdir() if p.is_dir() and any(p.glob("*.txt")) or (p / "host-error.json").is_file())
        if scenario.name == "vm-support":
            d = next(scenario.iterdir()) / "commands"
            chunks = [bytes([order.index(LOCALCLI[m.group(1)]), 0x40]) + f.read_bytes()
                      for f in sorted(d.glob("*.txt"))
                      if (m := re.fullmatch(r"localcli_(.+)\.txt", f.name)) and m.group(1) in LOCALCLI]
            write("diagnosis", CHUNK.join(chunks + vmx_chunks))
            continue
        pairs = [hosts[i:i + 2] for i in range(0, len(hosts), 2)] if len(hosts) > 1 else [hosts]
        if len(hosts) > 2:
            pairs.append([hosts[0], hosts[-1]])
        for pair in pairs:
            chunks = []
            for n, h in enumerate(pair):
                chunks += host_chunks(order, n, h)
            write("diagnosis", CHUNK.join(chunks))


if __name__ == "__main__":
    main()
