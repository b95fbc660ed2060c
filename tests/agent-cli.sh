#!/bin/sh
# poolmem-agent's command line and configuration errors: one line each,
# and poolctl's exit codes (2 bad usage or configuration, 3 not found).
# usage: agent-cli.sh AGENT VERSION
set -u
agent=$1 v=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() { # CODE REGEX ARGS...
	code=$1 re=$2
	shift 2
	err=$("$agent" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne "$code" ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || ! printf '%s\n' "$err" | grep -qE "$re"; then
		echo "FAIL: poolmem-agent $*: exit $rc (want $code): $err"
		fails=$((fails + 1))
	else
		echo "ok: poolmem-agent $*: $err"
	fi
}
[ "$("$agent" --version)" = "poolmem-agent $v" ] || { echo "FAIL: --version: $("$agent" --version 2>&1)"; fails=$((fails + 1)); }
expect 2 '^poolmem-agent: The following argument was not expected: --bogus' --bogus
expect 3 "^poolmem-agent: $tmp/none.toml: no such file$" --config "$tmp/none.toml"
printf 'ttl_s = 5\nfence_margin_s = 6\n' > "$tmp/margin.toml"
expect 2 '^poolmem-agent: .*margin.toml: fence_margin_s: 6 s is not below ttl_s \(5 s\)' --config "$tmp/margin.toml"
printf 'ttl_s = "ten"\n' > "$tmp/ttl.toml"
expect 2 '^poolmem-agent: .*ttl.toml: ttl_s: 2 to 3600 seconds$' --config "$tmp/ttl.toml"
printf 'ttl_s = \n' > "$tmp/syntax.toml"
expect 2 '^poolmem-agent: .*syntax.toml:1: ' --config "$tmp/syntax.toml"
[ $fails -eq 0 ] && echo "ok: poolmem-agent's usage and configuration errors"
exit $fails
