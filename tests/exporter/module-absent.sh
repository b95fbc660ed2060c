#!/bin/sh
# usage: module-absent.sh EXPORTER FIXTURE-GENERATOR
# Without the module the exporter still serves: module_loaded 0, the pools
# and domains collectors report failure, the nodes collector works.
set -e
exp=$1 gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$gen" "$tmp/fx" 0 0 --no-module
out=$("$exp" --once --path.sysfs "$tmp/fx/sys" --path.procfs "$tmp/fx/proc" 2>"$tmp/err")
check() { echo "$out" | grep -qx "$1" || { echo "missing: $1"; exit 1; }; }
check 'poolmem_module_loaded 0'
check 'poolmem_scrape_collector_success{collector="pools"} 0'
check 'poolmem_scrape_collector_success{collector="domains"} 0'
check 'poolmem_scrape_collector_success{collector="nodes"} 1'
check 'poolmem_node_memory_total_bytes{node="0"} 2147483648'
grep -q 'collector pools: poolmem module not loaded' "$tmp/err" || { echo "no log line"; exit 1; }
echo "module-absent: ok"
