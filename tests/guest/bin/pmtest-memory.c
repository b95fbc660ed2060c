// SPDX-License-Identifier: GPL-2.0
/* pmtest: mapping a domain: touch, fill, expect, punch, threads, churn, map, fuzz, bench, prefault */
#include "pmtest.h"

/* ---- mapping a domain ---- */

/* What QEMU does to give guest memory back. */
int discard(int fd, uint64_t off, uint64_t len)
{
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
}

/*
 * Map a whole domain. layout=huge (the default) lets the kernel pick the
 * address, which poolmem aligns for PMD mappings; layout=small places the
 * mapping one page past a 2 MiB boundary, which poolmem maps with PTEs.
 */
struct mapping map_domain_layout(const char *name, int prot, const char *layout)
{
	struct mapping m;
	char path[128];
	void *at = NULL;
	int flags = MAP_SHARED;

	snprintf(path, sizeof(path), MNT "/%s", name);
	m.fd = open(path, (prot & PROT_WRITE) ? O_RDWR : O_RDONLY);
	if (m.fd < 0)
		die("open domain");
	off_t end = lseek(m.fd, 0, SEEK_END);

	if (end < 0)
		die("lseek SEEK_END");
	m.size = end;
	if (!strcmp(layout, "small")) {
		uint8_t *r = mmap(NULL, m.size + (4 << 20), PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (r == MAP_FAILED)
			die("mmap reserve");
		at = (uint8_t *)(((uintptr_t)r + (2 << 20) - 1) & ~((uintptr_t)(2 << 20) - 1)) + 4096;
		flags |= MAP_FIXED;
	} else if (strcmp(layout, "huge")) {
		fprintf(stderr, "pmtest: unknown layout '%s'\n", layout);
		exit(2);
	}
	m.p = mmap(at, m.size, prot, flags, m.fd, 0);
	if (m.p == MAP_FAILED)
		die("mmap");
	return m;
}

struct mapping map_domain(const char *name, int prot)
{
	return map_domain_layout(name, prot, "huge");
}

/* FilePmdMapped of the mapping at @p in /proc/self/smaps, in bytes */
uint64_t pmd_mapped(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256], start[32];
	int in = 0;
	uint64_t kb = 0;

	if (!f)
		die("open /proc/self/smaps");
	snprintf(start, sizeof(start), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, start, strlen(start));
		else if (in && sscanf(line, "FilePmdMapped: %" SCNu64 " kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb << 10;
}

sigjmp_buf sigbus_jmp;

volatile int sigbus_code;

void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(sigbus_jmp, 1);
}

void *volatile sigbus_addr;

void on_sigbus_info(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	sigbus_code = si->si_code;
	sigbus_addr = si->si_addr;
	siglongjmp(sigbus_jmp, 1);
}

/*
 * touch NAME OFF LEN [value=B] [layout=huge|small] [read=1]: write (or
 * read) one byte per page; reports SIGBUS and its code (BUS_MCEERR_AR: a
 * memory error, as for a chunk revoked with its pool's memory)
 */
int cmd_touch(int argc, char **argv)
{
	if (argc < 3)
		usage();
	struct mapping m = map_domain_layout(argv[0], PROT_READ | PROT_WRITE,
					     opt(argc, argv, "layout", "huge"));
	uint64_t off = size_arg(argv[1]), len = size_arg(argv[2]);
	int value = atoi(opt(argc, argv, "value", "1")), rd = atoi(opt(argc, argv, "read", "0"));
	struct sigaction sa = { .sa_sigaction = on_sigbus_info, .sa_flags = SA_SIGINFO };
	volatile uint64_t i, sum = 0;

	if (off + len > m.size) {
		fprintf(stderr, "pmtest: range beyond domain size %" PRIu64 "\n", m.size);
		return 2;
	}
	sigaction(SIGBUS, &sa, NULL);
	if (sigsetjmp(sigbus_jmp, 1)) {
		injection_off();
		printf("touch: SIGBUS at offset %" PRIu64 " (%s)\n", off + i,
		       sigbus_code == BUS_MCEERR_AR ? "BUS_MCEERR_AR" : sigbus_code == BUS_ADRERR ? "BUS_ADRERR" : "other");
		return 3;
	}
	for (i = 0; i < len; i += 4096) {
		if (rd)
			sum += ((volatile unsigned char *)m.p)[off + i];
		else
			m.p[off + i] = value;
	}
	printf("touch: %" PRIu64 " bytes at %" PRIu64 "\n", len, off);
	return 0;
}

/* fill NAME OFF LEN BYTE: memset a range */
int cmd_fill(int argc, char **argv)
{
	if (argc < 4)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	uint64_t off = size_arg(argv[1]), len = size_arg(argv[2]);

	memset(m.p + off, (int)strtol(argv[3], NULL, 0), len);
	printf("fill: %" PRIu64 " bytes at %" PRIu64 "\n", len, off);
	return 0;
}

/* expect NAME OFF LEN BYTE: every byte of the range equals BYTE */
int cmd_expect(int argc, char **argv)
{
	if (argc < 4)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ);
	uint64_t off = size_arg(argv[1]), len = size_arg(argv[2]);
	int want = (int)strtol(argv[3], NULL, 0);

