#!/bin/sh
# The shipped alert rules load (promtool check rules) and behave
# (promtool test rules on tests/exporter/alerts.test.yml).
set -e
cd "$(dirname "$0")"
promtool check rules ../../exporter/alerts/poolmem.rules.yml
promtool test rules alerts.test.yml
