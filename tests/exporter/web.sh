#!/bin/sh
# The exporter exposed safely (loopback only: ::1 and 127.0.0.1):
#  - the default address is the loopback ones, IPv6 and IPv4 (localhost);
#    ":PORT" is every address on one dual-stack socket; "[::1]:PORT" is that
#    IPv6 address and not IPv4's;
#  - a listener beyond loopback without basic auth says, once, that it
#    serves tenant names to anyone; loopback and basic auth do not;
#  - --web.config.file (node_exporter's format): TLS with the given
#    certificate (TLS 1.2 at least by default; TLS 1.1 is refused), basic
#    auth with bcrypt hashes (none, a wrong password and an unknown user
#    get 401 with a Basic challenge; the right one gets the metrics,
#    gzipped when asked, and HEAD), plain HTTP to the TLS port gets nothing,
#    configured headers are sent;
#  - mutual TLS (RequireAndVerifyClientCert, client_ca_file): a client
#    certificate of that CA gets the metrics; none, or one of another CA,
#    gets 403 (or no TLS session);
#  - SIGHUP reads the web config again: a new certificate and password are
#    served, the old ones no longer, a file that does not load leaves the
#    running configuration, and scrapes back to back through it all are
#    never refused;
#  - a bad web config is one line naming the file and the key, exit 2,
#    before anything listens.
# usage: web.sh EXPORTER FIXTURE-GENERATOR
set -u
exp=$1 gen=$2
tmp=$(mktemp -d)
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
python3 "$gen" "$tmp/fx" 1 2 >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start NAME ARGS...: the exporter on the fixture, in the background
start() {
	name=$1
	shift
	"$exp" --path.sysfs "$tmp/fx/sys" --path.procfs "$tmp/fx/proc" --no-collector.probe "$@" 2>"$tmp/$name.err" &
	pids="$pids $!"
	last=$!
}
# code URL [CURL-ARGS...]: the HTTP status (000: no answer)
code() {
	u=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$u"
}
wait_up() {
	for i in $(seq 50); do [ "$(code "$@")" != 000 ] && return 0; sleep 0.1; done
	return 1
}

