#!/usr/bin/env python3
"""The baseline of the vCenter inventory benchmark (vsphere/examples/inventory_bench.rs):
pyVmomi, VMware's Python SDK, reads the same properties the Rust client reads, in the
fewest calls its API allows: one container view on the root folder, RetrievePropertiesEx
with maxObjects and ContinueRetrievePropertiesEx for the next pages, explicit property
paths (no lazy accessors). Then DestroyView and Logout.

Needs pyVmomi 7.0.3 (`pip install pyvmomi==7.0.3`): later releases read single properties
with PropertyCollector.Fetch, which the simulator the benchmark runs does not implement.

Usage: vsphere_inventory_pyvmomi.py HOST PORT USER CA_FILE PAGE_SIZE RUNS
(the password on stdin). Prints one JSON line per run: seconds from the connection to the
logout, the hosts and VMs read, and the SOAP calls made by name.
"""
import json
import ssl
import sys
import time
from collections import Counter

from pyVim.connect import Disconnect, SmartConnect
from pyVmomi import SoapAdapter, vim, vmodl

CALLS = Counter()
_invoke = SoapAdapter.SoapStubAdapter.InvokeMethod


def counting_invoke(self, mo, info, args, outerStub=None):
    CALLS[info.wsdlName] += 1
    return _invoke(self, mo, info, args, outerStub)


SoapAdapter.SoapStubAdapter.InvokeMethod = counting_invoke

TYPES = {
    vim.Datacenter: ["name", "parent"],
    vim.Folder: ["name", "parent"],
    vim.ClusterComputeResource: ["name", "parent"],
    vim.ComputeResource: ["name", "parent"],
    vim.HostSystem: ["name", "parent", "runtime.connectionState", "runtime.inMaintenanceMode"],
    vim.VirtualMachine: ["name", "runtime.host", "runtime.powerState"],
}


def pages(collector, spec, page_size):
    """RetrievePropertiesEx with maxObjects, then ContinueRetrievePropertiesEx to the last
    page: the (object, {path: value}) pairs read."""
    options = vmodl.query.PropertyCollector.RetrieveOptions(maxObjects=page_size)
    result = collector.RetrievePropertiesEx([spec], options)
    objects = []
    while result is not None:
        for o in result.objects:
            objects.append((o.obj, {p.name: p.val for p in o.propSet}))
        if not result.token:
            break
        result = collector.ContinueRetrievePropertiesEx(result.token)
    return objects


def inventory(content, page_size):
    """The TYPES' properties of every object under the root folder, through a container view."""
    view = content.viewManager.CreateContainerView(content.rootFolder, list(TYPES), True)
    traversal = vmodl.query.PropertyCollector.TraversalSpec(
        name="view", path="view", skip=False, type=vim.view.ContainerView
    )
    spec = vmodl.query.PropertyCollector.FilterSpec(
        objectSet=[vmodl.query.PropertyCollector.ObjectSpec(obj=view, skip=True, selectSet=[traversal])],
        propSet=[
            vmodl.query.PropertyCollector.PropertySpec(type=t, all=False, pathSet=paths)
            for t, paths in TYPES.items()
        ],
    )
    objects = pages(content.propertyCollector, spec, page_size)
    view.DestroyView()
    return objects


def read(host, port, user, password, context, page_size):
    si = SmartConnect(host=host, port=port, user=user, pwd=password, sslContext=context)
    try:
        objects = inventory(si.RetrieveContent(), page_size)
    finally:
        Disconnect(si)
    hosts = sum(1 for obj, _ in objects if isinstance(obj, vim.HostSystem))
    vms = sum(1 for obj, _ in objects if isinstance(obj, vim.VirtualMachine))
    return hosts, vms


def main():
    host, port, user, ca, page_size, runs = sys.argv[1:7]
    password = sys.stdin.readline().rstrip("\n")
    context = ssl.create_default_context(cafile=ca)
    for _ in range(int(runs)):
        CALLS.clear()
        start = time.perf_counter()
        hosts, vms = read(host, int(port), user, password, context, int(page_size))
        seconds = time.perf_counter() - start
        print(json.dumps({"seconds": seconds, "hosts": hosts, "vms": vms, "calls": dict(CALLS)}), flush=True)


if __name__ == "__main__":
    main()
