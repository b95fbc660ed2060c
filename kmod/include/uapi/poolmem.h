/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * poolmem: pooled memory for VMs with hard per-tier quotas.
 *
 * The userspace ABI of /dev/poolmem/control. Every ioctl argument starts
 * with "size" (set it to sizeof the struct) and "flags" (0; domain and
 * profile create alone define flags: POOLMEM_DOMAIN_*); every reserved
 * field must be zero. Anything else is refused with -EINVAL; a bad pointer
 * gives -EFAULT. Names are 1 to POOLMEM_NAME_MAX - 1 ASCII characters of
 * [A-Za-z0-9_.-], NUL-terminated, not starting with '.' or '-'; "control"
 * is reserved.
 *
 * Domains are regular files of the poolmem file system (type "poolmem",
 * mounted at POOLMEM_MOUNT_DEFAULT): open, mmap MAP_SHARED, fallocate
 * (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) and MADV_REMOVE to give
 * memory back, chown/chmod, unlink to destroy. A profile is a directory of
 * that file system: a file created in it becomes a domain with the
 * profile's quotas and policies when ftruncate() gives it a size.
 */
#ifndef _UAPI_LINUX_POOLMEM_H
#define _UAPI_LINUX_POOLMEM_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define POOLMEM_ABI_VERSION	15	/* 5: POOLMEM_DOMAIN_ZNUMA; 6: POOLMEM_DRAIN_REVOKE; 7: memory errors; 8: counts that outlive domains; 9: /sys/kernel/poolmem/abi_version; 10: POOLMEM_VM_BIND, POOLMEM_DOMAIN_CHECK, POOLMEM_SET_CHECK; 11: /proc/poolmem/domains, domain_histograms; 12: domain ids (sysfs id, poolmem_memory_error.domain_id); 13: POOLMEM_SET_STEP; 14: sample_hits_pool; 15: sysfs moves_pending_bytes; rebalancing: pools' rebalanced_chunks (stat) and contended, domains' rebalanced_chunks (stat, /proc/poolmem/domains before pool_chunks) */
#define POOLMEM_NAME_MAX	32
#define POOLMEM_MAX_POOLS	64	/* pool ids are 0..63 */
#define POOLMEM_POOL_LOCAL	0xffffffffu /* "pool" of local-tier chunks */
#define POOLMEM_FS_MAGIC	0x706d656d	/* statfs f_type: "pmem" */
#define POOLMEM_MOUNT_DEFAULT	"/run/poolmem"

/* Tiers: local is the DRAM of a domain's home node, pool is far memory. */
enum poolmem_tier {
	POOLMEM_TIER_LOCAL = 0,
	POOLMEM_TIER_POOL = 1,
	POOLMEM_NR_TIERS
};

/* Where a domain's next chunk goes. */
enum poolmem_tier_policy {
	POOLMEM_TIER_LOCAL_FIRST = 0,	/* fill the local quota, then pools */
	POOLMEM_TIER_INTERLEAVE = 1,	/* alternate, weighted by the quotas */
	POOLMEM_TIER_POOL_FIRST = 2,	/* fill the pool quota, then local */
	POOLMEM_NR_TIER_POLICIES
};

/* Which pool a pool-tier chunk comes from. */
enum poolmem_pool_select {
	POOLMEM_SELECT_ROUND_ROBIN = 0,
	POOLMEM_SELECT_RANDOM = 1,
	POOLMEM_SELECT_NEAREST = 2,	/* lowest NUMA distance from home */
	POOLMEM_SELECT_SMART_IDLE = 3,	/* lowest access factor, then least allocated */
	POOLMEM_NR_POOL_SELECTS
};

struct poolmem_version {
	__u32 size;
	__u32 flags;
	__u32 abi;			/* out: POOLMEM_ABI_VERSION */
	__u32 reserved;
};

