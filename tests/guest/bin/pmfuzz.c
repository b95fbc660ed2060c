// SPDX-License-Identifier: GPL-2.0
/*
 * pmfuzz: a syscall fuzzer for poolmem, run inside the rig guest.
 *
 *   pmfuzz SEED SECONDS [PROCS [THREADS]]
 *
 * THEORY OF OPERATION: PROCS processes of THREADS threads each run random
 * sequences of what a tenant or an operator can do to poolmem, on a small
 * shared set of names, so that calls collide: control ioctls with valid and
 * broken arguments (domain create/destroy, info, map, reverse map, profile
 * create/remove); open, mmap (shared, private, out of range), munmap,
 * mremap, mprotect, madvise (DONTNEED, REMOVE, POPULATE_WRITE, ...) of
 * domain files; touching pages (SIGBUS is an allowed answer); fallocate
 * in every mode; ftruncate; fork with live mappings; vmsplice and
 * process_vm_readv from domain memory; io_uring buffer registration;
 * files made, sized and unlinked in a profile directory; memory blocks of
 * the pools' nodes taken offline and online again.
 *
 * Every thread's generator is seeded from SEED, its process and thread
 * number, and the seed is printed first, so a failing run replays with the
 * same SEED (the interleaving differs, the sequence of each thread does
 * not). A sampler checks while it runs that no domain holds more than its
 * quota in either tier. At the end the parent destroys everything it can
 * reach and checks the invariants: each pool's allocated bytes equal the
 * chunks its domains hold there; after everything it made is gone, the
 * pools hold what they held before the run and every pool node's free
 * memory is back at its baseline. It prints the syscalls made and their
 * rate, then "pmfuzz: ok" or the broken invariant, and exits 0 or 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/falloc.h>
#include <linux/io_uring.h>

#include "uapi/poolmem.h"

#define CTL		"/dev/poolmem/control"
#define MNT		POOLMEM_MOUNT_DEFAULT
#define PROFILE		"fzp"
#define NDOMAINS	6	/* named domains fz0..fz5 */
#define NFILES		4	/* profile files fzp/f0..f3 */
#define NMAPS		8	/* mappings a thread keeps */
#define MIB		(1ULL << 20)

static volatile int stop;
/* shared counters, in a MAP_SHARED page: syscalls, bytes moved by live changes and by drains */
static uint64_t *calls;

struct map {
	uint8_t *p;
	size_t len;
};

struct thr {
	unsigned int seed;
	int ctl;
	struct map maps[NMAPS];
	sigjmp_buf jb;
	int jb_armed;
};

static __thread struct thr *me;

/* SIGBUS (no memory within quota) and SIGSEGV (a read-only mapping) are answers */
static void on_sigbus(int sig)
{
	if (me && me->jb_armed)
		siglongjmp(me->jb, 1);
	_exit(sig == SIGBUS ? 98 : 99);
}

static unsigned int rnd(unsigned int n)
{
	return n ? (unsigned int)rand_r(&me->seed) % n : 0;
}

static void count(void)
{
	__atomic_fetch_add(calls, 1, __ATOMIC_RELAXED);
}

static void set_name(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n > POOLMEM_NAME_MAX - 1)
		n = POOLMEM_NAME_MAX - 1;

	memset(dst, 0, POOLMEM_NAME_MAX);
	memcpy(dst, src, n);
}

/* ---- control ioctls ---- */

