#!/bin/sh
# poolctl simulate: a bad scenario file is one line naming the file, the
# key and the cause, exit 1; bad options exit 2; a missing file exit 3
# (as poolctl apply); a trace replays.
# usage: scenario-errors.sh POOLCTL SCENARIO-DIR
poolctl=$1 dir=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
expect() { # CODE PATTERN ARGS...
	code=$1 pat=$2
	shift 2
	out=$("$poolctl" "$@" 2>&1)
	rc=$?
	if [ $rc -ne "$code" ] || ! echo "$out" | grep -q -- "$pat"; then
		echo "FAIL: poolctl $*: exit $rc (want $code), output: $out (want /$pat/)"
		fails=$((fails + 1))
	fi
}
sed 's/^hosts = 64/hosts = 64\nhostz = 3/' "$dir/seed003.toml" > "$t/unknown.toml"
expect 1 "unknown.toml: hostz: unknown key" simulate "$t/unknown.toml"
sed 's/^capacity = "12G"/capacity = "12Q"/' "$dir/seed003.toml" > "$t/size.toml"
expect 1 "size.toml: pools.capacity: invalid size '12Q'" simulate "$t/size.toml"
sed 's/^pool_select = "smart-idle"/pool_select = "fastest"/' "$dir/seed003.toml" > "$t/pol.toml"
expect 1 "pol.toml: policy: unknown pool selection 'fastest'" simulate "$t/pol.toml"
expect 3 "nosuch.toml: no such file" simulate "$t/nosuch.toml"
expect 2 "unknown pool selection 'fastest'" simulate "$dir/seed003.toml" --compare round-robin,fastest
expect 2 "a scenario file is needed" simulate
expect 2 "--touched" simulate plan --host-dram 128G --pool 256G --vm-size 16G --touched 2:1

# a trace: two domains, accesses, a discard and a destroy
cat > "$t/trace.csv" <<CSV
time_s,domain,offset,op
0.000,a,67108864,create
0.000001,a,0,access
0.000002,a,4194304,access
0.000003,a,8388608,access
0.000004,b,33554432,create
0.000005,b,0,access
0.000006,a,4194304,discard
0.000007,a,4194304,access
0.000008,b,0,destroy
CSV
cat > "$t/replay.toml" <<TOML
duration_s = 0.001
chunk = "4M"
local_per_host = "1G"
trace = "trace.csv"
[pools]
count = 2
capacity = "1G"
[[vm]]
size = "64M"
local_pct = 25
TOML
out=$("$poolctl" simulate "$t/replay.toml" --json) || { echo "FAIL: trace replay: $out"; fails=$((fails + 1)); }
echo "$out" | grep -q '"accesses": 5,' || { echo "FAIL: trace replay: 5 accesses expected: $out"; fails=$((fails + 1)); }
echo "$out" | grep -q '"chunks_allocated": 5,' || { echo "FAIL: trace replay: 5 chunks (one again after its discard): $out"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "scenario errors and trace replay: ok"
exit $fails