struct poolmem_pool_add {
	__u32 size;
	__u32 flags;
	char name[POOLMEM_NAME_MAX];
	__s32 node;			/* NUMA node with memory, no CPUs needed */
	__u32 tier;			/* POOLMEM_TIER_POOL */
	__u32 overcommit_pct;		/* 100..1000; 0 = 100 (none) */
	__u32 id;			/* out: pool id */
	__u64 reserved[4];
};

/* POOLMEM_POOL_REMOVE and POOLMEM_DOMAIN_DESTROY take only a name. */
struct poolmem_name_arg {
	__u32 size;
	__u32 flags;
	char name[POOLMEM_NAME_MAX];
	__u64 reserved[2];
};

struct poolmem_pool_info {
	__u32 size;
	__u32 flags;
	char name[POOLMEM_NAME_MAX];	/* in */
	__u32 id;			/* out from here on */
	__s32 node;
	__u32 tier;
	__u32 overcommit_pct;
	__u64 capacity_bytes;		/* node's present memory */
	__u64 free_bytes;		/* node's free memory */
	__u64 allocated_bytes;		/* held by domain chunks */
	__u64 committed_bytes;		/* pool quotas of domains allowed here */
	__u64 chunks;
	__u64 allocations;		/* chunk allocations, cumulative */
	__u64 faults;			/* page faults served from here */
	__u64 failures;			/* chunk allocations that failed here */
	__u64 access_factor;		/* weighted recent activity */
	__u32 state;			/* POOLMEM_POOL_DRAINING, _DEGRADED */
	__u32 reserved32;
	__u64 moved_in;			/* chunks migrated here, cumulative */
	__u64 moved_out;		/* chunks migrated away, cumulative */
	__u64 memory_errors;		/* memory errors in its memory (poisoned pages), since load */
};

/* poolmem_pool_info.state */
#define POOLMEM_POOL_DRAINING		(1u << 0)	/* takes no new chunks */
/* memory errors past its error_policy's threshold (sysfs): draining for good */
#define POOLMEM_POOL_DEGRADED		(1u << 1)

/*
 * POOLMEM_POOL_DRAIN: move every chunk off pool "name" while its domains
 * run, so that its memory can be offlined and the pool removed. The first
 * call marks the pool draining (no new chunk lands there, from placement or
 * migration) after a pre-check that every domain's chunks there fit
 * elsewhere within its quotas (-ENOSPC otherwise: "blocker" names the first
 * domain that doesn't fit, with need_bytes and room_bytes). Each call moves
 * at most max_bytes (0: no limit) and returns; call again until
 * remaining_bytes is 0. A call interrupted by a signal returns -EINTR after
 * the chunk it was moving; the pool stays draining, and the next call goes
 * on where it stopped.
 *
 * Chunks referenced for a moment (O_DIRECT, KVM or vhost get_user_pages)
 * are put off and counted in busy_chunks; the next call retries them. A
 * long-term pinned chunk (VFIO, RDMA, io_uring fixed buffer) can't move:
 * -EBUSY, with blocker and blocker_offset naming it. Pages lost to memory
 * errors are left out of the copy and stay lost at their offsets; an
 * uncorrectable error met during the copy itself: -EIO, likewise (the
 * next call moves the chunk without that page).
 *
 * Flags: POOLMEM_DRAIN_ALLOW_LOCAL lets chunks that fit no other pool move
 * to their domain's local tier (within its local quota);
 * POOLMEM_DRAIN_CHECK only runs the pre-check (the pool's state does not
 * change); POOLMEM_DRAIN_CANCEL ends draining: the pool takes chunks again.
 *
 * POOLMEM_DRAIN_REVOKE (alone): the pool's memory is no longer this host's
 * to use (poolmem-agent: its lease on a shared device is gone, and the
 * extents may be fenced and given to another host). The pool drains, and
 * from then on offlining its memory does not wait for its chunks: as each
 * memory block goes offline, the chunks on it are unmapped and dropped
 * without being read or copied (their bytes may be another host's by now),
 * and their domains get a memory error (SIGBUS, BUS_MCEERR_AR) on touching
 * them until they discard the range. Their pages are never freed: they go
 * offline with their blocks. No chunk moves off the pool from then on; the
 * call waits for placements and moves already under way. EOPNOTSUPP for a
 * pool with memory in a kernel zone (it could not go offline with chunks).
 * POOLMEM_DRAIN_CANCEL ends it, and is refused (EBUSY) while memory of the
 * node is still online.
 */
