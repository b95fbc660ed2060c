#!/usr/bin/env bash
# Rig self-test: a failing guest test, and a guest test after which the
# kernel log shows "WARNING:", must each be reported as failed, the summary
# must count them, and the exit status of the same entry point that
# `make check` uses (scripts/check guest) must be non-zero; a passing test
# must still pass; a skip is counted apart, with its reason, and a skip that
# the allow list does not name is a failure when skips are strict (CI).
set -uo pipefail
cd "$(dirname "$0")/../.."
err() { echo "selftest: $*"; exit 1; }

# its own work directory: make check may run the hotplug topology meanwhile;
# its own skip list and allow list (the outer make check's stay apart):
# selftest-skip is allowed on any kernel, selftest-skip-unlisted is not
allowed=$(mktemp)
trap 'rm -f "$allowed"' EXIT
echo 'hotplug/selftest-skip * the rig self-test skips on purpose' >"$allowed"
out=$(env -u CHECK_SKIPS RIG_OUT=$PWD/build/rig-selftest SKIPS_ALLOWED=$allowed CHECK_STRICT_SKIPS=1 \
	GUEST_TESTS="selftest-pass selftest-fail selftest-warn selftest-skip selftest-skip-unlisted" \
	scripts/check guest hotplug 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || err "scripts/check exited 0 with failing guest tests"
echo "$out" | grep -q '^PASS hotplug/selftest-pass ' || err "selftest-pass not reported as PASS"
echo "$out" | grep -q '^FAIL hotplug/selftest-fail ' || err "selftest-fail not reported as FAIL"
echo "$out" | grep -q '^FAIL hotplug/selftest-warn ' || err "a WARNING in dmesg did not fail the test"
echo "$out" | grep -qE '^SKIP hotplug/selftest-skip \(.* s\) on [0-9][^ ]*: skips on purpose$' ||
	err "selftest-skip not reported as SKIP with its kernel and reason"
echo "$out" | grep -q '^allowed: hotplug/selftest-skip ' || err "the allowed skip was not judged allowed"
echo "$out" | grep -q '^FAIL skip/hotplug/selftest-skip-unlisted ' || err "a skip no allow list names did not fail"
[ "$(echo "$out" | tail -n 1)" = "1 passed, 3 failed, 1 skipped" ] ||
	err "summary is '$(echo "$out" | tail -n 1)', expected '1 passed, 3 failed, 1 skipped'"
echo "selftest: ok"
