#!/usr/bin/env python3
"""Benchmark (make bench, host side): poolmem-exporter scrape time on a
fixture of 64 pools x 256 domains, over HTTP on loopback, 50 scrapes after 3
warm-up ones. Prints the median, p90 and max, and the series per scrape.
The goal (issue 5) is a median under 50 ms.

usage: host-scrape.py EXPORTER FIXTURE-GENERATOR [POOLS DOMAINS SCRAPES]
"""
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def main():
    exporter, gen = sys.argv[1:3]
    pools, doms, n = (int(x) for x in (sys.argv[3:6] or ["64", "256", "50"]))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, gen, f"{tmp}/fx", str(pools), str(doms)], check=True)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        p = subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{port}",
                              f"--path.sysfs={tmp}/fx/sys", f"--path.procfs={tmp}/fx/proc"],
                             stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            for _ in range(100):
                try:
                    body = urllib.request.urlopen(url, timeout=10).read()
                    break
                except OSError:
                    time.sleep(0.1)
            for _ in range(2):
                urllib.request.urlopen(url, timeout=10).read()
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                body = urllib.request.urlopen(url, timeout=10).read()
                times.append((time.perf_counter() - t0) * 1000)
        finally:
            p.terminate()
            p.wait()
    series = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
    times.sort()
    med = statistics.median(times)
    print(f"bench: scrape of {pools} pools x {doms} domains ({series} series, {len(body)} bytes), {n} scrapes: "
          f"median {med:.1f} ms, p90 {times[int(n * 0.9) - 1]:.1f} ms, max {times[-1]:.1f} ms "
          f"({'under' if med < 50 else 'OVER'} the 50 ms goal)")


if __name__ == "__main__":
    main()
