# Runner self-test (no rig-topologies line: only tests/rig/selftest.sh runs it).
# Exits 0 but leaves a kernel-style warning in the log: the rig must fail it.
. /rig/tests/lib/common.sh
echo "WARNING: poolmem rig self-test, injected on purpose" > /dev/kmsg
