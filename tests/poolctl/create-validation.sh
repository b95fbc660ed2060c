#!/bin/sh
# poolctl vm create and profile create check every rule before they ask the kernel: each broken
# rule gets its own one-line message naming the option, and exit code 2 (a
# pool that doesn't exist: 3). The fixture sysfs has nodes 0 and 1 with
# memory and pools cxl0 (node 1) and cxl1 (node 2); no control device is
# opened, so a check that slipped through fails with another message.
# usage: create-validation.sh POOLCTL FIXTURES
set -u
poolctl=$1 fix=$(cd "$2" && pwd)
sys=$(mktemp -d)
trap 'rm -rf "$sys"' EXIT
ln -s "$fix/sysfs-2node/devices" "$sys/devices"
ln -s "$fix/sysfs-poolmem/kernel" "$sys/kernel"
ln -s "$fix/sysfs-poolmem/class" "$sys/class"
fails=0
# expect CODE REGEX ARGS...: exit code CODE and exactly one stderr line matching REGEX
expect() {
	code=$1 re=$2
	shift 2
	err=$("$poolctl" --sysfs "$sys" --control /nonexistent "$@" 2>&1 >/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	if [ $rc -ne "$code" ] || [ "$lines" -ne 1 ] || ! printf '%s\n' "$err" | grep -qE "$re"; then
		echo "FAIL: poolctl $*: exit $rc (want $code), $lines line(s): $err"
		fails=$((fails + 1))
	else
		echo "ok: poolctl $*: $err"
	fi
}
expect 2 '^poolctl: --size 0: must be above 0' vm create w --size 0
expect 2 '^poolctl: --size 15M: not a multiple of the chunk size 2.0 MiB \(use 14.0 MiB or 16.0 MiB\)$' \
	vm create w --size 15M --local 16M
expect 2 '^poolctl: --chunk 3M: must be a power of two from 2M to 1G$' vm create w --size 12M --chunk 3M --local 12M
expect 2 '^poolctl: --chunk 1M: must be a power of two' vm create w --size 12M --chunk 1M --local 12M
expect 2 "^poolctl: a/b: invalid domain name: .*not starting with '.' or '-'" vm create a/b --size 16M --local 16M
expect 2 '^poolctl: -x: invalid domain name' vm create --size 16M --local 16M -- -x
expect 2 '^poolctl: control: invalid domain name' vm create control --size 16M --local 16M
expect 2 'invalid domain name: 1 to 31 characters' vm create aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa --size 16M --local 16M
expect 2 '^poolctl: --local 32M: above --size 16M \(a tier.s quota is at most the size: lower it' \
	vm create w --size 16M --local 32M
expect 2 '^poolctl: --pool 64M: above --size 16M' vm create w --size 16M --pool 64M
expect 2 '^poolctl: --local \+ --pool \(8.0 MiB\) must cover --size 16M: raise one of them by 8.0 MiB$' \
	vm create w --size 16M --local 4M --pool 4M
expect 2 '^poolctl: --local 9M: not a multiple of the chunk size' vm create w --size 16M --local 9M --pool 8M
expect 3 '^poolctl: --home-node 99: no such node with memory' vm create w --size 16M --local 16M --home-node 99
expect 2 "^poolctl: --home-node 1: it is pool cxl0's node" vm create w --size 16M --local 16M --home-node 1
expect 3 '^poolctl: nosuch: no such pool' vm create w --size 16M --pool 16M --pools cxl0,nosuch
expect 2 "^poolctl: --size: invalid size '1Q'" vm create w --size 1Q
expect 2 '^poolctl: --tier-policy: unknown policy' vm create w --size 16M --local 16M --tier-policy fastest
expect 2 '^poolctl: .*--size is required \(see poolctl --help\)$' vm create w
# a word that is no command is named, with the commands there are
expect 2 "^poolctl: 'frobnicate' is not a command of poolctl node \\(list\\) \\(see poolctl --help\\)$" node frobnicate
expect 2 "^poolctl: 'frob' is not a command of poolctl \\(node, pool, vm," frob
expect 2 "^poolctl: 'creat' is not a command of poolctl vm \\(create, list," vm creat x
expect 2 "^poolctl: 'vm' needs a command \\(create, list," vm
expect 2 "^poolctl: a command is needed \\(node, pool," 
# global options after the command: -u with --json (here: no control device)
expect 3 '^poolctl: /nonexistent: ' vm create w --size 16M --local 8M --pool 8M --home-node 0 -u
# simulate: sizes of 0 and a missing scenario, as the other commands
expect 2 '^poolctl: --host-dram 0: the host needs DRAM for VMs$' simulate plan --vm-size 4G --host-dram 0
expect 3 '^poolctl: /nonexistent.toml: no such file$' simulate /nonexistent.toml
expect 3 '^poolctl: /nonexistent.toml: no such file$' apply --config /nonexistent.toml
# profile create: the same rules, each its own message, before the kernel
expect 2 "^poolctl: a/b: invalid profile name" profile create a/b --pool 100%
expect 2 '^poolctl: --chunk 3M: must be a power of two from 2M to 1G$' profile create p --chunk 3M --pool 100%
expect 2 '^poolctl: --local 3M: not a multiple of the chunk size 2.0 MiB \(use 2.0 MiB or 4.0 MiB\)$' \
	profile create p --local 3M --pool 100%
expect 2 '^poolctl: --pool 6M: not a multiple of the chunk size 4.0 MiB \(use 4.0 MiB or 8.0 MiB\)$' \
	profile create p --chunk 4M --local 100% --pool 6M
expect 2 '^poolctl: --pool 128T: above the largest domain' profile create p --local 100% --pool 128T
expect 2 '^poolctl: --local \+ --pool \(20% \+ 30%\) must cover 100% of a VM.s size$' \
	profile create p --local 20% --pool 30%
expect 2 "^poolctl: --local: invalid percentage '101%'" profile create p --local 101%
expect 3 '^poolctl: --home-node 99: no such node with memory' profile create p --pool 100% --home-node 99
expect 2 "^poolctl: --home-node 1: it is pool cxl0's node" profile create p --pool 100% --home-node 1
expect 3 '^poolctl: nosuch: no such pool' profile create p --pool 100% --pools nosuch
expect 3 '^poolctl: /nonexistent: ' profile create p --local 25% --pool 75% --home-node 0
# pool online: name and device checked before any module is loaded
expect 2 "^poolctl: a/b: invalid pool name" pool online dax0.0 --name a/b
expect 3 '^poolctl: dax9.9: no such dax device' pool online dax9.9
expect 3 '^poolctl: mem9: no such CXL memdev' pool online --cxl mem9
# overcommit: a ratio (1.5) or a percentage (150%), one unit everywhere
expect 2 "^poolctl: --overcommit 150: a ratio from 1 to 10 \(e.g. 1.5\), or a percentage from 100% to 1000%$" pool add q --node 1 --overcommit 150
expect 2 "^poolctl: --overcommit 0.5: a ratio from 1 to 10" pool set cxl0 --overcommit 0.5
expect 2 "^poolctl: --overcommit 1001%: a ratio from 1 to 10" pool online dax0.0 --overcommit 1001%
expect 3 "^poolctl: nosuch: no such pool" pool set nosuch --overcommit 2
# everything valid: gets as far as the control device (exit 3: not found)
expect 3 '^poolctl: /nonexistent: ' vm create w --size 16M --local 8M --pool 8M --home-node 0
out=$("$poolctl" --sysfs /nonexistent --version)
echo "$out" | head -n 1 | grep -qE '^poolctl [0-9]+\.[0-9]+\.[0-9]+ \(kernel ABI [0-9]+\)$' &&
	[ "$(echo "$out" | sed -n 2p)" = "module: not loaded" ] || {
	echo "FAIL: --version: $out"
	fails=$((fails + 1))
}
# the loaded module's ABI next to poolctl's, and plainly when they differ
ours=$("$poolctl" --version | sed -n 's/.*(kernel ABI \([0-9]*\))$/\1/p')
fx=$(mktemp -d)
mkdir -p "$fx/kernel/poolmem/pools"
for abi in "$ours" $((ours - 1)) $((ours + 1)); do
	echo "$abi" > "$fx/kernel/poolmem/abi_version"
	line=$("$poolctl" --sysfs "$fx" --version | sed -n 2p)
	case $abi in
	"$ours") want="module: kernel ABI $ours" ;;
	$((ours - 1))) want="module: kernel ABI $abi (the loaded poolmem module speaks kernel ABI $abi, older than this poolctl's $ours: what it lacks fails; load the module installed with this poolctl (modprobe -r poolmem; modprobe poolmem))" ;;
	*) want="module: kernel ABI $abi (the loaded poolmem module speaks kernel ABI $abi, newer than this poolctl's $ours: use the poolctl installed with that module)" ;;
	esac
	[ "$line" = "$want" ] || { echo "FAIL: --version with a module of ABI $abi: '$line', expected '$want'"; fails=$((fails + 1)); }
done
# status says it too, on standard error
err=$("$poolctl" --sysfs "$fx" status 2>&1 >/dev/null | head -n 1)
[ "$err" = "poolctl: warning: the loaded poolmem module speaks kernel ABI $((ours + 1)), newer than this poolctl's $ours: use the poolctl installed with that module" ] ||
	{ echo "FAIL: status with a newer module: '$err'"; fails=$((fails + 1)); }
rm -f "$fx/kernel/poolmem/abi_version"
[ "$("$poolctl" --sysfs "$fx" --version | sed -n 2p)" = "module: loaded, older than kernel ABI 9 (the loaded poolmem module speaks kernel ABI 8, older than this poolctl's $ours: what it lacks fails; load the module installed with this poolctl (modprobe -r poolmem; modprobe poolmem))" ] ||
	{ echo "FAIL: --version with a module before ABI 9: $("$poolctl" --sysfs "$fx" --version)"; fails=$((fails + 1)); }
rm -rf "$fx"
[ $fails -eq 0 ] && echo "all checks passed"
exit $fails
