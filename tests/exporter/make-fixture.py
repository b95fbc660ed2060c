#!/usr/bin/env python3
"""Write a deterministic sysfs + procfs fixture tree for poolmem-exporter.

usage: make-fixture.py OUT NPOOLS NDOMAINS [--no-module] [--table]

OUT/sys holds NUMA nodes (node 0 with CPUs, one CPU-less node per pool),
memory blocks, HMAT attributes, /sys/kernel/poolmem/pools/* and
/sys/class/poolmem/*, /sys/module/poolmem; OUT/proc/buddyinfo. Values
follow simple formulas of the pool/domain index, so tests can predict them.
With --table, the domains are also in OUT/proc/poolmem/domains and
domain_histograms, as the module prints them (kmod/sysfs.c).
"""
import os
import sys


# field order of the stat files (Documentation/ABI/testing/sysfs-*-poolmem)
POOL_STAT = ("capacity_bytes", "free_bytes", "allocated_bytes", "committed_bytes", "chunks",
             "allocations", "faults", "failures", "access_factor", "moved_in", "moved_out", "accesses",
             "moved_bytes", "move_retries", "move_pins", "samples", "promotions", "demotions",
             "zero_reserve_bytes", "zero_reserve_refills", "zero_reserve_hits", "zero_reserve_misses", "memory_errors", "soft_offlines")
DOMAIN_STAT = ("local_bytes", "pool_bytes", "chunks", "faults", "sigbus", "discards",
               "fault_latency_sum_ns", "retired_chunks", "moves", "move_retries", "move_pins",
               "samples", "sample_hits", "promotions", "demotions", "tiering_scan_ns", "revoked_chunks", "memory_errors",
               "sample_hits_pool", "rebalanced_chunks")


def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text if text.endswith("\n") else text + "\n")


