#!/bin/sh
# The policy simulator's speed (issue 14: at least 1 million events per
# second): seed 003's scenario with each pool selection, events and host
# time as poolctl simulate reports them.  usage: host-sim.sh POOLCTL SCENARIO
poolctl=$1 scenario=$2
"$poolctl" simulate "$scenario" --compare random,round-robin,nearest,smart-idle --json |
	python3 -c '
import json, sys
runs = json.load(sys.stdin)
ev = sum(r["events"] for r in runs)
t = sum(r["events"] / r["events_per_second"] for r in runs)
for r in runs:
    print("bench: simulator %s/%s: %d events, %.2f M events/s" % (r["tier_policy"], r["pool_select"], r["events"], r["events_per_second"] / 1e6))
print("bench: simulator: %d events in %.2f s of host time = %.2f M events/s (goal: 1 M)" % (ev, t, ev / t / 1e6))
print("goal:simulator-speed|the policy simulator on seed 003, all pool selections, M events/s|>=|1|%.2f|%.2f|%.2f|M/s" % (
    ev / t / 1e6, min(r["events_per_second"] for r in runs) / 1e6, max(r["events_per_second"] for r in runs) / 1e6))
sys.exit(0 if ev / t >= 1e6 else 1)
'
