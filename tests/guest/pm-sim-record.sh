# rig-topologies: nvdimm-numa
# rig-debug: skip userspace only: poolctl reads chunk maps through the ioctls other tests cover
# THEORY OF OPERATION: a trace recorded on a real host replays in the
# simulator (issue 14). "poolctl simulate record" looks at every domain's
# chunk map at an interval and writes a domain's creation, each chunk that
# became present (first touch), each one that went away (discard) and the
# domain's end. The test makes exactly those events happen (16 chunks
# touched, 4 of them discarded, the domain destroyed), checks the rows,
# then replays the trace with "poolctl simulate": 16 chunks placed, all
# given back.
. /rig/tests/lib/common.sh
pm_pools_up
MiB=1048576

poolctl vm create rec1 --size 64M --local 16M --pool 48M --tier-policy interleave >/dev/null
poolctl simulate record /tmp/trace.csv --seconds 4 --interval 0.2 > /tmp/rec.out &
rpid=$!
sleep 0.6
pmtest touch rec1 0 32M >/dev/null
sleep 0.6
pmtest punch rec1 0 8M >/dev/null
sleep 0.6
poolctl vm destroy rec1 >/dev/null
wait $rpid || fail "poolctl simulate record: $(cat /tmp/rec.out)"
info "$(cat /tmp/rec.out)"
head -n 5 /tmp/trace.csv
check_eq "header" "time_s,domain,offset,op" "$(head -n 1 /tmp/trace.csv)"
check_eq "create rows (with the size)" "rec1,$((64 * MiB)),create" "$(grep ',create$' /tmp/trace.csv | cut -d, -f2- | xargs)"
check_eq "first touches" 16 "$(grep -c ',rec1,.*,access$' /tmp/trace.csv)"
check_eq "discards" 4 "$(grep -c ',rec1,.*,discard$' /tmp/trace.csv)"
check_eq "discarded offsets" "0 2097152 4194304 6291456" "$(grep ',discard$' /tmp/trace.csv | cut -d, -f3 | xargs)"
check_eq "destroy" 1 "$(grep -c ',rec1,0,destroy$' /tmp/trace.csv)"

cat > /tmp/replay.toml <<TOML
duration_s = 60
chunk = "2M"
local_per_host = "64M"
tier_policy = "interleave"
pool_select = "round-robin"
trace = "/tmp/trace.csv"
[pools]
count = 2
capacity = "1G"
TOML
out=$(poolctl simulate /tmp/replay.toml --json) || fail "replay: $out"
echo "$out" | grep -E '"(accesses|chunks_allocated|chunks_freed|local_accesses)"'
check_eq "replayed placements" 16 "$(echo "$out" | sed -n 's/.*"chunks_allocated": \([0-9]*\).*/\1/p')"
check_eq "all given back" 16 "$(echo "$out" | sed -n 's/.*"chunks_freed": \([0-9]*\).*/\1/p')"
info "ok: a recorded trace replays"
