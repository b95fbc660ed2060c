#!/usr/bin/env python3
"""Generate exporter/grafana/poolmem.json, poolmem's Grafana dashboard.

Run: python3 exporter/grafana/gen-dashboard.py  (rewrites poolmem.json)

Every query is filtered by the template variables $instance, $pool and
$domain (a fleet's pools of one name on different hosts don't mix), every
rate uses $__rate_interval, every panel has a description, and the panels
that answer "is something wrong" carry thresholds. tests/exporter/e2e.py runs
every query against a real Prometheus with the variables set to match all.
"""
import json
import os

I = 'instance=~"$instance"'
P = f'{I},pool=~"$pool"'
D = f'{I},domain=~"$domain"'
R = "$__rate_interval"


def ts(title, desc, targets, unit="short", thresholds=None, kind="timeseries", maxv=None):
    fc = {"defaults": {"unit": unit}, "overrides": []}
    if thresholds:
        fc["defaults"]["thresholds"] = {"mode": "absolute", "steps": [
            {"color": "green", "value": None}] + [{"color": c, "value": v} for v, c in thresholds]}
        if kind == "timeseries":
            fc["defaults"]["custom"] = {"thresholdsStyle": {"mode": "line+area"}}
    if maxv is not None:
        fc["defaults"]["max"] = maxv
        fc["defaults"]["min"] = 0
    tg = [{"expr": e, "legendFormat": l, "refId": chr(65 + i)} for i, (e, l) in enumerate(targets)]
    panel = {"title": title, "description": desc, "type": kind,
             "datasource": {"type": "prometheus", "uid": "${DS_PROMETHEUS}"},
             "fieldConfig": fc, "targets": tg}
    if kind == "heatmap":
        # buckets as Prometheus gives them (le), not a heatmap of the series' values
        for t in tg:
            t["format"] = "heatmap"
        panel["options"] = {"calculate": False, "yAxis": {"unit": unit}}
    return panel


