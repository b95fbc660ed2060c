/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmtest: what its files share (tests/guest/bin/pmtest*.c): the includes,
 * the types and helpers more than one file uses, and every command that
 * main() dispatches to. Split by topic from one file (issue 47); the
 * commands are documented where they are defined.
 */
#ifndef PMTEST_H
#define PMTEST_H

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
struct mapping {
	int fd;
	uint8_t *p;
	uint64_t size;
};

/* pmtest.c */
void injection_off(void);
void die(const char *what);
void usage(void);
uint64_t size_arg(const char *s);
double now(void);
int ctl(void);
const char *opt(int argc, char **argv, const char *key, const char *def);
int lookup(const char *s, const char *const *names, int n);
void set_name(char *dst, const char *src);
uint64_t pool_mask(int fd, const char *list);
int name_ioctl(unsigned long cmd, const char *name, const char *what);

/* pmtest-memory.c */
extern sigjmp_buf sigbus_jmp;
extern volatile int sigbus_code;
extern void *volatile sigbus_addr;
int discard(int fd, uint64_t off, uint64_t len);
struct mapping map_domain_layout(const char *name, int prot, const char *layout);
struct mapping map_domain(const char *name, int prot);
uint64_t pmd_mapped(const void *p);
void on_sigbus(int sig);
void on_sigbus_info(int sig, siginfo_t *si, void *uc);
int cmd_touch(int argc, char **argv);
int cmd_fill(int argc, char **argv);
int cmd_expect(int argc, char **argv);
int cmd_punch(int argc, char **argv);
int cmd_threads(int argc, char **argv);
int cmd_churn(int argc, char **argv);
int cmd_map(int argc, char **argv);
int cmd_map_into_self(int argc, char **argv);
int cmd_rmap(int argc, char **argv);
int cmd_fuzz(int argc, char **argv);
int cmp_double(const void *a, const void *b);
int cmd_bench(int argc, char **argv);
int cmd_prefault(int argc, char **argv);
int cmd_memset_cpu(int argc, char **argv);

/* pmtest-pin.c */
int cmd_anon_check(int argc, char **argv);
int cmd_gup(int argc, char **argv);
int cmd_pin_longterm(int argc, char **argv);
int cmd_pin_anon(int argc, char **argv);
int cmd_as(int argc, char **argv);
int cmd_run_as(int argc, char **argv);
int cmd_guest_check(int argc, char **argv);
int cmd_file_pmd(int argc, char **argv);
struct poolmem_domain_info domain_info(const char *name);
int cmd_splice_escape(int argc, char **argv);
const char *poison_read(struct mapping *m, uint64_t page, int *val);

/* pmtest-memerr.c */
int cmd_poison_map(int argc, char **argv);
int cmd_memerr(int argc, char **argv);
int cmd_phys(int argc, char **argv);

/* pmtest-files.c */
int cmd_pipe_hold(int argc, char **argv);
int cmd_splice_evict(int argc, char **argv);
int cmd_uffd_list(int argc, char **argv);
int cmd_create_file(int argc, char **argv);
int cmd_try_open(int argc, char **argv);
int cmd_mmap_bad(int argc, char **argv, int private);
int cmd_qemu(int argc, char **argv);
int cmd_layout(int argc, char **argv);
int cmd_hold(int argc, char **argv);

/* pmtest-move.c */
int cmd_odirect(int argc, char **argv);
int cmd_stamp(int argc, char **argv);
int cmd_host_stamp(int argc, char **argv, int verify);
int cmd_drain(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_xdp_pin(int argc, char **argv);
int cmd_hammer(int argc, char **argv);
int cmd_anon_hold(int argc, char **argv);
uint8_t *node_map(uint64_t len, int node);
int cmd_memcpy_nodes(int argc, char **argv);
int cmd_anon_hammer(int argc, char **argv);
int cmd_cache_fill(int argc, char **argv);
int cmd_memcheck(int argc, char **argv);
int cmd_stall(int argc, char **argv);
int cmd_elapsed(int argc, char **argv);
void scale_report(const char *what, long n, double t0);

/* pmtest-scale.c */
int cmd_scale_create(int argc, char **argv);
int cmd_scale_files(int argc, char **argv);
int cmd_scale_destroy(int argc, char **argv);
int cmd_scale_fault(int argc, char **argv);
int cmd_hash(int argc, char **argv);
int cmd_qmp(int argc, char **argv);

#endif /* PMTEST_H */
