#!/bin/bash
# poolctl cluster and the agent's ledger client over TLS, against a real
# etcd on loopback that requires client certificates (--client-cert-auth),
# with a CA, a server and a client certificate made here by openssl:
#  - with --cacert, --cert and --key the ledger works (register, status);
#  - without the client certificate, or trusting another CA, the call fails
#    with one line that says TLS (and, without --cert, that none was given),
#    not that etcd is down;
#  - the agent's configuration: etcd_cert without etcd_key, a missing file,
#    TLS files with an http:// endpoint: each an error naming the key, before
#    anything else (exit 2, or 3 for a missing file).
# and the exporter's cluster collector reads the ledger over TLS too.
# usage: etcd-tls.sh POOLCTL AGENT EXPORTER FIXTURE-GENERATOR
set -u
ctl=$1 agent=$2 exp=$3 gen=$4
command -v etcd >/dev/null || { echo "SKIP: no etcd"; exit 77; }
command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cd "$tmp"
# ca: the CA; srv: etcd's, for 127.0.0.1; cli: the client's; other: a CA nobody uses
mkcert() { # NAME CA SUBJECT [EXT]
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -subj "/CN=$3" \
		-out "$1.csr" 2>/dev/null || fail "openssl req $1"
	openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 -out "$1.pem" \
		${4:+-extfile <(printf '%s\n' "$4")} 2>/dev/null || fail "openssl x509 $1"
}
for ca in ca other; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $ca.key -out $ca.pem \
		-subj "/CN=poolmem test $ca" -days 2 2>/dev/null || fail "openssl CA $ca"
done
# (serverAuth and clientAuth: etcd's JSON gateway dials its own gRPC server
# with this certificate, which --client-cert-auth checks too)
mkcert srv ca etcd "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth"
mkcert cli ca poolmem-agent "extendedKeyUsage=clientAuth"
cp=$(port) pp=$(port)
url=https://127.0.0.1:$cp
etcd --name x --data-dir "$tmp/etcd" --listen-client-urls "$url" --advertise-client-urls "$url" \
	--cert-file srv.pem --key-file srv.key --trusted-ca-file ca.pem --client-cert-auth \
	--listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
	--initial-cluster "x=http://127.0.0.1:$pp" > etcd.log 2>&1 &
pids+=($!)
tls=(--cacert ca.pem --cert cli.pem --key cli.key)
for i in $(seq 100); do "$ctl" cluster --etcd "$url" "${tls[@]}" status >/dev/null 2>&1 && break; sleep 0.1; done
"$ctl" cluster --etcd "$url" "${tls[@]}" status > out 2>&1 || fail "status over TLS: $(cat out; tail -n 5 etcd.log)"
"$ctl" cluster --etcd "$url" "${tls[@]}" register dcd0 --size 256M --extent 128M > out 2>&1 ||
	fail "register over TLS: $(cat out)"
"$ctl" cluster --etcd "$url" "${tls[@]}" status --json > out 2>&1 || fail "status --json: $(cat out)"
grep -q '"dcd0"' out || fail "the device registered over TLS is not in the ledger: $(cat out)"
echo "ok: register and status over TLS with a client certificate"
out=$("$ctl" cluster --etcd "$url" --cacert ca.pem status 2>&1) && fail "etcd took a client without a certificate: $out"
echo "$out" | grep -q "TLS failed (.*(no client certificate given: --cert/--key)" ||
	fail "without a client certificate: $out"
echo "ok: no client certificate: $out"
out=$("$ctl" cluster --etcd "$url" --cacert other.pem --cert cli.pem --key cli.key status 2>&1) &&
	fail "etcd's certificate was trusted with another CA: $out"
echo "$out" | grep -q "TLS failed" || fail "another CA: $out"
echo "ok: another CA: $out"
[ $(echo "$out" | wc -l) -eq 1 ] || fail "not one line: $out"
# the exporter's cluster collector, over TLS
"$gen" fx 1 1 >/dev/null
"$exp" --once --path.sysfs fx/sys --path.procfs fx/proc --no-collector.probe --cluster.etcd "$url" \
	--cluster.etcd.cacert ca.pem --cluster.etcd.cert cli.pem --cluster.etcd.key cli.key > m.prom 2> err ||
	fail "exporter over TLS: $(cat err)"
grep -qxF 'poolmem_scrape_collector_success{collector="cluster"} 1' m.prom || fail "the cluster collector failed: $(cat err)"
grep -qxF 'poolmem_cluster_device_extent_bytes{device="dcd0"} 134217728' m.prom || fail "no dcd0 in: $(grep cluster m.prom)"
echo "ok: the exporter reads the ledger over TLS"
# the agent's configuration, checked before anything is done
conf() { printf '%s\n' "$@" 'host = "h1"' '[[device]]' 'name = "dcd0"' 'dax = "dax0.0"' 'pool = "p"' 'want = 1' > a.toml; }
expect() { # RC GREP
	out=$("$agent" --config a.toml 2>&1); rc=$?
	[ $rc -eq "$1" ] && echo "$out" | grep -q -- "$2" || fail "agent: exit $rc (want $1): $out (want '$2')"
	echo "ok: agent: exit $rc: $out"
}
conf "etcd = \"$url\"" "etcd_cert = \"cli.pem\""
expect 2 "etcd_key: needed with etcd_cert"
conf "etcd = \"$url\"" "etcd_cacert = \"nosuch.pem\""
expect 3 "etcd_cacert: nosuch.pem: no such file"
conf "etcd = \"http://127.0.0.1:$cp\"" "etcd_cacert = \"ca.pem\""
expect 2 "etcd: TLS files are given, so an https:// endpoint"
echo "all passed"
