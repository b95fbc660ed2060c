// SPDX-License-Identifier: GPL-2.0
/* pmtest: memory errors: poison maps, injected errors, physical addresses */
#include "pmtest.h"

int cmd_poison_map(int argc, char **argv)
{
	if (argc < 3)
		usage();
	struct mapping m = map_domain_layout(argv[0], PROT_READ | PROT_WRITE, argv[1]);
	struct poolmem_map_range r[4];
	struct poolmem_map mp = { .size = sizeof(mp), .ranges = (uintptr_t)r, .count = 4 };
	uint64_t page = strtoull(argv[2], NULL, 0), i, pfn;
	const char *what;
	char buf[64];
	int fd, val = -1;

	for (i = 0; i < 512; i++)
		m.p[i << 12] = (uint8_t)i;
	set_name(mp.name, argv[0]);
	if (ioctl(ctl(), POOLMEM_MAP, &mp) || !mp.nr || r[0].offset != 0 || r[0].length < (2 << 20))
		die("map: chunk 0");
	pfn = (r[0].phys >> 12) + page;
	fd = open("/sys/kernel/debug/hwpoison/corrupt-pfn", O_WRONLY);
	if (fd < 0)
		die("open corrupt-pfn (modprobe hwpoison_inject)");
	snprintf(buf, sizeof(buf), "%#" PRIx64, pfn);
	if (write(fd, buf, strlen(buf)) < 0)
		printf("poison-map: corrupt-pfn %s: %s (expected: memory_failure() ignores the page)\n", buf,
		       strerror(errno));
	close(fd);
	munmap(m.p, m.size);
	close(m.fd);
	m = map_domain_layout(argv[0], PROT_READ | PROT_WRITE, argv[1]);
	what = poison_read(&m, page + 1, &val);
	printf("poison-map: page %" PRIu64 " (neighbour): %s %d\n", page + 1, what, val);
	val = -1;
	what = poison_read(&m, page, &val);
	printf("poison-map: page %" PRIu64 " (poisoned): %s %d\n", page, what, val);
	return 0;
}

/* The newest memory error record for host physical address @phys, waiting up to 5 s. */
static int memerr_wait(uint64_t phys, uint64_t from, struct poolmem_memory_error *out)
{
	struct poolmem_memory_error e[POOLMEM_MEMORY_ERRORS_KEPT];
	int tries, i;

	for (tries = 0; tries < 500; tries++) {
		struct poolmem_memory_errors a = { .size = sizeof(a), .from = from,
						   .errors = (uintptr_t)e, .count = POOLMEM_MEMORY_ERRORS_KEPT };

		if (ioctl(ctl(), POOLMEM_MEMORY_ERRORS, &a))
			die("POOLMEM_MEMORY_ERRORS");
		for (i = (int)a.nr - 1; i >= 0; i--) {
			if (e[i].phys == phys) {
				*out = e[i];
				return 0;
			}
		}
		usleep(10000);
	}
	return -1;
}

static uint64_t memerr_next(void)
{
	struct poolmem_memory_errors a = { .size = sizeof(a) };

	if (ioctl(ctl(), POOLMEM_MEMORY_ERRORS, &a))
		die("POOLMEM_MEMORY_ERRORS");
	return a.total;
}

/*
 * memerr NAME LAYOUT METHOD PAGE: a memory error in page PAGE of domain
 * NAME, end to end. Stamps every 8 bytes of the domain with its offset,
 * finds PAGE's host address (POOLMEM_MAP), then
 *  - madvise: madvise(MADV_HWPOISON) on it;
 *  - inject: hwpoison_inject's corrupt-pfn;
 *  - sysfs: writes it to /sys/devices/system/memory/soft_offline_page;
 *  - ioctl: POOLMEM_PAGE_OFFLINE;
 *  - check: nothing (no stamping either): reads what an earlier run left;
 *  - none: stamps, injects nothing, reads back;
 * waits for poolmem's record of it (POOLMEM_MEMORY_ERRORS), and reads the
 * whole domain back through the same mapping (mapped with LAYOUT). Prints
 * the record, what reading PAGE gave (its words intact, or SIGBUS with its
 * code and whether the address was PAGE's) and how many other pages read
 * back intact.
 */