PANELS = [
    ts("Pool use", "Allocated share of each pool's capacity. Above 90% for long, faults start falling back to other pools or fail (alert PoolmemPoolNearlyFull).",
       [(f"poolmem_pool_allocated_bytes{{{P}}} / poolmem_pool_capacity_bytes{{{P}}}", "{{instance}} {{pool}}")],
       unit="percentunit", thresholds=[(0.8, "orange"), (0.9, "red")], kind="bargauge", maxv=1),
    ts("Committed vs admission limit", "Pool quotas committed by domains as a share of what admission control lets each pool take (capacity x overcommit). Near 1, new VMs needing the pool are refused.",
       [(f"poolmem_pool_committed_bytes{{{P}}} / poolmem_pool_admission_limit_bytes{{{P}}}", "{{instance}} {{pool}}")],
       unit="percentunit", thresholds=[(0.85, "orange"), (0.95, "red")], kind="bargauge", maxv=1),
    ts("VMs nearest their quota", "The 10 domain tiers using the largest share of their hard quota. A tier at 100% whose VM touches new memory falls back to its other tier, or gets SIGBUS when both are full.",
       [(f"topk(10, poolmem_domain_usage_bytes{{{D}}} / (poolmem_domain_quota_bytes{{{D}}} > 0))", "{{instance}} {{domain}} {{tier}}")],
       unit="percentunit", thresholds=[(0.9, "orange"), (1, "red")], kind="bargauge", maxv=1),
    ts("Quota denials (SIGBUS)", "Faults refused with SIGBUS per second: the VM's QEMU dies. Any value is an incident (alert PoolmemDomainSigbus).",
       [(f"rate(poolmem_domain_sigbus_total{{{D}}}[{R}])", "{{instance}} {{domain}}")], unit="ops", thresholds=[(0.0001, "red")]),
    ts("Loaded latency per pool (probe)", "Median and p99 latency of one dependent load over a buffer on each pool's node, bigger than the last-level cache (the exporter's probe, in the manner of Intel MLC). It rises when the VMs on the pool load it: contention, measured. Compare with the HMAT latency of the node.",
       [(f"histogram_quantile(0.5, sum by (instance, pool, le) (rate(poolmem_pool_probe_latency_seconds_bucket{{{P}}}[{R}])))", "{{instance}} {{pool}} p50"),
        (f"histogram_quantile(0.99, sum by (instance, pool, le) (rate(poolmem_pool_probe_latency_seconds_bucket{{{P}}}[{R}])))", "{{instance}} {{pool}} p99")],
       unit="s", thresholds=[(1e-6, "orange"), (2e-6, "red")]),
    ts("Pool capacity and allocation", "Present memory of each pool's node and the bytes domain chunks hold there.",
       [(f"poolmem_pool_capacity_bytes{{{P}}}", "{{instance}} {{pool}} capacity"), (f"poolmem_pool_allocated_bytes{{{P}}}", "{{instance}} {{pool}} allocated")], unit="bytes"),
    ts("Access rate per pool (Af)", "smart-idle's Af as a rate: the pool's recent chunk events (allocations, faults, sampled accesses) per second, weighted toward the last windows (Af / (15 x window length)). Independent of window_ms.",
       [(f"poolmem_pool_access_events_per_second{{{P}}}", "{{instance}} {{pool}}")], unit="ops"),
    ts("Pool imbalance", "Max - min chunk events across a host's pools in the last complete window (seed 003's imbalance). High: one pool takes the traffic the others could share.",
       [(f'max by (instance) (poolmem_pool_window_events{{{I},age="1"}}) - min by (instance) (poolmem_pool_window_events{{{I},age="1"}})', "{{instance}}")]),
    ts("Chunk allocation rate", "Chunks allocated per second per pool (first touches).",
       [(f"rate(poolmem_pool_allocations_total{{{P}}}[{R}])", "{{instance}} {{pool}}")], unit="ops"),
    ts("Fault rate", "Page faults served from chunks in each pool per second.",
       [(f"rate(poolmem_pool_faults_total{{{P}}}[{R}])", "{{instance}} {{pool}}")], unit="ops"),
    ts("Allocation failures", "Chunk allocations that failed on a pool per second (its node was full): placement fell back to the next pool or tier.",
       [(f"rate(poolmem_pool_failures_total{{{P}}}[{R}])", "{{instance}} {{pool}}")], unit="ops", thresholds=[(0.01, "orange")]),
    ts("Fault latency", "How long poolmem took to allocate and map a chunk, all selected domains together.",
       [(f"sum by (le) (rate(poolmem_domain_fault_latency_seconds_bucket{{{D}}}[{R}]))", "{{le}}")], unit="s", kind="heatmap"),
    ts("Per-VM tier usage against quota", "Bytes each domain holds per tier, and its hard quota.",
       [(f"poolmem_domain_usage_bytes{{{D}}}", "{{instance}} {{domain}} {{tier}} used"), (f"poolmem_domain_quota_bytes{{{D}}}", "{{instance}} {{domain}} {{tier}} quota")], unit="bytes"),
    ts("Online memory blocks per node", "Memory blocks online per NUMA node (pool nodes go to 0 after poolctl pool offline).",
       [(f'sum by (instance, node) (poolmem_node_memory_blocks{{{I},state="online"}})', "{{instance}} node {{node}}")]),
    ts("Free 2 MiB blocks per node", "Free physically contiguous 2 MiB units per node (/proc/buddyinfo): what new chunks can come from.",
       [(f"poolmem_node_free_2mib_blocks{{{I}}}", "{{instance}} node {{node}}")]),
    ts("Probe failures", "Latency probe rounds per second that could not run on a pool (no free memory for the buffer on its node, or the buffer not on it): the latency figures above are stale while this is above 0 (alert PoolmemProbeFailing).",
       [(f"rate(poolmem_pool_probe_failures_total{{{P}}}[{R}])", "{{instance}} {{pool}}")], unit="ops", thresholds=[(0.0001, "orange")]),
    ts("Shared device extents by state", "The shared-device ledger on etcd (exporters run with --cluster.etcd): extents free, claimed by a host with a live lease, and fencing (their host's lease ran out; nobody can claim them until poolctl cluster fence). Every such exporter sees the same ledger: the max over the selected instances.",
       [(f"max by (device, state) (poolmem_cluster_extents{{{I}}})", "{{device}} {{state}}")], thresholds=[(1, "orange")]),
    ts("Extents per host", "Extents of each shared device a host holds in the ledger, by state: claimed (online there) or fencing (its lease ran out).",
       [(f"max by (host, device, state) (poolmem_cluster_host_extents{{{I}}})", "{{host}} {{device}} {{state}}")]),
    ts("Host lease time left", "Seconds left on each live host's lease. An agent renews every third of its TTL; a line that sinks toward the fence margin means late renewals (etcd slow or out of reach; alert PoolmemClusterLeaseRenewalLate), and at the margin the host offlines its shared memory.",
       [(f"min by (host) (poolmem_cluster_host_lease_ttl_seconds{{{I}}})", "{{host}}")], unit="s"),
    ts("Shared device allocation (all hosts)", "Bytes the domains of every live host hold on each shared device, as the hosts publish it in the ledger.",
       [(f"max by (device) (poolmem_cluster_device_allocated_bytes{{{I}}})", "{{device}}")], unit="bytes"),
    ts("Shared device access factor (all hosts)", "The sum of the access factors (Af) live hosts publish for their pool on each shared device: what cluster-wide smart idle orders devices by. The busiest device takes new chunks last.",
       [(f"max by (device) (poolmem_cluster_device_access_factor{{{I}}})", "{{device}}")]),
    ts("Collector health", "1 when every collector of the exporter succeeded in its last scrape. 0: the module is not loaded or a sysfs file can't be read (the exporter's log names it).",
       [(f"min by (instance) (poolmem_scrape_collector_success{{{I}}})", "{{instance}}")], thresholds=[(0, "red"), (1, "green")], kind="stat"),
    ts("Chunk migration per pool", "Chunks moved into and out of each pool per second (drain, live quota changes, tiering).",
       [(f"rate(poolmem_pool_moved_chunks_total{{{P}}}[{R}])", "{{instance}} {{pool}} {{direction}}")], unit="ops"),
    ts("Pools draining", "1 while a pool is draining: it takes no new chunks.",
       [(f"poolmem_pool_draining{{{P}}}", "{{instance}} {{pool}}")]),
    ts("Tiering moves per VM", "Chunks tiering promoted (pool to local) and demoted per second.",
       [(f"rate(poolmem_domain_tiering_moves_total{{{D}}}[{R}])", "{{instance}} {{domain}} {{direction}}")], unit="ops"),
    ts("Sampled accesses per pool", "Accesses to each pool estimated from tiering's sampled refaults, per second: contention from memory already mapped.",
       [(f"rate(poolmem_pool_sampled_accesses_total{{{P}}}[{R}])", "{{instance}} {{pool}}")], unit="ops"),
    ts("Rebalancing per pool", "Hot chunks rebalancing moved off each pool per second (issue 51; module parameter rebalance_rate_mb), and 1 while the pool counts as contended: its access factor above the other pools' by rebalance_margin_pct. Moves while no pool is contended, or a pool contended for long with nothing moving, are worth a look (the admin guide's Rebalancing between pools).",
       [(f"rate(poolmem_pool_rebalanced_chunks_total{{{P}}}[{R}])", "{{instance}} {{pool}} moved off"), (f"poolmem_pool_contended{{{P}}}", "{{instance}} {{pool}} contended")], unit="short"),
    ts("Hot and cold chunks per VM", "Chunks the last tiering samples found hot and cold.",
       [(f"poolmem_domain_chunks_by_heat{{{D}}}", "{{instance}} {{domain}} {{heat}}")]),
    ts("Zero reserve per pool", "Memory each pool's node keeps zeroed ahead for new chunks (held, and the setting's target): used memory to the node, given back under pressure.",
       [(f"poolmem_pool_zero_reserve_bytes{{{P}}}", "{{instance}} {{pool}} held"), (f"poolmem_pool_zero_reserve_target_bytes{{{P}}}", "{{instance}} {{pool}} target")], unit="bytes"),
    ts("Zero reserve hit ratio", "Share of new chunk units that came zeroed from the reserve (a fault that only maps) rather than zeroed on the fault path.",
       [(f'sum by (instance, pool) (rate(poolmem_pool_zero_reserve_units_total{{{P},result="hit"}}[{R}])) / sum by (instance, pool) (rate(poolmem_pool_zero_reserve_units_total{{{P}}}[{R}]))', "{{instance}} {{pool}}")], unit="percentunit"),
    ts("zNUMA pool window touched per VM", "Share of each zNUMA VM's pool window (its CPU-less guest node) the guest has touched: Pond's measure of far memory really used. Boot alone touches about 7% of 256 MiB.",
       [(f'poolmem_domain_window_touched_bytes{{{D},window="pool"}} / poolmem_domain_window_bytes{{{D},window="pool"}}', "{{instance}} {{domain}}")], unit="percentunit"),
    ts("zNUMA pool window first touches per VM", "Bytes per second of each zNUMA VM's pool window touched for the first time (chunks placed), net of discards.",
       [(f'deriv(poolmem_domain_window_touched_bytes{{{D},window="pool"}}[{R}])', "{{instance}} {{domain}}")], unit="Bps"),
    ts("Migrations put off or refused per VM", "Moves put off because a chunk was referenced for a moment, and refused because it is long-term pinned (VFIO, RDMA).",
       [(f"rate(poolmem_domain_move_retries_total{{{D}}}[{R}])", "{{instance}} {{domain}} referenced"), (f"rate(poolmem_domain_move_pins_total{{{D}}}[{R}])", "{{instance}} {{domain}} pinned")], unit="ops"),
    ts("Memory errors per pool (24 h)", "Uncorrectable memory errors poolmem handled in each pool's memory (pages out of use; a domain that held one lost it) and pages soft-offlined (moved off first, nothing lost), over the last day. A pool with a rising count is a failing device: drain it (alert PoolmemPoolMemoryErrors). poolctl pool events names the pages.",
       [(f"increase(poolmem_pool_memory_errors_total{{{P}}}[24h])", "{{instance}} {{pool}} uncorrectable"), (f"increase(poolmem_pool_soft_offlines_total{{{P}}}[24h])", "{{instance}} {{pool}} soft-offlined")], unit="short"),
    ts("CXL poison by device and VM", "Poisoned ranges each CXL device behind a pool lists, as the last poolctl pool poison-scan read them, by the VM whose memory holds them (none: free or unused memory). The scan takes their pages out of use.",
       [(f"poolmem_cxl_poison_records{{{P}}}", "{{instance}} {{memdev}} {{pool}} {{domain}}")], unit="short"),
    ts("Pages lost to memory errors per VM", "Pages of each VM's memory lost to memory errors since it started: touching one is a machine check in the guest (alert PoolmemDomainMemoryError). poolctl vm show names the offsets.",
       [(f"poolmem_domain_memory_errors_total{{{D}}} > 0", "{{instance}} {{domain}}")], unit="short"),
    ts("Autopilot: local quota target and hot set per VM", "The DRAM autopilot's last target for each VM's local quota (poolctl autopilot run), the quota it found, and the VM's measured hot set: the quota follows the hot set within the budget.",
       [(f"poolmem_autopilot_target_bytes{{{D}}}", "{{instance}} {{domain}} target"), (f"poolmem_autopilot_local_quota_bytes{{{D}}}", "{{instance}} {{domain}} quota"), (f"poolmem_autopilot_hot_bytes{{{D}}}", "{{instance}} {{domain}} hot set")], unit="bytes"),
    ts("Autopilot: DRAM saved and budget", "DRAM the autopilot's targets leave out against every VM all-local, and the budget it shares among the VMs' local quotas.",
       [(f"poolmem_autopilot_dram_saved_bytes{{{I}}}", "{{instance}} saved"), (f"poolmem_autopilot_budget_bytes{{{I}}}", "{{instance}} budget")], unit="bytes"),
    ts("Autopilot: pool access share per VM", "Share of each VM's sampled accesses served from pool memory at the last decision; above its SLO the autopilot gives it more than its hot set.",
       [(f"poolmem_autopilot_pool_access_ratio{{{D}}}", "{{instance}} {{domain}}")], unit="percentunit"),
    ts("Autopilot: moves and SLO violations", "Bytes per second the autopilot's quota changes moved, and VMs found above their SLO per decision.",
       [(f"rate(poolmem_autopilot_moved_bytes_total{{{I}}}[{R}])", "{{instance}} moved"), (f"rate(poolmem_autopilot_slo_violations_total{{{I}}}[{R}])", "{{instance}} SLO violations")], unit="short"),
]


