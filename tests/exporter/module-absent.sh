#!/bin/sh
# usage: module-absent.sh EXPORTER FIXTURE-GENERATOR
# Without the module the exporter still serves: module_loaded 0, the pools
# and domains collectors report failure, the nodes collector works; a
# failure that repeats every scrape is logged once (then every 10 minutes).
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
# serving: three scrapes, each failing the same way, log it once
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$exp" --path.sysfs "$tmp/fx/sys" --path.procfs "$tmp/fx/proc" --no-collector.probe \
	"--web.listen-address=127.0.0.1:$port" 2>"$tmp/serve.err" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for i in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/metrics" && break; sleep 0.1; done
for i in 1 2; do curl -s -o /dev/null "http://127.0.0.1:$port/metrics"; done
n=$(grep -c 'collector pools: poolmem module not loaded' "$tmp/serve.err")
[ "$n" -eq 1 ] || { echo "three failing scrapes logged $n lines for pools (want 1): $(cat "$tmp/serve.err")"; exit 1; }
echo "module-absent: ok (one line for three failing scrapes)"
