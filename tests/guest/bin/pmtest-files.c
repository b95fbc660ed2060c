// SPDX-License-Identifier: GPL-2.0
/* pmtest: files and escapes: pipes, splice, userfaultfd, opens, bad mmaps, QEMU, layout, holds */
#include "pmtest.h"

/*
 * pipe-hold NAME GOFILE: vmsplice() the first page of domain NAME into a
 * pipe, unmap and close the domain, print "ready", and hold the pipe (a
 * reference on the chunk that does not go away) until GOFILE exists; then
 * read the page back out of the pipe.
 */
int cmd_pipe_hold(int argc, char **argv)
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
int cmd_splice_evict(int argc, char **argv)
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

int cmd_uffd_list(int argc, char **argv)
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
int cmd_create_file(int argc, char **argv)
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
int cmd_try_open(int argc, char **argv)
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
int cmd_mmap_bad(int argc, char **argv, int private)
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
int cmd_qemu(int argc, char **argv)
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
int cmd_layout(int argc, char **argv)
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
int cmd_hold(int argc, char **argv)
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
