// SPDX-License-Identifier: GPL-2.0
/*
 * pmtest: drives poolmem's kernel ABI directly for the guest tests (the
 * module is what is under test here, so this deliberately does not go
 * through libpoolmem). Every command prints what it did; a failing system
 * call prints "pmtest: <what>: <ERRNO NAME> (<message>)" and exits 1, so
 * tests can assert the exact error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_xdp.h>
#include <linux/io_uring.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/userfaultfd.h>
#include <poll.h>

#include "uapi/poolmem.h"
#include "policy/pm_policy.h"	/* the kernel's own name tables */

#define CTL "/dev/poolmem/control"
#define MNT POOLMEM_MOUNT_DEFAULT	/* domain files: MNT/<name> */

/* /proc/self/make-it-fail, open while PMTEST_MAKE_IT_FAIL injects failures */
static int make_it_fail_fd = -1;

/*
 * Stop injecting failures into this process, so that what it reports is
 * not lost to an injected failure of its own output. Writing through the
 * descriptor opened beforehand needs no allocation.
 */
static void injection_off(void)
{
	if (make_it_fail_fd >= 0 && pwrite(make_it_fail_fd, "0", 1, 0) == 1) {
		close(make_it_fail_fd);
		make_it_fail_fd = -1;
	}
}

static void die(const char *what)
{
	int e = errno;

	injection_off();

	printf("pmtest: %s: %s (%s)\n", what, strerrorname_np(e) ? strerrorname_np(e) : "?",
	       strerror(e));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: pmtest COMMAND ARGS (see tests/guest/bin/pmtest.c)\n");
	exit(2);
}

static uint64_t size_arg(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	case 'T': case 't': v <<= 40; end++; break;
	}
	if (*end) {
		fprintf(stderr, "pmtest: bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Mount the poolmem file system at MNT unless it is there (as poolctl does),
 * or PMTEST_NO_MOUNT is set (a test that needs every mount gone).
 */
static void mount_fs(void)
{
	struct statfs st;

	if (getenv("PMTEST_NO_MOUNT"))
		return;

	if (statfs(MNT, &st) == 0) {
		if (st.f_type == POOLMEM_FS_MAGIC)
			return;
	} else if (errno != ENOENT) {
		die("statfs " MNT);	/* e.g. ENOMEM under fault injection */
	}
	mkdir(MNT, 0755);
	/* EBUSY: mounted meanwhile by someone else */
	if (mount("poolmem", MNT, "poolmem", MS_NOSUID | MS_NODEV, NULL) && errno != EBUSY)
		die("mount " MNT);
}

static int ctl(void)
{
	int fd = open(CTL, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open " CTL);
	mount_fs();
	return fd;
}

static const char *opt(int argc, char **argv, const char *key, const char *def)
{
	size_t n = strlen(key);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return argv[i] + n + 1;
	return def;
}

static int lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	fprintf(stderr, "pmtest: unknown policy '%s'\n", s);
	exit(2);
}


/* Copy a name without truncating it silently: a name of 32+ characters
 * fills the whole field with no NUL, as a careless caller would send it. */
static void set_name(char *dst, const char *src)
{
	size_t n = strlen(src);

	memcpy(dst, src, n < POOLMEM_NAME_MAX ? n + 1 : POOLMEM_NAME_MAX);
}

static void pool_info_by_name(int fd, const char *name, struct poolmem_pool_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->size = sizeof(*pi);
	snprintf(pi->name, sizeof(pi->name), "%s", name);
	if (ioctl(fd, POOLMEM_POOL_INFO, pi))
		die("pool info");
}

/* pools=a,b -> mask */
static uint64_t pool_mask(int fd, const char *list)
{
	uint64_t mask = 0;
	char *dup = strdup(list), *save, *tok;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct poolmem_pool_info pi;

		pool_info_by_name(fd, tok, &pi);
		mask |= 1ULL << pi.id;
	}
	free(dup);
	return mask;
}

static int cmd_pool_add(int argc, char **argv)
{
	struct poolmem_pool_add a = { .size = sizeof(a), .tier = POOLMEM_TIER_POOL };
	int fd = ctl();

	if (argc < 2)
		usage();
	set_name(a.name, argv[0]);
	a.node = atoi(argv[1]);
	a.overcommit_pct = atoi(opt(argc, argv, "overcommit", "0"));
	if (ioctl(fd, POOLMEM_POOL_ADD, &a))
		die("pool add");
	printf("pool %s: id %u node %d\n", a.name, a.id, a.node);
	return 0;
}

static int name_ioctl(unsigned long cmd, const char *name, const char *what)
{
	struct poolmem_name_arg a = { .size = sizeof(a) };
	int fd = ctl();

	set_name(a.name, name);
	if (ioctl(fd, cmd, &a))
		die(what);
	printf("%s %s: ok\n", what, name);
	return 0;
}

static int cmd_pool_info(int argc, char **argv)
{
	struct poolmem_pool_info pi;

	if (argc < 1)
		usage();
	pool_info_by_name(ctl(), argv[0], &pi);
	printf("id=%u node=%d capacity=%llu free=%llu allocated=%llu committed=%llu chunks=%llu "
	       "allocations=%llu faults=%llu failures=%llu af=%llu\n",
	       pi.id, pi.node, (unsigned long long)pi.capacity_bytes,
	       (unsigned long long)pi.free_bytes, (unsigned long long)pi.allocated_bytes,
	       (unsigned long long)pi.committed_bytes, (unsigned long long)pi.chunks,
	       (unsigned long long)pi.allocations, (unsigned long long)pi.faults,
	       (unsigned long long)pi.failures, (unsigned long long)pi.access_factor);
	return 0;
}

static int cmd_domain_create(int argc, char **argv)
{
	struct poolmem_domain_create a = { .size = sizeof(a) };
	int fd = ctl();

	if (argc < 4)
		usage();
	set_name(a.name, argv[0]);
	a.bytes = size_arg(argv[1]);
	a.quota[POOLMEM_TIER_LOCAL] = size_arg(argv[2]);
	a.quota[POOLMEM_TIER_POOL] = size_arg(argv[3]);
	a.chunk_bytes = size_arg(opt(argc, argv, "chunk", "0"));
	a.tier_policy = lookup(opt(argc, argv, "tier", "local-first"), pm_tier_policy_names, PM_NR_TIER_POLICIES);
	a.pool_select = lookup(opt(argc, argv, "select", "round-robin"), pm_pool_select_names, PM_NR_POOL_SELECTS);
	a.home_node = atoi(opt(argc, argv, "home", "-1"));
	a.uid = atoi(opt(argc, argv, "uid", "0"));
	a.gid = atoi(opt(argc, argv, "gid", "0"));
	a.mode = strtoul(opt(argc, argv, "mode", "0"), NULL, 8);
	if (opt(argc, argv, "pools", NULL))
		a.pool_mask = pool_mask(fd, opt(argc, argv, "pools", NULL));
	/* pinnable=1 sets POOLMEM_DOMAIN_PINNABLE; flags=N sets raw flags */
	a.flags = strtoul(opt(argc, argv, "flags", "0"), NULL, 0);
	if (atoi(opt(argc, argv, "pinnable", "0")))
		a.flags |= POOLMEM_DOMAIN_PINNABLE;
	if (ioctl(fd, POOLMEM_DOMAIN_CREATE, &a)) {
		/* admission's figures, exact (the kernel's log line is rate limited) */
		if (errno == ENOSPC)
			fprintf(stderr, "refused: why %u committed %llu limit %llu node %d\n", a.refused,
				(unsigned long long)a.committed_bytes, (unsigned long long)a.limit_bytes,
				a.home_node);
		die("domain create");
	}
	printf("domain %s: created\n", a.name);
	return 0;
}

/* profile-create NAME LOCAL POOL [chunk=] [home=] [mode=] [flags=]: LOCAL and POOL
 * are "N%" or a size; no check here, the kernel's own are under test */
static void profile_quota(struct poolmem_profile *p, int tier, const char *v)
{
	size_t n = strlen(v);

	if (n && v[n - 1] == '%')
		p->quota_pct[tier] = strtoul(v, NULL, 10);
	else
		p->quota_bytes[tier] = size_arg(v);
}

static int cmd_profile_create(int argc, char **argv)
{
	struct poolmem_profile p = { .size = sizeof(p) };
	int fd = ctl();

	if (argc < 3)
		usage();
	set_name(p.name, argv[0]);
	profile_quota(&p, POOLMEM_TIER_LOCAL, argv[1]);
	profile_quota(&p, POOLMEM_TIER_POOL, argv[2]);
	p.chunk_bytes = size_arg(opt(argc, argv, "chunk", "0"));
	p.home_node = atoi(opt(argc, argv, "home", "-1"));
	p.mode = strtoul(opt(argc, argv, "mode", "0"), NULL, 8);
	p.flags = strtoul(opt(argc, argv, "flags", "0"), NULL, 0);
	if (ioctl(fd, POOLMEM_PROFILE_CREATE, &p))
		die("profile create");
	printf("profile %s: created\n", p.name);
	return 0;
}

static int cmd_domain_info(int argc, char **argv)
{
	struct poolmem_domain_info di = { .size = sizeof(di) };

	if (argc < 1)
		usage();
	set_name(di.name, argv[0]);
	if (ioctl(ctl(), POOLMEM_DOMAIN_INFO, &di))
		die("domain info");
	printf("size=%llu chunk=%llu local_quota=%llu pool_quota=%llu local=%llu pool=%llu "
	       "chunks=%llu faults=%llu sigbus=%llu discards=%llu home=%d flags=%#x uid=%u gid=%u "
	       "mode=%o retired=%llu\n",
	       (unsigned long long)di.bytes, (unsigned long long)di.chunk_bytes,
	       (unsigned long long)di.quota[0], (unsigned long long)di.quota[1],
	       (unsigned long long)di.usage[0], (unsigned long long)di.usage[1],
	       (unsigned long long)di.chunks, (unsigned long long)di.faults,
	       (unsigned long long)di.sigbus, (unsigned long long)di.discards, di.home_node,
	       di.domain_flags, di.uid, di.gid, di.mode, (unsigned long long)di.retired_chunks);
	return 0;
}

static int cmd_list(int argc, char **argv, int pools)
{
	struct poolmem_list l = { .size = sizeof(l) };
	char names[64][POOLMEM_NAME_MAX];
	int fd = ctl();

	(void)argc; (void)argv;
	l.count = 64;
	l.names = (uintptr_t)names;
	if (ioctl(fd, pools == 2 ? POOLMEM_PROFILE_LIST : pools ? POOLMEM_POOL_LIST : POOLMEM_DOMAIN_LIST, &l))
		die("list");
	for (unsigned int i = 0; i < l.total && i < 64; i++)
		printf("%s\n", names[i]);
	return 0;
}

/* ---- mapping a domain ---- */

/* What QEMU does to give guest memory back. */
static int discard(int fd, uint64_t off, uint64_t len)
{
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
}

struct mapping {
	int fd;
	uint8_t *p;
	uint64_t size;
};

/*
 * Map a whole domain. layout=huge (the default) lets the kernel pick the
 * address, which poolmem aligns for PMD mappings; layout=small places the
 * mapping one page past a 2 MiB boundary, which poolmem maps with PTEs.
 */
static struct mapping map_domain_layout(const char *name, int prot, const char *layout)
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

static struct mapping map_domain(const char *name, int prot)
{
	return map_domain_layout(name, prot, "huge");
}

/* FilePmdMapped of the mapping at @p in /proc/self/smaps, in bytes */
static uint64_t pmd_mapped(const void *p)
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

static sigjmp_buf sigbus_jmp;
static volatile int sigbus_code;
static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(sigbus_jmp, 1);
}

