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
# the module for each supported kernel, given by KVER (without it, make
# install is for the running kernel, which here is the CI machine's own);
# each is built apart from the tree's kmod/
# signed with the key given (Secure Boot; by default DKMS's MOK)
keys=$(mktemp -d)
trap 'rm -rf "$dest" "$keys"' EXIT
openssl req -new -x509 -nodes -days 1 -subj "/CN=poolmem roundtrip key" -newkey rsa:2048 \
	-keyout "$keys/k.key" -outform DER -out "$keys/k.der" >/dev/null 2>&1 || fail "openssl: no test key"
for rel in 6.1 6.12; do
	make -s -C "$src" BUILD="$build" KVER=$rel SIGN_KEY="$keys/k.key" SIGN_CERT="$keys/k.der" install \
		DESTDIR="$dest" >/dev/null 2>&1 || fail "make install KVER=$rel"
done
for m in "$dest"/lib/modules/*/extra/poolmem.ko*; do
	signer=$(modinfo -F signer "$m" 2>&1)
	[ "$signer" = "poolmem roundtrip key" ] || fail "$m: signer '$signer', not the key make install was given"
done
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
for f in "$prefix/sbin/poolctl" "$prefix/bin/poolmem-exporter" "$prefix/lib/systemd/system/poolmem-exporter.service" \
	"$prefix/share/man/man8/poolctl.8" /etc/modprobe.d/poolmem.conf; do
	[ -f "$dest$f" ] || fail "not installed: $f"
done
for rel in 6.1 6.12; do
	# (6.12's modules_install compresses it: poolmem.ko.xz)
	ls "$dest"/lib/modules/$rel.*/extra/poolmem.ko* >/dev/null 2>&1 || fail "module not installed for $rel"
done
# poolctl's device plugin, where the installed poolctl looks for it
plugin=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
case $plugin in /*) ;; *) plugin=$prefix/$plugin ;; esac
[ -f "$dest$plugin/poolmem/poolmem-devices.so" ] || fail "not installed: $plugin/poolmem/poolmem-devices.so"
strings "$dest$prefix/sbin/poolctl" | grep -qx "$plugin/poolmem" ||
	fail "poolctl does not look for its plugin in $plugin/poolmem, where it is installed"
grep -q "^ExecStart=$prefix/bin/poolmem-exporter " "$dest$prefix/lib/systemd/system/poolmem-exporter.service" ||
	fail "ExecStart does not follow the prefix $prefix"
n=$(find "$dest" -type f | wc -l)
for rel in 6.1 6.12; do
	make -s -C "$src" BUILD="$build" KVER=$rel uninstall DESTDIR="$dest" >/dev/null 2>&1 ||
		fail "make uninstall KVER=$rel"
done
left=$(find "$dest" -type f)
[ -z "$left" ] || fail "left after uninstall: $left"
# without KVER: the running kernel's, or a clear refusal when it has no build tree
# (make check's Makefile exports KVER: not given means not in the environment either)
out=$(env -u KVER -u KDIR make -s -C "$src" BUILD="$build" install DESTDIR="$dest" 2>&1)
if [ -d "/lib/modules/$(uname -r)/build" ]; then
	ls "$dest/lib/modules/$(uname -r)/extra/"poolmem.ko* >/dev/null 2>&1 || fail "make install without KVER: not for the running kernel $(uname -r)"
	env -u KVER -u KDIR make -s -C "$src" BUILD="$build" uninstall DESTDIR="$dest" >/dev/null 2>&1
else
	echo "$out" | grep -q "install: no kernel build tree for $(uname -r)" ||
		fail "make install without KVER on a kernel without headers: $out"
fi
echo "ok: $n files installed, none left after uninstall; without KVER, $(uname -r)'s"
