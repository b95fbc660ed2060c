#!/usr/bin/env python3
"""poolctl's JSON is one schema (Documentation/json.md): a pool has the same
keys in pool list, pool show, status and top, a domain the same in vm list,
vm show and status; keys that are sometimes unknown are there as null; every
size key ends in _bytes and is an integer, or with -u a human string.
usage: json-schema.py POOLCTL FIXTURES"""
import json, os, subprocess, sys, tempfile

poolctl, fix = sys.argv[1], os.path.abspath(sys.argv[2])
sysfs = tempfile.mkdtemp()
os.symlink(f"{fix}/sysfs-2node/devices", f"{sysfs}/devices")
os.symlink(f"{fix}/sysfs-poolmem/kernel", f"{sysfs}/kernel")
os.symlink(f"{fix}/sysfs-poolmem/class", f"{sysfs}/class")
fails = []

def run(*args):
    out = subprocess.run([poolctl, "--sysfs", sysfs, *args], capture_output=True, text=True)
    if out.returncode:
        fails.append(f"poolctl {' '.join(args)}: exit {out.returncode}: {out.stderr.strip()}")
        return None
    return out.stdout

def js(*args):
    out = run(*args)
    return json.loads(out) if out is not None else None

def sizes(obj, path, human):
    """every *_bytes value: int (or, with -u, a string ending in B)"""
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            sizes(v, f"{path}[{i}]", human)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if k == "bytes" or k.endswith("bytes") and not k.endswith("_bytes"):
                fails.append(f"{path}.{k}: a size key is NAME_bytes")
            elif k.endswith("_bytes"):
                ok = isinstance(v, str) and v.endswith("B") if human else isinstance(v, int)
                if not ok:
                    fails.append(f"{path}.{k} = {v!r}: {'human string' if human else 'integer'} expected")
            else:
                sizes(v, f"{path}.{k}", human)

pools = js("pool", "list", "--json")
show = js("pool", "show", "cxl0", "--json")
status = js("status", "--json")
top = [json.loads(l) for l in (run("top", "--json", "--iterations", "2", "--interval", "0.1") or "").splitlines()]
vms = js("vm", "list", "--json")
vm = js("vm", "show", "web1", "--json")
nodes = js("node", "list", "--json")
if None in (pools, show, status, vms, vm, nodes) or len(top) != 2:
    fails.append(f"missing output (top gave {len(top)} lines, want 2 JSON Lines)")
else:
    pk = set(pools[0])
    for where, obj in (("pool show", show), ("status.pools", status["pools"][0]), ("top.pools", top[1]["pools"][0])):
        extra = set(obj) - pk - {"allocations_per_second", "domains", "devices", "zones"}
        missing = pk - set(obj)
        if extra or missing:
            fails.append(f"{where} vs pool list: extra {sorted(extra)}, missing {sorted(missing)}")
    if "online" not in pools[0]:
        fails.append("pool list: no 'online' key (null when unknown)")
    if top[0]["pools"][0].get("allocations_per_second", 0) is not None or \
            not isinstance(top[1]["pools"][0].get("allocations_per_second"), (int, float)):
        fails.append("top: allocations_per_second null first, a number after")
    dk = set(vms[0])
    for where, obj in (("vm show", vm), ("status.domains", status["domains"][0])):
        extra = set(obj) - dk - {"fault_latency_p50_ns_max", "fault_latency_p99_ns_max", "memory_error_offsets", "mapped_by"}
        missing = dk - set(obj)
        if extra or missing:
            fails.append(f"{where} vs vm list: extra {sorted(extra)}, missing {sorted(missing)}")
    for n in nodes:
        if {"total_bytes", "free_bytes", "zero_reserve", "access0"} - set(n):
            fails.append(f"node {n.get('node')}: keys {sorted(n)}")
    for name, obj in (("pools", pools), ("status", status), ("vms", vms), ("nodes", nodes)):
        sizes(obj, name, False)
    for args in (("pool", "list"), ("status",), ("vm", "list"), ("node", "list")):
        h = js("-u", *args, "--json")
        if h is not None:
            sizes(h, " ".join(args) + " -u", True)
for f in fails:
    print("FAIL:", f)
print("ok" if not fails else f"{len(fails)} failures")
sys.exit(1 if fails else 0)
