#!/usr/bin/env python3
"""The baseline of the vCenter configuration benchmark (examples/config_bench.rs): pyVmomi,
VMware's Python SDK, reads in one session what `pvrdma-doctor --vcenter ... --no-ssh`
reads: the inventory as scripts/vsphere_inventory_pyvmomi.py reads it, then the given
HostSystem properties of every host and the given VirtualMachine properties of the VMs
registered on them, through one RetrievePropertiesEx (one object set per host, each with a
TraversalSpec along HostSystem.vm) paged with maxObjects and ContinueRetrievePropertiesEx.
Then Logout. Nothing is judged: the figure is pyVmomi reading and typing the answers.

Needs pyVmomi 7.0.3 (`pip install pyvmomi==7.0.3`), as the inventory script does. It
speaks the vSphere 7.0 API (`vim.version.v7_0`) rather than negotiating: the simulator
advertises 6.5 only, and pyVmomi's 6.5 types have no HostNetworkInfo.rdmaDevice (a
vSphere 7.0 property), so they cannot read the answer; a vCenter 7 negotiates 7.0 anyway.

Usage: vsphere_config_pyvmomi.py HOST PORT USER CA_FILE PAGE_SIZE RUNS HOST_PATHS VM_PATHS
(the password on stdin; the property paths comma-separated). Prints one JSON line per run:
seconds from the connection to the logout, the hosts and VMs whose configuration was read,
the VMs grouped under their host by runtime.host, and the SOAP calls made by name.
"""
import json
import ssl
import sys
import time

from pyVim.connect import Connect, Disconnect
from pyVmomi import vim, vmodl

from vsphere_inventory_pyvmomi import CALLS, inventory, pages


def configuration(content, hosts, host_paths, vm_paths, page_size):
    """The hosts' properties and their VMs', all hosts in one paged read."""
    pc = vmodl.query.PropertyCollector
    along_vm = pc.TraversalSpec(name="vms", type=vim.HostSystem, path="vm", skip=False)
    spec = pc.FilterSpec(
        objectSet=[pc.ObjectSpec(obj=h, skip=False, selectSet=[along_vm]) for h in hosts],
        propSet=[
            pc.PropertySpec(type=vim.HostSystem, all=False, pathSet=host_paths),
            pc.PropertySpec(type=vim.VirtualMachine, all=False, pathSet=vm_paths),
        ],
    )
    return pages(content.propertyCollector, spec, page_size)


def read(host, port, user, password, context, page_size, host_paths, vm_paths):
    si = Connect(host=host, port=port, user=user, pwd=password, sslContext=context, version="vim.version.v7_0")
    try:
        content = si.RetrieveContent()
        listed = inventory(content, page_size)
        hosts = [obj for obj, _ in listed if isinstance(obj, vim.HostSystem)]
        objects = configuration(content, hosts, host_paths, vm_paths, page_size)
    finally:
        Disconnect(si)
    configs = {obj: {"props": props, "vms": []} for obj, props in objects if isinstance(obj, vim.HostSystem)}
    vms = [props for obj, props in objects if isinstance(obj, vim.VirtualMachine)]
    for props in vms:
        on = configs.get(props.get("runtime.host"))
        if on is not None:
            on["vms"].append(props)
    grouped = sum(len(c["vms"]) for c in configs.values())
    return len(configs), len(vms), grouped


def main():
    host, port, user, ca, page_size, runs, host_paths, vm_paths = sys.argv[1:9]
    password = sys.stdin.readline().rstrip("\n")
    context = ssl.create_default_context(cafile=ca)
    for _ in range(int(runs)):
        CALLS.clear()
        start = time.perf_counter()
        hosts, vms, grouped = read(
            host, int(port), user, password, context, int(page_size), host_paths.split(","), vm_paths.split(",")
        )
        seconds = time.perf_counter() - start
        line = {"seconds": seconds, "hosts": hosts, "vms": vms, "grouped": grouped, "calls": dict(CALLS)}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
