// SPDX-License-Identifier: GPL-2.0
/*
 * hog: inside the inner Linux guest of the nested QEMU tests
 * (tests/guest/qemu-balloon.sh, pm-znuma-guest.sh), allocate and touch MiB
 * mebibytes, say so on the console, wait SECS, free them, say so, and stay
 * (the tests measure from outside). With NODE, the memory is bound to that
 * guest NUMA node first (set_mempolicy(MPOL_BIND), what numactl --membind
 * does). With MARK, that file is made once the memory is touched (a
 * shell waiting for it needs nothing but test -e). Static: the inner
 * initramfs has no libraries.
 *
 * usage: hog [MIB [SECS [NODE [MARK]]]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_BIND 2

int main(int argc, char **argv)
{
	size_t len = (size_t)atoi(argc > 1 ? argv[1] : "256") << 20;
	int node = argc > 3 ? atoi(argv[3]) : -1;
	char *p;

	if (node >= 0) {
		unsigned long mask = 1UL << node;

		if (syscall(SYS_set_mempolicy, MPOL_BIND, &mask, sizeof(mask) * 8)) {
			perror("hog: set_mempolicy");
			return 1;
		}
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("hog: mmap");
		return 1;
	}
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	printf("HOG ALLOCATED %zu%s%s\n", len >> 20, node >= 0 ? " ON NODE " : "", node >= 0 ? argv[3] : "");
	fflush(stdout);
	if (argc > 4) {
		int fd = open(argv[4], O_WRONLY | O_CREAT, 0644);

		if (fd < 0)
			perror("hog: mark");
		else
			close(fd);
	}
	sleep(atoi(argc > 2 ? argv[2] : "3"));
	munmap(p, len);
	printf("HOG FREED %zu\n", len >> 20);
	fflush(stdout);
	for (;;)
		pause();
}