#define POOLMEM_DRAIN_ALLOW_LOCAL	(1u << 0)
#define POOLMEM_DRAIN_CHECK		(1u << 1)
#define POOLMEM_DRAIN_CANCEL		(1u << 2)
#define POOLMEM_DRAIN_REVOKE		(1u << 3)
#define POOLMEM_DRAIN_FLAGS \
	(POOLMEM_DRAIN_ALLOW_LOCAL | POOLMEM_DRAIN_CHECK | POOLMEM_DRAIN_CANCEL | POOLMEM_DRAIN_REVOKE)

struct poolmem_pool_drain {
	__u32 size;
	__u32 flags;			/* POOLMEM_DRAIN_* */
	char name[POOLMEM_NAME_MAX];
	__u64 max_bytes;		/* move at most this much in this call; 0 = all */
	__u64 moved_bytes;		/* out: moved by this call */
	__u64 remaining_bytes;		/* out: still held on the pool */
	__u64 busy_chunks;		/* out: put off (referenced); retried next call */
	char blocker[POOLMEM_NAME_MAX];	/* out: the domain that stopped the drain */
	__u64 blocker_offset;		/* out: its chunk's offset (-EBUSY, -EIO) */
	__u64 need_bytes;		/* out (-ENOSPC): its bytes on the pool */
	__u64 room_bytes;		/* out (-ENOSPC): what it may use elsewhere */
	__u64 reserved[4];
};

/*
 * POOLMEM_POOL_LIST / POOLMEM_DOMAIN_LIST: "names" points at an array of
 * "count" entries of POOLMEM_NAME_MAX bytes; the kernel fills up to "count"
 * and sets "total" to how many exist (call with count 0 to size the array).
 */
struct poolmem_list {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 total;			/* out */
	__u64 names;			/* user pointer */
	__u64 reserved[2];
};

/*
 * Domain create flags.
 *
 * POOLMEM_DOMAIN_PINNABLE: every chunk comes from memory outside
 * ZONE_MOVABLE, so the domain's pages can be long-term pinned
 * (pin_user_pages with FOLL_LONGTERM: VFIO device passthrough, RDMA,
 * io_uring fixed buffers). Such a domain may only use local DRAM and pool
 * memory onlined as a kernel zone ("normal"); admission counts only that
 * part of each node. Without the flag, chunks on pool memory onlined
 * movable can't be long-term pinned: Linux 6.1 then retries migrating
 * them, which poolmem pages can't do, until the pinning task is killed.
 */
#define POOLMEM_DOMAIN_PINNABLE		(1u << 0)
/*
 * POOLMEM_DOMAIN_ZNUMA: the domain is two windows, offered as two more
 * files beside the domain's own, <name>.local and <name>.pool: bytes
 * [0, quota[local]) of the domain, always local memory, and
 * [quota[local], bytes), always pool memory (the domain's pool selection).
 * Each window file starts at offset 0 of its window and is as large as it,
 * so that a VM can give each to the guest as its own NUMA node (Pond's
 * zNUMA: the pool memory a CPU-less node). The quotas must split the size
 * (local + pool = bytes, neither 0), and stay fixed: no live quota or tier
 * policy change, no tiering, no drain into the local tier.
 *
 * In a profile (POOLMEM_PROFILE_CREATE with this flag, both quotas as
 * percentages adding up to 100) the windows are the files a VM creates,
 * as libvirt's per-node backends (ram-node0, ram-node1) do: the first file
 * ftruncate() sizes is the local window and makes the domain, the pool
 * window as large as the percentages say; the next file the same process
 * creates in that directory is the pool window, already sized. Files
 * unlinked before they are sized can't be windows (EINVAL).
 */