	for (uint64_t i = 0; i < len; i++) {
		if (m.p[off + i] != want) {
			printf("expect: byte at %" PRIu64 " is %#x, expected %#x\n", off + i,
			       m.p[off + i], want);
			return 1;
		}
	}
	printf("expect: %" PRIu64 " bytes at %" PRIu64 " are %#x\n", len, off, want);
	return 0;
}

/* punch NAME OFF LEN [STEP]: discard a range (fallocate PUNCH_HOLE) */
int cmd_punch(int argc, char **argv)
{
	char path[128];

	if (argc < 3)
		usage();
	snprintf(path, sizeof(path), MNT "/%s", argv[0]);
	int fd = open(path, O_RDWR);

	if (fd < 0)
		die("open domain");
	/* with STEP: the range in STEP-sized discards, as QEMU's balloon does */
	uint64_t off = size_arg(argv[1]), len = size_arg(argv[2]);
	uint64_t step = argc > 3 ? size_arg(argv[3]) : len;

	for (uint64_t done = 0; done < len; done += step)
		if (discard(fd, off + done, step < len - done ? step : len - done))
			die("discard");
	printf("punch: ok\n");
	return 0;
}

/* threads NAME N ROUNDS: N threads touch random pages of the domain */
struct thr {
	uint8_t *p;
	uint64_t size;
	unsigned int seed;
	int rounds;
	uint8_t *seen;		/* one flag per 2 MiB chunk */
	int *stop;		/* if set: touch until it is, not rounds times */
	long touches;
};

static void *touch_thread(void *arg)
{
	struct thr *t = arg;

	for (int r = 0; t->stop ? !__atomic_load_n(t->stop, __ATOMIC_RELAXED) : r < t->rounds; r++) {
		uint64_t page = (uint64_t)rand_r(&t->seed) * 65536 + rand_r(&t->seed);

		page %= t->size / 4096;
		t->p[page * 4096 + (r % 4096)] = 1;
		__atomic_store_n(&t->seen[page / 512], 1, __ATOMIC_RELAXED);
		t->touches++;
	}
	return NULL;
}