static void op_domain_create(void)
{
	struct poolmem_domain_create a = { .size = sizeof(a) };
	char name[16];
	uint64_t size = (1 + rnd(8)) * 2 * MIB;

	snprintf(name, sizeof(name), "fz%u", rnd(NDOMAINS));
	set_name(a.name, name);
	a.bytes = size;
	switch (rnd(4)) {
	case 0: a.quota[0] = size; break;
	case 1: a.quota[1] = size; break;
	case 2: a.quota[0] = a.quota[1] = size; break;
	default: a.quota[0] = size / 2 & ~(2 * MIB - 1); a.quota[1] = size - a.quota[0]; break;
	}
	a.tier_policy = rnd(4);		/* 3: invalid */
	a.pool_select = rnd(5);		/* 4: invalid */
	a.home_node = rnd(8) ? -1 : (int)rnd(4) - 1;
	a.mode = 0600;
	if (!rnd(8))
		a.bytes += 4096;	/* not a chunk multiple */
	if (!rnd(16))
		a.flags = POOLMEM_DOMAIN_PINNABLE;
	if (!rnd(16))
		a.reserved[rnd(4)] = 1;
	if (!rnd(16))
		a.chunk_bytes = 1ULL << (20 + rnd(12));
	ioctl(me->ctl, POOLMEM_DOMAIN_CREATE, &a);
	count();
}

static void op_domain_destroy(void)
{
	char path[64];
	struct poolmem_name_arg a = { .size = sizeof(a) };
	unsigned int i = rnd(NDOMAINS);

	if (rnd(2)) {
		snprintf(path, sizeof(path), MNT "/fz%u", i);
		unlink(path);
	} else {
		snprintf(path, sizeof(path), "fz%u", i);
		set_name(a.name, path);
		ioctl(me->ctl, POOLMEM_DOMAIN_DESTROY, &a);
	}
	count();
}

static void op_info_map(void)
{
	struct poolmem_domain_info di = { .size = sizeof(di) };
	struct poolmem_map m = { .size = sizeof(m) };
	struct poolmem_map_reverse r = { .size = sizeof(r) };
	struct poolmem_map_range ranges[4];
	char name[16];

	snprintf(name, sizeof(name), "fz%u", rnd(NDOMAINS));
	switch (rnd(3)) {
	case 0:
		set_name(di.name, name);
		ioctl(me->ctl, POOLMEM_DOMAIN_INFO, &di);
		break;
	case 1:
		set_name(m.name, name);
		m.ranges = rnd(8) ? (uintptr_t)ranges : (uintptr_t)rnd(4096);
		m.count = rnd(6);
		m.start = rnd(4) ? 0 : (uint64_t)rnd(64) * MIB;
		ioctl(me->ctl, POOLMEM_MAP, &m);
		break;
	default:
		r.phys = ((uint64_t)rand_r(&me->seed) << 21) & ((1ULL << 36) - 1);
		ioctl(me->ctl, POOLMEM_MAP_REVERSE, &r);
	}
	count();
}

/*
 * Moving chunks under everything else: live quota, pool and tiering
 * changes of random domains, and drains (bounded, cancelled, checked) of
 * random pools. Every drain is cancelled again at the end (main()).
 */
static void op_migrate(void)
{
	char name[16];

	if (rnd(3)) {
		struct poolmem_domain_set a = { .size = sizeof(a) };
		uint64_t size = (1 + rnd(8)) * 2 * MIB;

		snprintf(name, sizeof(name), "fz%u", rnd(NDOMAINS));
		set_name(a.name, name);
		if (rnd(2)) {
			a.flags |= POOLMEM_SET_QUOTA;
			a.quota[0] = (uint64_t)rnd(5) * 2 * MIB;
			a.quota[1] = size;
		}
		if (!rnd(3)) {
			a.flags |= POOLMEM_SET_POOL_MASK;
			a.pool_mask = rnd(4);
		}
		if (!rnd(3)) {
			a.flags |= POOLMEM_SET_TIERING;
			a.tiering = rnd(4);		/* 3: invalid */
			a.scan_rate = rnd(2) ? 0 : (uint64_t)rnd(1024) * MIB;
			a.hot_ms = rnd(1000);
		}
		if (!rnd(4)) {
			a.flags |= POOLMEM_SET_TIER_POLICY | POOLMEM_SET_POOL_SELECT;
			a.tier_policy = rnd(4);
			a.pool_select = rnd(5);
		}
		if (!rnd(32))
			a.flags |= 1u << rnd(32);
		if (!ioctl(me->ctl, POOLMEM_DOMAIN_SET, &a) && a.moved_bytes)
			__atomic_fetch_add(&calls[1], a.moved_bytes, __ATOMIC_RELAXED);
	} else {
		struct poolmem_pool_drain a = { .size = sizeof(a) };

		snprintf(name, sizeof(name), "p%u", rnd(2));
		set_name(a.name, name);
		a.max_bytes = (uint64_t)rnd(8) * 2 * MIB;
		a.flags = rnd(2) ? POOLMEM_DRAIN_CANCEL : rnd(4) ? POOLMEM_DRAIN_ALLOW_LOCAL : POOLMEM_DRAIN_CHECK;
		ioctl(me->ctl, POOLMEM_POOL_DRAIN, &a);
		__atomic_fetch_add(&calls[2], a.moved_bytes, __ATOMIC_RELAXED);
	}
	count();
}

