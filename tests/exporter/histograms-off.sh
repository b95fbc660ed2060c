#!/bin/sh
# usage: histograms-off.sh EXPORTER FIXTURE-GENERATOR
# --no-collector.domain.histograms drops each domain's fault latency
# histogram (16 series a domain: 14 buckets, _sum, _count) and nothing
# else: the rest of the output is the same, line for line.
set -e
exp=$1 gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$gen" "$tmp/fx" 4 8
run() { "$exp" --once --path.sysfs "$tmp/fx/sys" --path.procfs "$tmp/fx/proc" "$@" 2>/dev/null |
	grep -v -e '^poolmem_scrape_collector_duration_seconds' -e '^poolmem_exporter_build_info'; }
run > "$tmp/on"
run --no-collector.domain.histograms > "$tmp/off"
domains=$(grep -c '^poolmem_domain_info{' "$tmp/on")
hist=$(grep -c '^poolmem_domain_fault_latency_seconds' "$tmp/on")
[ "$domains" -gt 0 ] && [ "$hist" -eq $((domains * 16)) ] ||
	{ echo "FAIL: $hist histogram series for $domains domains, expected 16 each"; exit 1; }
if grep -q 'poolmem_domain_fault_latency_seconds' "$tmp/off"; then
	echo "FAIL: histograms off, yet: $(grep -m1 poolmem_domain_fault_latency_seconds "$tmp/off")"
	exit 1
fi
grep -v 'poolmem_domain_fault_latency_seconds' "$tmp/on" | diff - "$tmp/off" >/dev/null ||
	{ echo "FAIL: more than the histograms changed:"; grep -v 'poolmem_domain_fault_latency_seconds' "$tmp/on" | diff - "$tmp/off" | head; exit 1; }
echo "histograms-off: ok: $domains domains, $hist histogram series dropped, the rest unchanged"