static void *volatile sigbus_addr;
static void on_sigbus_info(int sig, siginfo_t *si, void *uc)
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
static int cmd_touch(int argc, char **argv)
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
static int cmd_fill(int argc, char **argv)
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
static int cmd_expect(int argc, char **argv)
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
static int cmd_punch(int argc, char **argv)
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

static int cmd_threads(int argc, char **argv)
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

static int cmd_churn(int argc, char **argv)
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

static int cmd_map(int argc, char **argv)
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
static int cmd_map_into_self(int argc, char **argv)
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

static int cmd_rmap(int argc, char **argv)
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
static int cmd_fuzz(int argc, char **argv)
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

static int cmp_double(const void *a, const void *b)
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
static int cmd_bench(int argc, char **argv)
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

static int cmd_prefault(int argc, char **argv)
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
static int cmd_memset_cpu(int argc, char **argv)
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

/*
 * anon-check MIB: fill anonymous memory with a pattern, read it back (run
 * under numactl --membind to check a node's memory keeps data at all).
 */
static int cmd_anon_check(int argc, char **argv)
{
	if (argc < 1)
		usage();
	uint64_t len = size_arg(argv[0]) << 20;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap anon");
	for (uint64_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	sleep(1);
	for (uint64_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(i * 7 + 3)) {
			printf("anon-check: byte %" PRIu64 " is %#x, wrote %#x\n", i, p[i],
			       (uint8_t)(i * 7 + 3));
			return 1;
		}
	printf("anon-check: %" PRIu64 " MiB kept their data\n", len >> 20);
	return 0;
}

/* gup NAME FILE: O_DIRECT read of FILE into the domain, process_vm_readv back */
static int cmd_gup(int argc, char **argv)
{
	if (argc < 2)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	int fd = open(argv[1], O_RDONLY | O_DIRECT);
	uint8_t check[4096];

	if (fd < 0)
		die("open O_DIRECT");
	ssize_t n = pread(fd, m.p, 1 << 20, 0);

	if (n < 0)
		die("O_DIRECT read into domain memory");
	printf("gup: O_DIRECT read %zd bytes into the domain\n", n);
	struct iovec local = { check, sizeof(check) }, remote = { m.p, sizeof(check) };

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != sizeof(check))
		die("process_vm_readv");
	if (memcmp(check, m.p, sizeof(check))) {
		printf("gup: process_vm_readv returned other bytes\n");
		return 1;
	}
	printf("gup: process_vm_readv ok\n");
	return 0;
}

/*
 * Register @len bytes at @p as io_uring fixed buffers (a long-term pin:
 * pin_user_pages with FOLL_LONGTERM, as VFIO's DMA map of guest RAM) and
 * unregister them again: one buffer per GiB (io_uring's limit), all in one
 * registration on one ring, or with @each one ring and one registration
 * per buffer. io_uring accounts a buffer's huge pages against every buffer
 * registered on its ring before (headpage_already_acct(): quadratic in the
 * buffers' head pages); on a ring each, that work is gone and what is left
 * is the pin. Returns the seconds the kernel took to answer (the
 * registrations' sum); *@err is 0 or the errno it answered with.
 */
static double uring_pin(void *p, uint64_t len, int *err, int each)
{
	struct io_uring_params params = { 0 };
	struct iovec iov[64];
	int rings[64];
	unsigned int n = 0, r, nr_rings;
	double t = 0, t0;
	long ret = 0;

	for (uint64_t off = 0; off < len; off += 1ULL << 30) {
		if (n == 64)
			die("uring_pin: more than 64 GiB");
		iov[n++] = (struct iovec){ (char *)p + off, len - off < (1ULL << 30) ? len - off : 1ULL << 30 };
	}
	nr_rings = each ? n : 1;
	for (r = 0; r < nr_rings; r++) {
		rings[r] = syscall(SYS_io_uring_setup, 1, &params);
		if (rings[r] < 0)
			die("io_uring_setup");
	}
	*err = 0;
	for (r = 0; r < nr_rings && !ret; r++) {
		t0 = now();
		ret = syscall(SYS_io_uring_register, rings[r], IORING_REGISTER_BUFFERS, each ? &iov[r] : iov,
			      each ? 1 : n);
		t += now() - t0;
		if (ret < 0)
			*err = errno;
	}
	for (unsigned int i = 0; i < r; i++) {
		if (!ret && syscall(SYS_io_uring_register, rings[i], IORING_UNREGISTER_BUFFERS, NULL, 0) < 0)
			die("io_uring_register unregister");
	}
	for (r = 0; r < nr_rings; r++)
		close(rings[r]);
	return t;
}

/*
 * pin-longterm NAME MIB [touch=0] [rings=each]: touch MIB MiB of the
 * domain (unless touch=0: the pin then faults the pages in itself), then
 * register them as io_uring fixed buffers (uring_pin(); rings=each: a ring
 * per GiB). Prints how long the kernel took to answer and what it
 * answered.
 */
static int cmd_pin_longterm(int argc, char **argv)
{
	if (argc < 2)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	uint64_t len = size_arg(argv[1]) << 20;
	double t;
	int e;

	if (len > m.size)
		len = m.size;
	for (uint64_t i = 0; atoi(opt(argc, argv, "touch", "1")) && i < len; i += 4096)
		m.p[i] = 1;
	t = uring_pin(m.p, len, &e, !strcmp(opt(argc, argv, "rings", "one"), "each"));
	printf("pin-longterm: %" PRIu64 " MiB answered in %.3f s: ", len >> 20, t);
	/*
	 * io_uring (6.1) takes the pin first and only then refuses a file
	 * other than shmem or hugetlbfs with EOPNOTSUPP: that answer means the
	 * pages were pinned. Failing pins give EFAULT, ENOMEM, EAGAIN...
	 */
	if (e && e != EOPNOTSUPP) {
		errno = e;
		die("io_uring_register buffers");
	}
	printf("pinned%s\n", e ? " (then io_uring refused the file: EOPNOTSUPP)" : "");
	return 0;
}

/*
 * pin-anon MIB NODE [rings=each]: the baseline of the pinning bench: MIB
 * of anonymous memory with THP (MADV_HUGEPAGE) bound to NODE, not
 * touched, pinned as pin-longterm pins a domain (the pin faults it in).
 * Prints the time.
 */
static uint8_t *node_map(uint64_t len, int node);

static int cmd_pin_anon(int argc, char **argv)
{
	if (argc < 2)
		usage();
	uint64_t len = size_arg(argv[0]) << 20;
	uint8_t *p = node_map(len, atoi(argv[1]));
	double t;
	int e;

	t = uring_pin(p, len, &e, !strcmp(opt(argc, argv, "rings", "one"), "each"));
	if (e) {
		errno = e;
		die("io_uring_register buffers");
	}
	printf("pin-anon: %" PRIu64 " MiB pinned in %.3f s\n", len >> 20, t);
	return 0;
}

/* as UID GID COMMAND...: run a pmtest command as another user */
static int cmd_as(int argc, char **argv)
{
	if (argc < 3)
		usage();
	gid_t gid = atoi(argv[1]);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		die("readlink /proc/self/exe");
	self[n] = 0;
	if (setgroups(1, &gid) || setgid(gid) || setuid(atoi(argv[0])))
		die("setuid");
	argv[1] = "pmtest";
	execv(self, argv + 1);
	die("exec");
	return 1;
}

/* run-as UID GID PROGRAM ARGS...: run any program as another user */
static int cmd_run_as(int argc, char **argv)
{
	if (argc < 3)
		usage();
	gid_t gid = atoi(argv[1]);

	if (setgroups(1, &gid) || setgid(gid) || setuid(atoi(argv[0])))
		die("setuid");
	execvp(argv[2], argv + 2);
	die("exec");
	return 1;
}

/*
 * guest-check PATH [go|nogo [BASE]]: the pattern tests/guest/bios/pattern-bios.S
 * writes into every page of guest RAM from 1 MiB up, read through a second
 * mapping of the memory backend's file, whose offset 0 is guest physical
 * address BASE (a NUMA node's backend after the first); then, unless
 * "nogo", the "go" word the guest waits for (in the backend of BASE 0).
 */
static int cmd_guest_check(int argc, char **argv)
{
	if (argc < 1)
		usage();
	int fd = open(argv[0], O_RDWR);

	if (fd < 0)
		die("open");
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	uint64_t ok = 0, bad = 0, base = argc > 2 ? strtoull(argv[2], NULL, 0) : 0;

	if (p == MAP_FAILED)
		die("mmap");
	for (uint64_t a = base < (1 << 20) ? (1 << 20) - base : 0; a < (uint64_t)size; a += 4096) {
		uint32_t w0, w1, want = (uint32_t)(a + base) ^ 0x5a5a5a5a;

		memcpy(&w0, p + a, 4);
		memcpy(&w1, p + a + 4, 4);
		if (w0 == want && w1 == ~want) {
			ok++;
		} else if (bad++ < 5) {
			printf("guest-check: page %#" PRIx64 ": %#x %#x, expected %#x %#x\n", a, w0, w1,
			       want, ~want);
		}
	}
	printf("guest-check: %" PRIu64 " pages ok, %" PRIu64 " bad\n", ok, bad);
	if (argc < 2 || strcmp(argv[1], "nogo")) {
		uint32_t go = 0x600df00d;

		memcpy(p + (1 << 20) + 8, &go, 4);
	}
	return bad || !ok;
}

/* file-pmd PID PATH: kB of PATH's mappings in PID mapped with PMDs, and in all */
static int cmd_file_pmd(int argc, char **argv)
{
	char smaps[64], line[512];
	unsigned long pmd = 0, rss = 0, v;
	int in = 0;

	if (argc < 2)
		usage();
	snprintf(smaps, sizeof(smaps), "/proc/%s/smaps", argv[0]);
	FILE *f = fopen(smaps, "r");

	if (!f)
		die("open smaps");
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = 0;
		/* a mapping's header starts with its address (lowercase hex); fields with a capital */
		if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) {
			size_t n = strlen(line), m = strlen(argv[1]);

			in = n >= m && !strcmp(line + n - m, argv[1]);
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "FilePmdMapped: %lu kB", &v) == 1)
			pmd += v;
		if (sscanf(line, "Rss: %lu kB", &v) == 1)
			rss += v;
	}
	fclose(f);
	printf("%lu %lu\n", pmd, rss);
	return 0;
}

/* The domain's info, or exit. */
static struct poolmem_domain_info domain_info(const char *name)
{
	struct poolmem_domain_info di = { .size = sizeof(di) };

	set_name(di.name, name);
	if (ioctl(ctl(), POOLMEM_DOMAIN_INFO, &di))
		die("domain info");
	return di;
}