#define POOLMEM_DOMAIN_ZNUMA		(1u << 1)
#define POOLMEM_DOMAIN_FLAGS		(POOLMEM_DOMAIN_PINNABLE | POOLMEM_DOMAIN_ZNUMA)
/*
 * POOLMEM_DOMAIN_CHECK (POOLMEM_DOMAIN_CREATE only): every check a create
 * runs, admission included (refused, committed_bytes and limit_bytes
 * filled in as for a create), and nothing made: 0 if the domain would be
 * created now. Not counted in admission_refusals. "poolctl vm create
 * --check" and "poolctl apply --dry-run" use it.
 */
#define POOLMEM_DOMAIN_CHECK		(1u << 2)

struct poolmem_domain_create {
	__u32 size;
	__u32 flags;
	char name[POOLMEM_NAME_MAX];
	__u64 bytes;			/* size of the domain file, chunk multiple */
	__u64 chunk_bytes;		/* power of two, 2 MiB..1 GiB; 0 = 2 MiB */
	__u64 quota[POOLMEM_NR_TIERS];	/* hard limits; must add up to >= bytes */
	__u64 pool_mask;		/* allowed pool ids; 0 = every pool */
	__s32 home_node;		/* -1 = first node with CPUs */
	__u32 tier_policy;		/* enum poolmem_tier_policy */
	__u32 pool_select;		/* enum poolmem_pool_select */
	__u32 uid;			/* owner of the domain file */
	__u32 gid;
	__u32 mode;			/* permission bits, 0 = 0600 */
	/*
	 * Out, when admission control refuses the domain (-ENOSPC): the
	 * limit that refused it (enum poolmem_refusal), what the other
	 * domains hold against that limit, and the limit; home_node is set
	 * to the node the request resolved to. The quota asked for is the
	 * request's own. In: zero.
	 */
	__u32 refused;
	__u32 reserved32;
	__u64 committed_bytes;
	__u64 limit_bytes;
	__u64 reserved[1];
};

/* Which admission limit refused a domain (poolmem_domain_create.refused). */
enum poolmem_refusal {
	POOLMEM_REFUSED_NONE = 0,
	POOLMEM_REFUSED_LOCAL = 1,		/* home node memory x local_overcommit_pct */
	POOLMEM_REFUSED_LOCAL_PINNABLE = 2,	/* home node memory outside ZONE_MOVABLE */
	POOLMEM_REFUSED_POOL = 3,		/* capacity x overcommit of the allowed pools */
	POOLMEM_REFUSED_POOL_PINNABLE = 4,	/* allowed pool memory outside ZONE_MOVABLE */
	POOLMEM_REFUSED_NO_POOL = 5,		/* a pool quota, but no pool is registered */
};

struct poolmem_domain_info {
	__u32 size;
	__u32 flags;
	char name[POOLMEM_NAME_MAX];	/* in */
	__u64 bytes;			/* out from here on */
	__u64 chunk_bytes;
	__u64 quota[POOLMEM_NR_TIERS];
	__u64 usage[POOLMEM_NR_TIERS];
	__u64 pool_mask;
	__s32 home_node;
	__u32 tier_policy;
	__u32 pool_select;
	__u32 uid;
	__u32 gid;
	__u32 mode;
	__u64 chunks;			/* allocated chunks */
	__u64 faults;
	__u64 sigbus;			/* faults refused: no memory within quota */
	__u64 discards;			/* chunks returned by hole punching */
	__u32 domain_flags;		/* out: POOLMEM_DOMAIN_* given at create */
	__u32 reserved32;
	__u64 retired_chunks;		/* discarded while still referenced: still charged */
	__u64 moves;			/* chunks migrated */
	__u64 memory_errors;		/* pages of it lost to memory errors, since create */
};

