#!/bin/sh
# The runbooks every alert links to: the built HTML has an anchor for each
# rule's runbook_url, the rules the build installs point at the installed
# copy, and the exporter serves the file at /runbooks.html (404 naming the
# path when it is not there).
# usage: runbooks.sh EXPORTER BUILT-HTML BUILT-RULES   (loopback only)
set -u
exp=$1 html=$2 rules=$3
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
n=0
for a in $(sed -n 's/.*runbook_url: "file:\/\/[^#]*runbooks\.html#\([a-z0-9]*\)".*/\1/p' "$rules"); do
	n=$((n + 1))
	grep -q "id=\"$a\"" "$html" || bad "runbooks.html has no anchor #$a"
done
[ $n -ge 10 ] || bad "only $n runbook_urls in $rules"
[ "$(grep -c 'runbook_url:' "$rules")" -eq $n ] || bad "a runbook_url in $rules is not file://.../runbooks.html#..."
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$exp" --web.listen-address=127.0.0.1:$port --web.runbooks "$html" --path.sysfs /nonexistent 2>"$tmp/err" &
pid=$!
for i in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
curl -s -o "$tmp/got" "http://127.0.0.1:$port/runbooks.html"
cmp -s "$tmp/got" "$html" || bad "/runbooks.html is not $html"
curl -s "http://127.0.0.1:$port/" | grep -q 'href="/runbooks.html"' || bad "the landing page does not link the runbooks"
kill $pid; wait $pid 2>/dev/null
"$exp" --web.listen-address=127.0.0.1:$port --web.runbooks /nonexistent/runbooks.html --path.sysfs /nonexistent 2>"$tmp/err" &
pid=$!
for i in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
out=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$port/runbooks.html")
[ "$out" = "404: no runbooks at /nonexistent/runbooks.html (--web.runbooks)
 404" ] || bad "no runbooks file: $out"
[ $fails -eq 0 ] && echo "ok: $n runbook anchors, served at /runbooks.html"
exit $fails