/*
 * splice-escape NAME ROUNDS: the quota escape through pages still
 * referenced at discard. Each round touches chunk 0, vmsplice()s one page
 * of it into a pipe that stays open (the pipe holds a reference), and
 * punches chunk 0. Were a punched chunk uncharged while the pipe holds it,
 * every round would take another 2 MiB outside the quota. Prints the
 * rounds that got memory, the most the domain was charged, and the chunks
 * still retired; then closes the pipes and waits for them to be freed.
 */
static int cmd_splice_escape(int argc, char **argv)
{
	if (argc < 2)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	int rounds = atoi(argv[1]), got = 0, r, (*pipes)[2] = calloc(rounds, sizeof(*pipes));
	uint64_t charged = 0;
	struct poolmem_domain_info di;
	volatile int i = 0;

	if (!pipes)
		die("calloc");
	signal(SIGBUS, on_sigbus);
	if (sigsetjmp(sigbus_jmp, 1)) {
		printf("splice-escape: SIGBUS in round %d (quota reached)\n", i);
		goto out;
	}
	for (i = 0; i < rounds; i++) {
		struct iovec iov = { .iov_base = m.p, .iov_len = 4096 };

		m.p[0] = (uint8_t)i;
		got++;
		if (pipe(pipes[i]))
			die("pipe");
		if (vmsplice(pipes[i][1], &iov, 1, 0) != 4096)
			die("vmsplice");
		if (discard(m.fd, 0, 2 << 20))
			die("punch");
		di = domain_info(argv[0]);
		if (di.usage[0] + di.usage[1] > charged)
			charged = di.usage[0] + di.usage[1];
	}
out:
	di = domain_info(argv[0]);
	printf("splice-escape: %d rounds got memory, charged at most %" PRIu64 " bytes, %llu chunks retired\n",
	       got, charged, (unsigned long long)di.retired_chunks);
	for (r = 0; r < i && r < rounds; r++) {
		char buf[4096];

		if (pipes[r][0] > 0 && read(pipes[r][0], buf, sizeof(buf)) != 4096)
			die("read pipe");
		close(pipes[r][0]);
		close(pipes[r][1]);
	}
	if (i < rounds && pipes[i][0] > 0) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	for (r = 0; r < 50; r++) {
		di = domain_info(argv[0]);
		if (!di.retired_chunks)
			break;
		usleep(100000);
	}
	printf("splice-escape: after the pipes closed: %llu retired, %llu bytes charged\n",
	       (unsigned long long)di.retired_chunks,
	       (unsigned long long)(di.usage[0] + di.usage[1]));
	return 0;
}

/*
 * poison-map NAME LAYOUT PAGE: a poisoned page of a chunk is never mapped
 * again. Writes each page of chunk 0 (its index), poisons page PAGE of it
 * through hwpoison_inject's corrupt-pfn (memory_failure(), which gives up
 * on poolmem's units after setting PG_hwpoison: the write's error is
 * expected), maps the domain anew with LAYOUT (huge: PMD faults, small:
 * vm_insert_pages) and reads page PAGE + 1, then page PAGE. Prints what
 * each read gave: the value, or SIGBUS and its code.
 */
static const char *poison_read(struct mapping *m, uint64_t page, int *val)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus_info, .sa_flags = SA_SIGINFO };

	sigaction(SIGBUS, &sa, NULL);
	sigbus_code = 0;
	if (sigsetjmp(sigbus_jmp, 1))
		return sigbus_code == BUS_MCEERR_AR ? "SIGBUS BUS_MCEERR_AR" : "SIGBUS (other code)";
	*val = ((volatile uint8_t *)m->p)[page << 12];
	return "read";
}

static int cmd_poison_map(int argc, char **argv)
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
static int cmd_memerr(int argc, char **argv)
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
static int cmd_phys(int argc, char **argv)
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

/*
 * pipe-hold NAME GOFILE: vmsplice() the first page of domain NAME into a
 * pipe, unmap and close the domain, print "ready", and hold the pipe (a
 * reference on the chunk that does not go away) until GOFILE exists; then
 * read the page back out of the pipe.
 */
static int cmd_pipe_hold(int argc, char **argv)
{
	if (argc < 2)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	struct iovec iov = { .iov_base = m.p, .iov_len = 4096 };
	char buf[4096];
	int fds[2], i;

	if (pipe(fds))
		die("pipe");
	if (vmsplice(fds[1], &iov, 1, 0) != 4096)
		die("vmsplice");
	munmap(m.p, m.size);
	close(m.fd);
	printf("pipe-hold: ready\n");
	fflush(stdout);
	for (i = 0; access(argv[1], F_OK); i++) {
		if (i > 6000)
			die("pipe-hold: nobody said go in 10 minutes");
		usleep(100000);
	}
	if (read(fds[0], buf, sizeof(buf)) != 4096)
		die("read pipe");
	printf("pipe-hold: released\n");
	return 0;
}

/* A sysfs (or debugfs) file's number, or exit. */
static uint64_t file_u64(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v;

	if (!f || fscanf(f, "%llu", &v) != 1)
		die(path);
	fclose(f);
	return v;
}

static void file_put(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		die(path);
	close(fd);
}

/*
 * splice-evict NAME POOL [FAILDIR]: a chunk still referenced when its
 * domain's inode is evicted must stay charged until the reference goes.
 * Touches chunk 0 (a pool chunk: give the domain pool quota only),
 * vmsplice()s a page of it into a pipe, destroys the domain and drops the
 * mapping and file, so the inode is evicted while the pipe holds the page.
 * With FAILDIR (poolmem's fault attribute in debugfs), every allocation of
 * the module fails during the eviction: the retire record can't be had.
 * Prints the pool's allocated bytes after the eviction (held by the pipe)
 * and after the pipe is read and closed.
 */
static int cmd_splice_evict(int argc, char **argv)
{
	if (argc < 2)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	struct iovec iov = { .iov_base = m.p, .iov_len = 4096 };
	uint64_t before, held, after = 0;
	char path[256], buf[4096];
	int fds[2], i;

	snprintf(path, sizeof(path), "/sys/kernel/poolmem/pools/%s/allocated_bytes", argv[1]);
	before = file_u64(path);
	memset(m.p, 0x5a, 4096);
	if (pipe(fds))
		die("pipe");
	if (vmsplice(fds[1], &iov, 1, 0) != 4096)
		die("vmsplice");
	if (name_ioctl(POOLMEM_DOMAIN_DESTROY, argv[0], "domain destroy"))
		return 1;
	if (argc > 2) {
		char p2[256];

		snprintf(p2, sizeof(p2), "%s/times", argv[2]);
		file_put(p2, "-1");
		snprintf(p2, sizeof(p2), "%s/probability", argv[2]);
		file_put(p2, "100");
	}
	munmap(m.p, m.size);
	close(m.fd);	/* the last reference: evicted on the way back to user space */
	if (argc > 2) {
		char p2[256];

		snprintf(p2, sizeof(p2), "%s/probability", argv[2]);
		file_put(p2, "0");
	}
	usleep(300000);	/* the reaper polls every 100 ms */
	held = file_u64(path);
	printf("splice-evict: pool %s allocated %" PRIu64 " bytes before, %" PRIu64 " after eviction with the pipe open\n",
	       argv[1], before, held);
	if (read(fds[0], buf, sizeof(buf)) != 4096 || buf[0] != 0x5a || buf[4095] != 0x5a)
		die("read pipe: the page's bytes changed");
	close(fds[0]);
	close(fds[1]);
	for (i = 0; i < 50; i++) {
		after = file_u64(path);
		if (after <= before)
			break;
		usleep(100000);
	}
	printf("splice-evict: after the pipe closed: %" PRIu64 " bytes\n", after);
	return 0;
}

/*
 * uffd-list: a list ioctl whose output buffer faults into userfaultfd, so
 * copy_to_user() blocks until we resolve the fault. Meanwhile another
 * control ioctl must complete: nothing may hold pm_lock across a copy to
 * userspace. Prints the other ioctl's latency.
 */
static void *uffd_lister(void *arg)
{
	struct poolmem_list *l = arg;

	if (ioctl(ctl(), POOLMEM_DOMAIN_LIST, l))
		die("domain list into userfaultfd memory");
	return NULL;
}

static int uffd_other_done;

static void *uffd_other(void *arg)
{
	if (ioctl(ctl(), POOLMEM_POOL_LIST, arg))
		die("pool list");
	__atomic_store_n(&uffd_other_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int cmd_uffd_list(int argc, char **argv)
{
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	struct uffdio_api api = { .api = UFFD_API };
	struct poolmem_list l = { .size = sizeof(l), .count = 64 };
	char names[64][POOLMEM_NAME_MAX];
	struct poolmem_list l2 = { .size = sizeof(l2), .count = 64, .names = (uintptr_t)names };
	struct uffd_msg msg;
	struct pollfd pfd;
	pthread_t t, t2;
	void *buf;
	double t0, t1;
	int ok;

	(void)argc; (void)argv;
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		die("userfaultfd");
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	struct uffdio_register reg = { .range = { (uintptr_t)buf, 4096 }, .mode = UFFDIO_REGISTER_MODE_MISSING };

	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");
	l.names = (uintptr_t)buf;
	pthread_create(&t, NULL, uffd_lister, &l);
	pfd.fd = uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 10000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg))
		die("no userfault from the list ioctl");
	/* the lister is now stuck in copy_to_user(); another ioctl must go through */
	t0 = now();
	pthread_create(&t2, NULL, uffd_other, &l2);
	while (!__atomic_load_n(&uffd_other_done, __ATOMIC_ACQUIRE) && now() - t0 < 5)
		usleep(10000);
	t1 = now();
	ok = __atomic_load_n(&uffd_other_done, __ATOMIC_ACQUIRE);
	if (ok)
		printf("uffd-list: another ioctl completed in %.3f s while a copy_to_user was stalled\n",
		       t1 - t0);
	else
		printf("uffd-list: another ioctl was still blocked after %.1f s: a lock is held across copy_to_user\n",
		       t1 - t0);
	struct uffdio_zeropage zp = { .range = { (uintptr_t)buf, 4096 } };

	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp))
		die("UFFDIO_ZEROPAGE");
	pthread_join(t2, NULL);
	pthread_join(t, NULL);
	return !ok;
}

/* create-file PATH: open(O_CREAT|O_EXCL) as QEMU does for a missing mem-path */
static int cmd_create_file(int argc, char **argv)
{
	if (argc < 1)
		usage();
	int fd = open(argv[0], O_RDWR | O_CREAT | O_EXCL, 0644);

	if (fd < 0)
		die("create");
	printf("create %s: ok\n", argv[0]);
	return 0;
}

/* try-open NAME [rw|ro]: open and report */
static int cmd_try_open(int argc, char **argv)
{
	char path[128];

	if (argc < 1)
		usage();
	snprintf(path, sizeof(path), "%s", argv[0][0] == '/' ? argv[0] : "");
	if (!path[0])
		snprintf(path, sizeof(path), MNT "/%s", argv[0]);
	int fd = open(path, O_RDWR);

	if (fd < 0)
		die("open");
	printf("open %s: ok\n", path);
	return 0;
}

