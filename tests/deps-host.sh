#!/bin/sh
# scripts/deps.sh --host installs what a production host needs to build and
# install poolmem, and nothing of the rig's: no backports source, no kernel
# image, no service (etcd, Prometheus), no QEMU or libvirt. Run with
# DEPS_DRY_RUN=1 against a package list with nothing installed (PATH gets a
# dpkg-query that knows no package), so the whole list is printed.
# usage: deps-host.sh SRCDIR
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\nexit 1\n' > "$tmp/dpkg-query"
chmod +x "$tmp/dpkg-query"
fail() { echo "FAIL: $*"; exit 1; }
out=$(PATH="$tmp:$PATH" DEPS_DRY_RUN=1 bash "$src/scripts/deps.sh" --host 2>&1) || fail "deps.sh --host: $out"
echo "$out"
list=" $(echo "$out" | sed -n 's/^deps: installing //p') "
[ "$list" != "  " ] || fail "no package list"
for p in gcc make cmake libdaxctl-dev libcli11-dev prometheus-cpp-dev debhelper "linux-headers-$(uname -r)"; do
	case "$list" in *" $p "*) ;; *) fail "--host does not install $p" ;; esac
done
# exact names, and the families of the kernel images, QEMU and libvirt
for p in etcd-server prometheus mmdebstrap linux-source-6.12; do
	case "$list" in *" $p "*) fail "--host installs the rig's $p" ;; esac
done
for p in linux-image qemu-system libvirt-daemon; do
	case "$list" in *" $p"*) fail "--host installs the rig's $p*" ;; esac
done
echo "$out" | grep -q backports && fail "--host touched backports: $out"
echo "ok: --host installs $(echo "$list" | wc -w) packages, none of the rig's"