/*
 * POOLMEM_DOMAIN_SET: change a live domain's quotas and policies while its
 * VM runs. "flags" says which fields to apply (POOLMEM_SET_*); the others
 * are ignored and must be zero. The new settings are checked as at create
 * (quotas must cover the size; admission with the domain's old quotas left
 * out). A tier shrunk below its usage gives chunks to the other tier (they
 * migrate), and chunks on pools taken out of pool_mask move to the pools
 * left; where they don't fit within the new quotas and the free memory,
 * nothing changes: -ENOSPC with need_bytes and room_bytes. The struct's
 * size is its version: later versions append fields.
 *
 * With POOLMEM_SET_STEP the moves stop once move_bytes have moved (the
 * ioctl returns 0), and remaining_bytes says how many must still move (at
 * least; 0 when done). Until then the shrunk tiers keep a quota of their
 * usage, as while any move runs. POOLMEM_SET_STEP alone changes no setting:
 * it goes on with the moves an earlier POOLMEM_DOMAIN_SET left (a step, a
 * signal, a chunk that stayed referenced). So a caller moves a large change
 * in steps it can time, show and interrupt.
 */
#define POOLMEM_SET_QUOTA		(1u << 0)	/* quota[] */
#define POOLMEM_SET_POOL_MASK		(1u << 1)	/* pool_mask (0 = every pool) */
#define POOLMEM_SET_TIER_POLICY		(1u << 2)
#define POOLMEM_SET_POOL_SELECT		(1u << 3)
#define POOLMEM_SET_TIERING		(1u << 4)	/* tiering, scan_rate, hot_ms */
/* every check, admission and room for the moves included; nothing changes */
#define POOLMEM_SET_CHECK		(1u << 5)
/* move at most move_bytes, then return (ABI 13) */
#define POOLMEM_SET_STEP		(1u << 6)
#define POOLMEM_SET_FLAGS		(POOLMEM_SET_QUOTA | POOLMEM_SET_POOL_MASK | \
					 POOLMEM_SET_TIER_POLICY | POOLMEM_SET_POOL_SELECT | \
					 POOLMEM_SET_TIERING | POOLMEM_SET_CHECK | POOLMEM_SET_STEP)

/*
 * Tiering of a domain. Each period (module parameter tiering_period_ms)
 * the module unmaps a random sample of the domain's present chunks,
 * scan_rate bytes a second, and times their refaults: a refault within
 * hot_ms makes a chunk hot; none for tiering_cold_periods periods makes it
 * cold. Sampled refaults of pool chunks count as accesses of their pool
 * (access factor, smart-idle). POOLMEM_TIERING_ON also moves chunks, at
 * most scan_rate bytes a second and always within the quotas: hot pool
 * chunks into free local quota, and cold local chunks to the pool tier
 * when hot chunks wait for the local tier.
 */
enum poolmem_tiering {
	POOLMEM_TIERING_OFF = 0,
	POOLMEM_TIERING_SAMPLE = 1,	/* sample only: hot/cold, pool accesses */
	POOLMEM_TIERING_ON = 2,		/* sample and move */
	POOLMEM_NR_TIERING
};

struct poolmem_domain_set {
	__u32 size;
	__u32 flags;			/* POOLMEM_SET_* */
	char name[POOLMEM_NAME_MAX];
	__u64 quota[POOLMEM_NR_TIERS];
	__u64 pool_mask;
	__u32 tier_policy;
	__u32 pool_select;
	__u64 moved_bytes;		/* out */
	__u64 need_bytes;		/* out (-ENOSPC): bytes that must move */
	__u64 room_bytes;		/* out (-ENOSPC): where they could go */
	__u32 tiering;			/* enum poolmem_tiering */
	__u32 hot_ms;			/* 0 = keep (default 500) */
	__u64 scan_rate;		/* bytes per second; 0 = keep (default 64 MiB) */
	__u64 move_bytes;		/* in, POOLMEM_SET_STEP: move at most this much (> 0) */
	__u64 remaining_bytes;		/* out: still to move, at least (0: done) */
};

/* The largest scan_rate: 1 TiB a second (more is -EINVAL). */
#define POOLMEM_SCAN_RATE_MAX		(1ULL << 40)