int cmd_memerr(int argc, char **argv)
{
	if (argc < 4)
		usage();
	struct mapping m = map_domain_layout(argv[0], PROT_READ | PROT_WRITE, argv[1]);
	struct poolmem_map_range r[64];
	struct poolmem_map mp = { .size = sizeof(mp), .ranges = (uintptr_t)r, .count = 64 };
	struct sigaction sa = { .sa_sigaction = on_sigbus_info, .sa_flags = SA_SIGINFO };
	const char *method = argv[2];
	uint64_t page = strtoull(argv[3], NULL, 0), off = page << 12, phys = 0, from, i;
	uint64_t *w = (uint64_t *)m.p, pages = m.size >> 12;
	volatile uint64_t p, good = 0, bad = 0;
	struct poolmem_memory_error e;
	struct timespec t0, t1;
	char buf[64];
	int fd, ret = 0;
	uint32_t k;

	if (off >= m.size)
		die("memerr: PAGE past the end");
	if (!strcmp(method, "check"))
		goto check;
	for (i = 0; i < m.size / 8; i++)
		w[i] = i * 8 ^ 0x5a5a000000000000ull;
	set_name(mp.name, argv[0]);
	if (ioctl(ctl(), POOLMEM_MAP, &mp))
		die("POOLMEM_MAP");
	for (k = 0; k < mp.nr; k++)
		if (off >= r[k].offset && off < r[k].offset + r[k].length)
			phys = r[k].phys + (off - r[k].offset);
	if (!phys)
		die("memerr: PAGE not mapped");
	printf("memerr: page %" PRIu64 " at phys %#" PRIx64 "\n", page, phys);
	from = memerr_next();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(buf, sizeof(buf), "%#" PRIx64, !strcmp(method, "inject") ? phys >> 12 : phys);
	if (!strcmp(method, "none")) {
		printf("memerr: stamped\n");
		goto check;
	} else if (!strcmp(method, "madvise")) {
		ret = madvise(m.p + off, 4096, MADV_HWPOISON);
	} else if (!strcmp(method, "inject") || !strcmp(method, "sysfs")) {
		fd = open(!strcmp(method, "inject") ? "/sys/kernel/debug/hwpoison/corrupt-pfn" :
			  "/sys/devices/system/memory/soft_offline_page", O_WRONLY);
		if (fd < 0)
			die("open the injection file (modprobe hwpoison_inject)");
		ret = write(fd, buf, strlen(buf)) < 0 ? -1 : 0;
		close(fd);
	} else if (!strcmp(method, "ioctl")) {
		struct poolmem_page_offline po = { .size = sizeof(po), .phys = phys };

		ret = ioctl(ctl(), POOLMEM_PAGE_OFFLINE, &po);
		if (!ret)
			printf("memerr: POOLMEM_PAGE_OFFLINE: domain %s offset %#" PRIx64 " pool %u\n", po.name,
			       (uint64_t)po.offset, po.pool);
	} else {
		die("memerr: METHOD is madvise, inject, sysfs or ioctl");
	}
	/* the kernel's own verdict: it gives up on poolmem's pages */
	printf("memerr: %s: %s\n", method, ret ? strerror(errno) : "ok");
	if (memerr_wait(phys, from, &e)) {
		printf("memerr: no record of the error\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* from the injection's start to poolmem's record (polled every 10 ms) */
	printf("memerr: recorded within %.0f ms\n",
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	printf("memerr: record: kind %s action %s domain %s offset %#" PRIx64 " pool %s node %d\n",
	       e.kind == POOLMEM_MEMERR_HARD ? "hard" : "soft",
	       e.action == POOLMEM_MEMERR_ISOLATED ? "isolated" : e.action == POOLMEM_MEMERR_MOVED ? "moved" :
	       e.action == POOLMEM_MEMERR_UNUSED ? "unused" : "failed",
	       e.domain, (uint64_t)e.offset, e.pool[0] ? e.pool : "-", e.node);
check:
	sigaction(SIGBUS, &sa, NULL);
	for (p = 0; p < pages; p++) {
		volatile uint64_t *pw = (volatile uint64_t *)(m.p + (p << 12));
		volatile uint64_t j, ok = 1;

		sigbus_code = 0;
		sigbus_addr = NULL;
		if (sigsetjmp(sigbus_jmp, 1)) {
			if (p == page)
				printf("memerr: page %" PRIu64 ": SIGBUS %s at %s\n", p,
				       sigbus_code == BUS_MCEERR_AR ? "BUS_MCEERR_AR" : "(other code)",
				       sigbus_addr == (void *)(m.p + off) ? "its address" : "another address");
			else
				bad++;
			continue;
		}
		for (j = 0; j < 512; j++)
			if (pw[j] != (((p << 12) + j * 8) ^ 0x5a5a000000000000ull))
				ok = 0;
		if (p == page)
			printf("memerr: page %" PRIu64 ": %s\n", p, ok ? "intact" : "changed");
		else if (ok)
			good++;
		else
			bad++;
	}
	printf("memerr: other pages intact: %" PRIu64 " of %" PRIu64 "\n", good, pages - 1);
	return 0;
}

/* phys NAME OFFSET: the host physical address of a domain's byte (POOLMEM_MAP) */
int cmd_phys(int argc, char **argv)
{
	struct poolmem_map_range r[64];
	struct poolmem_map mp = { .size = sizeof(mp), .ranges = (uintptr_t)r, .count = 64 };
	uint64_t off;
	uint32_t k;

	if (argc < 2)
		usage();
	off = size_arg(argv[1]);
	set_name(mp.name, argv[0]);
	if (ioctl(ctl(), POOLMEM_MAP, &mp))
		die("POOLMEM_MAP");
	for (k = 0; k < mp.nr; k++) {
		if (off >= r[k].offset && off < r[k].offset + r[k].length) {
			printf("%#" PRIx64 "\n", (uint64_t)(r[k].phys + (off - r[k].offset)));
			return 0;
		}
	}
	fprintf(stderr, "pmtest: phys: offset %#" PRIx64 " not mapped\n", off);
	return 1;
}
