# Runner self-test (no rig-topologies line: only tests/rig/selftest.sh runs it).
. /rig/tests/lib/common.sh
info "passes on purpose"