/* One coalesced range of a domain's chunk map. */
struct poolmem_map_range {
	__u64 offset;			/* in the domain */
	__u64 length;
	__u64 phys;			/* host physical address */
	__u32 pool;			/* pool id, or POOLMEM_POOL_LOCAL */
	__s32 node;
};

/*
 * POOLMEM_MAP: the allocated part of a domain's chunk map from "start" on,
 * as ranges contiguous in both offset and physical address on one pool.
 * Fills up to "count" ranges (at most 1024 per call) at "ranges"; "nr" says
 * how many, "next" where to continue (== domain size when done).
 */
struct poolmem_map {
	__u32 size;
	__u32 flags;
	char name[POOLMEM_NAME_MAX];
	__u64 start;
	__u64 ranges;			/* user pointer to struct poolmem_map_range[] */
	__u32 count;
	__u32 nr;			/* out */
	__u64 next;			/* out */
	__u64 reserved[2];
};

/* POOLMEM_MAP_REVERSE: host physical address -> domain, offset (-ENOENT). */
struct poolmem_map_reverse {
	__u32 size;
	__u32 flags;
	__u64 phys;			/* in */
	char name[POOLMEM_NAME_MAX];	/* out */
	__u64 offset;			/* out */
	__u32 pool;			/* out */
	__s32 node;			/* out */
	__u64 reserved[2];
};

/*
 * A profile: quotas and policies for domains that QEMU or libvirt create
 * as files in the profile's directory <mount>/<name>. Each tier's quota
 * is either a percentage of the domain's size (quota_pct, 1..100, rounded
 * up to whole chunks) or a byte cap (quota_bytes, at most the size); both
 * 0 means no quota in that tier. uid/gid/mode are the directory's owner
 * and permission bits (0 = 0700): whoever may create files there may
 * create domains. POOLMEM_PROFILE_CREATE takes it in; POOLMEM_PROFILE_INFO
 * fills it for "name" (and "domains", the live domains made from it).
 * POOLMEM_PROFILE_REMOVE (struct poolmem_name_arg) removes an empty
 * profile, as rmdir of its directory does.
 */
struct poolmem_profile {
	__u32 size;
	__u32 flags;			/* POOLMEM_DOMAIN_* for its domains */
	char name[POOLMEM_NAME_MAX];
	__u64 chunk_bytes;		/* 0 = 2 MiB */
	__u64 quota_bytes[POOLMEM_NR_TIERS];
	__u32 quota_pct[POOLMEM_NR_TIERS];
	__u64 pool_mask;		/* 0 = every pool */
	__s32 home_node;		/* -1 = first node with CPUs */
	__u32 tier_policy;
	__u32 pool_select;
	__u32 uid;
	__u32 gid;
	__u32 mode;
	__u64 domains;			/* out (INFO) */
	__u64 reserved[4];
};

/*
 * POOLMEM_VM_BIND: give one VM's directory its profile and its name before
 * the directory exists. libvirt makes <memory_backing_dir>/libvirt/qemu/
 * <id>-<vm>/ (its "short name") for each VM it starts, and QEMU creates
 * the VM's RAM files in it; with one memory_backing_dir per host, every VM
 * would get that directory's profile and domains named "<profile>.<inode>".
 * A binding says: the next directory named "dir" made anywhere below a
 * profile directory takes profile "profile" ("" keeps its parent's) and
 * VM name "vm". The first domain created in it is named "vm" (unless that
 * name is taken), further ones "vm.<file>". poolctl's libvirt hook binds
 * each VM at "prepare begin", after libvirt chose the id and before it
 * makes the directory.
 *
 * A binding waits for its mkdir at most POOLMEM_BIND_TIMEOUT_S seconds; at
 * most POOLMEM_BINDS_MAX wait at once (-ENOSPC beyond). Binding a "dir"
 * that waits replaces it. POOLMEM_BIND_REMOVE, with "dir" and "profile"
 * empty, takes back every binding of VM "vm" still waiting (-ENOENT when
 * none waits): the hook's "release end", for a start that failed before
 * the mkdir. An unknown profile is -ENOENT, a "vm" that is not a valid
 * domain name, or a "dir" with '/' or that is "." or "..", -EINVAL.
 */
