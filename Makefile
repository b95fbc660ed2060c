# poolmem: one entry point.
#
#   make            build poolmem.ko (kbuild, W=1) and the C++20 userspace (CMake)
#   make check      every test: host unit tests, the QEMU guest suites, the
#                   exporter end-to-end test, the rig self-test; the last line
#                   is "N passed, N failed" and the exit status follows it
#   make check-debug  the guest suites again on the rig's debug kernel (KASAN,
#                   lockdep, kmemleak, ...; built once per machine and cached)
#   make fuzz SECONDS=N [SEED=N]  the syscall fuzzer on the debug kernel
#   make demo       boot the cxl2 rig, bring pooled memory online, show it
#   make bench      benchmarks inside the rig (figures are ratios)
#   make install    module (+ depmod), binaries, man pages, units; on the
#                   host itself (no DESTDIR) also group poolmem and
#                   /etc/modprobe.d/poolmem.conf (stats_gid: the exporter's group)
#   make uninstall  remove what make install put there (the group stays)
#   make clean
#
# KVER selects the kernel (default: newest Debian kernel installed under
# /boot with modules, the one the rig boots); KDIR overrides its build tree.
# make install and uninstall are for the running kernel (uname -r) unless
# KVER is given: on a host that runs 6.1 with 6.12 installed, the newest
# kernel's module would not load.

# KVER=6.1 or KVER=6.12 picks the newest installed kernel of that release.
KVER_GIVEN := $(strip $(KVER))
override KVER := $(shell KVER=$(KVER) bash -c '. scripts/rig/lib.sh && rig_kver' 2>/dev/null)
INSTALL_KVER := $(if $(KVER_GIVEN),$(KVER),$(shell uname -r))
INSTALL_KMOD := $(abspath $(or $(BUILD),build))/kmod-$(INSTALL_KVER)
# make install signs the module (Secure Boot) with this key and certificate
# when both exist: by default DKMS's MOK, the one Debian's DKMS signs with
# (Documentation/admin-guide/real-host.rst, Secure Boot)
SIGN_KEY ?= /var/lib/dkms/mok.key
SIGN_CERT ?= /var/lib/dkms/mok.pub
export KVER
KDIR ?= /lib/modules/$(KVER)/build
BUILD ?= build
CMAKE_BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
DESTDIR ?=
PREFIX ?= /usr/local

.PHONY: all kmod userspace check check-cluster check-migrate check-debug fuzz check-unit check-guest check-rig demo bench simulate install uninstall clean

all: kmod userspace

kmod:
	@test -d "$(KDIR)" || { echo "kmod: no kernel build tree at '$(KDIR)' (run scripts/deps.sh or set KDIR=)"; exit 2; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod W=1 modules

$(BUILD)/CMakeCache.txt: CMakeLists.txt
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=$(PREFIX)

userspace: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# make check: the cluster rig's claim race at 30 rounds (make check-cluster: 100);
# CHECK_SUITES picks suites (scripts/check's arguments: .ci/run adds the
# debug kernel's), CHECK_JOBS how many run at once
check: all
	CLUSTER_ROUNDS=$${CLUSTER_ROUNDS:-30} scripts/check $(CHECK_SUITES)

check-cluster: all
	scripts/check cluster

check-migrate: all
	scripts/check migrate

check-debug: all
	scripts/check debug $(TOPOLOGIES)

# make fuzz SECONDS=N [SEED=N]: the syscall fuzzer for N seconds on the debug kernel
SECONDS ?= 300
fuzz: all
	SECONDS_TO_FUZZ=$(SECONDS) scripts/fuzz

check-unit: userspace
	scripts/check unit

check-guest: all
	scripts/check guest $(TOPOLOGIES)

check-rig: all
	scripts/check rig

demo: all
	scripts/demo

bench: all
	scripts/bench

# seed 003's experiment in the policy simulator: the table and figures of
# Documentation/simulation.md
simulate: userspace
	scripts/simulate

# the module is built for $(INSTALL_KVER) apart from the tree's kmod/ (the rig's kernel's)
install: userspace
	@test -d /lib/modules/$(INSTALL_KVER)/build || { echo "install: no kernel build tree for $(INSTALL_KVER) (apt install linux-headers-$(INSTALL_KVER), or give KVER=)"; exit 2; }
	rm -rf $(INSTALL_KMOD)
	bash -c '. scripts/rig/lib.sh && rig_kmod_src $(INSTALL_KMOD)'
	$(MAKE) -C /lib/modules/$(INSTALL_KVER)/build M=$(INSTALL_KMOD) W=1 modules
	@if [ -f "$(SIGN_KEY)" ] && [ -f "$(SIGN_CERT)" ]; then \
		echo "  SIGN    poolmem.ko with $(SIGN_KEY)"; \
		/lib/modules/$(INSTALL_KVER)/build/scripts/sign-file sha256 "$(SIGN_KEY)" "$(SIGN_CERT)" $(INSTALL_KMOD)/poolmem.ko; \
	else \
		echo "  (not signed: no $(SIGN_KEY) and $(SIGN_CERT); Secure Boot hosts: see real-host.rst)"; \
	fi
	$(MAKE) -C /lib/modules/$(INSTALL_KVER)/build M=$(INSTALL_KMOD) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=extra modules_install
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)
	DESTDIR=$(DESTDIR) KVER=$(INSTALL_KVER) scripts/install-host install

uninstall:
	DESTDIR=$(DESTDIR) KVER=$(INSTALL_KVER) BUILD=$(BUILD) scripts/install-host uninstall

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod clean
	rm -rf $(BUILD)
