#!/bin/bash
# usage: cluster.sh EXPORTER POOLCTL FIXTURE-GENERATOR
# The cluster collector against a real etcd on loopback: a device of 4
# extents, h1 holding 2 (live lease), h2 one whose lease ran out (fencing),
# one free. The exported counts must be those, promtool must pass them, and
# with etcd gone the collector must fail (success 0) and name the endpoint.
set -u
exp=$1 ctl=$2 gen=$3
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cp=$(port) pp=$(port)
url=http://127.0.0.1:$cp
etcd --name x --data-dir "$tmp/etcd" --listen-client-urls "$url" --advertise-client-urls "$url" \
	--listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
	--initial-cluster "x=http://127.0.0.1:$pp" > "$tmp/etcd.log" 2>&1 &
epid=$!
pids+=($epid)
for i in $(seq 100); do "$ctl" cluster --etcd "$url" status >/dev/null 2>&1 && break; sleep 0.1; done
"$ctl" cluster --etcd "$url" register dcd0 --size 512M --extent 128M >/dev/null || fail "register"
"$ctl" cluster --etcd "$url" claim dcd0 --host h1 --index 0,1 --ttl 30 > "$tmp/h1" 2>&1 &
pids+=($!)
"$ctl" cluster --etcd "$url" claim dcd0 --host h2 --index 3 --ttl 2 > "$tmp/h2" 2>&1 &
h2=$!
for i in $(seq 100); do grep -q claimed "$tmp/h1" && grep -q claimed "$tmp/h2" && break; sleep 0.1; done
kill -KILL $h2 # no release: once its lease runs out, h2's extent is fencing
sleep 3.5
"$gen" "$tmp/fx" 1 1 >/dev/null
run() { "$exp" --once --path.sysfs "$tmp/fx/sys" --path.procfs "$tmp/fx/proc" --no-collector.probe "$@"; }
run --cluster.etcd "$url" > "$tmp/m.prom" 2> "$tmp/err" || fail "exporter: $(cat "$tmp/err")"
want() {
	grep -qxF "$1" "$tmp/m.prom" || fail "no line '$1' in: $(grep cluster "$tmp/m.prom")"
}
want 'poolmem_cluster_extents{device="dcd0",state="free"} 1'
want 'poolmem_cluster_extents{device="dcd0",state="claimed"} 2'
want 'poolmem_cluster_extents{device="dcd0",state="fencing"} 1'
want 'poolmem_cluster_host_extents{host="h1",device="dcd0",state="claimed"} 2'
want 'poolmem_cluster_host_extents{host="h2",device="dcd0",state="fencing"} 1'
want 'poolmem_cluster_device_extent_bytes{device="dcd0"} 134217728'
want 'poolmem_scrape_collector_success{collector="cluster"} 1'
grep -q '^poolmem_cluster_host_lease_ttl_seconds{host="h1"} ' "$tmp/m.prom" || fail "no lease TTL for h1"
grep -q 'host="h2"' "$tmp/m.prom" && ! grep -q 'poolmem_cluster_host_lease_ttl_seconds{host="h2"}' "$tmp/m.prom" ||
	fail "h2's lease is gone, yet it has a TTL: $(grep h2 "$tmp/m.prom")"
out=$(promtool check metrics < "$tmp/m.prom" 2>&1) || fail "promtool: $out"
[ -z "$out" ] || fail "promtool warns: $out"
# without --cluster.etcd: no cluster collector at all
run > "$tmp/off.prom" 2>/dev/null
grep -q 'cluster' "$tmp/off.prom" && fail "cluster metrics without --cluster.etcd"
# etcd gone: the collector fails, the rest of the scrape stands
kill $epid; wait $epid 2>/dev/null
run --cluster.etcd "$url" > "$tmp/down.prom" 2> "$tmp/err"
grep -qxF 'poolmem_scrape_collector_success{collector="cluster"} 0' "$tmp/down.prom" || fail "etcd down, yet: $(grep success "$tmp/down.prom")"
grep -q "collector cluster: .*127.0.0.1:$cp" "$tmp/err" || fail "the error does not name the endpoint: $(cat "$tmp/err")"
grep -q '^poolmem_pool_info' "$tmp/down.prom" || fail "the other collectors' output went with the cluster's"
echo "cluster collector: ok"