int cmd_threads(int argc, char **argv)
{
	if (argc < 3)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	int n = atoi(argv[1]), rounds = atoi(argv[2]);
	pthread_t tid[64];
	struct thr t[64];

	if (n < 1 || n > 64)
		usage();
	uint8_t *seen = calloc(m.size / (2 << 20), 1);
	uint64_t chunks = 0;

	for (int i = 0; i < n; i++) {
		t[i] = (struct thr){ m.p, m.size, (unsigned int)(i * 7919 + 1), rounds, seen, NULL, 0 };
		pthread_create(&tid[i], NULL, touch_thread, &t[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	for (uint64_t c = 0; c < m.size / (2 << 20); c++)
		chunks += seen[c];
	/* the 2 MiB chunks the threads wrote to, as the kernel must count them */
	printf("threads: %d x %d touches, chunks=%" PRIu64 "\n", n, rounds, chunks);
	return 0;
}

/*
 * churn NAME THREADS ROUNDS [layout=huge|small]: THREADS threads touch
 * random pages for as long as one more thread takes to discard ROUNDS
 * random whole chunks or zero random partial ranges: faults racing with
 * discards of the same chunks (the test then checks the accounting).
 */
struct churn {
	struct thr t;
	int fd;
	uint64_t chunk;
	long discards;
};

static void *discard_thread(void *arg)
{
	struct churn *c = arg;

	for (int r = 0; r < c->t.rounds; r++) {
		uint64_t idx = (uint64_t)rand_r(&c->t.seed) % (c->t.size / c->chunk);
		uint64_t off = idx * c->chunk, len = c->chunk;

		if (r % 3 == 2) {	/* partial: zeroes, frees nothing */
			off += (uint64_t)(rand_r(&c->t.seed) % 504) * 4096;
			len = 4096 * (1 + rand_r(&c->t.seed) % 8);
		}
		if (discard(c->fd, off, len))
			die("discard");
		c->discards += len == c->chunk;
	}
	__atomic_store_n(c->t.stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

int cmd_churn(int argc, char **argv)
{
	if (argc < 3)
		usage();
	struct mapping m = map_domain_layout(argv[0], PROT_READ | PROT_WRITE,
					     opt(argc, argv, "layout", "huge"));
	int n = atoi(argv[1]), rounds = atoi(argv[2]);
	uint8_t *seen = calloc(m.size / (2 << 20), 1);
	pthread_t tid[65];
	struct thr t[64];
	int stop = 0;
	long touches = 0;
	struct churn c = { { m.p, m.size, 4242, rounds, seen, &stop, 0 }, m.fd, 2 << 20, 0 };

	if (n < 1 || n > 64)
		usage();
	/* the touchers run until the discarder is done */
	for (int i = 0; i < n; i++) {
		t[i] = (struct thr){ m.p, m.size, (unsigned int)(i * 7919 + 1), 0, seen, &stop, 0 };
		pthread_create(&tid[i], NULL, touch_thread, &t[i]);
	}
	pthread_create(&tid[n], NULL, discard_thread, &c);
	for (int i = 0; i <= n; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < n; i++)
		touches += t[i].touches;
	printf("churn: %d threads, %ld touches during %d discards (%ld of whole chunks)\n", n, touches,
	       rounds, c.discards);
	return 0;
}

/* "offset length phys pool node" per range, as the tests compare them */
static void print_ranges(const struct poolmem_map_range *r, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		printf("%#" PRIx64 " %#" PRIx64 " %#" PRIx64 " %d %d\n", (uint64_t)r[i].offset,
		       (uint64_t)r[i].length, (uint64_t)r[i].phys, (int)r[i].pool, r[i].node);
}

int cmd_map(int argc, char **argv)
{
	struct poolmem_map_range r[256];
	struct poolmem_map mp = { .size = sizeof(mp) };
	int fd = ctl();

	if (argc < 1)
		usage();
	set_name(mp.name, argv[0]);
	for (;;) {
		mp.ranges = (uintptr_t)r;
		mp.count = (uint32_t)atoi(opt(argc, argv, "batch", "256"));
		mp.nr = 0;
		mp.next = 0;
		if (ioctl(fd, POOLMEM_MAP, &mp))
			die("map");
		print_ranges(r, mp.nr);
		struct poolmem_domain_info di = { .size = sizeof(di) };

		memcpy(di.name, mp.name, sizeof(di.name));
		if (ioctl(fd, POOLMEM_DOMAIN_INFO, &di))
			die("domain info");
		if (mp.next >= di.bytes)
			break;
		if (mp.nr == 0) {
			printf("pmtest: map made no progress\n");
			return 1;
		}
		mp.start = mp.next;
	}
	return 0;
}

/*
 * map-into-self NAME: read the chunk map of NAME into a not yet touched
 * chunk of NAME's own mapping (the kernel's copy to user faults into the
 * domain while building the map) and print it like "map".
 */
int cmd_map_into_self(int argc, char **argv)
{
	if (argc < 1)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	struct poolmem_map mp = { .size = sizeof(mp) };
	struct poolmem_map_range *r = (struct poolmem_map_range *)(m.p + m.size - (2 << 20));

	set_name(mp.name, argv[0]);
	mp.ranges = (uintptr_t)r;
	mp.count = 1024;
	if (ioctl(ctl(), POOLMEM_MAP, &mp))
		die("map into own mapping");
	print_ranges(r, mp.nr);
	return 0;
}

int cmd_rmap(int argc, char **argv)
{
	struct poolmem_map_reverse rv = { .size = sizeof(rv) };

	if (argc < 1)
		usage();
	rv.phys = strtoull(argv[0], NULL, 0);
	if (ioctl(ctl(), POOLMEM_MAP_REVERSE, &rv))
		die("map reverse");
	printf("%s %#" PRIx64 " %d %d\n", rv.name, (uint64_t)rv.offset, (int)rv.pool, rv.node);
	return 0;
}

/*
 * fuzz N SEED: N ioctls on the control device with random command numbers
 * near ours, random sizes/flags, random and half-valid structs, bad
 * pointers. Every call must fail (or be a harmless query); prints counts.
 */
int cmd_fuzz(int argc, char **argv)
{
	static const unsigned long cmds[] = {
		POOLMEM_VERSION, POOLMEM_POOL_ADD, POOLMEM_POOL_REMOVE, POOLMEM_POOL_LIST,
		POOLMEM_POOL_INFO, POOLMEM_DOMAIN_CREATE, POOLMEM_DOMAIN_DESTROY,
		POOLMEM_DOMAIN_LIST, POOLMEM_DOMAIN_INFO, POOLMEM_MAP, POOLMEM_MAP_REVERSE,
		POOLMEM_POOL_DRAIN, POOLMEM_DOMAIN_SET,
	};
	long n = argc > 0 ? atol(argv[0]) : 100000;
	unsigned int seed = argc > 1 ? atoi(argv[1]) : 1;
	uint64_t buf[64];
	long ok = 0, einval = 0, efault = 0, other = 0, enotty = 0;
	int fd = ctl();

	for (long i = 0; i < n; i++) {
		unsigned long cmd = cmds[rand_r(&seed) % (sizeof(cmds) / sizeof(cmds[0]))];
		int mode = rand_r(&seed) % 8;
		void *arg = buf;

		for (size_t j = 0; j < sizeof(buf) / sizeof(buf[0]); j++)
			buf[j] = ((uint64_t)rand_r(&seed) << 32) | rand_r(&seed);
		uint32_t *h = (uint32_t *)buf;

		switch (mode) {
		case 0: /* pure garbage */
			break;
		case 1: /* right size, garbage flags and body */
		case 2:
			h[0] = _IOC_SIZE(cmd);
			break;
		case 3: /* right size and flags, garbage body: names, sizes, pointers */
		case 4:
			h[0] = _IOC_SIZE(cmd);
			h[1] = 0;
			if (mode == 4) /* a plausible name with junk after it */
				memcpy(&h[2], "fuzz\0\xff", 6);
			break;
		case 5: /* bad pointer */
			arg = (void *)(uintptr_t)(rand_r(&seed) % 2 ? 0x10 : 0xffffffffff000000ULL);
			break;
		case 6: /* unknown command in our magic */
			cmd = _IOWR(POOLMEM_IOC_MAGIC, rand_r(&seed) % 256, struct poolmem_version);
			h[0] = sizeof(struct poolmem_version);
			h[1] = 0;
			break;
		case 7: /* huge sizes everywhere */
			h[0] = _IOC_SIZE(cmd);
			h[1] = 0;
			for (size_t j = 1; j < sizeof(buf) / sizeof(buf[0]); j++)
				buf[j] = ~0ULL - (j & 3);
			break;
		}
		if (ioctl(fd, cmd, arg) == 0) {
			ok++;
			/* a successful create/add must not leave anything behind */
			if (cmd == POOLMEM_DOMAIN_CREATE || cmd == POOLMEM_POOL_ADD) {
				printf("fuzz: call %ld (cmd %#lx mode %d) created something\n", i, cmd, mode);
				return 1;
			}
		} else if (errno == EINVAL) {
			einval++;
		} else if (errno == EFAULT) {
			efault++;
		} else if (errno == ENOTTY) {
			enotty++;
		} else {
			other++;
		}
	}
	printf("fuzz: %ld calls: %ld ok (queries), %ld EINVAL, %ld EFAULT, %ld ENOTTY, %ld other\n",
	       n, ok, einval, efault, enotty, other);
	return 0;
}

/*
 * bench NAME MIB: first-touch throughput of MIB MiB of the domain vs the
 * same amount of anonymous memory with THP (MADV_HUGEPAGE) and without
 * (MADV_NOHUGEPAGE), plus fault latency percentiles of the domain read back
 * from sysfs by the caller. Prints MiB/s for each and the ratios.
 */
struct touch_slice {
	uint8_t *p;
	uint64_t len;
	pthread_barrier_t *go;
};

static void *touch_slice_fn(void *arg)
{
	struct touch_slice *s = arg;

	pthread_barrier_wait(s->go);
	for (uint64_t i = 0; i < s->len; i += 4096)
		s->p[i] = 1;
	return NULL;
}

/* bench_threads threads touch their own slice of [p, p + len) at once */
static int bench_threads = 1;

static double touch_rate(uint8_t *p, uint64_t len)
{
	struct touch_slice s[64];
	pthread_t tid[64];
	pthread_barrier_t go;
	uint64_t slice = len / bench_threads;
	double t0;

	if (bench_threads == 1) {
		t0 = now();
		for (uint64_t i = 0; i < len; i += 4096)
			p[i] = 1;
		return (len >> 20) / (now() - t0);
	}
	pthread_barrier_init(&go, NULL, bench_threads + 1);
	for (int i = 0; i < bench_threads; i++) {
		s[i] = (struct touch_slice){ p + i * slice, slice, &go };
		if (pthread_create(&tid[i], NULL, touch_slice_fn, &s[i]))
			die("pthread_create");
	}
	t0 = now();
	pthread_barrier_wait(&go);
	for (int i = 0; i < bench_threads; i++)
		pthread_join(tid[i], NULL);
	double t = now() - t0;

	pthread_barrier_destroy(&go);
	return (len >> 20) / t;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* AnonHugePages of the mapping that holds @p in /proc/self/smaps, in bytes */
static uint64_t anon_huge(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	uintptr_t a = (uintptr_t)p;
	unsigned long lo, hi;
	int in = 0;
	uint64_t kb = 0;

	if (!f)
		die("open /proc/self/smaps");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = a >= lo && a < hi;
		else if (in && sscanf(line, "AnonHugePages: %" SCNu64 " kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb << 10;
}

/*
 * bench NAME MIB [rounds=N] [threads=N]: first-touch rate of the domain, of anonymous
 * THP memory and of anonymous 4 KiB pages, the three interleaved in each
 * round, domain and THP taking turns at going first. One warm-up round
 * first, not counted: under QEMU the first guest touch of a guest-physical
 * page also faults in the host page behind it, whichever of the three gets
 * that page first. Fails (exit 3) when the THP baseline got less than 90%
 * of its memory in huge pages (AnonHugePages).
 * Reports every round and the medians.
 */
int cmd_bench(int argc, char **argv)
{
	if (argc < 2)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	uint64_t len = size_arg(argv[1]) << 20;
	int rounds = atoi(opt(argc, argv, "rounds", "3"));
	double dom[64], thp[64], nothp[64], ratio[64];

	bench_threads = atoi(opt(argc, argv, "threads", "1"));
	if (rounds < 1 || rounds > 64 || bench_threads < 1 || bench_threads > 64)
		usage();
	if (len > m.size)
		len = m.size;
	for (int r = -1; r < rounds; r++) {
		uint8_t *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint8_t *b = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED || b == MAP_FAILED)
			die("mmap anon");
		uint8_t *bal = (uint8_t *)(((uintptr_t)b + (2 << 20) - 1) & ~((uintptr_t)(2 << 20) - 1));

		madvise(a, len, MADV_NOHUGEPAGE);
		madvise(bal, len, MADV_HUGEPAGE);
		if (discard(m.fd, 0, len))
			die("discard");
		/*
		 * Domain and THP swap places every round, so neither always
		 * gets the pages the other (or the previous round) just freed.
		 */
		double d, t, n;

		if (r & 1) {
			t = touch_rate(bal, len);
			d = touch_rate(m.p, len);
		} else {
			d = touch_rate(m.p, len);
			t = touch_rate(bal, len);
		}
		n = touch_rate(a, len);
		/* a THP baseline that got 4 KiB pages would flatter the domain */
		uint64_t huge = anon_huge(bal);

		if (huge < len / 10 * 9) {
			printf("bench: round %d: the THP baseline got %" PRIu64 " of %" PRIu64
			       " MiB in huge pages: not a THP baseline\n", r + 1, huge >> 20, len >> 20);
			return 3;
		}

		munmap(a, len);
		munmap(b, len + (2 << 20));
		if (r < 0) {
			printf("bench: warm-up: domain %.0f MiB/s, anon THP %.0f MiB/s, anon 4K %.0f MiB/s\n",
			       d, t, n);
			continue;
		}
		printf("bench: round %d: domain %.0f MiB/s, anon THP %.0f MiB/s, anon 4K %.0f MiB/s, domain/THP %.2f\n",
		       r + 1, d, t, n, d / t);
		dom[r] = d;
		thp[r] = t;
		nothp[r] = n;
		ratio[r] = d / t;
	}
	printf("bench: first touch of %" PRIu64 " MiB by %d thread%s, %d rounds after a warm-up, medians:\n",
	       len >> 20, bench_threads, bench_threads > 1 ? "s" : "", rounds);
	double md = median(dom, rounds), mt = median(thp, rounds), mn = median(nothp, rounds);

	printf("bench: domain %.0f MiB/s, anon THP %.0f MiB/s, anon 4K %.0f MiB/s\n", md, mt, mn);
	printf("bench: domain/THP %.2f (median of per-round ratios %.2f), domain/4K %.2f\n", md / mt,
	       median(ratio, rounds), md / mn);
	return 0;
}

/*
 * prefault NAME MIB [how=touch|populate] [threads=N] [thp=0]: one timed
 * prefault of the domain's first MIB (a fresh domain: every chunk is
 * placed now) and of as much anonymous THP memory (in the caller's NUMA
 * policy; not with thp=0), each by N threads (halves, thirds, ...):
 * how=touch writes a byte per page, how=populate is MADV_POPULATE_WRITE
 * (QEMU prealloc, VFIO-like prefault). Prints "prefault: domain S s, anon
 * THP S s, domain/THP R".
 */
struct populate_slice {
	uint8_t *p;
	uint64_t len;
	pthread_barrier_t *go;
};

static void *populate_slice_fn(void *arg)
{
	struct populate_slice *s = arg;

	pthread_barrier_wait(s->go);
	if (madvise(s->p, s->len, MADV_POPULATE_WRITE))
		die("MADV_POPULATE_WRITE");
	return NULL;
}

static double populate_time(uint8_t *p, uint64_t len)
{
	struct populate_slice s[64];
	pthread_t tid[64];
	pthread_barrier_t go;
	uint64_t slice = len / bench_threads;
	double t0;

	pthread_barrier_init(&go, NULL, bench_threads + 1);
	for (int i = 0; i < bench_threads; i++) {
		s[i] = (struct populate_slice){ p + i * slice, slice, &go };
		if (pthread_create(&tid[i], NULL, populate_slice_fn, &s[i]))
			die("pthread_create");
	}
	t0 = now();
	pthread_barrier_wait(&go);
	for (int i = 0; i < bench_threads; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&go);
	return now() - t0;
}

int cmd_prefault(int argc, char **argv)
{
	if (argc < 2)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	uint64_t len = size_arg(argv[1]) << 20;
	int populate = !strcmp(opt(argc, argv, "how", "populate"), "populate");
	int thp = atoi(opt(argc, argv, "thp", "1"));
	double d, t;

	bench_threads = atoi(opt(argc, argv, "threads", "1"));
	if (bench_threads < 1 || bench_threads > 64 || len > m.size || len % ((uint64_t)bench_threads << 21))
		usage();
	uint8_t *b = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (b == MAP_FAILED)
		die("mmap anon");
	uint8_t *bal = (uint8_t *)(((uintptr_t)b + (2 << 20) - 1) & ~((uintptr_t)(2 << 20) - 1));

	madvise(bal, len, MADV_HUGEPAGE);
	d = populate ? populate_time(m.p, len) : (len >> 20) / touch_rate(m.p, len);
	if (!thp) {
		munmap(b, len + (2 << 20));
		printf("prefault: domain %.4f s, no THP alongside\n", d);
		return 0;
	}
	t = populate ? populate_time(bal, len) : (len >> 20) / touch_rate(bal, len);
	munmap(b, len + (2 << 20));
	printf("prefault: domain %.4f s, anon THP %.4f s, domain/THP %.3f\n", d, t, d / t);
	return 0;
}

/*
 * memset-cpu MIB: CPU time of clearing MIB of memory already faulted in, 2
 * MiB at a time as the reserve's thread does (the cost zeroing ahead moves
 * off the fault path). Prints "memset-cpu: S s for MIB MiB".
 */
int cmd_memset_cpu(int argc, char **argv)
{
	if (argc < 1)
		usage();
	uint64_t len = size_arg(argv[0]) << 20, chunk = 2 << 20;
	uint8_t *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec a, b;

	if (p == MAP_FAILED)
		die("mmap anon");
	memset(p, 1, chunk);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (uint64_t done = 0; done < len; done += chunk) {
		memset(p, 0, chunk);
		__asm__ volatile("" : : "r"(p) : "memory");	/* keep every memset */
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	printf("memset-cpu: %.4f s for %" PRIu64 " MiB\n",
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9, len >> 20);
	return 0;
}