/* mmap-private NAME / mmap-beyond NAME: must be refused */
static int cmd_mmap_bad(int argc, char **argv, int private)
{
	char path[128];

	if (argc < 1)
		usage();
	snprintf(path, sizeof(path), MNT "/%s", argv[0]);
	int fd = open(path, O_RDWR);

	if (fd < 0)
		die("open");
	off_t size = lseek(fd, 0, SEEK_END);
	void *p = private ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0)
			  : mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die(private ? "mmap private" : "mmap beyond size");
	printf("mmap: accepted\n");
	return 0;
}

/*
 * qemu NAME: what QEMU's memory-backend-file does with a char device: open,
 * lseek(SEEK_END) for the size, mmap MAP_SHARED, touch, discard a range with
 * fallocate (balloon/virtio-mem), touch again, munmap. [layout=huge|small]
 */
static int cmd_qemu(int argc, char **argv)
{
	if (argc < 1)
		usage();
	struct mapping m = map_domain_layout(argv[0], PROT_READ | PROT_WRITE,
					     opt(argc, argv, "layout", "huge"));

	for (uint64_t i = 0; i < m.size; i += 4096)
		m.p[i] = 0xab;
	/* a domain's size is fixed and memory comes on touch: nothing else */
	if (fallocate(m.fd, 0, 0, m.size) == 0 || errno != EOPNOTSUPP ||
	    fallocate(m.fd, FALLOC_FL_ZERO_RANGE, 0, 4096) == 0 || errno != EOPNOTSUPP) {
		printf("qemu: fallocate modes other than punching a hole: expected EOPNOTSUPP\n");
		return 1;
	}
	/* QEMU's two ways of giving memory back: fallocate and MADV_REMOVE */
	if (discard(m.fd, 0, m.size / 4))
		die("fallocate(PUNCH_HOLE)");
	if (madvise(m.p + m.size / 4, m.size / 4, MADV_REMOVE))
		die("madvise(MADV_REMOVE)");
	for (uint64_t i = 0; i < m.size / 2; i++)
		if (m.p[i]) {
			printf("qemu: discarded range not zero at %" PRIu64 "\n", i);
			return 1;
		}
	for (uint64_t i = m.size / 2; i < m.size; i += 4096)
		if (m.p[i] != 0xab) {
			printf("qemu: kept range lost data at %" PRIu64 "\n", i);
			return 1;
		}
	for (uint64_t i = 0; i < m.size; i += 4096)
		m.p[i] = 0xcd;
	if (munmap(m.p, m.size))
		die("munmap");
	printf("qemu: size %" PRIu64 ", touch, punch, retouch, munmap ok\n", m.size);
	return 0;
}

static uint8_t pattern_at(uint64_t i)
{
	return (uint8_t)((i >> 12) * 31 + 7);
}

/*
 * layout NAME: map the whole domain as QEMU would, write a per-page
 * pattern, report how much of it the kernel mapped with PMDs; then split
 * a PMD (mprotect one page read-only, unmap the first page) and check
 * every remaining page still reads its pattern through the smaller maps.
 */
static int cmd_layout(int argc, char **argv)
{
	if (argc < 1)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);

	for (uint64_t i = 0; i < m.size; i += 4096)
		m.p[i] = pattern_at(i);
	printf("layout: %" PRIu64 " of %" PRIu64 " bytes mapped with PMDs\n", pmd_mapped(m.p),
	       m.size);
	if (mprotect(m.p + 8192, 4096, PROT_READ) || munmap(m.p, 4096))
		die("split mapping");
	for (uint64_t i = 4096; i < m.size; i += 4096)
		if (m.p[i] != pattern_at(i)) {
			printf("layout: page at %" PRIu64 " lost its data after the split\n", i);
			return 1;
		}
	for (uint64_t i = 4096 * 3; i < m.size; i += 4096)
		m.p[i] = ~pattern_at(i);
	printf("layout: split, %" PRIu64 " bytes still PMD-mapped, data intact\n",
	       pmd_mapped(m.p + 3 * 4096));
	return 0;
}

/* hold NAME SECONDS: keep a mapping open (for destroy-while-mapped) */
static int cmd_hold(int argc, char **argv)
{
	if (argc < 2)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);

	for (uint64_t i = 0; i < m.size; i += 4096)
		m.p[i] = 0x5a;
	printf("hold: mapped and touched\n");
	fflush(stdout);
	sleep(atoi(argv[1]));
	for (uint64_t i = 0; i < m.size; i += 4096)
		if (m.p[i] != 0x5a) {
			printf("hold: data changed under the mapping\n");
			return 1;
		}
	printf("hold: data intact\n");
	return 0;
}

/* ---- migration: integrity, drain, live changes, pins ---- */

/*
 * A page's content for stamp: every 8-byte word derives from the page's
 * offset and its write sequence, so any byte of another page, of an older
 * write or of nothing (zero) shows as wrong.
 */
static uint64_t stamp_word(uint64_t off, uint64_t seq, unsigned int w)
{
	uint64_t x = off * 0x9e3779b97f4a7c15ULL ^ (seq + 1) * 0xc2b2ae3d27d4eb4fULL ^ w;

	x ^= x >> 29;
	return x * 0xbf58476d1ce4e5b9ULL;
}

#define STAMP_STRIPES	64
#define STAMP_MAX_THREADS 8

struct stamp {
	struct mapping m;
	uint64_t pages;
	uint64_t *seq;		/* per page: last sequence written; its stripe's lock */
	pthread_mutex_t lock[STAMP_STRIPES];
	unsigned int threads;
	volatile int stop;
	int blk;		/* O_DIRECT block device, or -1 */
	uint64_t blk_size;
	uint64_t wrong, passes, vmreadv, odirect;
	uint64_t stall_hist[40];	/* per-page write time, log2 ns */
	pthread_mutex_t stat_lock;
};

static pthread_mutex_t *stamp_lock(struct stamp *st, uint64_t page)
{
	return &st->lock[page % STAMP_STRIPES];
}

/* Wrong bytes of @buf, which should hold page @pg at sequence @seq. */
static uint64_t stamp_check(const uint64_t *buf, uint64_t pg, uint64_t seq)
{
	uint64_t wrong = 0;

	for (unsigned int w = 0; w < 4096 / 8; w++) {
		uint64_t want = stamp_word(pg << 12, seq, w), got = buf[w];

		for (unsigned int b = 0; b < 8; b++)
			wrong += ((want >> (8 * b)) & 0xff) != ((got >> (8 * b)) & 0xff);
	}
	return wrong;
}

static void stamp_count(struct stamp *st, uint64_t *field, uint64_t n)
{
	pthread_mutex_lock(&st->stat_lock);
	*field += n;
	pthread_mutex_unlock(&st->stat_lock);
}

struct stamp_arg {
	struct stamp *st;
	unsigned int id;
};

/* Writers: page i belongs to thread i % threads; check, then write seq + 1. */
static void *stamp_writer(void *arg)
{
	struct stamp_arg *a = arg;
	struct stamp *st = a->st;
	uint64_t wrong = 0, passes = 0;

	while (!st->stop) {
		for (uint64_t pg = a->id; pg < st->pages && !st->stop; pg += st->threads) {
			uint64_t *p = (uint64_t *)(st->m.p + (pg << 12));
			pthread_mutex_t *l = stamp_lock(st, pg);
			double t0;
			uint64_t ns;

			pthread_mutex_lock(l);
			t0 = now();
			wrong += stamp_check(p, pg, st->seq[pg]);
			st->seq[pg]++;
			for (unsigned int w = 0; w < 4096 / 8; w++)
				p[w] = stamp_word(pg << 12, st->seq[pg], w);
			ns = (now() - t0) * 1e9;
			pthread_mutex_unlock(l);
			pthread_mutex_lock(&st->stat_lock);
			st->stall_hist[ns ? 63 - __builtin_clzll(ns) : 0]++;
			pthread_mutex_unlock(&st->stat_lock);
		}
		passes++;
	}
	stamp_count(st, &st->wrong, wrong);
	stamp_count(st, &st->passes, passes);
	return NULL;
}

/*
 * Checkers of what other paths see: process_vm_readv (get_user_pages on
 * the domain from the kernel), and O_DIRECT to and from a block device
 * (the device reads the page by DMA-like access, then writes it back into
 * the domain's page, again through get_user_pages).
 */
static void *stamp_checker(void *arg)
{
	struct stamp *st = arg;
	uint64_t *buf = aligned_alloc(4096, 4096), wrong = 0, n = 0, od = 0;
	unsigned int seed = 1;
	int vm = 1;	/* 0: the kernel has no process_vm_readv (CONFIG_CROSS_MEMORY_ATTACH) */

	while (!st->stop && (vm || st->blk >= 0)) {
		uint64_t pg = rand_r(&seed) % st->pages;
		uint8_t *page = st->m.p + (pg << 12);
		pthread_mutex_t *l = stamp_lock(st, pg);
		struct iovec local = { buf, 4096 }, remote = { page, 4096 };

		pthread_mutex_lock(l);
		if (vm && process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 4096) {
			if (errno != ENOSYS)
				die("process_vm_readv");
			vm = 0;
		}
		if (vm) {
			wrong += stamp_check(buf, pg, st->seq[pg]);
			n++;
		}
		if (st->blk >= 0) {
			off_t at = (off_t)((pg << 12) % st->blk_size);

			/* device reads the domain page, then the page is rewritten from the device */
			if (pwrite(st->blk, page, 4096, at) != 4096)
				die("O_DIRECT write from the domain");
			memset(buf, 0, 4096);
			if (pread(st->blk, buf, 4096, at) != 4096)
				die("O_DIRECT read back");
			wrong += stamp_check(buf, pg, st->seq[pg]);
			if (pread(st->blk, page, 4096, at) != 4096)
				die("O_DIRECT read into the domain");
			wrong += stamp_check((uint64_t *)page, pg, st->seq[pg]);
			od++;
		}
		pthread_mutex_unlock(l);
	}
	stamp_count(st, &st->wrong, wrong);
	stamp_count(st, &st->vmreadv, n);
	stamp_count(st, &st->odirect, od);
	free(buf);
	return NULL;
}

/*
 * odirect DEV SECONDS: O_DIRECT writes of 64 KiB from anonymous memory to
 * block device DEV for SECONDS (a host's own disk I/O, pinning pages that
 * are no domain's); prints how many
 */
static int cmd_odirect(int argc, char **argv)
{
	if (argc < 2)
		usage();
	int fd = open(argv[0], O_WRONLY | O_DIRECT);
	double end = now() + atof(argv[1]);
	void *buf = aligned_alloc(65536, 65536);
	off_t size, at = 0;
	uint64_t n = 0;

	if (fd < 0 || !buf)
		die("odirect: open");
	size = lseek(fd, 0, SEEK_END);
	if (size < 65536)
		die("odirect: device too small");
	memset(buf, 0x5a, 65536);
	while (now() < end) {
		if (pwrite(fd, buf, 65536, at) != 65536)
			die("odirect: write");
		at = (at + 65536) % (size / 65536 * 65536);
		n++;
	}
	printf("odirect: %" PRIu64 " writes of 64 KiB\n", n);
	return 0;
}

/*
 * stamp NAME SECONDS [threads=N] [blockdev=DEV] [layout=huge|small]
 * [until=PATH] (stop early once PATH exists):
 * writers stamp (offset, sequence) into every page of the domain and
 * verify each page before rewriting it, while checkers verify through
 * process_vm_readv (where the kernel has it) and O_DIRECT; meanwhile the
 * test moves the chunks.
 * Prints passes, checks, wrong bytes and the writers' per-page write time
 * (p50, p99, max: a write that found its chunk moving waited for it).
 * Exit 1 on any wrong byte; a SIGBUS kills it.
 */
