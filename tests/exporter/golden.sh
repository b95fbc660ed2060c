#!/bin/sh
# usage: golden.sh EXPORTER FIXTURE-GENERATOR GOLDEN [--update]
# Generates the 2-pool, 2-domain fixture, runs the exporter once over it and
# compares the output (minus run-dependent lines) with GOLDEN.
set -e
exp=$1 gen=$2 golden=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$gen" "$tmp/fx" 2 2
"$exp" --once --no-collector.probe --capacity.shape 64M/25% --path.sysfs "$tmp/fx/sys" --path.procfs "$tmp/fx/proc" --path.resctrl "$tmp/fx/sys/fs/resctrl" --path.poolctl-state "$tmp/fx/run/poolctl" --path.autopilot-state "$tmp/fx/run/poolmem-autopilot" | sh "$(dirname "$0")/filter.sh" > "$tmp/out.prom"
if [ "${4:-}" = --update ]; then
	cp "$tmp/out.prom" "$golden"
	echo "updated $golden"
	exit 0
fi
diff -u "$golden" "$tmp/out.prom"
echo "golden: $(grep -vc '^#' "$golden") samples match"
# the same domains in /proc/poolmem/domains (read instead of sysfs): the same output
python3 "$gen" "$tmp/fxt" 2 2 --table
for f in stat faults size_bytes fault_latency_histogram; do
	for d in "$tmp"/fxt/sys/class/poolmem/*/; do echo garbage > "$d/$f"; done
done
"$exp" --once --no-collector.probe --capacity.shape 64M/25% --path.sysfs "$tmp/fxt/sys" --path.procfs "$tmp/fxt/proc" --path.resctrl "$tmp/fxt/sys/fs/resctrl" --path.poolctl-state "$tmp/fxt/run/poolctl" --path.autopilot-state "$tmp/fxt/run/poolmem-autopilot" | sh "$(dirname "$0")/filter.sh" > "$tmp/table.prom"
diff -u "$golden" "$tmp/table.prom"
echo "golden: the same from /proc/poolmem/domains"
