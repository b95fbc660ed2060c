#!/usr/bin/python3
"""Curves of make bench's scale runs: cost against the number of domains
and against a domain's size.

usage: bench-plot.py CSVDIR OUTDIR
Reads CSVDIR/scale.csv (bench-scale: fault p50/p99, poolctl vm list and
status, a scrape of the live sysfs, one sysfs file of each domain, kernel
memory per domain), CSVDIR/scrape.csv (host-scrape.py --curve: the
exporter on a fixture, histograms on and off), CSVDIR/size.csv
(bench-large: touch, vm map, chunk-map memory, tiering scan and drain of
one domain of each size) and CSVDIR/size16.csv (bench-large16: the same
at 16 GiB, drained to a disk-backed node), whichever are there, and writes
OUTDIR/scale-{fault,time,memory}.{svg,png}, OUTDIR/scrape.{svg,png} and
OUTDIR/size.{svg,png}.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams["svg.hashsalt"] = "poolmem"  # the same SVG for the same data
plt.rcParams["svg.fonttype"] = "none"


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    return float(v) if v not in (None, "", "-") else None


def save(fig, d, name):
    fig.tight_layout()
    for ext in ("svg", "png"):
        fig.savefig(os.path.join(d, f"{name}.{ext}"), dpi=110, metadata={"Date": None} if ext == "svg" else None)
    plt.close(fig)
    print(f"bench-plot: {os.path.join(d, name)}.svg, .png")


def series(rs, key):
    pts = [(num(r["domains"]), num(r.get(key))) for r in rs]
    return [p for p in pts if p[1] is not None]


def line(ax, pts, label, style="o-"):
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)


def scale(rs, out):
    fig, ax = plt.subplots(figsize=(6, 3.6))
    line(ax, series(rs, "fault_p50_us"), "p50")
    line(ax, series(rs, "fault_p99_us"), "p99", "s-")
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("named domains on the host")
    ax.set_ylabel("fault (place, zero, map a chunk), us")
    ax.set_title("Fault latency against domains (QEMU TCG: compare sizes only)")
    ax.legend()
    ax.grid(alpha=0.3)
    save(fig, out, "scale-fault")

    fig, ax = plt.subplots(figsize=(6, 3.6))
    line(ax, series(rs, "vm_list_s"), "poolctl vm list")
    line(ax, series(rs, "status_s"), "poolctl status", "s-")
    line(ax, series(rs, "scrape_s"), "exporter scrape (histograms off)", "^-")
    line(ax, series(rs, "vm_list_sysfs_s"), "poolctl vm list from sysfs (before ABI 11)", "o:")
    line(ax, series(rs, "scrape_sysfs_s"), "exporter scrape from sysfs", "^:")
    line(ax, series(rs, "table_read_s"), "cat of /proc/poolmem/domains", "+--")
    line(ax, series(rs, "one_file_each_s"), "cat of one sysfs file per domain", "x--")
    ax.axhline(1, color="gray", ls=":", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("named domains on the host")
    ax.set_ylabel("seconds (TCG)")
    ax.set_title("Listing and scraping against domains")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    save(fig, out, "scale-time")

    pts = series(rs, "kernel_kib_per_domain")
    if pts:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        line(ax, pts, "kernel memory per domain")
        ax.axhline(4, color="gray", ls=":", label="4 KiB (goal, besides sysfs)")
        ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        ax.set_xlabel("named domains on the host")
        ax.set_ylabel("KiB per domain (after drop_caches)")
        ax.set_title("Kernel memory per domain")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        save(fig, out, "scale-memory")


def scrape(rs, out):
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for source, dash in (("table", "-"), ("sysfs", ":")):
        for hist, label, mark in (("1", "histograms on", "o"), ("0", "histograms off", "s")):
            line(ax, [(num(r["domains"]), num(r["median_ms"])) for r in rs
                      if r["histograms"] == hist and r.get("source", "sysfs") == source],
                 f"{label}, from {'/proc/poolmem/domains' if source == 'table' else 'sysfs'}", mark + dash)
    ax.plot([1000], [100], "k+", ms=12, label="goals: 100 ms at 1,000 (on), 1 s at 10,000 (off)")
    ax.plot([10000], [1000], "k+", ms=12)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("domains (64 pools), fixture on the host")
    ax.set_ylabel("scrape, median ms")
    ax.set_title("poolmem-exporter scrape against domains")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    save(fig, out, "scrape")


def size(rs, rs16, out):
    """rs16: bench-large16's rows (16 GiB; p1 on the host's disk, no THP)."""
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.8))
    for chunk, mark in (("2", "o"), ("1024", "s")):
        sub = [r for r in rs if r["chunk_mib"] == chunk]
        big = [r for r in rs16 if r["chunk_mib"] == chunk]
        both = sorted(sub + big, key=lambda r: num(r["size_mib"]))
        if not both:
            continue
        lbl = "2 MiB chunks" if chunk == "2" else "1 GiB chunks"
        gib = lambda rr: [num(r["size_mib"]) / 1024 for r in rr]  # noqa: E731
        if sub:
            axs[0].plot(gib(sub), [num(r["touch_per_thp"]) for r in sub], mark + "-",
                        label=f"touch / THP's time, {lbl}")
            axs[0].plot(gib(sub), [num(r["drain_mibs"]) / 1000 for r in sub], mark + ":",
                        label=f"drain, GB/s, {lbl}")
        axs[0].plot(gib(both), [num(r["size_mib"]) / num(r["touch_s"]) / 1000 for r in both], mark + "--",
                    label=f"touch, GB/s, {lbl}")
        if big:
            axs[0].plot(gib(big), [num(r["drain_mibs"]) / 1000 for r in big], mark, fillstyle="none",
                        label=f"drain to a disk-backed node, GB/s, {lbl}")
        axs[1].plot(gib(both), [num(r["map_ms"]) for r in both], mark + "-", label=f"vm map, ms, {lbl}")
        axs[1].plot(gib(both), [num(r["kmem_kib_per_gib"]) for r in both], mark + ":",
                    label=f"chunk map, KiB/GiB, {lbl}")
        axs[1].plot(gib(both), [num(r["scan_pct"]) * 100 for r in both], mark + "--",
                    label=f"tiering scan, 0.01% CPU, {lbl}")
    for ax in axs:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("domain size, GiB")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    axs[0].set_title("Touch and drain against domain size (TCG)")
    axs[1].set_title("Map listing, memory, scan against domain size")
    save(fig, out, "size")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    done = 0
    if os.path.exists(os.path.join(src, "scale.csv")):
        scale(rows(os.path.join(src, "scale.csv")), out)
        done += 1
    if os.path.exists(os.path.join(src, "scrape.csv")):
        scrape(rows(os.path.join(src, "scrape.csv")), out)
        done += 1
    sz = [os.path.join(src, f) for f in ("size.csv", "size16.csv")]
    if any(os.path.exists(f) for f in sz):
        size(*[rows(f) if os.path.exists(f) else [] for f in sz], out)
        done += 1
    if not done:
        sys.exit(f"bench-plot: {src}: no scale.csv, scrape.csv, size.csv or size16.csv (run make bench)")


if __name__ == "__main__":
    main()
