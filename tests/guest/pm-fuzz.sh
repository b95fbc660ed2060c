# rig-topologies: nvdimm-numa cxl2
# rig-debug: core
# THEORY OF OPERATION: tests/guest/bin/pmfuzz.c for a bounded time (60 s
# here; make fuzz SECONDS=N runs longer): random sequences of the calls
# tenants and operators make, from 3 processes x 3 threads on shared names,
# then the invariants (quotas never exceeded, pools' allocated bytes = the
# chunks their domains hold, everything back to baseline after destroy).
# The rig fails the test on any kernel report. The seed is the date's
# seconds unless PMFUZZ_SEED is given; pmfuzz prints it for replay.
. /rig/tests/lib/common.sh
pm_pools_up
# kernel command line pmfuzz_seed=N pmfuzz_secs=N (RIG_APPEND) override both
karg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -n 1; }
seed=$(karg pmfuzz_seed)
[ -n "$seed" ] || seed=$(date +%s)
secs=$(karg pmfuzz_secs)
[ -n "$secs" ] || secs=$(($(pm_scale 60) > 30 ? $(pm_scale 60) : 30))
pmfuzz "$seed" "$secs" 3 3
check_eq "domains after fuzzing" "" "$(pmtest domain-list | xargs)"
check_eq "profiles after fuzzing" "" "$(pmtest profile-list | xargs)"

# coverage of poolmem.ko (debug kernel, built with GCOV_PROFILE=y): the
# counters go to the console for the host's gcov (scripts/fuzz)
for f in $(find /sys/kernel/debug/gcov -name '*.gcda' -path '*kmod-debug*' 2>/dev/null); do
	echo "@@GCDA ${f#*/kmod-debug/} $(cat "$f" | base64 -w 0)"
done
