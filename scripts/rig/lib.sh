# Shared helpers for the QEMU rig scripts (sourced, not executed).
#
# RIG_KVER  kernel version the guest boots (default: newest /boot/vmlinuz-*
#           that has a matching /lib/modules/<ver>, which is 6.12 after
#           scripts/deps.sh; override with KVER=, a version or a release:
#           KVER=6.1 boots Debian 12's own kernel)
# RIG_OUT   work directory for images, backing files and logs (default
#           build/rig under the source tree; override with RIG_OUT=)
# RIG_DEBUG_DIR  a debug kernel built by scripts/rig/debug-kernel: the rig
#           boots its bzImage (everything built in) instead of Debian's
# RIG_KMOD  the poolmem.ko to put in the image (default kmod/poolmem.ko)

RIG_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RIG_DIR=$RIG_SRC/scripts/rig
RIG_OUT=${RIG_OUT:-$RIG_SRC/build/rig}

rig_die() { echo "rig: $*" >&2; exit 2; }

rig_kver() {
	if [ -n "${RIG_DEBUG_DIR:-}" ]; then
		cat "$RIG_DEBUG_DIR/kver"
		return
	fi
	rig_debian_kver
}

# Debian's kernel: the rig's default, and always the inner guests' kernel.
# KVER is a whole version (6.1.0-57-amd64) or its release (6.1, 6.12):
# the newest installed kernel of that release.
rig_debian_kver() {
	local v best=
	if [ -n "${KVER:-}" ] && [ -d "/lib/modules/$KVER" ]; then
		echo "$KVER"
		return
	fi
	for v in $(ls /boot/vmlinuz-* 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V); do
		[ -d "/lib/modules/$v/kernel" ] || continue
		case "$v" in
		"${KVER:-}".* | "${KVER:-}"-*) best=$v ;;
		*) [ -n "${KVER:-}" ] || best=$v ;;
		esac
	done
	[ -n "$best" ] || rig_die "no kernel ${KVER:+of release '$KVER' }in /boot with modules in /lib/modules (run scripts/deps.sh)"
	echo "$best"
}

# Topologies live in scripts/rig/topologies/NAME.sh; print their names.
rig_topologies() {
	local f
	for f in "$RIG_DIR"/topologies/*.sh; do basename "$f" .sh; done
}

# A test's header pragmas, "# rig-KEY: VALUE" lines in tests/guest/*.sh
# and tests/bench/*.sh (topologies, boot, order, debug, core, append,
# needs, optional, env, host-gib), are read here and nowhere else on the
# host (the guest's init reads rig-timeout itself: it has no lib.sh).
# rig_pragma FILE KEY: VALUE of the first such line, nothing if none.
rig_pragma() { sed -n "s/^# rig-$2: *//p" "$1" | head -n 1; }
# rig_pragma_is FILE KEY WORD: VALUE's first word is WORD ("own", "skip")
rig_pragma_is() {
	local v
	v=$(rig_pragma "$1" "$2")
	[ -n "$v" ] && [ "${v%% *}" = "$3" ]
}
# rig_pragma_has FILE KEY WORD: WORD is one of VALUE's words (a list)
rig_pragma_has() { rig_pragma "$1" "$2" | tr ' ' '\n' | grep -qx "$3"; }

# Guest tests declare the topologies they run on in a header line:
#   # rig-topologies: cxl2 nvdimm-numa
# Print the tests (basenames without .sh) that run on topology $1.
rig_tests_for() {
	local topo=$1 f
	for f in "$RIG_SRC"/tests/guest/*.sh; do
		if rig_pragma_has "$f" topologies "$topo"; then
			basename "$f" .sh
		fi
	done
}

# Adding up "N passed, N failed[, N skipped]" summaries (of rig runs,
# scripts/check suites). rig_sum_add TEXT adds the last summary line in
# TEXT (no such line counts as one failure); rig_sum_print prints the total
# and returns non-zero when anything failed.
RIG_P=0 RIG_F=0 RIG_S=0
rig_sum_add() {
	local line p f s
	line=$(printf '%s\n' "$1" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	if [ -z "$line" ]; then RIG_F=$((RIG_F + 1)); return; fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
	RIG_P=$((RIG_P + p)) RIG_F=$((RIG_F + f)) RIG_S=$((RIG_S + ${s:-0}))
}
rig_sum_print() {
	echo "$RIG_P passed, $RIG_F failed, $RIG_S skipped"
	[ $RIG_F -eq 0 ]
}

# Write the uncompressed kernel (an ELF vmlinux) inside bzImage $1 to $2.
# QEMU boots it through its PVH entry (CONFIG_PVH, Debian's 6.1 and 6.12)
# without running the bzImage's decompressor: under nested TCG that
# decompressor alone took about a minute of each inner guest's boot. The
# payload is found by the boot protocol's setup header (setup_sects at
# 0x1f1, payload_offset and payload_length at 0x248 and 0x24c); xz and zstd
# payloads end in the 4-byte uncompressed size, which is not part of the
# stream. Fails (status 1, $2 removed) if the payload is not one of those
# or the result has no PVH entry note; the caller then uses the bzImage.
rig_vmlinux() {
	local bz=$1 out=$2 fmt
	fmt=$(python3 - "$bz" "$out.payload" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
if len(d) < 0x250 or d[0x202:0x206] != b'HdrS':
    sys.exit('not a bzImage')
sects = d[0x1f1] or 4
off, length = struct.unpack_from('<II', d, 0x248)
p = d[(sects + 1) * 512 + off:][:length]
for magic, fmt in ((b'\x28\xb5\x2f\xfd', 'zstd'), (b'\xfd7zXZ\x00', 'xz')):
    if p.startswith(magic):
        open(sys.argv[2], 'wb').write(p[:-4])
        print(fmt)
        break
else:
    sys.exit('payload neither zstd nor xz')
PY
	) || { rm -f "$out.payload"; return 1; }
	"$fmt" -dc < "$out.payload" > "$out" 2>/dev/null || { rm -f "$out" "$out.payload"; return 1; }
	rm -f "$out.payload"
	# XEN_ELFNOTE_PHYS32_ENTRY (18): the PVH entry point
	if ! readelf -n "$out" 2>/dev/null | grep -q 'Unknown note type: (0x00000012)'; then
		rm -f "$out"
		return 1
	fi
}

# Copy the module's sources (kmod/: Kbuild, *.c, *.h) to directory $1 (an
# absolute path), no
# build products: builds elsewhere (make check's parallel jobs: the unit
# tests' install round trip rebuilds kmod/ in place) may be writing them.
rig_kmod_src() {
	mkdir -p "$1"
	(cd "$RIG_SRC/kmod" && find . \( -name Kbuild -o -name '*.[ch]' \) ! -name '*.mod.c' | cpio -pdm --quiet "$1")
}