def var(name, label, query):
    return {"name": name, "label": label, "type": "query",
            "datasource": {"type": "prometheus", "uid": "${DS_PROMETHEUS}"},
            "query": {"query": query, "refId": name}, "definition": query,
            "multi": True, "includeAll": True, "allValue": ".*", "refresh": 2, "sort": 1,
            "current": {"text": "All", "value": "$__all"}}


# Rows, each with its panels by title: the overview first (four across),
# then two across. Every panel is in exactly one row (main() checks).
ROWS = [
    ("Overview", ["Pool use", "Committed vs admission limit", "VMs nearest their quota", "Quota denials (SIGBUS)"]),
    ("Pools", ["Pool capacity and allocation", "Access rate per pool (Af)", "Pool imbalance", "Chunk allocation rate",
               "Allocation failures", "Chunk migration per pool", "Rebalancing per pool", "Pools draining",
               "Zero reserve per pool", "Zero reserve hit ratio"]),
    ("VMs", ["Per-VM tier usage against quota", "Fault rate", "Fault latency", "Tiering moves per VM",
             "Hot and cold chunks per VM", "Migrations put off or refused per VM", "zNUMA pool window touched per VM",
             "zNUMA pool window first touches per VM"]),
    ("Probe", ["Loaded latency per pool (probe)", "Sampled accesses per pool", "Probe failures"]),
    ("Cluster", ["Shared device extents by state", "Extents per host", "Host lease time left",
                 "Shared device allocation (all hosts)", "Shared device access factor (all hosts)"]),
    ("Autopilot", ["Autopilot: local quota target and hot set per VM", "Autopilot: DRAM saved and budget",
                   "Autopilot: pool access share per VM", "Autopilot: moves and SLO violations"]),
    ("Memory errors", ["Memory errors per pool (24 h)", "CXL poison by device and VM", "Pages lost to memory errors per VM"]),
    ("Host", ["Online memory blocks per node", "Free 2 MiB blocks per node", "Collector health"]),
]


