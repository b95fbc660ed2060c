// SPDX-License-Identifier: GPL-2.0
/* pmtest: migration: integrity, drain, live changes, pins, copies, stalls */
#include "pmtest.h"

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
	volatile uint64_t hot_pages;	/* the writers and checkers use pages [0, hot_pages) */
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
		for (uint64_t pg = a->id; pg < st->hot_pages && !st->stop; pg += st->threads) {
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
		uint64_t pg = rand_r(&seed) % st->hot_pages;
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
int cmd_odirect(int argc, char **argv)
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
 * The pages in use from hot=SIZE, or from the size in bytes in file
 * hotfile=PATH (read again every 100 ms, so a test can grow or shrink the
 * VM's hot set); all of them by default.
 */
static void stamp_hot(struct stamp *st, int argc, char **argv)
{
	const char *file = opt(argc, argv, "hotfile", NULL);
	uint64_t bytes = size_arg(opt(argc, argv, "hot", "0"));
	FILE *f;

	if (file && (f = fopen(file, "r"))) {
		char line[64] = "";

		char *w = fgets(line, sizeof(line), f) ? strtok(line, " \n") : NULL;

		if (w)
			bytes = size_arg(w);
		fclose(f);
	}
	bytes = bytes ? bytes : st->m.size;
	st->hot_pages = bytes < 4096 ? 1 : bytes >= st->m.size ? st->pages : bytes >> 12;
}

/*
 * stamp NAME SECONDS [threads=N] [blockdev=DEV] [layout=huge|small]
 * [until=PATH] (stop early once PATH exists) [hot=SIZE] [hotfile=PATH]:
 * writers stamp (offset, sequence) into every page of the domain (or of
 * its first hot=SIZE, the VM's hot set: stamp_hot()) and
 * verify each page before rewriting it, while checkers verify through
 * process_vm_readv (where the kernel has it) and O_DIRECT; meanwhile the
 * test moves the chunks.
 * Prints passes, checks, wrong bytes and the writers' per-page write time
 * (p50, p99, max: a write that found its chunk moving waited for it).
 * Exit 1 on any wrong byte; a SIGBUS kills it.
 */
int cmd_stamp(int argc, char **argv)
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
	stamp_hot(&st, argc, argv);
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
		stamp_hot(&st, argc, argv);
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

int cmd_host_stamp(int argc, char **argv, int verify)
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

int cmd_drain(int argc, char **argv)
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
int cmd_set(int argc, char **argv)
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
int cmd_xdp_pin(int argc, char **argv)
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
int cmd_hammer(int argc, char **argv)
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
int cmd_anon_hold(int argc, char **argv)
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
uint8_t *node_map(uint64_t len, int node)
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
int cmd_memcpy_nodes(int argc, char **argv)
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
int cmd_anon_hammer(int argc, char **argv)
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
int cmd_cache_fill(int argc, char **argv)
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
int cmd_memcheck(int argc, char **argv)
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
int cmd_stall(int argc, char **argv)
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
int cmd_elapsed(int argc, char **argv)
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
void scale_report(const char *what, long n, double t0)
{
	double t = now() - t0;

	printf("scale: %s %ld in %.3f s (%.1f us each)\n", what, n, t, n ? t * 1e6 / n : 0.0);
}