/* Random bytes into a random control command: nothing may oops or be made. */
static void op_ioctl_garbage(void)
{
	static const unsigned long cmds[] = {
		POOLMEM_VERSION, POOLMEM_POOL_INFO, POOLMEM_POOL_LIST, POOLMEM_DOMAIN_CREATE,
		POOLMEM_DOMAIN_LIST, POOLMEM_DOMAIN_INFO, POOLMEM_MAP, POOLMEM_MAP_REVERSE,
		POOLMEM_PROFILE_CREATE, POOLMEM_PROFILE_LIST, POOLMEM_PROFILE_INFO,
		POOLMEM_POOL_DRAIN, POOLMEM_DOMAIN_SET,
	};
	uint64_t buf[32];
	unsigned long cmd = cmds[rnd(sizeof(cmds) / sizeof(cmds[0]))];
	uint32_t *h = (uint32_t *)buf;

	for (size_t j = 0; j < sizeof(buf) / sizeof(buf[0]); j++)
		buf[j] = ((uint64_t)rand_r(&me->seed) << 32) | rand_r(&me->seed);
	if (rnd(2)) {
		h[0] = _IOC_SIZE(cmd);
		h[1] = 0;
	}
	ioctl(me->ctl, cmd, rnd(16) ? (void *)buf : (void *)(uintptr_t)rnd(4096));
	count();
}

static void op_profile(void)
{
	struct poolmem_profile p = { .size = sizeof(p) };

	set_name(p.name, PROFILE);
	p.quota_pct[0] = rnd(3) * 50;
	p.quota_pct[1] = 100 - p.quota_pct[0] + rnd(2) * 10 - 5 * rnd(2);
	p.home_node = -1;
	p.mode = 0777;
	ioctl(me->ctl, POOLMEM_PROFILE_CREATE, &p);
	count();
}

/* ---- files and mappings ---- */

static int open_random(char *path, size_t len)
{
	if (rnd(3))
		snprintf(path, len, MNT "/fz%u", rnd(NDOMAINS));
	else
		snprintf(path, len, MNT "/" PROFILE "/f%u", rnd(NFILES));
	count();
	return open(path, O_RDWR | (rnd(4) ? 0 : O_CREAT), 0600);
}

static struct map *slot(void)
{
	return &me->maps[rnd(NMAPS)];
}

static void drop(struct map *m)
{
	if (m->p) {
		munmap(m->p, m->len);
		count();
	}
	m->p = NULL;
}