def main():
    by_title = {p["title"]: p for p in PANELS}
    placed = [t for _, titles in ROWS for t in titles]
    assert sorted(placed) == sorted(by_title), f"panels not in exactly one row: {set(by_title) ^ set(placed)}"
    panels, y, pid = [], 0, 1
    for name, titles in ROWS:
        panels.append({"type": "row", "title": name, "collapsed": False, "id": pid, "panels": [],
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}})
        pid, y = pid + 1, y + 1
        across = 4 if name == "Overview" else 2
        for i, t in enumerate(titles):
            p = by_title[t]
            p["id"] = pid
            p["gridPos"] = {"h": 8, "w": 24 // across, "x": (i % across) * (24 // across), "y": y + (i // across) * 8}
            panels.append(p)
            pid += 1
        y += ((len(titles) + across - 1) // across) * 8
    dash = {
        "title": "poolmem: pooled memory contention and VM tiers", "uid": "poolmem",
        "description": "poolmem-exporter's metrics: pool use and admission, VM quotas, contention (Af, imbalance), faults, migration and tiering. Filter by instance, pool and domain.",
        "schemaVersion": 36, "version": 2, "editable": True,
        "time": {"from": "now-1h", "to": "now"}, "refresh": "10s", "tags": ["poolmem", "cxl", "memory"],
        "templating": {"list": [
            {"name": "DS_PROMETHEUS", "type": "datasource", "query": "prometheus", "label": "Prometheus"},
            var("instance", "Host", "label_values(poolmem_exporter_build_info, instance)"),
            var("pool", "Pool", 'label_values(poolmem_pool_info{instance=~"$instance"}, pool)'),
            var("domain", "VM", 'label_values(poolmem_domain_info{instance=~"$instance"}, domain)'),
        ]},
        "panels": panels,
    }
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "poolmem.json")
    with open(out, "w") as f:
        json.dump(dash, f, indent=2)
        f.write("\n")
    print(f"wrote {out}: {len(PANELS)} panels in {len(ROWS)} rows")


if __name__ == "__main__":
    main()