#define POOLMEM_BIND_DIR_MAX	128
#define POOLMEM_BINDS_MAX	256
#define POOLMEM_BIND_TIMEOUT_S	600
#define POOLMEM_BIND_REMOVE	(1u << 0)

struct poolmem_bind {
	__u32 size;
	__u32 flags;			/* POOLMEM_BIND_REMOVE */
	char dir[POOLMEM_BIND_DIR_MAX];	/* a name in a directory, NUL-terminated */
	char profile[POOLMEM_NAME_MAX];	/* "" = the parent directory's profile */
	char vm[POOLMEM_NAME_MAX];	/* the first domain's name */
	__u64 reserved[2];
};

/*
 * Memory errors in poolmem memory. A poisoned page of a domain (a machine
 * check, CXL poison consumed, MADV_HWPOISON, hwpoison-inject) is taken out
 * of use: unmapped, its data lost, and a later access of its offset gets a
 * memory error (SIGBUS, BUS_MCEERR_AR) until the chunk is discarded. Its
 * memory never returns to the page allocator. A soft offline
 * (POOLMEM_PAGE_OFFLINE: corrected errors past a threshold) first moves
 * the page's chunk elsewhere, with nothing lost.
 *
 * POOLMEM_MEMORY_ERRORS reads the host's most recent errors (the module
 * keeps the last POOLMEM_MEMORY_ERRORS_KEPT), oldest first, from sequence
 * number "from" on. "errors" points at "count" records; "nr" says how
 * many were filled, "next" the sequence number to ask for next time and
 * "total" how many errors there were since the module was loaded (a "from"
 * below total - POOLMEM_MEMORY_ERRORS_KEPT has lost some).
 */
#define POOLMEM_MEMORY_ERRORS_KEPT	256

enum poolmem_memerr_kind {
	POOLMEM_MEMERR_HARD = 1,	/* uncorrectable: memory_failure() */
	POOLMEM_MEMERR_SOFT = 2,	/* soft offline: corrected errors */
};

enum poolmem_memerr_action {
	POOLMEM_MEMERR_ISOLATED = 1,	/* a domain's page: unmapped, its data lost */
	POOLMEM_MEMERR_MOVED = 2,	/* its chunk moved first: nothing lost */
	POOLMEM_MEMERR_UNUSED = 3,	/* held no domain's data: kept out of use */
	POOLMEM_MEMERR_FAILED = 4,	/* not handled (see the kernel log) */
};

struct poolmem_memory_error {
	__u64 seq;
	__u64 time_ns;			/* CLOCK_REALTIME */
	__u64 phys;			/* host physical address of the page */
	__u64 offset;			/* in the domain (page-aligned) */
	char domain[POOLMEM_NAME_MAX];	/* "" when no domain held it */
	char pool[POOLMEM_NAME_MAX];	/* "" for a local node's memory */
	__u32 kind;			/* POOLMEM_MEMERR_HARD, _SOFT */
	__u32 action;			/* POOLMEM_MEMERR_* */
	__s32 node;
	/*
	 * The domain's id (its sysfs file "id"), 0 with domain "": ids are
	 * not reused until 2^32 - 1 domains later, so records of an earlier
	 * domain of the same name are told apart (ABI 12; 0 before).
	 */
	__u32 domain_id;
};

struct poolmem_memory_errors {
	__u32 size;
	__u32 flags;
	__u64 from;			/* in: first sequence number wanted */
	__u64 errors;			/* user pointer to struct poolmem_memory_error[] */
	__u32 count;			/* in: records at errors */
	__u32 nr;			/* out: records filled */
	__u64 next;			/* out */
	__u64 total;			/* out */
	__u64 reserved[2];
};

