#!/bin/sh
# The exporter as an HTTP server and a scraper, node_exporter-style:
#  - / is a landing page linking /metrics, any other path is 404;
#  - HEAD answers as GET without a body; /metrics is gzipped when asked;
#  - /metrics carries only poolmem's metrics (no exposer_* of prometheus-cpp);
#  - --version prints the version and exits 0;
#  - a port in use is one line naming the address and the cause, exit 1;
#  - a domain whose directory is there but a file of which can't be read is
#    a collector failure (success 0) with a log line naming the file, while
#    the other domains are still exported.
# usage: http.sh EXPORTER FIXTURE-GENERATOR   (loopback only)
set -u
exp=$1 gen=$2
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
python3 "$gen" "$tmp/fx" 2 3 >/dev/null
# vm2's stat can't be read while vm2 is there: a partial read (a file
# that is simply gone, ENOENT, is a domain being removed: device_del()
# takes the files before the directory, and that is not an error)
rm "$tmp/fx/sys/class/poolmem/vm2/stat" && mkdir "$tmp/fx/sys/class/poolmem/vm2/stat" || exit 1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$exp" --web.listen-address=127.0.0.1:$port --path.sysfs "$tmp/fx/sys" --path.procfs "$tmp/fx/proc" 2>"$tmp/err" &
pid=$!
for i in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done

code=$(curl -s -o "$tmp/landing" -w '%{http_code}' "http://127.0.0.1:$port/")
[ "$code" = 200 ] && grep -q 'href="/metrics"' "$tmp/landing" || bad "landing page: $code $(head -c 200 "$tmp/landing")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/nope")
[ "$code" = 404 ] || bad "/nope: $code, want 404"
curl -s "http://127.0.0.1:$port/metrics" > "$tmp/metrics"
foreign=$(grep -v '^#' "$tmp/metrics" | grep -v '^poolmem_' | head -3)
[ -z "$foreign" ] || bad "metrics not of poolmem: $foreign"
grep -q '^poolmem_domain_size_bytes{domain="vm0"}' "$tmp/metrics" || bad "vm0 missing"
grep -q 'domain="vm2"' "$tmp/metrics" && bad "vm2 exported from a partial read"
grep -q '^poolmem_scrape_collector_success{collector="domains"} 0' "$tmp/metrics" || bad "domains collector success not 0"
grep -q '^poolmem_scrape_collector_success{collector="pools"} 1' "$tmp/metrics" || bad "pools collector success not 1"
grep -q 'collector domains: vm2/stat: cannot read: Is a directory' "$tmp/err" ||
	bad "no log line naming vm2/stat: $(cat "$tmp/err")"

# HEAD: the headers GET gives, no body (node_exporter answers HEAD too)
curl -s -I "http://127.0.0.1:$port/metrics" > "$tmp/head"
grep -q '^HTTP/1.1 200' "$tmp/head" && grep -qi '^Content-Type: text/plain; version=0.0.4' "$tmp/head" &&
	grep -qi '^Content-Length: [1-9]' "$tmp/head" || bad "HEAD /metrics: $(tr '\r\n' '  ' < "$tmp/head")"
[ "$(curl -s -I -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" = 200 ] || bad "HEAD /: not 200"
[ "$(curl -s -I -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/nope")" = 404 ] || bad "HEAD /nope: not 404"
# gzip when asked for (and only then): the same metrics, smaller
curl -s -D "$tmp/zh" -H 'Accept-Encoding: gzip' -o "$tmp/metrics.gz" "http://127.0.0.1:$port/metrics"
grep -qi '^Content-Encoding: gzip' "$tmp/zh" || bad "gzip asked, not given: $(tr '\r\n' '  ' < "$tmp/zh")"
# (the same families: the probe's samples grow between the two scrapes)
gunzip -c "$tmp/metrics.gz" > "$tmp/unz" 2>/dev/null || bad "not gzip"
grep '^# TYPE' "$tmp/unz" > "$tmp/unz.types"
grep '^# TYPE' "$tmp/metrics" | diff - "$tmp/unz.types" >/dev/null &&
	grep -q '^poolmem_domain_size_bytes{domain="vm0"}' "$tmp/unz" ||
	bad "gzipped metrics differ: $(grep '^# TYPE' "$tmp/metrics" | diff - "$tmp/unz.types" | head -n 4)"
[ "$(stat -c %s "$tmp/metrics.gz")" -lt "$(stat -c %s "$tmp/metrics")" ] || bad "gzip is not smaller"
curl -s -D "$tmp/ph" -H 'Accept-Encoding: gzip;q=0, identity' -o /dev/null "http://127.0.0.1:$port/metrics"
grep -qi '^Content-Encoding' "$tmp/ph" && bad "gzip;q=0 got gzip"

out=$(timeout 10 "$exp" --web.listen-address=127.0.0.1:$port 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "127.0.0.1:$port: cannot listen: .*Address already in use" ||
	bad "port in use: exit $rc: $out"
out=$("$exp" --version 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -qE '^poolmem-exporter [0-9]+\.[0-9]+\.[0-9]+$' || bad "--version: exit $rc: $out"
out=$("$exp" --bogus 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || bad "bad option: exit $rc: $out"
[ $fails -eq 0 ] && echo "ok: landing page, 404, only poolmem metrics, partial read counted, HEAD, gzip, port in use, --version"
exit $fails