static int cmd_stamp(int argc, char **argv)
{
	if (argc < 2)
		usage();
	static struct stamp st;
	pthread_t tw[STAMP_MAX_THREADS], tc;
	struct stamp_arg args[STAMP_MAX_THREADS];
	const char *dev = opt(argc, argv, "blockdev", NULL);
	double secs = atof(argv[1]);
	uint64_t total = 0, acc = 0, p50 = 0, p99 = 0, max = 0;

	st.m = map_domain_layout(argv[0], PROT_READ | PROT_WRITE, opt(argc, argv, "layout", "huge"));
	st.pages = st.m.size >> 12;
	st.threads = atoi(opt(argc, argv, "threads", "2"));
	if (st.threads < 1 || st.threads > STAMP_MAX_THREADS)
		usage();
	st.seq = calloc(st.pages, sizeof(*st.seq));
	if (!st.seq)
		die("calloc");
	for (int i = 0; i < STAMP_STRIPES; i++)
		pthread_mutex_init(&st.lock[i], NULL);
	pthread_mutex_init(&st.stat_lock, NULL);
	st.blk = -1;
	if (dev) {
		st.blk = open(dev, O_RDWR | O_DIRECT);
		if (st.blk < 0)
			die("open block device O_DIRECT");
		st.blk_size = lseek(st.blk, 0, SEEK_END) & ~4095ULL;
		if (!st.blk_size)
			die("empty block device");
	}
	/* first pass: sequence 0 everywhere, so the writers start from a known state */
	for (uint64_t pg = 0; pg < st.pages; pg++)
		for (unsigned int w = 0; w < 4096 / 8; w++)
			((uint64_t *)(st.m.p + (pg << 12)))[w] = stamp_word(pg << 12, 0, w);
	printf("stamp: %" PRIu64 " pages stamped, running %.0f s\n", st.pages, secs);
	for (unsigned int i = 0; i < st.threads; i++) {
		args[i].st = &st;
		args[i].id = i;
		pthread_create(&tw[i], NULL, stamp_writer, &args[i]);
	}
	pthread_create(&tc, NULL, stamp_checker, &st);
	/* until=PATH: stop early once PATH exists (the test's phases are done) */
	for (double t0 = now(); now() - t0 < secs;) {
		const char *until = opt(argc, argv, "until", NULL);

		if (until && access(until, F_OK) == 0)
			break;
		usleep(100000);
	}
	st.stop = 1;
	for (unsigned int i = 0; i < st.threads; i++)
		pthread_join(tw[i], NULL);
	pthread_join(tc, NULL);
	/* a last full check of every page */
	for (uint64_t pg = 0; pg < st.pages; pg++)
		st.wrong += stamp_check((uint64_t *)(st.m.p + (pg << 12)), pg, st.seq[pg]);
	for (int i = 0; i < 40; i++)
		total += st.stall_hist[i];
	for (int i = 0; i < 40; i++) {
		acc += st.stall_hist[i];
		if (!p50 && acc * 2 >= total)
			p50 = 2ULL << i;
		if (!p99 && acc * 100 >= total * 99)
			p99 = 2ULL << i;
		if (st.stall_hist[i])
			max = 2ULL << i;
	}
	printf("stamp: passes=%" PRIu64 " vmreadv=%" PRIu64 " odirect=%" PRIu64
	       " wrong_bytes=%" PRIu64 " write_ns_p50<%" PRIu64 " p99<%" PRIu64 " max<%" PRIu64 "\n",
	       st.passes, st.vmreadv, st.odirect, st.wrong, p50, p99, max);
	return st.wrong ? 1 : 0;
}

/*
 * drain POOL [step=SIZE] [local=1] [check=1] [cancel=1] [interrupt=1]:
 * POOLMEM_POOL_DRAIN until the pool is empty (one call with check or
 * cancel); prints what each call says. Errors as die() prints them, after
 * the figures. interrupt=1: one call; a thread watches the pool's
 * allocated_bytes every 200 us and sends the caller SIGUSR1 once a quarter
 * has left, so the signal meets the drain half way whatever its speed;
 * "drain: interrupted after N us" tells how long the call took to return
 * from then (exit 0 on EINTR, 1 on another error, 3 when the call ended
 * without seeing the signal).
 */
struct drain_watch {
	const char *pool;
	pthread_t caller;
	volatile int done;
	struct timespec sent;
	int fired;
};

static void on_sigusr1(int sig)
{
	(void)sig;
}

static uint64_t pool_allocated(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 0);
}

static void *drain_watch_thread(void *arg)
{
	struct drain_watch *w = arg;
	char path[256];
	uint64_t start;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/poolmem/pools/%s/allocated_bytes", w->pool);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	start = pool_allocated(fd);
	while (!w->done) {
		if (pool_allocated(fd) <= start - start / 4) {
			clock_gettime(CLOCK_MONOTONIC, &w->sent);
			w->fired = 1;
			pthread_kill(w->caller, SIGUSR1);
			break;
		}
		usleep(200);
	}
	close(fd);
	return NULL;
}
/*
 * host-stamp NAME TAG / host-verify NAME TAG (tests/guest/cluster-node.sh):
 * stamp every 4 KiB page of domain NAME, through a mapping of its file, with
 * {magic, TAG, the page's frame, its index}, the frame read from
 * /proc/self/pagemap once the page is there; verify reads every stamp back
 * through a new mapping. Two hosts that both had the same memory online
 * and stamped it would find each other's stamps: "wrong N of M pages".
 * host-stamp prints, per memory block, "block B PAGES".
 */
#define HOST_STAMP_MAGIC 0x21736f6f6c6d656dULL	/* "memloos!" */

static uint64_t *host_map(const char *name, uint64_t *pages, uint64_t **pfns)
{
	char path[512];
	struct stat st;
	uint64_t *p;
	int fd, pm;

	snprintf(path, sizeof(path), MNT "/%s", name);
	fd = open(path, O_RDWR);
	if (fd < 0 || fstat(fd, &st))
		die(path);
	*pages = (uint64_t)st.st_size >> 12;
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	close(fd);
	/* every page present (a write fault places its chunk), then its frame */
	for (uint64_t i = 0; i < *pages; i++)
		((volatile uint64_t *)p)[i * 512 + 4] = ((volatile uint64_t *)p)[i * 512 + 4];
	*pfns = malloc(*pages * 8);
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (!*pfns || pm < 0)
		die("pagemap");
	if (pread(pm, *pfns, *pages * 8, ((uintptr_t)p >> 12) * 8) != (ssize_t)(*pages * 8))
		die("pagemap read");
	close(pm);
	for (uint64_t i = 0; i < *pages; i++) {
		if (!((*pfns)[i] >> 63)) {
			fprintf(stderr, "pmtest: page %" PRIu64 " of %s not present\n", i, name);
			exit(1);
		}
		(*pfns)[i] &= (1ULL << 55) - 1;
	}
	return p;
}

static uint64_t block_pages(void)
{
	FILE *f = fopen("/sys/devices/system/memory/block_size_bytes", "r");
	unsigned long long b = 0;

	if (!f || fscanf(f, "%llx", &b) != 1)
		die("block_size_bytes");
	fclose(f);
	return b >> 12;
}

static int cmd_host_stamp(int argc, char **argv, int verify)
{
	uint64_t pages, *pfns, tag, wrong = 0, bp = block_pages();
	uint64_t *p;

	if (argc < 2)
		usage();
	tag = strtoull(argv[1], NULL, 0);
	p = host_map(argv[0], &pages, &pfns);
	for (uint64_t i = 0; i < pages; i++) {
		uint64_t *w = p + i * 512;

		if (!verify) {
			w[0] = HOST_STAMP_MAGIC;
			w[1] = tag;
			w[2] = pfns[i];
			w[3] = i;
			continue;
		}
		if (w[0] != HOST_STAMP_MAGIC || w[1] != tag || w[2] != pfns[i] || w[3] != i) {
			if (wrong++ < 5)
				printf("page %" PRIu64 " (pfn 0x%" PRIx64 ", block %" PRIu64 "): found magic %s tag %" PRIu64
				       " pfn 0x%" PRIx64 " index %" PRIu64 "\n", i, pfns[i], pfns[i] / bp,
				       w[0] == HOST_STAMP_MAGIC ? "ok" : "wrong", w[1], w[2], w[3]);
		}
	}
	if (verify) {
		printf("wrong %" PRIu64 " of %" PRIu64 " pages\n", wrong, pages);
		return wrong ? 1 : 0;
	}
	/* pages per memory block, in block order (pfns come in any order) */
	for (uint64_t i = 0; i < pages; i++) {
		uint64_t b = pfns[i] / bp, n = 0;

		if (pfns[i] == UINT64_MAX)
			continue;
		for (uint64_t j = i; j < pages; j++)
			if (pfns[j] != UINT64_MAX && pfns[j] / bp == b) {
				n++;
				if (j > i)
					pfns[j] = UINT64_MAX;
			}
		printf("block %" PRIu64 " %" PRIu64 "\n", b, n);
	}
	printf("stamped %" PRIu64 " pages\n", pages);
	return 0;
}

static int cmd_drain(int argc, char **argv)
{
	if (argc < 1)
		usage();
	int fd = ctl();
	uint64_t step = size_arg(opt(argc, argv, "step", "0")), moved = 0;
	unsigned int flags = (atoi(opt(argc, argv, "local", "0")) ? POOLMEM_DRAIN_ALLOW_LOCAL : 0) |
			     (atoi(opt(argc, argv, "check", "0")) ? POOLMEM_DRAIN_CHECK : 0) |
			     (atoi(opt(argc, argv, "cancel", "0")) ? POOLMEM_DRAIN_CANCEL : 0) |
			     (atoi(opt(argc, argv, "revoke", "0")) ? POOLMEM_DRAIN_REVOKE : 0);
	int interrupt = atoi(opt(argc, argv, "interrupt", "0"));
	struct drain_watch w = { .pool = argv[0], .caller = pthread_self() };
	pthread_t wt;
	int calls = 0;

	if (interrupt) {
		struct sigaction sa = { .sa_handler = on_sigusr1 };	/* no SA_RESTART */

		sigaction(SIGUSR1, &sa, NULL);
		pthread_create(&wt, NULL, drain_watch_thread, &w);
	}
	for (;;) {
		struct poolmem_pool_drain a = { .size = sizeof(a), .flags = flags, .max_bytes = step };
		struct timespec end;
		int ret;

		set_name(a.name, argv[0]);
		ret = ioctl(fd, POOLMEM_POOL_DRAIN, &a);
		calls++;
		if (interrupt) {
			int err = errno;

			clock_gettime(CLOCK_MONOTONIC, &end);
			w.done = 1;
			pthread_join(wt, NULL);
			printf("drain: moved=%" PRIu64 " remaining=%" PRIu64 "\n",
			       (uint64_t)a.moved_bytes, (uint64_t)a.remaining_bytes);
			if (!w.fired) {
				printf("drain: ended (%s) before a quarter left\n", ret ? strerror(err) : "done");
				return 3;
			}
			printf("drain: interrupted after %" PRId64 " us\n",
			       (int64_t)((end.tv_sec - w.sent.tv_sec) * 1000000 +
					 (end.tv_nsec - w.sent.tv_nsec) / 1000));
			if (!ret) {
				printf("drain: the call ended without EINTR\n");
				return 3;
			}
			errno = err;
			if (err != EINTR)
				die("pool drain");
			return 0;
		}
		moved += a.moved_bytes;
		printf("drain: moved=%" PRIu64 " remaining=%" PRIu64 " busy=%" PRIu64
		       " blocker=%.*s offset=%#" PRIx64 " need=%" PRIu64 " room=%" PRIu64 "\n",
		       (uint64_t)a.moved_bytes, (uint64_t)a.remaining_bytes, (uint64_t)a.busy_chunks,
		       POOLMEM_NAME_MAX, a.blocker, (uint64_t)a.blocker_offset, (uint64_t)a.need_bytes,
		       (uint64_t)a.room_bytes);
		if (ret)
			die("pool drain");
		if (flags & (POOLMEM_DRAIN_CHECK | POOLMEM_DRAIN_CANCEL | POOLMEM_DRAIN_REVOKE) || !a.remaining_bytes)
			break;
		if (!a.moved_bytes)
			usleep(50000);
		if (calls > 100000) {
			errno = ETIMEDOUT;
			die("pool drain");
		}
	}
	printf("drain: done, %" PRIu64 " bytes in %d calls\n", moved, calls);
	return 0;
}

