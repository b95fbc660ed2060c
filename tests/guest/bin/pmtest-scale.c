// SPDX-License-Identifier: GPL-2.0
/* pmtest: scale: many domains and files, hashes, QMP */
#include "pmtest.h"

int cmd_scale_create(int argc, char **argv)
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

int cmd_scale_files(int argc, char **argv)
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

int cmd_scale_destroy(int argc, char **argv)
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
int cmd_scale_fault(int argc, char **argv)
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
int cmd_hash(int argc, char **argv)
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

int cmd_qmp(int argc, char **argv)
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
