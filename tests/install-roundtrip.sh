#!/bin/sh
# make install DESTDIR=... puts the module, binaries, man pages, units and
# the modprobe.d file there, with the exporter unit's ExecStart under the
# prefix; make uninstall takes every file away again.
# usage: install-roundtrip.sh SRCDIR BUILDDIR
set -u
src=$1 build=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
make -s -C "$src" BUILD="$build" install DESTDIR="$dest" >/dev/null 2>&1 || fail "make install"
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
for f in "$prefix/sbin/poolctl" "$prefix/bin/poolmem-exporter" "$prefix/lib/systemd/system/poolmem-exporter.service" \
	"$prefix/share/man/man8/poolctl.8" /etc/modprobe.d/poolmem.conf; do
	[ -f "$dest$f" ] || fail "not installed: $f"
done
ls "$dest"/lib/modules/*/extra/poolmem.ko >/dev/null 2>&1 || fail "module not installed"
grep -q "^ExecStart=$prefix/bin/poolmem-exporter " "$dest$prefix/lib/systemd/system/poolmem-exporter.service" ||
	fail "ExecStart does not follow the prefix $prefix"
n=$(find "$dest" -type f | wc -l)
make -s -C "$src" BUILD="$build" uninstall DESTDIR="$dest" >/dev/null 2>&1 || fail "make uninstall"
left=$(find "$dest" -type f)
[ -z "$left" ] || fail "left after uninstall: $left"
echo "ok: $n files installed, none left after uninstall"