/*
 * set NAME [local=SIZE pool=SIZE] [pools=LIST] [tier=P] [select=P]
 * [tiering=off|sample|on scan=SIZE hot=MS] [flags=N]: POOLMEM_DOMAIN_SET;
 * prints moved/need/room. flags= overrides the flags sent (bad input).
 */
static int cmd_set(int argc, char **argv)
{
	if (argc < 1)
		usage();
	int fd = ctl();
	struct poolmem_domain_set a = { .size = sizeof(a) };
	const char *l = opt(argc, argv, "local", NULL), *p = opt(argc, argv, "pool", NULL);
	const char *pools = opt(argc, argv, "pools", NULL), *tier = opt(argc, argv, "tier", NULL);
	const char *sel = opt(argc, argv, "select", NULL);
	int ret;

	set_name(a.name, argv[0]);
	if (l || p) {
		struct poolmem_domain_info di = domain_info(argv[0]);

		a.flags |= POOLMEM_SET_QUOTA;
		a.quota[0] = l ? size_arg(l) : di.quota[0];
		a.quota[1] = p ? size_arg(p) : di.quota[1];
	}
	if (pools) {
		a.flags |= POOLMEM_SET_POOL_MASK;
		a.pool_mask = strcmp(pools, "all") ? pool_mask(fd, pools) : 0;
	}
	if (tier) {
		a.flags |= POOLMEM_SET_TIER_POLICY;
		a.tier_policy = lookup(tier, pm_tier_policy_names, PM_NR_TIER_POLICIES);
	}
	if (sel) {
		a.flags |= POOLMEM_SET_POOL_SELECT;
		a.pool_select = lookup(sel, pm_pool_select_names, PM_NR_POOL_SELECTS);
	}
	if (opt(argc, argv, "tiering", NULL)) {
		static const char *const modes[] = { "off", "sample", "on" };

		a.flags |= POOLMEM_SET_TIERING;
		a.tiering = lookup(opt(argc, argv, "tiering", ""), modes, 3);
		a.scan_rate = size_arg(opt(argc, argv, "scan", "0"));
		a.hot_ms = atoi(opt(argc, argv, "hot", "0"));
	}
	if (opt(argc, argv, "flags", NULL))
		a.flags = strtoul(opt(argc, argv, "flags", "0"), NULL, 0);
	ret = ioctl(fd, POOLMEM_DOMAIN_SET, &a);
	printf("set: moved=%" PRIu64 " need=%" PRIu64 " room=%" PRIu64 "\n", (uint64_t)a.moved_bytes,
	       (uint64_t)a.need_bytes, (uint64_t)a.room_bytes);
	if (ret)
		die("domain set");
	return 0;
}

/*
 * xdp-pin NAME OFF LEN SECONDS: long-term pin [OFF, OFF+LEN) of the domain
 * as an AF_XDP UMEM (pin_user_pages with FOLL_LONGTERM, held until the
 * socket closes), the way VFIO or RDMA pin guest RAM; io_uring fixed
 * buffers would be the simpler holder, but Linux 6.1 refuses them on
 * files other than shmem and hugetlbfs (after pinning, and unpins).
 * Prints "xdp-pin: pinned" and holds the pin for SECONDS. The memory is
 * not written: pin_user_pages faults it in.
 */
static int cmd_xdp_pin(int argc, char **argv)
{
	if (argc < 4)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	uint64_t off = size_arg(argv[1]), len = size_arg(argv[2]);
	struct xdp_umem_reg reg = { 0 };
	int fd = socket(AF_XDP, SOCK_RAW, 0);

	if (fd < 0)
		die("socket AF_XDP");
	reg.addr = (uintptr_t)(m.p + off);
	reg.len = len;
	reg.chunk_size = 4096;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
		die("XDP_UMEM_REG");
	printf("xdp-pin: pinned %" PRIu64 " bytes at %#" PRIx64 "\n", len, off);
	sleep(atoi(argv[3]));
	close(fd);
	return 0;
}

/*
 * hammer NAME OFF LEN SECONDS: write one word per page of [OFF, OFF+LEN)
 * over and over for SECONDS (a VM's hot set); prints the passes made.
 */
static int cmd_hammer(int argc, char **argv)
{
	if (argc < 4)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	uint64_t off = size_arg(argv[1]), len = size_arg(argv[2]), passes = 0;
	double end = now() + atof(argv[3]);

	if (off + len > m.size) {
		fprintf(stderr, "pmtest: range beyond domain size %" PRIu64 "\n", m.size);
		return 2;
	}
	while (now() < end) {
		for (uint64_t i = 0; i < len; i += 4096)
			*(volatile uint64_t *)(m.p + off + i) = passes;
		passes++;
	}
	printf("hammer: %" PRIu64 " passes over %" PRIu64 " bytes\n", passes, len);
	return 0;
}

/*
 * anon-hold MIB SECONDS: MIB of anonymous memory with THP (MADV_HUGEPAGE),
 * touched, then held: the kernel's own migration (migratepages) moves it
 * in the drain benchmark. Prints "anon-hold: ready" when touched.
 */
static int cmd_anon_hold(int argc, char **argv)
{
	if (argc < 2)
		usage();
	uint64_t len = size_arg(argv[0]) << 20;
	uint8_t *p = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap anonymous");
	p = (uint8_t *)(((uintptr_t)p + (2 << 20) - 1) & ~((uintptr_t)(2 << 20) - 1));
	madvise(p, len, MADV_HUGEPAGE);
	for (uint64_t i = 0; i < len; i += 4096)
		p[i] = 1;
	printf("anon-hold: ready, %" PRIu64 " MiB, AnonHugePages in smaps\n", len >> 20);
	fflush(stdout);
	sleep(atoi(argv[1]));
	return 0;
}

/* MIB of anonymous THP memory bound to @node (mbind MPOL_BIND), not touched. */
static uint8_t *node_map(uint64_t len, int node)
{
	unsigned long mask[4] = { 0 };
	uint8_t *p = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap anonymous");
	if (node < 0 || node >= (int)(sizeof(mask) * 8)) {
		fprintf(stderr, "pmtest: node %d out of range\n", node);
		exit(2);
	}
	p = (uint8_t *)(((uintptr_t)p + (2 << 20) - 1) & ~((uintptr_t)(2 << 20) - 1));
	mask[node / (8 * sizeof(long))] = 1UL << (node % (8 * sizeof(long)));
	/* MPOL_BIND (2): the buffer's pages come from @node only */
	if (syscall(SYS_mbind, p, len, 2, mask, sizeof(mask) * 8, 0))
		die("mbind");
	madvise(p, len, MADV_HUGEPAGE);
	return p;
}

/* As node_map(), touched. */
static uint8_t *node_buffer(uint64_t len, int node)
{
	uint8_t *p = node_map(len, node);

	memset(p, 0x5a, len);
	return p;
}

/* one thread's share of a memcpy-nodes round: [off, end) in 2 MiB steps */
struct copy_share {
	uint8_t *dst;
	const uint8_t *src;
	uint64_t off, end;
	int rep;		/* "rep movsb" rather than memcpy() */
};

static void *copy_share_run(void *arg)
{
	struct copy_share *c = arg;

	for (uint64_t off = c->off; off < c->end; off += 2 << 20) {
		if (c->rep) {
			void *d = c->dst + off;
			const void *s = c->src + off;
			size_t n = 2 << 20;

			asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
		} else {
			memcpy(c->dst + off, c->src + off, 2 << 20);
		}
	}
	return NULL;
}