static void op_mmap(void)
{
	char path[64];
	int fd = open_random(path, sizeof(path));
	struct map *m = slot();
	off_t size;
	size_t len, off;
	void *p;

	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	count();
	if (size <= 0 && rnd(4)) {
		/* a profile file: give it a size (admission) */
		ftruncate(fd, (off_t)(1 + rnd(8)) * 2 * MIB + (rnd(8) ? 0 : 4096));
		count();
		size = lseek(fd, 0, SEEK_END);
	}
	if (size <= 0)
		size = 2 * MIB;
	off = rnd(4) ? 0 : (size_t)rnd((unsigned int)(size / 4096)) * 4096;
	len = rnd(8) ? (size_t)size - off : (size_t)size + 4096 * rnd(4);
	if (!len)
		len = 4096;
	drop(m);
	p = mmap(NULL, len, PROT_READ | (rnd(8) ? PROT_WRITE : 0), rnd(16) ? MAP_SHARED : MAP_PRIVATE,
		 fd, (off_t)off);
	count();
	if (p != MAP_FAILED) {
		m->p = p;
		m->len = len;
	}
	if (!rnd(4)) {
		/* any fallocate mode, any range */
		static const int modes[] = { FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
					     FALLOC_FL_ZERO_RANGE, FALLOC_FL_KEEP_SIZE,
					     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE };
		fallocate(fd, modes[rnd(5)], (off_t)rnd(32) * 1024 * 1024 / 2, (off_t)rnd(8) * 2 * MIB + rnd(3) * 4096);
		count();
	}
	if (!rnd(16)) {
		ftruncate(fd, (off_t)rnd(16) * MIB);
		count();
	}
	if (!rnd(16)) {
		char b[64];

		read(fd, b, sizeof(b));
		write(fd, b, sizeof(b));
		count();
	}
	if (!rnd(32) && strstr(path, "/" PROFILE "/")) {
		unlink(path);
		count();
	}
	close(fd);
}

static void op_touch(void)
{
	struct map *m = slot();
	volatile uint8_t *p;
	size_t n, i;

	if (!m->p)
		return;
	p = m->p;
	n = 1 + rnd(16);
	me->jb_armed = 1;
	if (sigsetjmp(me->jb, 1) == 0) {
		for (i = 0; i < n; i++) {
			size_t at = (size_t)rnd((unsigned int)(m->len / 4096)) * 4096;

			if (rnd(2))
				p[at] = (uint8_t)i;
			else
				(void)p[at];
		}
	}
	me->jb_armed = 0;
	count();
}

