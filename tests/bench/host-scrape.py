#!/usr/bin/env python3
"""Benchmark (make bench, host side): poolmem-exporter scrape time on
fixtures of POOLS pools x DOMAINS domains, over HTTP on loopback, SCRAPES
scrapes after 3 warm-up ones each. Prints the median, p90 and max, and the
series per scrape, against a goal in ms.

usage: host-scrape.py EXPORTER FIXTURE-GENERATOR [POOLS DOMAINS SCRAPES]
       host-scrape.py EXPORTER FIXTURE-GENERATOR --curve CSV

The first form measures one fixture (default 64 x 256, 50 scrapes; goal
50 ms, issue 5). --curve measures, side by side in one run, 64 pools with
100 to 10,000 domains, with the per-domain fault histograms on and off
(--no-collector.domain.histograms), each read from /proc/poolmem/domains
(the module's table, ABI 11) and from each domain's sysfs files (before),
and writes one CSV row per point
(domains,histograms,source,series,median_ms,p90_ms,max_ms). Its goals
(issue 33): 64 x 1,000 with histograms under 100 ms, 64 x 10,000 without
under 1 s.
"""
import os
import csv
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def scrape(exporter, gen, pools, doms, n, extra=()):
    """Median, p90, max (ms), series and bytes of n scrapes of a new fixture."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, gen, f"{tmp}/fx", str(pools), str(doms)], check=True)
        return scrape_in(exporter, f"{tmp}/fx", n, extra)


def scrape_in(exporter, fx, n, extra=()):
    """Median, p90, max (ms), series and bytes of n scrapes of fixture fx."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{port}",
                          f"--path.sysfs={fx}/sys", f"--path.procfs={fx}/proc", *extra],
                         stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        body = None
        for _ in range(300):
            try:
                body = urllib.request.urlopen(url, timeout=60).read()
                break
            except OSError:
                time.sleep(0.1)
        if body is None:
            raise SystemExit(f"host-scrape: exporter on port {port}: no answer in 30 s")
        for _ in range(2):
            urllib.request.urlopen(url, timeout=60).read()
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            body = urllib.request.urlopen(url, timeout=60).read()
            times.append((time.perf_counter() - t0) * 1000)
    finally:
        p.terminate()
        p.wait()
    series = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
    times.sort()
    return statistics.median(times), times[max(int(n * 0.9) - 1, 0)], times[-1], series, len(body)


def report(pools, doms, n, what, r, goal):
    med, p90, mx, series, size = r
    if goal:
        # make bench's verdict table (scripts/bench): id|goal|op|target|figure|lo|hi|unit
        tag = "".join(c if c.isalnum() else "-" for c in what).strip("-")
        print(f"goal:scrape-{pools}x{doms}{'-' + tag if tag else ''}|scrape of {pools} pools x {doms} domains{what}, "
              f"median of {n}, ms|<|{goal}|{med:.1f}|||ms")
    print(f"bench: scrape of {pools} pools x {doms} domains{what} ({series} series, {size} bytes), {n} scrapes: "
          f"median {med:.1f} ms, p90 {p90:.1f} ms, max {mx:.1f} ms "
          f"({'under' if med < goal else 'OVER'} the {goal} ms goal)" if goal else
          f"bench: scrape of {pools} pools x {doms} domains{what} ({series} series, {size} bytes), {n} scrapes: "
          f"median {med:.1f} ms, p90 {p90:.1f} ms, max {mx:.1f} ms")


def curve(exporter, gen, path):
    goals = {(1000, 1): 100, (10000, 0): 1000}
    rows = []
    for doms in (100, 1000, 3000, 10000):
        n = 20 if doms <= 1000 else 7
        with tempfile.TemporaryDirectory() as tmp:
            fx = f"{tmp}/fx"
            subprocess.run([sys.executable, gen, fx, "64", str(doms), "--table"], check=True)
            for source in ("table", "sysfs"):
                if source == "sysfs":  # the module before ABI 11: no table
                    os.rename(f"{fx}/proc/poolmem", f"{fx}/proc/poolmem.off")
                for hist in (1, 0):
                    extra = () if hist else ("--no-collector.domain.histograms",)
                    r = scrape_in(exporter, fx, n, extra)
                    report(64, doms, n, f", histograms {'on' if hist else 'off'}, from {source}", r,
                           goals.get((doms, hist)) if source == "table" else None)
                    rows.append([doms, hist, source, r[3], f"{r[0]:.2f}", f"{r[1]:.2f}", f"{r[2]:.2f}"])
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["domains", "histograms", "source", "series", "median_ms", "p90_ms", "max_ms"])
        out.writerows(rows)
    print(f"bench: scrape curve written to {path}")


def main():
    exporter, gen = sys.argv[1:3]
    if sys.argv[3:4] == ["--curve"]:
        curve(exporter, gen, sys.argv[4])
        return
    pools, doms, n = (int(x) for x in (sys.argv[3:6] or ["64", "256", "50"]))
    report(pools, doms, n, "", scrape(exporter, gen, pools, doms, n), 50)


if __name__ == "__main__":
    main()