/* One round: @len bytes by @threads threads, each its own contiguous share. */
static double copy_round(uint8_t *dst, const uint8_t *src, uint64_t len, int threads, int rep)
{
	struct copy_share c[64];
	pthread_t tid[64];
	uint64_t units = len >> 21;
	double t0 = now();

	for (int i = 0; i < threads; i++) {
		c[i] = (struct copy_share){ dst, src, units * i / threads << 21,
					    units * (i + 1) / threads << 21, rep };
		if (i && pthread_create(&tid[i], NULL, copy_share_run, &c[i]))
			die("memcpy-nodes: pthread_create");
	}
	copy_share_run(&c[0]);
	for (int i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	return now() - t0;
}

/*
 * memcpy-nodes MIB FROM TO [ROUNDS [THREADS]]: the copy limit of a drain.
 * MIB of anonymous THP memory on node FROM copied to MIB on node TO, 2 MiB
 * (a chunk's unit) at a time, both sides faulted in before the clock
 * starts, by THREADS threads (default 1) each copying its own share.
 * Prints the fastest of ROUNDS (default 3) copies, of memcpy() and of
 * "rep movsb": "memcpy-nodes: MIB MiB node FROM -> TO: S s (M MiB/s); ...".
 */
static int cmd_memcpy_nodes(int argc, char **argv)
{
	if (argc < 3)
		usage();
	uint64_t len = size_arg(argv[0]) << 20;
	int rounds = argc > 3 ? atoi(argv[3]) : 3;
	int threads = argc > 4 ? atoi(argv[4]) : 1;
	uint8_t *src = node_buffer(len, atoi(argv[1])), *dst = node_buffer(len, atoi(argv[2]));
	double best = 1e30, best_rep = 1e30;

	if (threads < 1 || threads > 64 || (len >> 21) < (uint64_t)threads)
		die("memcpy-nodes: THREADS must be 1..64 and at most MIB / 2");
	/*
	 * Two ways to copy, the faster of which is the limit: glibc's
	 * memcpy() (vector loops), and "rep movsb" as the kernel's own copies
	 * use on CPUs with ERMS. They differ most under QEMU's TCG, which
	 * runs string instructions through one helper and vector loops an
	 * instruction at a time.
	 */
	for (int r = 0; r < (rounds > 0 ? rounds : 1); r++) {
		double t = copy_round(dst, src, len, threads, 0);

		if (t < best)
			best = t;
		memset(dst, 0, 4096);
		t = copy_round(dst, src, len, threads, 1);
		if (t < best_rep)
			best_rep = t;
	}
	if (dst[0] != 0x5a || dst[len - 1] != 0x5a)
		die("memcpy-nodes: the copy is wrong");
	printf("memcpy-nodes: %" PRIu64 " MiB node %s -> %s: %.6f s (%.0f MiB/s); memcpy %.6f s, rep movsb %.6f s, %d thread%s\n",
	       len >> 20, argv[1], argv[2], best < best_rep ? best : best_rep,
	       (len >> 20) / (best < best_rep ? best : best_rep), best, best_rep, threads,
	       threads > 1 ? "s" : "");
	return 0;
}

/*
 * anon-hammer MIB SECONDS: MIB of anonymous memory, touched, "anon-hammer:
 * ready" printed, then read and written a page at a time for SECONDS: the
 * memory NUMA balancing's tiering mode promotes once it sits on a slower
 * node (the control of pm-memtiers). Ends when SECONDS are over or on
 * SIGTERM.
 */
static int cmd_anon_hammer(int argc, char **argv)
{
	if (argc < 2)
		usage();
	uint64_t len = size_arg(argv[0]) << 20, passes = 0;
	double end = now() + atof(argv[1]);
	volatile uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap anonymous");
	for (uint64_t i = 0; i < len; i += 4096)
		p[i] = 1;
	printf("anon-hammer: ready, %" PRIu64 " MiB at %p\n", len >> 20, (void *)p);
	fflush(stdout);
	while (now() < end) {
		for (uint64_t i = 0; i < len; i += 4096)
			p[i]++;
		passes++;
	}
	printf("anon-hammer: %" PRIu64 " passes\n", passes);
	return 0;
}

/*
 * cache-fill NODE FILE MIB: read MIB of FILE (a block device: its page
 * cache is clean and reclaimable) with memory bound to NODE, so that the
 * node's free memory becomes page cache. Prints the bytes read.
 */
static int cmd_cache_fill(int argc, char **argv)
{
	if (argc < 3)
		usage();
	unsigned long mask[16] = {0};
	int node = atoi(argv[0]);
	uint64_t len = size_arg(argv[2]) << 20, done = 0;
	size_t buf_len = 1 << 20;
	char *buf = malloc(buf_len);

	if (!buf || node < 0 || node >= (int)(sizeof(mask) * 8))
		usage();
	mask[node / (8 * sizeof(long))] = 1UL << (node % (8 * sizeof(long)));
	/* MPOL_BIND = 2 */
	if (syscall(SYS_set_mempolicy, 2, mask, sizeof(mask) * 8))
		die("set_mempolicy");
	int fd = open(argv[1], O_RDONLY);

	if (fd < 0)
		die(argv[1]);
	while (done < len) {
		ssize_t n = read(fd, buf, buf_len);

		if (n <= 0)
			break;
		done += n;
	}
	printf("cache-fill: %" PRIu64 " MiB read on node %d\n", done >> 20, node);
	close(fd);
	return 0;
}

/*
 * memcheck NODE MIB: anonymous memory bound to NODE; every 64-byte line gets
 * its own address written, then all are read back in order and in a
 * stride; prints the mismatches (the probe's pointer chase relies on it).
 */
static int cmd_memcheck(int argc, char **argv)
{
	if (argc < 2)
		usage();
	unsigned long mask[16] = {0};
	int node = atoi(argv[0]);
	size_t len = size_arg(argv[1]) << 20;
	mask[node / (8 * sizeof(long))] = 1UL << (node % (8 * sizeof(long)));
	void **p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	/* MPOL_BIND = 2 */
	if (syscall(SYS_mbind, p, len, 2, mask, sizeof(mask) * 8, 0))
		die("mbind");
	size_t n = len / 64, bad = 0, bad2 = 0;
	for (size_t i = 0; i < n; i++)
		p[i * 8] = &p[i * 8];
	for (size_t i = 0; i < n; i++)
		bad += p[i * 8] != &p[i * 8];
	for (size_t i = 0, j = 0; i < n; i++, j = (j + 4099) % n)
		bad2 += p[j * 8] != &p[j * 8];
	int where = -1;
	syscall(SYS_get_mempolicy, &where, NULL, 0, p, 3 /* MPOL_F_NODE | MPOL_F_ADDR */);
	printf("memcheck: node %d (page on %d): %zu lines, %zu wrong in order, %zu wrong strided; line 1: wrote %p read %p\n",
	       node, where, n, bad, bad2, (void *)&p[8], p[8]);
	unsigned char *b = (unsigned char *)p;
	b[4096] = 0x5a;
	printf("memcheck: byte write 0x5a read 0x%02x; ", b[4096]);
	volatile uint64_t *q = (volatile uint64_t *)&p[1024];
	*q = 0x1122334455667788ULL;
	printf("u64 write 0x1122334455667788 read 0x%llx\n", (unsigned long long)*q);
	return bad || bad2;
}

/*
 * stall NAME SECONDS: one write per chunk of the domain, round and round,
 * each timed; a write slower than 20 us met a fault (the chunk had been
 * unmapped: moved, or sampled). Prints the count and p50/p99/max of those
 * stalls in us, and the median time of one 2 MiB memcpy in this process
 * (what moving one chunk must at least cost), for the ratio.
 */
static int cmd_stall(int argc, char **argv)
{
	if (argc < 2)
		usage();
	struct mapping m = map_domain(argv[0], PROT_READ | PROT_WRITE);
	double end = now() + atof(argv[1]), copy[21];
	uint64_t chunk = 2 << 20, n = 0, cap = 1 << 20;
	double *st = malloc(cap * sizeof(*st));
	uint8_t *a = malloc(chunk), *b = malloc(chunk);

	if (!st || !a || !b)
		die("malloc");
	memset(a, 1, chunk);
	memset(b, 2, chunk);
	for (int i = 0; i < 21; i++) {
		double t0 = now();

		memcpy(i & 1 ? a : b, i & 1 ? b : a, chunk);
		copy[i] = now() - t0;
	}
	for (uint64_t i = 0; i < m.size; i += 4096)
		m.p[i] = 1;
	while (now() < end) {
		for (uint64_t off = 0; off < m.size && n < cap; off += chunk) {
			double t0 = now(), dt;

			*(volatile uint64_t *)(m.p + off) = off;
			dt = now() - t0;
			if (dt > 20e-6)
				st[n++] = dt;
		}
	}
	qsort(copy, 21, sizeof(double), cmp_double);
	qsort(st, n, sizeof(double), cmp_double);
	printf("stall: %" PRIu64 " writes stalled; p50 %.0f us, p90 %.0f us, p99 %.0f us, max %.0f us; one 2 MiB copy %.0f us\n",
	       n, n ? st[n / 2] * 1e6 : 0, n ? st[n * 9 / 10] * 1e6 : 0, n ? st[n * 99 / 100] * 1e6 : 0,
	       n ? st[n - 1] * 1e6 : 0, copy[10] * 1e6);
	return 0;
}

/* elapsed COMMAND ARGS...: run COMMAND, print "elapsed: S" (monotonic, ns) */
static int cmd_elapsed(int argc, char **argv)
{
	if (argc < 1)
		usage();
	double t0 = now();
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execvp(argv[0], argv);
		die("exec");
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	printf("elapsed: %.6f\n", now() - t0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/*
 * Host scale (make bench, bench-scale): many domains made, touched and
 * destroyed from one process, so that the bench measures poolmem, not a
 * fork and exec per domain.
 *
 * scale-create PREFIX FROM TO SIZE LOCAL POOL: named domains PREFIX<i>,
 *   FROM <= i < TO, one POOLMEM_DOMAIN_CREATE each.
 * scale-files DIR FROM TO SIZE: profile domains DIR/f<i>, each made by
 *   open(O_CREAT) and sized by ftruncate().
 * scale-destroy PREFIX FROM TO: POOLMEM_DOMAIN_DESTROY of each.
 * Each prints "scale: <what> N in S s (U us each)".
 */
static void scale_report(const char *what, long n, double t0)
{
	double t = now() - t0;

	printf("scale: %s %ld in %.3f s (%.1f us each)\n", what, n, t, n ? t * 1e6 / n : 0.0);
}

static int cmd_scale_create(int argc, char **argv)
{
	struct poolmem_domain_create a = { .size = sizeof(a) };
	int fd = ctl();
	long from, to, i;
	double t0;
	char name[POOLMEM_NAME_MAX];

	if (argc < 6)
		usage();
	from = atol(argv[1]);
	to = atol(argv[2]);
	t0 = now();
	for (i = from; i < to; i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		snprintf(name, sizeof(name), "%s%ld", argv[0], i);
		set_name(a.name, name);
		a.bytes = size_arg(argv[3]);
		a.quota[POOLMEM_TIER_LOCAL] = size_arg(argv[4]);
		a.quota[POOLMEM_TIER_POOL] = size_arg(argv[5]);
		if (ioctl(fd, POOLMEM_DOMAIN_CREATE, &a))
			die(name);
	}
	scale_report("domains created", to - from, t0);
	return 0;
}

static int cmd_scale_files(int argc, char **argv)
{
	long from, to, i;
	char path[256];
	double t0;

	if (argc < 4)
		usage();
	from = atol(argv[1]);
	to = atol(argv[2]);
	t0 = now();
	for (i = from; i < to; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", argv[0], i);
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		if (fd < 0 || ftruncate(fd, size_arg(argv[3])))
			die(path);
		close(fd);
	}
	scale_report("profile files created", to - from, t0);
	return 0;
}

static int cmd_scale_destroy(int argc, char **argv)
{
	struct poolmem_name_arg a = { .size = sizeof(a) };
	int fd = ctl();
	long from, to, i;
	char name[POOLMEM_NAME_MAX];
	double t0;

	if (argc < 3)
		usage();
	from = atol(argv[1]);
	to = atol(argv[2]);
	t0 = now();
	for (i = from; i < to; i++) {
		snprintf(name, sizeof(name), "%s%ld", argv[0], i);
		set_name(a.name, name);
		if (ioctl(fd, POOLMEM_DOMAIN_DESTROY, &a))
			die(name);
	}
	scale_report("domains destroyed", to - from, t0);
	return 0;
}

/*
 * scale-fault PATHPREFIX FROM TO STEP MODE: for every STEPth i in
 * [FROM, TO), maps the domain file PATHPREFIX<i> (its first 2 MiB) and
 * times the first store to it: one fault, which places and maps a chunk.
 * MODE: "hold" keeps the chunk; "punch" returns it after the store (so
 * that thousands of domains can each fault without holding their memory);
 * "cycle" returns the chunk first, times the fault, and keeps it (a
 * sample of domains that already hold one). Prints the faults' p50, p99
 * and max in microseconds, and each latency in FILE with out=FILE.
 */
static int cmd_scale_fault(int argc, char **argv)
{
	const char *out = opt(argc, argv, "out", NULL);
	long from, to, step, i, n = 0;
	const char *mode;
	double *lat;
	char path[256];
	FILE *f = NULL;

	if (argc < 5)
		usage();
	from = atol(argv[1]);
	to = atol(argv[2]);
	step = atol(argv[3]);
	mode = argv[4];
	if (step < 1 || to <= from || (strcmp(mode, "hold") && strcmp(mode, "punch") && strcmp(mode, "cycle")))
		usage();
	lat = calloc((to - from) / step + 1, sizeof(*lat));
	if (!lat)
		die("calloc");
	for (i = from; i < to; i += step) {
		snprintf(path, sizeof(path), "%s%ld", argv[0], i);
		int fd = open(path, O_RDWR | O_CLOEXEC);
		volatile char *p;
		double t0;

		if (fd < 0)
			die(path);
		p = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			die("mmap");
		if (!strcmp(mode, "cycle") && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 2 << 20))
			die("punch");
		t0 = now();
		p[0] = 1;
		lat[n++] = (now() - t0) * 1e6;
		if (!strcmp(mode, "punch") && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 2 << 20))
			die("punch");
		munmap((void *)p, 2 << 20);
		close(fd);
	}
	if (out) {
		f = fopen(out, "w");
		if (!f)
			die(out);
		for (i = 0; i < n; i++)
			fprintf(f, "%.1f\n", lat[i]);
		fclose(f);
	}
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("scale: %ld faults (%s): p50 %.1f us, p99 %.1f us, max %.1f us\n", n, mode,
	       lat[(n - 1) / 2], lat[(n * 99 + 99) / 100 - 1], lat[n - 1]);
	free(lat);
	return 0;
}

/*
 * hash FILE: a 64-bit hash of FILE's whole contents through a shared
 * mapping (FNV-1a over 8-byte words), and how many of its 4 KiB pages hold
 * anything but zeros: two hosts compare a migrated guest's memory through
 * a few bytes in etcd. FILE may be /proc/PID/fd/N (a profile domain's
 * unlinked file). Reading a hole of a domain allocates it: hash last.
 */
static int cmd_hash(int argc, char **argv)
{
	uint64_t h = 0xcbf29ce484222325ULL, nonzero = 0;
	const uint64_t *w;
	off_t size;
	int fd;

	if (argc < 1)
		usage();
	fd = open(argv[0], O_RDWR);
	if (fd < 0)
		die("open");
	size = lseek(fd, 0, SEEK_END);
	w = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED)
		die("mmap");
	for (off_t pg = 0; pg < size / 4096; pg++) {
		uint64_t any = 0;

		for (int i = 0; i < 512; i++) {
			uint64_t v = w[pg * 512 + i];

			any |= v;
			h = (h ^ v) * 0x100000001b3ULL;
		}
		nonzero += !!any;
	}
	printf("%016" PRIx64 " %" PRIu64 "\n", h, nonzero);
	return 0;
}