static void op_vm(void)
{
	struct map *m = slot();
	size_t half;

	if (!m->p)
		return;
	half = m->len / 2 & ~4095UL;
	switch (rnd(7)) {
	case 0:
		madvise(m->p, m->len, MADV_DONTNEED);
		break;
	case 1:
		madvise(m->p + half, m->len - half, MADV_REMOVE);
		break;
	case 2:
		madvise(m->p, m->len, rnd(2) ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
		break;
	case 3:
		mprotect(m->p, half ? half : 4096, PROT_READ);
		break;
	case 4: {
		/* shrink, move, or try to grow past the size */
		size_t nl = rnd(3) == 0 ? m->len + 2 * MIB : half ? half : m->len;
		void *q = mremap(m->p, m->len, nl, rnd(2) ? MREMAP_MAYMOVE : 0);

		if (q != MAP_FAILED) {
			m->p = q;
			m->len = nl;
		}
		break;
	}
	case 5:
		if (half) {
			munmap(m->p, half);	/* split: keep the upper half */
			m->p += half;
			m->len -= half;
		}
		break;
	default:
		madvise(m->p, m->len, rnd(2) ? MADV_HUGEPAGE : MADV_WILLNEED);
	}
	count();
}

/* Pages of domain memory referenced from elsewhere: pipes, another reader, io_uring. */
static void op_refs(void)
{
	struct map *m = slot();
	char buf[8192];

	if (!m->p)
		return;
	switch (rnd(3)) {
	case 0: {
		int pfd[2];
		struct iovec iov = { m->p, m->len < sizeof(buf) ? m->len : sizeof(buf) };

		/* non-blocking: under fault injection vmsplice may put nothing in it */
		if (pipe2(pfd, O_NONBLOCK))
			return;
		me->jb_armed = 1;
		if (sigsetjmp(me->jb, 1) == 0)
			vmsplice(pfd[1], &iov, 1, SPLICE_F_NONBLOCK);
		me->jb_armed = 0;
		if (rnd(2))
			read(pfd[0], buf, sizeof(buf));
		close(pfd[0]);
		close(pfd[1]);
		break;
	}
	case 1: {
		struct iovec local = { buf, sizeof(buf) };
		struct iovec remote = { m->p, m->len < sizeof(buf) ? m->len : sizeof(buf) };

		process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		break;
	}
	default: {
		/*
		 * A long-term pin. On chunks in ZONE_MOVABLE, Linux 6.1 retries
		 * migrating them until the task is killed (see pm-pinning): a
		 * child does it, and is killed after 300 ms if still at it.
		 */
		pid_t pid = fork();

		if (pid == 0) {
			struct io_uring_params prm = { 0 };
			int ring = syscall(SYS_io_uring_setup, 4, &prm);
			struct iovec iov = { m->p, m->len < 2 * MIB ? m->len : 2 * MIB };

			if (ring >= 0 && syscall(SYS_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1) == 0)
				syscall(SYS_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
			_exit(0);
		}
		if (pid > 0) {
			for (int i = 0; i < 30 && waitpid(pid, NULL, WNOHANG) == 0; i++)
				usleep(10000);
			if (waitpid(pid, NULL, WNOHANG) == 0) {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
			}
		}
	}
	}
	count();
}

static void op_fork(void)
{
	pid_t pid = fork();

	count();
	if (pid == 0) {
		/* the child inherits the mappings: touch one, punch part, exit */
		for (int i = 0; i < 4; i++)
			op_touch();
		op_vm();
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* ---- memory blocks of the pools' nodes ---- */

static int pool_nodes[POOLMEM_MAX_POOLS], npool_nodes;

static void op_block(void)
{
	char path[512], name[300];
	struct dirent *e;
	DIR *dir;
	int node, nth, k = 0;

	if (!npool_nodes)
		return;
	node = pool_nodes[rnd(npool_nodes)];
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", node);
	dir = opendir(path);
	if (!dir)
		return;
	nth = rnd(16);
	name[0] = 0;
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, "memory", 6) && e->d_name[6] >= '0' && e->d_name[6] <= '9' &&
		    k++ <= nth)
			snprintf(name, sizeof(name), "%s", e->d_name);
	closedir(dir);
	if (!name[0])
		return;
	snprintf(path, sizeof(path), "/sys/devices/system/memory/%s/state", name);
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return;
	/* offline (refused with EBUSY where chunks live), then back online */
	if (write(fd, "offline", 7) == 7) {
		lseek(fd, 0, SEEK_SET);
		if (write(fd, "online_movable", 14) != 14) {
			lseek(fd, 0, SEEK_SET);
			write(fd, "online", 6);
		}
	}
	close(fd);
	count();
}

/* ---- threads, processes, checks ---- */

static void *worker(void *arg)
{
	struct thr t = { .seed = (unsigned int)(uintptr_t)arg };

	me = &t;
	t.ctl = open(CTL, O_RDWR | O_CLOEXEC);
	while (!stop) {
		unsigned int w = rnd(100);

		if (w < 8)
			op_domain_create();
		else if (w < 12)
			op_domain_destroy();
		else if (w < 18)
			op_info_map();
		else if (w < 22)
			op_ioctl_garbage();
		else if (w < 24)
			op_profile();
		else if (w < 40)
			op_mmap();
		else if (w < 65)
			op_touch();
		else if (w < 80)
			op_vm();
		else if (w < 90)
			op_refs();
		else if (w < 93)
			op_fork();
		else if (w < 95)
			op_block();
		else if (w < 97)
			op_migrate();
		else
			drop(slot());
	}
	for (int i = 0; i < NMAPS; i++)
		drop(&t.maps[i]);
	close(t.ctl);
	return NULL;
}

static uint64_t read_u64(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * Free memory of node @n in kB: MemFree plus the per-cpu lists' pages,
 * plus the zero reserve there (/sys/kernel/poolmem/zero_reserve: it fills
 * and gives way in the background, and is free to a domain).
 */
static long node_free_kb(int n)
{
	char path[96], line[256];
	long mf = 0, pcp = 0, v, zr = 0;
	unsigned long long zb;
	int node = -1, zn;
	FILE *f;

	f = fopen("/sys/kernel/poolmem/zero_reserve", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%d %*u %llu", &zn, &zb) == 2 && zn == n)
			zr = (long)(zb >> 10);
	if (f)
		fclose(f);

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", n);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %*d MemFree: %ld kB", &v) == 1)
			mf = v;
	if (f)
		fclose(f);
	f = fopen("/proc/zoneinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d,", &node) == 1)
			continue;
		else if (node == n && sscanf(line, " count: %ld", &v) == 1)
			pcp += v;
	}
	if (f)
		fclose(f);
	return mf + pcp * 4 + zr;
}

