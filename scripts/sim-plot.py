#!/usr/bin/python3
"""Figures of a poolctl simulate run, in the style of seed 003's: latency per
policy, the latency CDF, imbalance over time, allocation per pool.

usage: sim-plot.py DIR   (DIR holds results.json from poolctl simulate --out)
Writes DIR/{latency,cdf,imbalance,allocation}.{svg,png}.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams["svg.hashsalt"] = "poolmem"  # the same SVG for the same data
plt.rcParams["svg.fonttype"] = "none"


def save(fig, d, name):
    fig.tight_layout()
    for ext in ("svg", "png"):
        fig.savefig(os.path.join(d, f"{name}.{ext}"), dpi=110, metadata={"Date": None} if ext == "svg" else None)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
    runs = res["runs"]
    labels = [f'{r["tier_policy"]}\n{r["pool_select"]}' for r in runs]

    fig, ax = plt.subplots(figsize=(9, 4))
    x = range(len(runs))
    w = 0.27
    for k, (key, name) in enumerate((("mean_ns", "mean"), ("p99_ns", "p99"), ("p999_ns", "p99.9"))):
        ax.bar([i + (k - 1) * w for i in x], [r[key] for r in runs], w, label=name)
    ax.set_yscale("log")
    ax.set_ylabel("access latency (ns, log)")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_title(f'{res["scenario"]}: latency per policy')
    ax.legend()
    save(fig, d, "latency")

    fig, ax = plt.subplots(figsize=(7, 4))
    for r, lab in zip(runs, labels):
        xs = [p[0] for p in r["cdf"]]
        ys = [p[1] for p in r["cdf"]]
        ax.plot(xs, ys, label=lab.replace("\n", ", "))
    ax.set_xscale("log")
    ax.set_xlabel("access latency (ns, log)")
    ax.set_ylabel("fraction of accesses")
    ax.axvline(1000, color="grey", linestyle=":", linewidth=1)
    ax.set_title("latency CDF")
    ax.legend(fontsize=7)
    save(fig, d, "cdf")

    fig, ax = plt.subplots(figsize=(7, 4))
    for r, lab in zip(runs, labels):
        t = [v * 1e3 for v in r["series"]["t_s"]]
        ax.plot(t, r["series"]["imbalance"], label=lab.replace("\n", ", "), linewidth=1)
    ax.set_xlabel("time (ms)")
    ax.set_yscale("symlog", linthresh=100)
    ax.set_ylabel("imbalance (max - min accesses\nper pool per window, log)")
    ax.set_title("imbalance over time")
    ax.legend(fontsize=7)
    save(fig, d, "imbalance")

    fig, ax = plt.subplots(figsize=(9, 4))
    npools = len(runs[0]["pools"])
    w = 0.8 / npools
    for p in range(npools):
        ax.bar([i + (p - npools / 2 + 0.5) * w for i in x],
               [r["pools"][p]["allocated_peak_bytes"] / 2**30 for r in runs], w, label=runs[0]["pools"][p]["name"])
    ax.set_ylabel("peak allocation (GiB)")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_title("allocation per pool")
    ax.legend(fontsize=7, ncol=min(npools, 6))
    save(fig, d, "allocation")
    print(f"figures in {d}: latency, cdf, imbalance, allocation (.svg, .png)")


if __name__ == "__main__":
    main()