def main():
    out, npools, ndoms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    module = "--no-module" not in sys.argv
    sysd, procd = os.path.join(out, "sys"), os.path.join(out, "proc")
    nnodes = npools + 1
    block = 128 << 20
    w(f"{sysd}/devices/system/memory/block_size_bytes", "8000000")
    buddy = []
    blk = 0
    for n in range(nnodes):
        nd = f"{sysd}/devices/system/node/node{n}"
        w(f"{nd}/cpulist", "0-1" if n == 0 else "")
        total = (16 if n == 0 else 15) * block
        free = total - n * (2 << 20)
        w(f"{nd}/meminfo", f"Node {n} MemTotal:  {total // 1024} kB\nNode {n} MemFree:   {free // 1024} kB\n")
        w(f"{nd}/distance", " ".join("10" if m == n else ("21" if 0 in (m, n) else "41") for m in range(nnodes)))
        if n > 0:
            w(f"{nd}/access0/initiators/read_latency", str(100 * n))
            w(f"{nd}/access0/initiators/read_bandwidth", str(5120 // n))
            os.makedirs(f"{nd}/access0/initiators/node0", exist_ok=True)
        for b in range(16 if n == 0 else 15):
            md = f"{sysd}/devices/system/memory/memory{blk}"
            online = not (n > 0 and b == 14)
            w(f"{md}/state", "online" if online else "offline")
            w(f"{md}/valid_zones", ("Normal" if n == 0 else "Movable") if online else "Normal Movable")
            os.makedirs(nd, exist_ok=True)
            link = f"{nd}/memory{blk}"
            if not os.path.lexists(link):
                os.symlink(f"../../memory/memory{blk}", link)
            blk += 1
        buddy.append(f"Node {n}, zone   Normal   10 5 3 1 0 0 0 0 0 {n + 2} {n}")
    w(f"{procd}/buddyinfo", "\n".join(buddy))
    # present pages per node (the local tier's admission limit): as MemTotal
    w(f"{procd}/zoneinfo", "\n".join(f"Node {n}, zone   Normal\n  pages free     1\n        present  {(16 if n == 0 else 15) * block // 4096}"
                                     for n in range(nnodes)))
    # each pool node's memory added by kmem from a dax device: node 1's with
    # its memmap on the device (memmap_on_memory, with the boot parameter),
    # the others' in DRAM
    w(f"{sysd}/module/memory_hotplug/parameters/memmap_on_memory", "Y")
    os.makedirs(f"{sysd}/bus/dax/drivers/kmem", exist_ok=True)
    os.makedirs(f"{sysd}/bus/dax/drivers/device_dax", exist_ok=True)
    for n in range(1, nnodes):
        dd = f"{sysd}/bus/dax/devices/dax{n - 1}.0"
        w(f"{dd}/target_node", str(n))
        w(f"{dd}/size", str(15 * block))
        w(f"{dd}/memmap_on_memory", "1" if n == 1 else "0")
        os.symlink("../../drivers/kmem", f"{dd}/driver")
    # a device in devdax mode: no memmap of kmem's (dax9.0, or past the
    # kmem devices of a fixture of more than 9 pools)
    dd = f"{sysd}/bus/dax/devices/dax{max(9, nnodes)}.0"
    w(f"{dd}/target_node", "1")
    w(f"{dd}/size", str(4 * block))
    os.symlink("../../drivers/device_dax", f"{dd}/driver")
    # memory tiers as kmem and HMAT make them: DRAM in tier 4, pool nodes below
    tiers = "/devices/virtual/memory_tiering"
    w(f"{sysd}{tiers}/memory_tier4/nodelist", "0")
    if nnodes > 1:
        w(f"{sysd}{tiers}/memory_tier22/nodelist", f"1-{nnodes - 1}" if nnodes > 2 else "1")
    if not module:
        return
    w(f"{sysd}/module/poolmem/srcversion", "0123456789ABCDEF0123456")
    w(f"{sysd}/module/poolmem/version", "0.2.0")
    w(f"{sysd}/kernel/poolmem/abi_version", "12")
    w(f"{sysd}/module/poolmem/parameters/window_ms", "1000")
    # node 0 (CPUs): the local tier's 64 MiB; pool nodes: their pools' lines
    w(f"{sysd}/kernel/poolmem/zero_reserve", "\n".join(
        [f"0 {64 << 20} {60 << 20} 40 30 2"] + [f"{p + 1} {(p + 3) << 21} {(p + 2) << 21} {30 * (p + 1)} {9 * (p + 1)} {p}" for p in range(npools)]))
    # counts that outlive domains: host-wide, and two profiles'
    counts = ("sigbus", "admission_refusals", "domains_created", "domains_destroyed", "discarded_bytes")
    for k, v in zip(counts, (7, 3, 40 + ndoms, 40, 11 << 21)):
        w(f"{sysd}/kernel/poolmem/{k}", str(v))
    for i, prof in enumerate(("gold", "silver")):
        for k, v in zip(counts, (i + 2, i, 20 + i, 18 + i, (3 + i) << 21)):
            w(f"{sysd}/kernel/poolmem/profiles/{prof}/{k}", str(v))
    for p in range(npools):
        pd = f"{sysd}/kernel/poolmem/pools/pool{p}"
        attrs = dict(id=p, node=p + 1, tier="pool", overcommit_pct=100 + 10 * p,
                     capacity_bytes=15 * block, pinnable_bytes=(p % 2) * 15 * block, free_bytes=15 * block - (p + 1) * (2 << 20),
                     allocated_bytes=(p + 1) * (2 << 20), committed_bytes=(p + 1) * (64 << 20),
                     chunks=p + 1, allocations=10 * (p + 1), faults=20 * (p + 1), failures=p,
                     access_factor=8 * p, window_counts=f"{p} 0 1 0", moved_in=3 * p, moved_out=p,
                     state="draining" if p == 1 else "online", accesses=100 * p,
                     moved_bytes=4 * p << 21, move_retries=p, move_pins=0, samples=50 * p, promotions=p,
                     demotions=2 * p, zero_reserve_bytes=(p + 2) << 21, zero_reserve_refills=30 * (p + 1),
                     zero_reserve_hits=9 * (p + 1), zero_reserve_misses=p,
                     memory_errors=p, soft_offlines=2 * p, discarded_bytes=(5 * p) << 21,
                     rebalanced_chunks=4 * p, contended=1 if p == 0 else 0,
                     error_policy="drain 3/86400" if p == 1 else "report", degraded=1 if p == 1 else 0,
                     zero_reserve_target_bytes=(p + 3) << 21, zero_reserve="1%")
        attrs["stat"] = " ".join(str(attrs[k]) for k in POOL_STAT)
        for k, v in attrs.items():
            w(f"{pd}/{k}", str(v))
    table = ["# name size_bytes chunk_bytes local_quota_bytes pool_quota_bytes home_node pinnable"
             " tier_policy pool_select tiering scan_rate hot_ms hot_chunks cold_chunks " +
             " ".join(DOMAIN_STAT) + " pool_chunks windows profile file creator_pid creator_comm"]
    hists = ["# name fault_latency_histogram"]
    for d in range(ndoms):
        dd = f"{sysd}/class/poolmem/vm{d}"
        hist = ["0"] * 40
        hist[20] = str(d + 1)
        hist[22] = "1"
        attrs = dict(size_bytes=64 << 20, chunk_bytes=2 << 20, local_quota_bytes=16 << 20,
                     pool_quota_bytes=48 << 20, local_bytes=(d % 8) << 21, pool_bytes=(d % 24) << 21,
                     chunks=d % 8 + d % 24, faults=d % 8 + d % 24, sigbus=d % 3, discards=d % 5,
                     home_node=0, pinnable=d % 2, tier_policy="interleave", pool_select="smart-idle",
                     fault_latency_histogram=" ".join(hist),
                     fault_latency_sum_ns=(d + 1) * 1100000 + 4200000, retired_chunks=0,
                     moves=2 * d, move_retries=d % 2, move_pins=0,
                     samples=10 * d, sample_hits=5 * d, sample_hits_pool=2 * d, rebalanced_chunks=d % 3, promotions=d, demotions=d // 2,
                     tiering_scan_ns=1000000 * d, revoked_chunks=3 if d == 1 else 0, memory_errors=2 if d == 1 else 0, tiering="on 67108864 500" if d % 2 else "off 67108864 500",
                     heat=f"{d} {d + 1}",
                     profile="", file=f"/vm{d}", creator="1234 qemu-system-x86",
                     # every second domain is a znuma one: its quotas are its windows
                     windows=f"local 0 {16 << 20}\npool {16 << 20} {48 << 20}\n" if d % 2 else "")
        attrs["stat"] = " ".join(str(attrs[k]) for k in DOMAIN_STAT)
        for k, v in attrs.items():
            w(f"{dd}/{k}", str(v))
        # every pool is allowed (listed); the domain holds chunks in two of them
        held = {d % npools: 1 + d % 3, (d + 1) % npools: 2} if npools else {}
        w(f"{dd}/pool_chunks", "".join(f"pool{p} {held.get(p, 0)}\n" for p in range(npools)))
        wins = ",".join(":".join(x.split()) for x in attrs["windows"].splitlines())
        pid, comm = attrs["creator"].split(" ", 1)
        table.append(" ".join(str(x) for x in (
            f"vm{d}", attrs["size_bytes"], attrs["chunk_bytes"], attrs["local_quota_bytes"],
            attrs["pool_quota_bytes"], attrs["home_node"], attrs["pinnable"], attrs["tier_policy"],
            attrs["pool_select"], attrs["tiering"], *attrs["heat"].split(), attrs["stat"],
            ",".join(f"pool{p}:{held.get(p, 0)}" for p in range(npools)) or "-", wins or "-",
            attrs["profile"] or "-", attrs["file"], pid, comm)))
        hists.append(f"vm{d} " + attrs["fault_latency_histogram"])
    if "--table" in sys.argv:
        w(f"{procd}/poolmem/domains", "\n".join(table))
        w(f"{procd}/poolmem/domain_histograms", "\n".join(hists))
    # poolctl pool poison-scan's last result (OUT/run/poolctl): mem0 behind
    # pool0 with one poisoned range in vm1 and one in no domain's memory
    if npools and ndoms > 1:
        import json
        w(f"{out}/run/poolctl/media-errors.json", json.dumps({
            "time": 1764700000, "memdevs": {f"mem{p}": f"pool{p}" for p in range(npools)},
            "records": [{"memdev": "mem0", "pool": "pool0", "domain": "vm1", "offset": 2117632,
                         "hpa": 4297101312, "dpa": 2117632, "length": 64, "source": "Injected",
                         "action": "isolated"},
                        {"memdev": "mem0", "pool": "pool0", "domain": None, "offset": None,
                         "hpa": 4299161600, "dpa": 4177920, "length": 128, "source": "Injected",
                         "action": "unused"}],
            # mem0 answers Get Health Info, mem1 (as QEMU's emulation) does not
            "health": {"mem0": {"maintenance_needed": False, "performance_degraded": True,
                                "hw_replacement_needed": False, "media": "normal", "temperature_c": 41,
                                "life_used_pct": 7, "dirty_shutdowns": 1, "volatile_errors": 12,
                                "pmem_errors": 0},
                       **{f"mem{p}": None for p in range(1, npools)}},
            "events": {"mem0": {"general_media": 3, "dram": 1}}}))
    # poolctl autopilot run's last decision (OUT/run/poolmem-autopilot):
    # vm0 moved to its hot set, vm1 (znuma) fixed
    if ndoms > 1:
        import json
        vm = lambda n, q, t, hot, pm, reason: {
            "name": n, "size_bytes": 64 << 20, "local_quota_bytes": q, "target_bytes": t,
            "hot_bytes": hot, "pool_permille": pm, "slo_broken": pm > 50, "reason": reason}
        w(f"{out}/run/poolmem-autopilot/status.json", json.dumps({
            "pid": 4242, "updated": 1764700100, "budget_bytes": 96 << 20,
            "vms": [vm("vm0", 16 << 20, 8 << 20, 6 << 20, 20, "hot-set"),
                    vm("vm1", 16 << 20, 16 << 20, 0, 80, "znuma")],
            "totals": {"decisions": 12, "changes": 3, "refused": 1, "moved_bytes": 8 << 20,
                       "slo_violations": 5}}))


if __name__ == "__main__":
    main()
