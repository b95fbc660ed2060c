// SPDX-License-Identifier: GPL-2.0
/* pmtest: pins and access from other paths: GUP, io_uring fixed buffers, other users, file PMDs, splice */
#include "pmtest.h"

/*
 * anon-check MIB: fill anonymous memory with a pattern, read it back (run
 * under numactl --membind to check a node's memory keeps data at all).
 */
int cmd_anon_check(int argc, char **argv)
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
int cmd_gup(int argc, char **argv)
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
int cmd_pin_longterm(int argc, char **argv)
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
int cmd_pin_anon(int argc, char **argv)
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
int cmd_as(int argc, char **argv)
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
int cmd_run_as(int argc, char **argv)
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
int cmd_guest_check(int argc, char **argv)
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
int cmd_file_pmd(int argc, char **argv)
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
struct poolmem_domain_info domain_info(const char *name)
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
int cmd_splice_escape(int argc, char **argv)
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
const char *poison_read(struct mapping *m, uint64_t page, int *val)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus_info, .sa_flags = SA_SIGINFO };

	sigaction(SIGBUS, &sa, NULL);
	sigbus_code = 0;
	if (sigsetjmp(sigbus_jmp, 1))
		return sigbus_code == BUS_MCEERR_AR ? "SIGBUS BUS_MCEERR_AR" : "SIGBUS (other code)";
	*val = ((volatile uint8_t *)m->p)[page << 12];
	return "read";
}