/*
 * qmp SOCKET COMMAND-JSON...: a QMP client for the nested QEMUs (the rig
 * guest has busybox, no socat or python). Connects to QEMU's -qmp unix
 * socket, negotiates capabilities, sends each command in turn and prints
 * each answer on a line of its own; events in between are skipped. The
 * first error ends it: exit 1, its line printed, later commands not sent.
 * Exit 0 when every command returned, 2 on a connection failure.
 */
static int qmp_line(FILE *f, char *buf, size_t len)
{
	while (fgets(buf, len, f)) {
		if (strstr(buf, "\"return\"") || strstr(buf, "\"error\"") || strstr(buf, "\"QMP\""))
			return 0;
		/* an event: {"timestamp": ..., "event": ...} */
	}
	return -1;
}

static int cmd_qmp(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static char buf[1 << 16];
	int fd, i, rc = 0;
	FILE *f;

	if (argc < 2 || strlen(argv[0]) >= sizeof(sa.sun_path))
		usage();
	strcpy(sa.sun_path, argv[0]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "pmtest: qmp %s: %s\n", argv[0], strerror(errno));
		return 2;
	}
	f = fdopen(fd, "r+");
	if (!f || qmp_line(f, buf, sizeof(buf)) || !strstr(buf, "\"QMP\"")) {
		fprintf(stderr, "pmtest: qmp %s: no greeting\n", argv[0]);
		return 2;
	}
	fputs("{\"execute\": \"qmp_capabilities\"}\n", f);
	fflush(f);
	if (qmp_line(f, buf, sizeof(buf)) || !strstr(buf, "\"return\"")) {
		fprintf(stderr, "pmtest: qmp %s: capabilities refused: %s", argv[0], buf);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		fprintf(f, "%s\n", argv[i]);
		fflush(f);
		if (qmp_line(f, buf, sizeof(buf))) {
			fprintf(stderr, "pmtest: qmp %s: connection closed after %s\n", argv[0], argv[i]);
			return 2;
		}
		fputs(buf, stdout);
		if (strstr(buf, "\"error\"")) {
			rc = 1;
			break;
		}
	}
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	const char *c = argv[1];

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* fault injection aimed at this process only (failslab, fail_page_alloc task-filter) */
	if (getenv("PMTEST_MAKE_IT_FAIL")) {
		make_it_fail_fd = open("/proc/self/make-it-fail", O_WRONLY);
		if (make_it_fail_fd < 0 || write(make_it_fail_fd, "1", 1) != 1)
			die("make-it-fail");
	}
	argc -= 2;
	argv += 2;
	if (!strcmp(c, "pool-add"))
		return cmd_pool_add(argc, argv);
	if (!strcmp(c, "pool-remove") && argc)
		return name_ioctl(POOLMEM_POOL_REMOVE, argv[0], "pool remove");
	if (!strcmp(c, "pool-info"))
		return cmd_pool_info(argc, argv);
	if (!strcmp(c, "pool-list"))
		return cmd_list(argc, argv, 1);
	if (!strcmp(c, "domain-create"))
		return cmd_domain_create(argc, argv);
	if (!strcmp(c, "domain-destroy") && argc)
		return name_ioctl(POOLMEM_DOMAIN_DESTROY, argv[0], "domain destroy");
	if (!strcmp(c, "domain-info"))
		return cmd_domain_info(argc, argv);
	if (!strcmp(c, "domain-list"))
		return cmd_list(argc, argv, 0);
	if (!strcmp(c, "profile-create"))
		return cmd_profile_create(argc, argv);
	if (!strcmp(c, "profile-list"))
		return cmd_list(argc, argv, 2);
	if (!strcmp(c, "touch"))
		return cmd_touch(argc, argv);
	if (!strcmp(c, "fill"))
		return cmd_fill(argc, argv);
	if (!strcmp(c, "expect"))
		return cmd_expect(argc, argv);
	if (!strcmp(c, "punch"))
		return cmd_punch(argc, argv);
	if (!strcmp(c, "threads"))
		return cmd_threads(argc, argv);
	if (!strcmp(c, "map"))
		return cmd_map(argc, argv);
	if (!strcmp(c, "map-into-self"))
		return cmd_map_into_self(argc, argv);
	if (!strcmp(c, "rmap"))
		return cmd_rmap(argc, argv);
	if (!strcmp(c, "fuzz"))
		return cmd_fuzz(argc, argv);
	if (!strcmp(c, "memset-cpu"))
		return cmd_memset_cpu(argc, argv);
	if (!strcmp(c, "prefault"))
		return cmd_prefault(argc, argv);
	if (!strcmp(c, "bench"))
		return cmd_bench(argc, argv);
	if (!strcmp(c, "churn"))
		return cmd_churn(argc, argv);
	if (!strcmp(c, "pin-anon"))
		return cmd_pin_anon(argc, argv);
	if (!strcmp(c, "pin-longterm"))
		return cmd_pin_longterm(argc, argv);
	if (!strcmp(c, "anon-check"))
		return cmd_anon_check(argc, argv);
	if (!strcmp(c, "gup"))
		return cmd_gup(argc, argv);
	if (!strcmp(c, "splice-escape"))
		return cmd_splice_escape(argc, argv);
	if (!strcmp(c, "pipe-hold"))
		return cmd_pipe_hold(argc, argv);
	if (!strcmp(c, "poison-map"))
		return cmd_poison_map(argc, argv);
	if (!strcmp(c, "memerr"))
		return cmd_memerr(argc, argv);
	if (!strcmp(c, "phys"))
		return cmd_phys(argc, argv);
	if (!strcmp(c, "memcpy-nodes"))
		return cmd_memcpy_nodes(argc, argv);
	if (!strcmp(c, "scale-create"))
		return cmd_scale_create(argc, argv);
	if (!strcmp(c, "scale-files"))
		return cmd_scale_files(argc, argv);
	if (!strcmp(c, "scale-destroy"))
		return cmd_scale_destroy(argc, argv);
	if (!strcmp(c, "scale-fault"))
		return cmd_scale_fault(argc, argv);
	if (!strcmp(c, "splice-evict"))
		return cmd_splice_evict(argc, argv);
	if (!strcmp(c, "uffd-list"))
		return cmd_uffd_list(argc, argv);
	if (!strcmp(c, "guest-check"))
		return cmd_guest_check(argc, argv);
	if (!strcmp(c, "file-pmd"))
		return cmd_file_pmd(argc, argv);
	if (!strcmp(c, "create-file"))
		return cmd_create_file(argc, argv);
	if (!strcmp(c, "try-open"))
		return cmd_try_open(argc, argv);
	if (!strcmp(c, "mmap-private"))
		return cmd_mmap_bad(argc, argv, 1);
	if (!strcmp(c, "mmap-beyond"))
		return cmd_mmap_bad(argc, argv, 0);
	if (!strcmp(c, "qemu"))
		return cmd_qemu(argc, argv);
	if (!strcmp(c, "run-as"))
		return cmd_run_as(argc, argv);
	if (!strcmp(c, "as"))
		return cmd_as(argc, argv);
	if (!strcmp(c, "layout"))
		return cmd_layout(argc, argv);
	if (!strcmp(c, "hold"))
		return cmd_hold(argc, argv);
	if (!strcmp(c, "elapsed"))
		return cmd_elapsed(argc, argv);
	if (!strcmp(c, "anon-hold"))
		return cmd_anon_hold(argc, argv);
	if (!strcmp(c, "anon-hammer"))
		return cmd_anon_hammer(argc, argv);
	if (!strcmp(c, "stall"))
		return cmd_stall(argc, argv);
	if (!strcmp(c, "hammer"))
		return cmd_hammer(argc, argv);
	if (!strcmp(c, "odirect"))
		return cmd_odirect(argc, argv);
	if (!strcmp(c, "memcheck"))
		return cmd_memcheck(argc, argv);
	if (!strcmp(c, "cache-fill"))
		return cmd_cache_fill(argc, argv);
	if (!strcmp(c, "stamp"))
		return cmd_stamp(argc, argv);
	if (!strcmp(c, "drain"))
		return cmd_drain(argc, argv);
	if (!strcmp(c, "host-stamp"))
		return cmd_host_stamp(argc, argv, 0);
	if (!strcmp(c, "host-verify"))
		return cmd_host_stamp(argc, argv, 1);
	if (!strcmp(c, "set"))
		return cmd_set(argc, argv);
	if (!strcmp(c, "hash"))
		return cmd_hash(argc, argv);
	if (!strcmp(c, "qmp"))
		return cmd_qmp(argc, argv);
	if (!strcmp(c, "xdp-pin"))
		return cmd_xdp_pin(argc, argv);
	usage();
}
