#!/bin/sh
# usage: promtool.sh EXPORTER FIXTURE-GENERATOR
# promtool check metrics on the exporter's output for a fixture with pools
# and domains, and for one where the module is not loaded.
set -e
exp=$1 gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$gen" "$tmp/fx" 3 4
python3 "$gen" "$tmp/nomod" 0 0 --no-module
for fx in fx nomod; do
	"$exp" --once --path.sysfs "$tmp/$fx/sys" --path.procfs "$tmp/$fx/proc" > "$tmp/$fx.prom" 2>/dev/null
	out=$(promtool check metrics < "$tmp/$fx.prom" 2>&1) || { echo "promtool ($fx): $out"; exit 1; }
	[ -z "$out" ] || { echo "promtool ($fx) warns: $out"; exit 1; }
done
echo "promtool: clean"
