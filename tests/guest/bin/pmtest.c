// SPDX-License-Identifier: GPL-2.0
/*
 * pmtest: drives poolmem's kernel ABI directly for the guest tests (the
 * module is what is under test here, so this deliberately does not go
 * through libpoolmem). Every command prints what it did; a failing system
 * call prints "pmtest: <what>: <ERRNO NAME> (<message>)" and exits 1, so
 * tests can assert the exact error.
 *
 * This file: the control device (pools, domains, profiles) and main();
 * the other commands are in pmtest-*.c by topic, and pmtest.h has what
 * the files share.
 */
#include "pmtest.h"

/* /proc/self/make-it-fail, open while PMTEST_MAKE_IT_FAIL injects failures */
static int make_it_fail_fd = -1;

/*
 * Stop injecting failures into this process, so that what it reports is
 * not lost to an injected failure of its own output. Writing through the
 * descriptor opened beforehand needs no allocation.
 */
void injection_off(void)
{
	if (make_it_fail_fd >= 0 && pwrite(make_it_fail_fd, "0", 1, 0) == 1) {
		close(make_it_fail_fd);
		make_it_fail_fd = -1;
	}
}

void die(const char *what)
{
	int e = errno;

	injection_off();

	printf("pmtest: %s: %s (%s)\n", what, strerrorname_np(e) ? strerrorname_np(e) : "?",
	       strerror(e));
	exit(1);
}

void usage(void)
{
	fprintf(stderr, "usage: pmtest COMMAND ARGS (see tests/guest/bin/pmtest*.c)\n");
	exit(2);
}

uint64_t size_arg(const char *s)
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

double now(void)
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

int ctl(void)
{
	int fd = open(CTL, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open " CTL);
	mount_fs();
	return fd;
}

const char *opt(int argc, char **argv, const char *key, const char *def)
{
	size_t n = strlen(key);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return argv[i] + n + 1;
	return def;
}

int lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	fprintf(stderr, "pmtest: unknown policy '%s'\n", s);
	exit(2);
}

/* Copy a name without truncating it silently: a name of 32+ characters
 * fills the whole field with no NUL, as a careless caller would send it. */
void set_name(char *dst, const char *src)
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
uint64_t pool_mask(int fd, const char *list)
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

int name_ioctl(unsigned long cmd, const char *name, const char *what)
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
