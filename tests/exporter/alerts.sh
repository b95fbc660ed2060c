#!/bin/sh
# The shipped alert rules load (promtool check rules) and behave
# (promtool test rules on tests/exporter/alerts.test.yml).
set -e
cd "$(dirname "$0")"
promtool check rules ../../exporter/alerts/poolmem.rules.yml
promtool test rules alerts.test.yml
# every rule has a runbook_url, and it names a section of the runbooks
python3 - ../../exporter/alerts/poolmem.rules.yml ../../Documentation/admin-guide/runbooks.rst <<'PY'
import re, sys
rules, rst = open(sys.argv[1]).read(), open(sys.argv[2]).read()
titles = {m.lower() for m in re.findall(r'^(\w+)\n=+\n', rst, re.M)}
bad = []
for name, body in re.findall(r'- alert: (\w+)\n((?:        .*\n|\n)*)', rules):
    m = re.search(r'runbook_url: "file:///usr/share/doc/poolmem-exporter/runbooks\.html#(\w+)"', body)
    if not m:
        bad.append(f"{name}: no runbook_url")
    elif m.group(1) != name.lower() or m.group(1) not in titles:
        bad.append(f"{name}: runbook_url #{m.group(1)} is no section of runbooks.rst")
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
print(f"runbooks: {len(re.findall(r'- alert: ', rules))} rules, each with its runbook section")
PY
