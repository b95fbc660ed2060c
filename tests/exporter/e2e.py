#!/usr/bin/env python3
"""End to end: a real Prometheus scrapes poolmem-exporter on loopback.

usage: e2e.py EXPORTER FIXTURE-GENERATOR DASHBOARD POOLCTL

Starts an etcd on loopback holding a shared-device ledger (poolctl cluster:
device dcd0 of 4 extents, host h1 holding 2 on a live lease, host h2's one
fencing, h1's published load), the exporter over a generated fixture
(3 pools, 4 domains) with --cluster.etcd, and a
Prometheus (the Debian package's binary) scraping it every second, waits for
scrapes, then checks through Prometheus' HTTP API that the values arrived as
the fixture says, that every collector is up, and that every query of every
dashboard panel runs without error and returns at least one series. Also
sends malformed HTTP requests to the exporter and checks it keeps serving.
Everything listens on 127.0.0.1 only; both processes are stopped at the end.
Prints "N passed, N failed".
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def query(prom, expr):
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        return json.loads(get(url))
    except urllib.error.HTTPError as e:
        return json.loads(e.read().decode())


def wait_for(what, fn, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if fn():
                return True
        except (OSError, IndexError, KeyError, ValueError):
            pass  # not up yet, or no sample yet
        time.sleep(0.5)
    print(f"timeout waiting for {what}")
    return False


def main():
    exporter, gen, dashboard, poolctl = sys.argv[1:5]
    tmp = tempfile.mkdtemp(prefix="poolmem-e2e-")
    procs = []
    try:
        subprocess.run([sys.executable, gen, f"{tmp}/fx", "3", "4"], check=True)
        # the shared-device ledger the Cluster row shows
        cp, cpp = free_port(), free_port()
        etcd = f"http://127.0.0.1:{cp}"
        procs.append(subprocess.Popen(["etcd", "--name", "x", "--data-dir", f"{tmp}/etcd",
                                       "--listen-client-urls", etcd, "--advertise-client-urls", etcd,
                                       "--listen-peer-urls", f"http://127.0.0.1:{cpp}",
                                       "--initial-advertise-peer-urls", f"http://127.0.0.1:{cpp}",
                                       "--initial-cluster", f"x=http://127.0.0.1:{cpp}"],
                                      stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/etcd.log", "w")))
        ctl = [poolctl, "cluster", "--etcd", etcd]
        check(wait_for("etcd", lambda: subprocess.run(ctl + ["status"], capture_output=True).returncode == 0, 30),
              "etcd up")
        subprocess.run(ctl + ["register", "dcd0", "--size", "512M", "--extent", "128M"], check=True,
                       stdout=subprocess.DEVNULL)
        h1 = subprocess.Popen(ctl + ["claim", "dcd0", "--host", "h1", "--index", "0,1", "--ttl", "30"],
                              stdout=open(f"{tmp}/h1", "w"), stderr=subprocess.STDOUT)
        procs.append(h1)
        h2 = subprocess.Popen(ctl + ["claim", "dcd0", "--host", "h2", "--index", "3", "--ttl", "2"],
                              stdout=open(f"{tmp}/h2", "w"), stderr=subprocess.STDOUT)
        check(wait_for("claims", lambda: "claimed" in open(f"{tmp}/h1").read() and "claimed" in open(f"{tmp}/h2").read(), 30),
              "h1 and h2 claimed extents")
        h2.kill()  # no release: once its lease runs out, h2's extent is fencing
        h2.wait()
        subprocess.run(["etcdctl", "--endpoints", etcd, "put", "/poolmem/load/h1/dcd0",
                        json.dumps({"af": 120, "allocated_bytes": 6 * 1048576})], check=True, stdout=subprocess.DEVNULL)
        ep, pp = free_port(), free_port()
        procs.append(subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{ep}",
                                       f"--path.sysfs={tmp}/fx/sys", f"--path.procfs={tmp}/fx/proc",
                                       f"--path.poolctl-state={tmp}/fx/run/poolctl",
                                       f"--path.autopilot-state={tmp}/fx/run/poolmem-autopilot", f"--cluster.etcd={etcd}"],
                                      stderr=open(f"{tmp}/exporter.log", "w")))
        with open(f"{tmp}/prometheus.yml", "w") as f:
            f.write(f"global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    f"scrape_configs:\n  - job_name: poolmem\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{ep}']\n")
        prom_bin = shutil.which("prometheus")
        check(prom_bin is not None, "prometheus binary installed")
        procs.append(subprocess.Popen([prom_bin, f"--config.file={tmp}/prometheus.yml",
                                       f"--storage.tsdb.path={tmp}/data", f"--web.listen-address=127.0.0.1:{pp}"],
                                      stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/prometheus.log", "w")))

        check(wait_for("exporter", lambda: "poolmem_module_loaded 1" in get(f"http://127.0.0.1:{ep}/metrics"), 20),
              "exporter serves /metrics")
        check(wait_for("first scrape", lambda: query(pp, 'up{job="poolmem"}')["data"]["result"][0]["value"][1] == "1", 60),
              "Prometheus scraped the exporter (up == 1)")
        # rate() needs a few samples
        check(wait_for("5 scrapes", lambda: float(query(pp, 'count_over_time(up{job="poolmem"}[1m])')["data"]["result"][0]["value"][1]) >= 5, 60),
              "at least 5 scrapes stored")

        def value(expr):
            r = query(pp, expr)["data"]["result"]
            return float(r[0]["value"][1]) if len(r) == 1 else None

        check(value('poolmem_pool_allocated_bytes{pool="pool2"}') == 3 * 2 * 1048576, "pool2 allocated bytes = 6 MiB")
        check(value('poolmem_pool_capacity_bytes{pool="pool0"}') == 15 * 128 * 1048576, "pool0 capacity = 15 blocks")
        check(value('poolmem_pool_pinnable_bytes{pool="pool1"}') == 15 * 128 * 1048576, "pool1 pinnable = 15 blocks")
        check(value('poolmem_pool_pinnable_bytes{pool="pool0"}') == 0, "pool0 pinnable = 0")
        check(value('poolmem_domain_usage_bytes{domain="vm3",tier="pool"}') == 3 * 2 * 1048576, "vm3 pool usage = 6 MiB")
        check(value('poolmem_domain_quota_bytes{domain="vm3",tier="local"}') == 16 * 1048576, "vm3 local quota = 16 MiB")
        check(value('poolmem_domain_fault_latency_seconds_count{domain="vm2"}') == 4, "vm2 fault latency count = 4")
        check(value('count(poolmem_pool_info)') == 3, "3 pools")
        check(value('count(poolmem_domain_size_bytes)') == 4, "4 domains")
        check(value('min(poolmem_scrape_collector_success)') == 1, "every collector succeeds")
        check(value('poolmem_node_hmat_read_latency_seconds{node="2"}') == 200e-9, "node 2 HMAT latency 200 ns")
        check(wait_for("h2's lease to run out", lambda: value('poolmem_cluster_extents{device="dcd0",state="fencing"}') == 1, 30),
              "ledger: dcd0 has 1 extent fencing (h2's lease ran out)")
        check(value('poolmem_cluster_extents{device="dcd0",state="claimed"}') == 2, "ledger: dcd0 has 2 extents claimed")
        check(value('poolmem_cluster_device_allocated_bytes{device="dcd0"}') == 6 * 1048576, "ledger: h1's published load")

        # malformed requests must not take the exporter down
        for junk in (b"GARBAGE\r\n\r\n", b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                     b"\x00\xff" * 1000, b"GET " + b"A" * 20000 + b" HTTP/1.1\r\n\r\n"):
            try:
                s = socket.create_connection(("127.0.0.1", ep), timeout=2)
                s.sendall(junk)
                s.settimeout(2)
                try:
                    s.recv(1024)
                except OSError:
                    pass
                s.close()
            except OSError:
                pass
        check("poolmem_pool_chunks" in get(f"http://127.0.0.1:{ep}/metrics"), "exporter serves after malformed requests")

        dash = json.load(open(dashboard))
        # template variables: each query (label_values(METRIC{...}, LABEL))
        # must find the label on live series
        allv = {"$instance": ".*", "$pool": ".*", "$domain": ".*", "$__rate_interval": "1m"}

        def subst(e):
            for k, v in allv.items():
                e = e.replace(k, v)
            return e
        names = [v["name"] for v in dash["templating"]["list"]]
        check({"instance", "pool", "domain"} <= set(names), f"dashboard variables instance, pool, domain: {names}")
        for v in dash["templating"]["list"]:
            if v.get("type") != "query":
                continue
            q = v["query"]["query"]
            inner, label = q[len("label_values("):-1].rsplit(",", 1)
            r = query(pp, subst(inner))
            vals = {m["metric"].get(label.strip()) for m in r.get("data", {}).get("result", [])} - {None}
            check(bool(vals), f"variable {v['name']}: {q} -> {sorted(vals)}")
        rows = [p["title"] for p in dash["panels"] if p["type"] == "row"]
        check({"Pools", "VMs", "Cluster", "Probe", "Autopilot", "Host"} <= set(rows) and dash["panels"][0]["type"] == "row",
              f"dashboard rows Pools, VMs, Cluster, Probe, Autopilot, Host, the first panel a row: {rows}")
        for panel in dash["panels"]:
            if panel["type"] == "row":
                continue
            check(bool(panel.get("description")), f"panel '{panel['title']}' has a description")
            if panel["type"] == "heatmap":
                check(all(t.get("format") == "heatmap" for t in panel["targets"]) and
                      panel.get("options", {}).get("calculate") is False,
                      f"heatmap '{panel['title']}': targets in heatmap format, not recalculated")
            for t in panel["targets"]:
                check("[1m]" not in t["expr"] and "$instance" in t["expr"],
                      f"panel '{panel['title']}': filtered by $instance, no fixed rate window")
                r = query(pp, subst(t["expr"]))
                ok = r.get("status") == "success" and len(r["data"]["result"]) >= 1
                check(ok, f"panel '{panel['title']}': {t['expr']} -> "
                          f"{r.get('error') or str(len(r['data']['result'])) + ' series'}")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        if failed:
            for log in ("exporter.log", "prometheus.log", "etcd.log"):
                path = os.path.join(tmp, log)
                if os.path.exists(path):
                    print(f"--- {log} (tail)")
                    print("".join(open(path).readlines()[-15:]))
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
