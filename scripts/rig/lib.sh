# Shared helpers for the QEMU rig scripts (sourced, not executed).
#
# RIG_KVER  kernel version the guest boots (default: newest /boot/vmlinuz-*
#           that has a matching /lib/modules/<ver>; override with KVER=)
# RIG_OUT   work directory for images, backing files and logs (default
#           build/rig under the source tree; override with RIG_OUT=)

RIG_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RIG_DIR=$RIG_SRC/scripts/rig
RIG_OUT=${RIG_OUT:-$RIG_SRC/build/rig}

rig_die() { echo "rig: $*" >&2; exit 2; }

rig_kver() {
	if [ -n "${KVER:-}" ]; then
		echo "$KVER"
		return
	fi
	local v best=
	for v in $(ls /boot/vmlinuz-* 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V); do
		[ -d "/lib/modules/$v/kernel" ] && best=$v
	done
	[ -n "$best" ] || rig_die "no kernel image in /boot with modules in /lib/modules (run scripts/deps.sh)"
	echo "$best"
}

# Topologies live in scripts/rig/topologies/NAME.sh; print their names.
rig_topologies() {
	local f
	for f in "$RIG_DIR"/topologies/*.sh; do basename "$f" .sh; done
}

# Guest tests declare the topologies they run on in a header line:
#   # rig-topologies: cxl2 nvdimm-numa
# Print the tests (basenames without .sh) that run on topology $1.
rig_tests_for() {
	local topo=$1 f
	for f in "$RIG_SRC"/tests/guest/*.sh; do
		[ "$(basename "$f")" = lib.sh ] && continue
		if sed -n 's/^# rig-topologies://p' "$f" | tr ' ' '\n' | grep -qx "$topo"; then
			basename "$f" .sh
		fi
	done
}
