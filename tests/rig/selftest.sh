#!/usr/bin/env bash
# Rig self-test: a failing guest test, and a guest test after which the
# kernel log shows "WARNING:", must each be reported as failed, the summary
# must count them, and the exit status of the same entry point that
# `make check` uses (scripts/check guest) must be non-zero; a passing test
# must still pass.
set -uo pipefail
cd "$(dirname "$0")/../.."
err() { echo "selftest: $*"; exit 1; }

# its own work directory: make check may run the hotplug topology meanwhile
out=$(RIG_OUT=$PWD/build/rig-selftest GUEST_TESTS="selftest-pass selftest-fail selftest-warn" scripts/check guest hotplug 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || err "scripts/check exited 0 with failing guest tests"
echo "$out" | grep -q '^PASS hotplug/selftest-pass ' || err "selftest-pass not reported as PASS"
echo "$out" | grep -q '^FAIL hotplug/selftest-fail ' || err "selftest-fail not reported as FAIL"
echo "$out" | grep -q '^FAIL hotplug/selftest-warn ' || err "a WARNING in dmesg did not fail the test"
[ "$(echo "$out" | tail -n 1)" = "1 passed, 2 failed" ] || err "summary is '$(echo "$out" | tail -n 1)', expected '1 passed, 2 failed'"
echo "selftest: ok"
