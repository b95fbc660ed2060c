// SPDX-License-Identifier: GPL-2.0
/*
 * hog: inside the inner Linux guest of tests/guest/qemu-balloon.sh,
 * allocate and touch MiB mebibytes, say so on the console, free them, say
 * so, and stay (the test measures from outside). Static: the inner
 * initramfs has no libraries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t len = (size_t)atoi(argc > 1 ? argv[1] : "256") << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("hog: mmap");
		return 1;
	}
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	printf("HOG ALLOCATED %zu\n", len >> 20);
	fflush(stdout);
	sleep(atoi(argc > 2 ? argv[2] : "3"));
	munmap(p, len);
	printf("HOG FREED %zu\n", len >> 20);
	fflush(stdout);
	for (;;)
		pause();
}