# ---- where it listens ----
p=$(free_port)
start local "--web.listen-address=localhost:$p"
wait_up "http://127.0.0.1:$p/" || bad "localhost:$p: no answer on 127.0.0.1: $(cat "$tmp/local.err")"
[ "$(code "http://[::1]:$p/metrics")" = 200 ] || bad "localhost:$p: no answer on [::1]"
grep -q "serving / and /metrics on \[::1\]:$p, 127.0.0.1:$p (plain HTTP, no authentication)" "$tmp/local.err" ||
	bad "localhost: start line: $(cat "$tmp/local.err")"
grep -q "warning" "$tmp/local.err" && bad "loopback only, yet a warning: $(cat "$tmp/local.err")"

p=$(free_port)
start all "--web.listen-address=:$p"
wait_up "http://127.0.0.1:$p/" || bad ":$p: no answer on 127.0.0.1: $(cat "$tmp/all.err")"
[ "$(code "http://[::1]:$p/metrics")" = 200 ] || bad ":$p: no answer on [::1] (not dual stack)"
grep -q "warning: tenant VM names are served to anyone who can reach \[::\]:$p" "$tmp/all.err" ||
	bad ":$p without auth: no warning: $(cat "$tmp/all.err")"

p=$(free_port)
start v6 "--web.listen-address=[::1]:$p"
wait_up "http://[::1]:$p/" || bad "[::1]:$p: no answer: $(cat "$tmp/v6.err")"
[ "$(code "http://127.0.0.1:$p/")" = 000 ] || bad "[::1]:$p also answers on 127.0.0.1"

# ---- TLS and basic auth ----
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/srv.key" \
	-out "$tmp/srv.crt" -days 2 -subj /CN=localhost -addext "subjectAltName=IP:::1,IP:127.0.0.1" 2>/dev/null ||
	bad "openssl req"
# bcrypt, as htpasswd -B makes it (libxcrypt through Python's crypt)
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
case $hash in '$2b$'*) ;; *) bad "no bcrypt hash from crypt: $hash" ;; esac
cat >"$tmp/web.yml" <<EOF
# relative paths are the config file's directory's
tls_server_config:
  cert_file: srv.crt
  key_file: srv.key
http_server_config:
  headers:
    X-Content-Type-Options: nosniff
basic_auth_users:
  prom: '$hash'
EOF
p=$(free_port)
start tls "--web.listen-address=:$p" "--web.config.file=$tmp/web.yml"
u="https://[::1]:$p/metrics"
ca="--cacert $tmp/srv.crt"
wait_up "$u" $ca || bad "TLS on :$p: no answer: $(cat "$tmp/tls.err")"
grep -q "(TLS, basic auth)" "$tmp/tls.err" || bad "TLS start line: $(cat "$tmp/tls.err")"
grep -q warning "$tmp/tls.err" && bad "a warning with basic auth: $(cat "$tmp/tls.err")"
[ "$(code "$u" $ca)" = 401 ] || bad "no credentials: not 401"
curl -s -D "$tmp/h401" -o /dev/null $ca "$u"
grep -qi '^WWW-Authenticate: Basic realm="poolmem-exporter"' "$tmp/h401" || bad "401 without a Basic challenge: $(tr '\r\n' '  ' <"$tmp/h401")"
[ "$(code "$u" $ca -u prom:wrong)" = 401 ] || bad "a wrong password: not 401"
[ "$(code "$u" $ca -u nobody:s3cret)" = 401 ] || bad "an unknown user: not 401"
[ "$(code "https://127.0.0.1:$p/metrics" $ca -u prom:s3cret)" = 200 ] || bad "the right password over IPv4: not 200"
curl -s $ca -u prom:s3cret -D "$tmp/h200" "$u" >"$tmp/metrics"
grep -q '^poolmem_domain_size_bytes{domain="vm0"}' "$tmp/metrics" || bad "TLS: no metrics: $(head -c 200 "$tmp/metrics")"
grep -qi '^X-Content-Type-Options: nosniff' "$tmp/h200" || bad "configured header not sent: $(tr '\r\n' '  ' <"$tmp/h200")"
curl -s $ca -u prom:s3cret -H 'Accept-Encoding: gzip' -D "$tmp/hz" -o "$tmp/m.gz" "$u"
grep -qi '^Content-Encoding: gzip' "$tmp/hz" && gunzip -c "$tmp/m.gz" | grep -q '^poolmem_domain_size_bytes{domain="vm0"}' ||
	bad "TLS: not gzipped: $(tr '\r\n' '  ' <"$tmp/hz")"
curl -s -I $ca -u prom:s3cret "$u" >"$tmp/head"
grep -q '^HTTP/1.1 200' "$tmp/head" && grep -qi '^Content-Length: [1-9]' "$tmp/head" || bad "TLS HEAD: $(tr '\r\n' '  ' <"$tmp/head")"
[ "$(code "http://[::1]:$p/metrics" -u prom:s3cret)" = 000 ] || bad "plain HTTP answered on the TLS port"
[ "$(code "$u" $ca -u prom:s3cret --tls-max 1.1)" = 000 ] || bad "TLS 1.1 accepted (min_version is TLS12 by default)"

# ---- mutual TLS: client certificates checked against client_ca_file ----
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/ca.key" \
	-out "$tmp/ca.crt" -days 2 -subj /CN=poolmem-test-ca 2>/dev/null || bad "openssl: CA"
# client: signed by the CA; rogue: self-signed, same name
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/cl.key" -out "$tmp/cl.csr" \
	-subj /CN=prometheus 2>/dev/null && openssl x509 -req -in "$tmp/cl.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" \
	-CAcreateserial -out "$tmp/cl.crt" -days 2 2>/dev/null || bad "openssl: client certificate"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/rogue.key" \
	-out "$tmp/rogue.crt" -days 2 -subj /CN=prometheus 2>/dev/null || bad "openssl: rogue certificate"
printf 'tls_server_config:\n  cert_file: srv.crt\n  key_file: srv.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n' >"$tmp/mtls.yml"
p=$(free_port)
start mtls "--web.listen-address=[::1]:$p" "--web.config.file=$tmp/mtls.yml"
u="https://[::1]:$p/metrics"
wait_up "$u" $ca --cert "$tmp/cl.crt" --key "$tmp/cl.key" || bad "mTLS on [::1]:$p: no answer: $(cat "$tmp/mtls.err")"
[ "$(code "$u" $ca --cert "$tmp/cl.crt" --key "$tmp/cl.key")" = 200 ] || bad "mTLS: the CA's client certificate: not 200"
c=$(code "$u" $ca)
[ "$c" = 403 ] || [ "$c" = 000 ] || bad "mTLS: no client certificate: $c (want 403 or no TLS session)"
c=$(code "$u" $ca --cert "$tmp/rogue.crt" --key "$tmp/rogue.key")
[ "$c" = 403 ] || [ "$c" = 000 ] || bad "mTLS: a certificate of another CA: $c (want 403 or no TLS session)"
grep -q "(TLS, client certificates, no authentication)" "$tmp/mtls.err" || bad "mTLS start line: $(cat "$tmp/mtls.err")"

# ---- SIGHUP: a new certificate and users, no refused scrape ----
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/srv2.key" \
	-out "$tmp/srv2.crt" -days 2 -subj /CN=localhost -addext "subjectAltName=IP:::1,IP:127.0.0.1" 2>/dev/null ||
	bad "openssl req (second certificate)"
cp "$tmp/web.yml" "$tmp/hup.yml"
p=$(free_port)
start hup "--web.listen-address=[::1]:$p" "--web.config.file=$tmp/hup.yml"
hpid=$last
u="https://[::1]:$p/metrics"
wait_up "$u" $ca || bad "SIGHUP server: no answer: $(cat "$tmp/hup.err")"
# scrapes back to back through the reloads: every one answered
(
	n=0
	while [ ! -e "$tmp/hup.stop" ]; do
		c=$(code "$u" -k -u prom:s3cret)
		[ "$c" = 200 ] || [ "$c" = 401 ] || echo "scrape $n: $c"
		n=$((n + 1))
	done
	echo "scrapes: $n"
) >"$tmp/hup.scrapes" &
sp=$!
sleep 1
sed -i 's/srv\.crt/srv2.crt/; s/srv\.key/srv2.key/' "$tmp/hup.yml"
kill -HUP $hpid
sleep 1
[ "$(code "$u" --cacert "$tmp/srv2.crt" -u prom:s3cret)" = 200 ] || bad "SIGHUP: the new certificate is not served: $(tail -n 2 "$tmp/hup.err")"
[ "$(code "$u" $ca -u prom:s3cret)" = 000 ] || bad "SIGHUP: the old certificate is still served"
# a users change, then a file that does not load (the running one stays)
hash2=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("n3w", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
sed -i "s|prom: .*|prom: '$hash2'|" "$tmp/hup.yml"
kill -HUP $hpid
sleep 1
[ "$(code "$u" --cacert "$tmp/srv2.crt" -u prom:n3w)" = 200 ] || bad "SIGHUP: the new password is refused"
[ "$(code "$u" --cacert "$tmp/srv2.crt" -u prom:s3cret)" = 401 ] || bad "SIGHUP: the old password still works"
# a certificate that loads but can't serve: the sockets are served again as before
printf 'tls_server_config:\n  cert_file: junk.crt\n  key_file: srv2.key\n' >"$tmp/hup.yml"
echo junk >"$tmp/junk.crt"
kill -HUP $hpid
sleep 1
grep -q "SIGHUP: .*cannot serve: .*; the running configuration stays" "$tmp/hup.err" ||
	bad "SIGHUP with a junk certificate: $(tail -n 2 "$tmp/hup.err")"
[ "$(code "$u" --cacert "$tmp/srv2.crt" -u prom:n3w)" = 200 ] || bad "SIGHUP with a junk certificate: the server stopped serving"
echo "tls_server_config: [" >"$tmp/hup.yml"
kill -HUP $hpid
sleep 1
grep -q "SIGHUP: .*hup.yml: not YAML.*; the running configuration stays" "$tmp/hup.err" ||
	bad "SIGHUP with a bad file: $(tail -n 2 "$tmp/hup.err")"
[ "$(code "$u" --cacert "$tmp/srv2.crt" -u prom:n3w)" = 200 ] || bad "SIGHUP with a bad file: the server stopped serving"
touch "$tmp/hup.stop"
wait $sp
kill -0 $hpid 2>/dev/null || bad "the exporter died of SIGHUP"
grep -q "^scrape [0-9]" "$tmp/hup.scrapes" && bad "scrapes refused or failed during the reloads: $(grep '^scrape [0-9]' "$tmp/hup.scrapes" | head -n 3 | xargs)"
echo "SIGHUP: $(grep -c 'read again' "$tmp/hup.err") reloads, $(sed -n 's/^scrapes: //p' "$tmp/hup.scrapes") scrapes, none refused"

# ---- bad web configs: one line naming the file and the key, exit 2 ----
# badcfg WHAT EXPECTED-PATTERN TEXT: web.yml is TEXT (printf's format)
badcfg() {
	printf "$3" >"$tmp/bad.yml"
	out=$("$exp" --path.sysfs "$tmp/fx/sys" --path.procfs "$tmp/fx/proc" "--web.listen-address=127.0.0.1:$(free_port)" \
		"--web.config.file=$tmp/bad.yml" 2>&1)
	rc=$?
	[ $rc -eq 2 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "bad.yml: $2" ||
		bad "$1: exit $rc: $out"
}
badcfg "unknown key" "tls_server_config: unknown key 'kye'" 'tls_server_config:\n  cert_file: srv.crt\n  key_file: srv.key\n  kye: x\n'
badcfg "no key_file" "tls_server_config: cert_file and key_file are both required" 'tls_server_config:\n  cert_file: srv.crt\n'
badcfg "missing cert" "tls_server_config.cert_file .*nosuch.crt: cannot read: No such file" 'tls_server_config:\n  cert_file: nosuch.crt\n  key_file: srv.key\n'
badcfg "plain password" "basic_auth_users.prom: not a bcrypt hash" 'basic_auth_users:\n  prom: s3cret\n'
badcfg "unchecked client certificates" "tls_server_config.client_auth_type RequireAnyClientCert: not supported" \
	'tls_server_config:\n  cert_file: srv.crt\n  key_file: srv.key\n  client_auth_type: RequireAnyClientCert\n'
badcfg "mTLS without a CA" "tls_server_config.client_auth_type RequireAndVerifyClientCert needs client_ca_file" \
	'tls_server_config:\n  cert_file: srv.crt\n  key_file: srv.key\n  client_auth_type: RequireAndVerifyClientCert\n'
badcfg "min_version" "tls_server_config.min_version 'TLS14'" 'tls_server_config:\n  cert_file: srv.crt\n  key_file: srv.key\n  min_version: TLS14\n'
badcfg "not YAML" "not YAML" 'tls_server_config: [\n'
# a certificate that is no certificate: named at the start, exit 1
echo junk >"$tmp/junk.crt"
printf 'tls_server_config:\n  cert_file: junk.crt\n  key_file: srv.key\n' >"$tmp/junk.yml"
out=$("$exp" --path.sysfs "$tmp/fx/sys" --path.procfs "$tmp/fx/proc" "--web.listen-address=127.0.0.1:$(free_port)" \
	"--web.config.file=$tmp/junk.yml" 2>&1)
rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "127.0.0.1:[0-9]*: cannot serve: " || bad "a junk certificate: exit $rc: $out"
out=$("$exp" "--web.listen-address=[::1]9788" 2>&1)
rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "cannot listen: not \[ADDRESS\]:PORT" || bad "[::1]9788: exit $rc: $out"
out=$("$exp" "--web.listen-address=::1:9788" 2>&1)
rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "an IPv6 address goes in brackets" || bad "::1:9788: exit $rc: $out"

[ $fails -eq 0 ] && echo "ok: localhost is [::1] and 127.0.0.1, :PORT dual stack, [::1] alone, warning without auth, TLS (1.2+), basic auth (bcrypt), headers, gzip and HEAD over TLS, mutual TLS, SIGHUP reloads, bad configs"
exit $fails
