// SPDX-License-Identifier: GPL-2.0
/*
 * writer: inside the inner Linux guest of the live migration test
 * (tests/guest/migrate-node.sh). Fills MIB mebibytes with a known pattern
 * and keeps a checksum of them that weighs every 8-byte word by its
 * position, so a lost write, a stale page or a page at the wrong address
 * all change it. Then, round after round:
 *   - RATE random word writes per second for about a second, each one
 *     folded into the checksum as it is made (the memory migration must
 *     carry over while it runs: dirty pages, resent);
 *   - a full read of the region, whose checksum must equal the one kept:
 *     "INNER ROUND N OK WRITES" or "INNER ROUND N BAD have want".
 * The checksum lives in this process's memory too, so it moves with the
 * guest: a round printed by the destination's QEMU verifies what the
 * migration delivered. Static: the inner initramfs has no libraries.
 *
 * usage: writer [MIB [RATE]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t mix(uint64_t x)	/* splitmix64's finalizer */
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)atoi(argc > 1 ? argv[1] : "48") << 20;
	long rate = argc > 2 ? atol(argv[2]) : 2000;
	size_t n = len / 8, i;
	uint64_t *w, sum = 0, seed = 1, writes = 0;
	unsigned long round;

	w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED) {
		perror("writer: mmap");
		return 1;
	}
	for (i = 0; i < n; i++) {
		w[i] = mix(i);
		sum += w[i] * (2 * i + 1);
	}
	printf("INNER WRITER %zu MiB %ld/s\n", len >> 20, rate);
	fflush(stdout);
	for (round = 1;; round++) {
		double t0 = now(), t;
		long done = 0;
		uint64_t have = 0;

		/* writes in batches of 1/20 of the rate, spread over a second */
		while ((t = now() - t0) < 1.0) {
			while (done < rate * (t + 0.05)) {
				uint64_t v = mix(seed++ ^ 0xa5a5a5a5a5a5a5a5ULL);

				i = mix(seed++) % n;
				sum += (v - w[i]) * (2 * i + 1);
				w[i] = v;
				done++;
			}
			nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);
		}
		writes += done;
		for (i = 0; i < n; i++)
			have += w[i] * (2 * i + 1);
		if (have == sum)
			printf("INNER ROUND %lu OK %llu\n", round, (unsigned long long)writes);
		else
			printf("INNER ROUND %lu BAD %016llx %016llx\n", round, (unsigned long long)have,
			       (unsigned long long)sum);
		fflush(stdout);
	}
}