/* A value of the sysfs directory @dfd, or -1 when it is gone. */
static int64_t at_u64(int dfd, const char *name)
{
	char buf[32];
	int fd = openat(dfd, name, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

/*
 * Every domain within its quotas; returns the number of violations. Each
 * domain's files are read through one open directory, so a domain
 * destroyed and made again under the same name meanwhile is skipped, not
 * mixed with its successor.
 */
static int check_quotas(const char *when)
{
	DIR *d = opendir("/sys/class/poolmem");
	struct dirent *e;
	int bad = 0;

	while (d && (e = readdir(d))) {
		int64_t lb, lq, pb, pq;
		int dfd;

		if (e->d_name[0] == '.')
			continue;
		dfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY);
		if (dfd < 0)
			continue;
		/*
		 * Quotas read before and after the usage, the larger kept: a
		 * live change (POOLMEM_DOMAIN_SET) raises a quota before usage
		 * grows into it, and lowers one only after usage went down.
		 */
		lq = at_u64(dfd, "local_quota_bytes");
		pq = at_u64(dfd, "pool_quota_bytes");
		lb = at_u64(dfd, "local_bytes");
		pb = at_u64(dfd, "pool_bytes");
		lq = lq < 0 ? lq : (at_u64(dfd, "local_quota_bytes") > lq ? at_u64(dfd, "local_quota_bytes") : lq);
		pq = pq < 0 ? pq : (at_u64(dfd, "pool_quota_bytes") > pq ? at_u64(dfd, "pool_quota_bytes") : pq);
		close(dfd);
		if (lq < 0 || pq < 0 || lb < 0 || pb < 0)
			continue;	/* gone meanwhile */
		if (lb > lq || pb > pq) {
			printf("pmfuzz: %s: domain %s over quota: local %" PRId64 "/%" PRId64
			       ", pool %" PRId64 "/%" PRId64 "\n", when, e->d_name, lb, lq, pb, pq);
			bad++;
		}
	}
	if (d)
		closedir(d);
	return bad;
}

/* Each pool's allocated bytes equal the chunks its domains hold there. */
static int check_pools(void)
{
	DIR *pd = opendir("/sys/kernel/poolmem/pools");
	struct dirent *p;
	int bad = 0;

	while (pd && (p = readdir(pd))) {
		char path[512], line[128], pname[64];
		uint64_t alloc, sum = 0, n;
		DIR *dd;
		struct dirent *d;

		if (p->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/poolmem/pools/%s/allocated_bytes", p->d_name);
		alloc = read_u64(path);
		dd = opendir("/sys/class/poolmem");
		while (dd && (d = readdir(dd))) {
			uint64_t chunk;
			FILE *f;

			if (d->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/sys/class/poolmem/%s/chunk_bytes", d->d_name);
			chunk = read_u64(path);
			snprintf(path, sizeof(path), "/sys/class/poolmem/%s/pool_chunks", d->d_name);
			f = fopen(path, "r");
			while (f && fgets(line, sizeof(line), f))
				if (sscanf(line, "%63s %" SCNu64, pname, &n) == 2 && !strcmp(pname, p->d_name))
					sum += n * chunk;
			if (f)
				fclose(f);
		}
		if (dd)
			closedir(dd);
		printf("pmfuzz: pool %s: allocated %" PRIu64 " bytes, domains' chunks there %" PRIu64 "\n",
		       p->d_name, alloc, sum);
		if (alloc != sum)
			bad++;
	}
	if (pd)
		closedir(pd);
	return bad;
}

static void find_pool_nodes(void)
{
	DIR *pd = opendir("/sys/kernel/poolmem/pools");
	struct dirent *p;

	while (pd && (p = readdir(pd)) && npool_nodes < POOLMEM_MAX_POOLS) {
		char path[512];

		if (p->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/poolmem/pools/%s/node", p->d_name);
		pool_nodes[npool_nodes++] = (int)read_u64(path);
	}
	if (pd)
		closedir(pd);
}

/*
 * A control ioctl of the clean-up: under fault injection its argument's
 * allocation fails now and then (ENOMEM); retry it as an operator would.
 */
static int ioctl_retry(int fd, unsigned long req, void *arg)
{
	int ret = -1;

	for (int i = 0; i < 1000; i++) {
		ret = ioctl(fd, req, arg);
		if (ret == 0 || errno != ENOMEM)
			break;
	}
	return ret;
}

/* Remove every domain and file the fuzzer may have made, and the profile. */
static void clean_up(void)
{
	char path[64];
	int ctl = open(CTL, O_RDWR | O_CLOEXEC);
	struct poolmem_name_arg a = { .size = sizeof(a) };

	for (int i = 0; i < NDOMAINS; i++) {
		snprintf(path, sizeof(path), MNT "/fz%d", i);
		unlink(path);
	}
	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), MNT "/" PROFILE "/f%d", i);
		unlink(path);
	}
	set_name(a.name, PROFILE);
	ioctl_retry(ctl, POOLMEM_PROFILE_REMOVE, &a);
	for (int i = 0; i < 2; i++) {
		struct poolmem_pool_drain dr = { .size = sizeof(dr), .flags = POOLMEM_DRAIN_CANCEL };

		snprintf(path, sizeof(path), "p%d", i);
		set_name(dr.name, path);
		ioctl_retry(ctl, POOLMEM_POOL_DRAIN, &dr);	/* op_migrate's drains */
	}
	close(ctl);
	/* every block of the pools' nodes online again */
	for (int i = 0; i < npool_nodes; i++) {
		char dpath[96];
		struct dirent *e;
		DIR *dir;

		snprintf(dpath, sizeof(dpath), "/sys/devices/system/node/node%d", pool_nodes[i]);
		dir = opendir(dpath);
		while (dir && (e = readdir(dir))) {
			char state[512], buf[16] = "";
			int fd;

			if (strncmp(e->d_name, "memory", 6) || e->d_name[6] < '0' || e->d_name[6] > '9')
				continue;
			snprintf(state, sizeof(state), "/sys/devices/system/memory/%s/state", e->d_name);
			fd = open(state, O_RDWR);
			if (fd < 0)
				continue;
			if (read(fd, buf, sizeof(buf) - 1) > 0 && !strncmp(buf, "offline", 7)) {
				lseek(fd, 0, SEEK_SET);
				write(fd, "online_movable", 14);
			}
			close(fd);
		}
		if (dir)
			closedir(dir);
	}
}

/* Every pool's state is "online" (no drain left running). */
static int check_pools_online(void)
{
	DIR *pd = opendir("/sys/kernel/poolmem/pools");
	struct dirent *p;
	int bad = 0;

	while (pd && (p = readdir(pd))) {
		char path[512], buf[32] = "";
		int fd;

		if (p->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/poolmem/pools/%s/state", p->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0 || strncmp(buf, "online", 6)) {
			printf("pmfuzz: pool %s: state %s after the clean-up: a drain was not cancelled\n",
			       p->d_name, buf[0] ? strtok(buf, "\n") : "unreadable");
			bad++;
		}
		if (fd >= 0)
			close(fd);
	}
	if (pd)
		closedir(pd);
	return bad;
}

/* Bytes all pools hold in chunks. */
static uint64_t pools_allocated(void)
{
	DIR *pd = opendir("/sys/kernel/poolmem/pools");
	struct dirent *p;
	uint64_t total = 0;

	while (pd && (p = readdir(pd))) {
		char path[512];

		if (p->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/poolmem/pools/%s/allocated_bytes", p->d_name);
		total += read_u64(path);
	}
	if (pd)
		closedir(pd);
	return total;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned int seed, procs, threads;
	double secs, t0, t1;
	long base[POOLMEM_MAX_POOLS];
	uint64_t base_alloc;
	struct sigaction sa = { .sa_handler = on_sigbus };
	struct statfs st;
	int bad = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: pmfuzz SEED SECONDS [PROCS [THREADS]]\n");
		return 2;
	}
	seed = (unsigned int)strtoul(argv[1], NULL, 0);
	secs = atof(argv[2]);
	procs = argc > 3 ? (unsigned int)atoi(argv[3]) : 3;
	threads = argc > 4 ? (unsigned int)atoi(argv[4]) : 3;
	printf("pmfuzz: seed %u, %.0f s, %u processes x %u threads (replay: pmfuzz %u %.0f %u %u)\n",
	       seed, secs, procs, threads, seed, secs, procs, threads);
	fflush(stdout);
	if (statfs(MNT, &st) || st.f_type != POOLMEM_FS_MAGIC) {
		mkdir(MNT, 0755);
		if (mount("poolmem", MNT, "poolmem", 0, NULL)) {
			perror("pmfuzz: mount " MNT);
			return 2;
		}
	}
	find_pool_nodes();
	for (int i = 0; i < npool_nodes; i++)
		base[i] = node_free_kb(pool_nodes[i]);
	base_alloc = pools_allocated();	/* domains that were there before us */
	calls = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);	/* writes to read-only mappings, also expected */
	signal(SIGPIPE, SIG_IGN);

	t0 = now();
	for (unsigned int p = 0; p < procs; p++) {
		if (fork() == 0) {
			pthread_t tid[64];
			unsigned int n = threads < 64 ? threads : 64;

			for (unsigned int i = 0; i < n; i++)
				pthread_create(&tid[i], NULL, worker,
					       (void *)(uintptr_t)(seed * 7919u + p * 131u + i * 17u + 1));
			while (now() - t0 < secs)
				usleep(100000);
			stop = 1;
			for (unsigned int i = 0; i < n; i++)
				pthread_join(tid[i], NULL);
			_exit(0);
		}
	}
	/* the sampler: quotas hold at every moment we look */
	while (now() - t0 < secs) {
		bad += check_quotas("while running");
		usleep(200000);
	}
	for (unsigned int p = 0; p < procs; p++) {
		int status;

		wait(&status);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("pmfuzz: a fuzzing process died: status %#x\n", status);
			bad++;
		}
	}
	t1 = now();
	printf("pmfuzz: %" PRIu64 " syscalls in %.1f s: %.0f per second\n", *calls, t1 - t0, *calls / (t1 - t0));
	printf("pmfuzz: chunks moved meanwhile: %" PRIu64 " MiB by live changes, %" PRIu64 " MiB by drains\n",
	       calls[1] >> 20, calls[2] >> 20);
	bad += check_quotas("at the end");
	usleep(300000);	/* retired chunks whose pipes closed */
	bad += check_pools();
	clean_up();
	/* every drain was cancelled: a pool left draining takes no chunk */
	bad += check_pools_online();
	/* named domains' memory goes with their last mapping: all are gone now */
	for (int i = 0; i < 50 && pools_allocated() != base_alloc; i++)
		usleep(100000);
	if (pools_allocated() != base_alloc) {
		printf("pmfuzz: pools hold %" PRIu64 " bytes after everything was destroyed, %" PRIu64
		       " before the run\n", pools_allocated(), base_alloc);
		bad++;
	}
	for (int i = 0; i < npool_nodes; i++) {
		long now_kb = node_free_kb(pool_nodes[i]);

		printf("pmfuzz: node %d free: baseline %ld kB, now %ld kB\n", pool_nodes[i], base[i], now_kb);
		/* 4 MiB of slack: the fuzzer's own page tables and anonymous memory */
		if (base[i] - now_kb > 4096) {
			printf("pmfuzz: node %d lost %ld kB\n", pool_nodes[i], base[i] - now_kb);
			bad++;
		}
	}
	printf("pmfuzz: %s\n", bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}
