# Runner self-test (no rig-topologies line: only tests/rig/selftest.sh runs it).
# Skips with a reason: the rig must report it as a skip, with the reason,
# and scripts/check must judge it against its allow list.
. /rig/tests/lib/common.sh
skip "skips on purpose"