/*
 * POOLMEM_PAGE_OFFLINE: soft offline of the page at host physical address
 * "phys", which must lie in a domain's chunk (-ENOENT otherwise): the chunk
 * moves to other memory (another pool first, the same pool last) with its
 * data, and the page is poisoned and held out of use. Out: the domain, the
 * offset and the pool the page was in. 0 if the page is poisoned already;
 * -EBUSY (long-term pinned), -EAGAIN (referenced: try again), -ENOMEM (no
 * memory to move to) leave everything as it was. The kernel's own
 * soft_offline_page() refuses poolmem's pages, as any non-LRU large page.
 */
struct poolmem_page_offline {
	__u32 size;
	__u32 flags;
	__u64 phys;			/* in */
	char name[POOLMEM_NAME_MAX];	/* out */
	__u64 offset;			/* out */
	__u32 pool;			/* out: pool id, or POOLMEM_POOL_LOCAL */
	__u32 reserved32;
	__u64 reserved[2];
};

#define POOLMEM_IOC_MAGIC	0xCE

#define POOLMEM_VERSION		_IOWR(POOLMEM_IOC_MAGIC, 0x00, struct poolmem_version)
#define POOLMEM_POOL_ADD	_IOWR(POOLMEM_IOC_MAGIC, 0x10, struct poolmem_pool_add)
#define POOLMEM_POOL_REMOVE	_IOW(POOLMEM_IOC_MAGIC, 0x11, struct poolmem_name_arg)
#define POOLMEM_POOL_LIST	_IOWR(POOLMEM_IOC_MAGIC, 0x12, struct poolmem_list)
#define POOLMEM_POOL_INFO	_IOWR(POOLMEM_IOC_MAGIC, 0x13, struct poolmem_pool_info)
#define POOLMEM_POOL_DRAIN	_IOWR(POOLMEM_IOC_MAGIC, 0x14, struct poolmem_pool_drain)
#define POOLMEM_DOMAIN_CREATE	_IOWR(POOLMEM_IOC_MAGIC, 0x20, struct poolmem_domain_create)
#define POOLMEM_DOMAIN_DESTROY	_IOW(POOLMEM_IOC_MAGIC, 0x21, struct poolmem_name_arg)
#define POOLMEM_DOMAIN_LIST	_IOWR(POOLMEM_IOC_MAGIC, 0x22, struct poolmem_list)
#define POOLMEM_DOMAIN_INFO	_IOWR(POOLMEM_IOC_MAGIC, 0x23, struct poolmem_domain_info)
#define POOLMEM_DOMAIN_SET	_IOWR(POOLMEM_IOC_MAGIC, 0x24, struct poolmem_domain_set)
#define POOLMEM_MAP		_IOWR(POOLMEM_IOC_MAGIC, 0x30, struct poolmem_map)
#define POOLMEM_MAP_REVERSE	_IOWR(POOLMEM_IOC_MAGIC, 0x31, struct poolmem_map_reverse)
#define POOLMEM_PROFILE_CREATE	_IOW(POOLMEM_IOC_MAGIC, 0x40, struct poolmem_profile)
#define POOLMEM_PROFILE_REMOVE	_IOW(POOLMEM_IOC_MAGIC, 0x41, struct poolmem_name_arg)
#define POOLMEM_PROFILE_LIST	_IOWR(POOLMEM_IOC_MAGIC, 0x42, struct poolmem_list)
#define POOLMEM_PROFILE_INFO	_IOWR(POOLMEM_IOC_MAGIC, 0x43, struct poolmem_profile)
#define POOLMEM_VM_BIND		_IOW(POOLMEM_IOC_MAGIC, 0x44, struct poolmem_bind)
#define POOLMEM_MEMORY_ERRORS	_IOWR(POOLMEM_IOC_MAGIC, 0x50, struct poolmem_memory_errors)
#define POOLMEM_PAGE_OFFLINE	_IOWR(POOLMEM_IOC_MAGIC, 0x51, struct poolmem_page_offline)

#endif /* _UAPI_LINUX_POOLMEM_H */
