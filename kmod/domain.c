// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem domains: /dev/poolmem/<name>, fault-time chunk placement,
 * discard, the chunk map and per-domain sysfs statistics.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/idr.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/pagemap.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>

#include "poolmem.h"

#define PM_UNIT_SHIFT		(PAGE_SHIFT + PM_UNIT_ORDER)
#define PM_DOMAIN_MAX_BYTES	(1ULL << 46)	/* 64 TiB: bounds the chunk map */

static DEFINE_IDA(pm_minor_ida);

/* Caller holds pm_lock. Destroyed domains are not found. */
struct pm_domain *pm_domain_find(const char *name)
{
	struct pm_domain *d;

	list_for_each_entry(d, &pm_domains, list)
		if (!d->dead && !strncmp(d->name, name, POOLMEM_NAME_MAX))
			return d;
	return NULL;
}

static struct pm_pool *pm_chunk_pool(struct pm_domain *d, u64 idx)
{
	u8 pool = d->meta[idx].pool;

	return pool == PM_POOL_NONE ? NULL : pm_pools[pool];
}

/* ---- units: 2 MiB compound buddy allocations ---- */

static struct page *pm_unit_alloc(int nid, bool pinnable)
{
	/*
	 * Movable class, so onlined-movable pool memory can serve it, unless
	 * the domain must be long-term pinnable: then kernel zones only.
	 * Zeroed, because the previous owner may have been another tenant; no
	 * OOM killer and no warning: a full node is an ordinary event here.
	 * Compound, so that a PMD can map the unit whole and get_user_pages
	 * takes its references on the head page.
	 */
	const gfp_t gfp = (pinnable ? GFP_HIGHUSER : GFP_HIGHUSER_MOVABLE) | __GFP_THISNODE |
			  __GFP_ZERO | __GFP_COMP | __GFP_NORETRY | __GFP_NOWARN;

	return alloc_pages_node(nid, gfp, PM_UNIT_ORDER);
}

/*
 * Drop the domain's reference on a unit. A unit still mapped or pinned
 * (get_user_pages) is freed when its last user lets go.
 */
static void pm_unit_free(struct page *page)
{
	put_page(page);
}

/* ---- chunks ---- */

/*
 * Allocate chunk @idx from node @nid and record it in pm_rmap; the caller
 * charges it. Caller has marked the chunk busy (its slots are the caller's
 * alone) and need not hold d->lock. Returns 0 or -ENOMEM.
 */
static int pm_chunk_alloc_on(struct pm_domain *d, u64 idx, int nid)
{
	struct page **slot = &d->units[idx * d->units_per_chunk];
	unsigned int u;
	int ret = -ENOMEM;

	/* the memory notifier must not miss a chunk between here and pm_rmap */
	atomic_inc(&pm_inflight);
	for (u = 0; u < d->units_per_chunk; u++) {
		struct page *page = pm_unit_alloc(nid, d->pinnable);
		unsigned long pfn;

		if (!page)
			goto out_undo;
		pfn = page_to_pfn(page);
		ret = mtree_insert_range(&pm_rmap, pfn, pfn + PM_UNIT_PAGES - 1, &slot[u], GFP_KERNEL);
		if (ret) {
			pm_unit_free(page);
			ret = -ENOMEM;
			goto out_undo;
		}
		slot[u] = page;
	}
	atomic_dec(&pm_inflight);
	return 0;

out_undo:
	while (u--) {
		mtree_erase(&pm_rmap, page_to_pfn(slot[u]));
		pm_unit_free(slot[u]);
		slot[u] = NULL;
	}
	atomic_dec(&pm_inflight);
	return ret;
}

static void pm_chunk_charge(struct pm_domain *d, u64 idx, u32 tier, struct pm_pool *p)
{
	d->meta[idx].present = 1;
	d->meta[idx].tier = tier;
	d->meta[idx].pool = p ? p->id : PM_POOL_NONE;
	d->usage[tier] += d->chunk_bytes;
	d->chunks++;
	if (p) {
		d->chunks_per_pool[p->id]++;
		atomic64_add(d->chunk_bytes, &p->allocated);
		atomic64_inc(&p->chunks);
		atomic64_inc(&p->allocations);
		pm_pool_event(p, 1);
	}
}

/*
 * Free chunk @idx (must be present and unmapped from the domain's address
 * space by the caller) and uncharge it. Caller holds d->lock, or is the
 * domain's release with no other user left.
 */
static void pm_chunk_free(struct pm_domain *d, u64 idx)
{
	struct page **slot = &d->units[idx * d->units_per_chunk];
	struct pm_pool *p = pm_chunk_pool(d, idx);
	unsigned int u;

	for (u = 0; u < d->units_per_chunk; u++) {
		mtree_erase(&pm_rmap, page_to_pfn(slot[u]));
		pm_unit_free(slot[u]);
		slot[u] = NULL;
	}
	d->usage[d->meta[idx].tier] -= d->chunk_bytes;
	d->chunks--;
	if (p) {
		d->chunks_per_pool[p->id]--;
		atomic64_sub(d->chunk_bytes, &p->allocated);
		atomic64_dec(&p->chunks);
	}
	d->meta[idx].present = 0;
}

/*
 * Allocate chunk @idx on the first of @n candidate nodes (pools @ids, or
 * the home node when @ids is NULL) that can supply it, with d->lock
 * dropped: allocating and zeroing 2 MiB takes long, and other faults of
 * the domain (other vCPUs) must not queue behind it. The caller has
 * reserved the chunk's bytes in usage[@tier] and marked it busy. Returns
 * the pool used (NULL: home node) in @pool, or -ENOMEM.
 */
static int pm_chunk_alloc_unlocked(struct pm_domain *d, u64 idx, const u8 *ids, unsigned int n,
				   struct pm_pool **pool)
	__must_hold(&d->lock)
{
	unsigned int i;
	int ret = -ENOMEM;

	mutex_unlock(&d->lock);
	if (!ids) {
		*pool = NULL;
		ret = pm_chunk_alloc_on(d, idx, d->home_node);
	} else {
		for (i = 0; i < n && ret; i++) {
			/* pools can't go away while this domain may use them */
			struct pm_pool *p = pm_pools[ids[i]];

			*pool = p;
			ret = pm_chunk_alloc_on(d, idx, p->node);
			if (ret)
				atomic64_inc(&p->failures);
		}
	}
	mutex_lock(&d->lock);
	return ret;
}

/*
 * The pools a pool-tier chunk may come from, in pool-selection order, into
 * @ids; returns how many. Only what the policy reads is gathered: the
 * access factor takes each pool's af_lock. Caller holds d->lock (the
 * policy's scratch space is the domain's).
 */
static unsigned int pm_pool_candidates(struct pm_domain *d, u8 *ids)
{
	struct pm_pool_view *views = d->views;
	unsigned int n = 0, i;
	u64 mask;

	for (mask = d->pool_mask; mask; mask &= mask - 1) {
		struct pm_pool *p = pm_pools[__ffs64(mask)];

		views[n].id = p->id;
		views[n].distance = d->pool_select == PM_SELECT_NEAREST ?
				    node_distance(d->home_node, p->node) : 0;
		views[n].allocated = atomic64_read(&p->allocated);
		views[n].af = d->pool_select == PM_SELECT_SMART_IDLE ? pm_pool_af(p) : 0;
		n++;
	}
	n = pm_pool_order(d->pool_select, views, n, d->rr_cursor,
			  d->pool_select == PM_SELECT_RANDOM ? get_random_u32() : 0, d->order);
	for (i = 0; i < n; i++)
		ids[i] = views[d->order[i]].id;
	return n;
}

/*
 * Make chunk @idx present: place it by the domain's policies (tiers in
 * tier-policy order, within a tier pools in pool-selection order; a node
 * that can't supply the chunk is skipped: fall back within quota), or
 * wait for the fault already placing it. Caller holds d->lock, which is
 * dropped while the chunk is allocated. Returns 0, or -ENOMEM when no
 * tier with quota left can supply it.
 */
static int pm_chunk_place(struct pm_domain *d, u64 idx)
	__must_hold(&d->lock)
{
	struct pm_chunk_meta *meta = &d->meta[idx];
	u8 ids[POOLMEM_MAX_POOLS];
	struct pm_tier_view tv;
	u32 tiers[PM_NR_TIERS];
	struct pm_pool *p;
	unsigned int nt, t, n;

	while (meta->busy) {
		mutex_unlock(&d->lock);
		wait_var_event(meta, !READ_ONCE(meta->busy));
		mutex_lock(&d->lock);
	}
	if (meta->present)
		return 0;

	for (t = 0; t < PM_NR_TIERS; t++) {
		tv.used[t] = d->usage[t] >> d->chunk_shift;
		tv.quota[t] = d->quota[t] >> d->chunk_shift;
	}
	nt = pm_tier_order(d->tier_policy, &tv, tiers);

	for (t = 0; t < nt; t++) {
		u32 tier = tiers[t];
		int ret;

		/* the lock was dropped for the tier before: look again */
		if (d->usage[tier] + d->chunk_bytes > d->quota[tier])
			continue;
		n = tier == PM_TIER_POOL ? pm_pool_candidates(d, ids) : 1;
		d->usage[tier] += d->chunk_bytes;	/* reserved while unlocked */
		meta->busy = 1;
		ret = pm_chunk_alloc_unlocked(d, idx, tier == PM_TIER_POOL ? ids : NULL, n, &p);
		d->usage[tier] -= d->chunk_bytes;
		meta->busy = 0;
		if (!ret) {
			pm_chunk_charge(d, idx, tier, p);
			if (p)
				d->rr_cursor++;
		}
		wake_up_var(meta);
		if (!ret)
			return 0;
	}
	return -ENOMEM;
}

/* The page at byte @off of the domain; its chunk must be present. */
static struct page *pm_page_at(struct pm_domain *d, u64 off)
{
	u64 idx = off >> d->chunk_shift, in = off & (d->chunk_bytes - 1);

	return d->units[idx * d->units_per_chunk + (in >> PM_UNIT_SHIFT)] +
	       ((in & (PM_UNIT_BYTES - 1)) >> PAGE_SHIFT);
}

/* ---- mapping ---- */

/*
 * A mapping is either huge or small, decided at mmap time and told apart
 * by VM_MIXEDMAP:
 *
 * - huge (the file offset and address agree modulo 2 MiB and the mapping
 *   holds whole units): ->fault returns the touched page of the chunk,
 *   locked and referenced, and the core maps its whole unit with one PMD
 *   (finish_fault -> do_set_pmd), with the rmap and RSS accounting of a
 *   page-cache THP. A unit a later mremap or split leaves unaligned is
 *   mapped a page at a time the same way.
 * - small (anything else): the fault maps every page of the chunk inside
 *   the mapping at once with vm_insert_pages(), which needs VM_MIXEDMAP.
 *
 * VM_MIXEDMAP must stay off huge mappings: the core treats a PMD in a
 * VM_MIXEDMAP mapping as special and would drop it without its rmap and
 * reference.
 */
static bool pm_vma_huge(struct vm_area_struct *vma)
{
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	if (PM_UNIT_ORDER != HPAGE_PMD_ORDER || !has_transparent_hugepage())
		return false;
	return IS_ALIGNED(vma->vm_start, PM_UNIT_BYTES) && IS_ALIGNED(vma->vm_end, PM_UNIT_BYTES) &&
	       IS_ALIGNED(vma->vm_pgoff, PM_UNIT_PAGES);
#else
	return false;
#endif
}

/*
 * Small mappings: map the part of chunk @idx that lies inside @vma. Pages
 * some other thread mapped first (-EBUSY) are skipped. Caller holds
 * d->lock and the mmap lock.
 */
static vm_fault_t pm_map_chunk(struct pm_domain *d, struct vm_area_struct *vma, u64 idx)
{
	u64 chunk_off = idx << d->chunk_shift;
	u64 vma_off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 vma_end = vma_off + (vma->vm_end - vma->vm_start);
	u64 off = max(chunk_off, vma_off);
	u64 end = min(chunk_off + d->chunk_bytes, vma_end);

	while (off < end) {
		u64 uend = min(end, round_down(off, PM_UNIT_BYTES) + PM_UNIT_BYTES);
		struct page *first = pm_page_at(d, off);
		unsigned long left = (uend - off) >> PAGE_SHIFT;
		unsigned long addr = vma->vm_start + (off - vma_off);
		struct page **pages = d->batch;
		unsigned long i;

		for (i = 0; i < left; i++)
			pages[i] = first + i;
		while (left) {
			unsigned long num = left;
			int err = vm_insert_pages(vma, addr, pages, &num);

			if (!err)
				break;
			if (err != -EBUSY)
				return err == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
			/* pages[left - num] is already mapped: skip it */
			i = left - num + 1;
			pages += i;
			addr += i << PAGE_SHIFT;
			left = num - 1;
		}
		off = uend;
	}
	return VM_FAULT_NOPAGE;
}

/*
 * Huge mappings: hand the page at @off to the core, referenced and locked.
 * The page lock, taken under d->lock, keeps pm_chunk_unmap() from freeing
 * the chunk between here and the core installing the mapping.
 */
static vm_fault_t pm_fault_page(struct pm_domain *d, struct vm_fault *vmf, u64 off)
{
	struct page *page = pm_page_at(d, off);

	get_page(page);
	lock_page(page);
	vmf->page = page;
	return VM_FAULT_LOCKED;
}

/*
 * Remove chunk @idx from every mapping so it can be freed. A fault that
 * took a unit's page lock under d->lock may still be installing its PMD:
 * wait for it, then zap. Caller holds d->lock.
 */
static void pm_chunk_unmap(struct pm_domain *d, u64 idx)
{
	struct page **slot = &d->units[idx * d->units_per_chunk];
	unsigned int u;

	for (u = 0; u < d->units_per_chunk; u++)
		lock_page(slot[u]);
	unmap_mapping_range(d->inode->i_mapping, idx << d->chunk_shift, d->chunk_bytes, 1);
	for (u = 0; u < d->units_per_chunk; u++)
		unlock_page(slot[u]);
}

static vm_fault_t pm_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct pm_domain *d = vma->vm_private_data;
	u64 off = (u64)vmf->pgoff << PAGE_SHIFT;
	u64 t0 = ktime_get_ns(), ns;
	struct pm_pool *p;
	vm_fault_t ret;
	u64 idx;

	if (off >= d->size)
		return VM_FAULT_SIGBUS;
	idx = off >> d->chunk_shift;

	mutex_lock(&d->lock);
	if (!d->meta[idx].present && pm_chunk_place(d, idx)) {
		d->sigbus++;
		pr_warn_ratelimited("domain %s: no memory within quota for offset %#llx (local %llu/%llu MiB, pool %llu/%llu MiB)\n",
				    d->name, off, d->usage[PM_TIER_LOCAL] >> 20,
				    d->quota[PM_TIER_LOCAL] >> 20, d->usage[PM_TIER_POOL] >> 20,
				    d->quota[PM_TIER_POOL] >> 20);
		mutex_unlock(&d->lock);
		return VM_FAULT_SIGBUS;
	}
	if (vma->vm_flags & VM_MIXEDMAP)
		ret = pm_map_chunk(d, vma, idx);
	else
		ret = pm_fault_page(d, vmf, off);
	d->faults++;
	p = pm_chunk_pool(d, idx);
	mutex_unlock(&d->lock);

	if (p) {
		atomic64_inc(&p->faults);
		pm_pool_event(p, 1);
	}
	ns = ktime_get_ns() - t0;
	atomic64_inc(&d->hist[min_t(unsigned int, ns ? ilog2(ns) : 0, PM_HIST_BUCKETS - 1)]);
	atomic64_add(ns, &d->fault_ns);
	return ret;
}

#ifdef CONFIG_NUMA
/*
 * Placement is the domain's policy, and its chunks can't migrate: no
 * mempolicy, which also keeps NUMA balancing from scanning the mapping.
 */
static struct mempolicy *pm_vm_get_policy(struct vm_area_struct *vma, unsigned long addr)
{
	return NULL;
}
#endif

static const struct vm_operations_struct pm_vm_ops = {
	.fault = pm_vm_fault,
#ifdef CONFIG_NUMA
	.get_policy = pm_vm_get_policy,
#endif
};

/* ---- file operations of /dev/poolmem/<name> ---- */

static int pm_open(struct inode *inode, struct file *file)
{
	struct pm_domain *d = container_of(inode->i_cdev, struct pm_domain, cdev);
	int ret = 0;

	/* the device node's mode says the same; this holds for any node */
	if (!capable(CAP_SYS_ADMIN) && !uid_eq(current_fsuid(), d->uid) &&
	    !(in_group_p(d->gid) && (d->mode & 0060)) && !(d->mode & 0006))
		return -EACCES;

	mutex_lock(&pm_lock);
	if (d->dead)
		ret = -ENODEV;
	else
		get_device(&d->dev);
	mutex_unlock(&pm_lock);
	if (ret)
		return ret;

	file->private_data = d;
	file->f_mapping = d->inode->i_mapping;
	return 0;
}

static int pm_release(struct inode *inode, struct file *file)
{
	struct pm_domain *d = file->private_data;

	put_device(&d->dev);
	return 0;
}

/* QEMU's memory-backend-file reads the size with lseek(SEEK_END). */
static loff_t pm_llseek(struct file *file, loff_t offset, int whence)
{
	struct pm_domain *d = file->private_data;

	return fixed_size_llseek(file, offset, whence, d->size);
}

static int pm_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pm_domain *d = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;

	/* a private mapping would need copy-on-write of pages we own */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_pgoff > (d->size >> PAGE_SHIFT) ||
	    len > d->size - ((u64)vma->vm_pgoff << PAGE_SHIFT))
		return -EINVAL;

	/*
	 * VM_DONTEXPAND: no mremap growth past the size, and (VM_SPECIAL)
	 * no mlock of pages the LRU doesn't know. Small mappings need
	 * VM_MIXEDMAP before their first vm_insert_pages().
	 */
	vma->vm_flags |= VM_DONTEXPAND;
	if (!pm_vma_huge(vma))
		vma->vm_flags |= VM_MIXEDMAP;
	vma->vm_ops = &pm_vm_ops;
	vma->vm_private_data = d;
	return 0;
}

/* Zero bytes [from, to) of the domain in place (present chunks). Caller holds d->lock. */
static void pm_zero(struct pm_domain *d, u64 from, u64 to)
{
	while (from < to) {
		unsigned int pofs = offset_in_page(from);
		unsigned int len = min_t(u64, PAGE_SIZE - pofs, to - from);

		memzero_page(pm_page_at(d, from), pofs, len);
		from += len;
	}
}

/*
 * Discard [offset, offset + len): whole chunks go back to their node
 * (unmapped from every mapping first); partial chunks are zeroed in place.
 * The next touch of a freed chunk places it anew.
 */
static int pm_discard(struct pm_domain *d, u64 offset, u64 len)
{
	u64 start = offset, end, idx;

	if (len == 0 || offset >= d->size || len > d->size - offset)
		return -EINVAL;
	end = offset + len;

	mutex_lock(&d->lock);
	for (idx = start >> d->chunk_shift; idx <= (end - 1) >> d->chunk_shift; idx++) {
		u64 cstart = idx << d->chunk_shift, cend = cstart + d->chunk_bytes;
		u64 from = max(start, cstart), to = min(end, cend);

		if (!d->meta[idx].present)
			continue;
		if (from == cstart && to == cend) {
			pm_chunk_unmap(d, idx);
			pm_chunk_free(d, idx);
			d->discards++;
		} else {
			pm_zero(d, from, to);
		}
	}
	mutex_unlock(&d->lock);
	return 0;
}

static long pm_domain_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pm_domain *d = file->private_data;
	struct poolmem_discard a;

	if (cmd != POOLMEM_DISCARD)
		return -ENOTTY;
	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (copy_from_user(&a, (void __user *)arg, sizeof(a)))
		return -EFAULT;
	if (a.size != sizeof(a) || a.flags || memchr_inv(a.reserved, 0, sizeof(a.reserved)))
		return -EINVAL;
	return pm_discard(d, a.offset, a.length);
}

static const struct file_operations pm_domain_fops = {
	.owner = THIS_MODULE,
	.open = pm_open,
	.release = pm_release,
	.llseek = pm_llseek,
	.mmap = pm_mmap,
	.get_unmapped_area = thp_get_unmapped_area,
	.unlocked_ioctl = pm_domain_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* ---- sysfs: /sys/class/poolmem/<name>/ ---- */

#define to_domain(dev) container_of(dev, struct pm_domain, dev)

/* Defines FILE_show() printing one unsigned value of the domain. */
#define DOMAIN_SHOW_U64(file, expr)								\
static ssize_t file##_show(struct device *dev, struct device_attribute *attr, char *buf)	\
{												\
	struct pm_domain *d = to_domain(dev);							\
	unsigned long long v;									\
	mutex_lock(&d->lock);									\
	v = (expr);										\
	mutex_unlock(&d->lock);									\
	return sysfs_emit(buf, "%llu\n", v);							\
}												\
static DEVICE_ATTR_RO(file);

/*
 * The changing values: one file each, and all of them in stat, in this
 * order (the order is ABI: Documentation/ABI/testing/sysfs-class-poolmem).
 */
#define DOMAIN_COUNTERS(X)						\
	X(local_bytes, d->usage[PM_TIER_LOCAL])				\
	X(pool_bytes, d->usage[PM_TIER_POOL])				\
	X(chunks, d->chunks)						\
	X(faults, d->faults)						\
	X(sigbus, d->sigbus)						\
	X(discards, d->discards)					\
	X(fault_latency_sum_ns, atomic64_read(&d->fault_ns))

DOMAIN_SHOW_U64(size_bytes, d->size)
DOMAIN_SHOW_U64(chunk_bytes, d->chunk_bytes)
DOMAIN_SHOW_U64(local_quota_bytes, d->quota[PM_TIER_LOCAL])
DOMAIN_SHOW_U64(pool_quota_bytes, d->quota[PM_TIER_POOL])
DOMAIN_SHOW_U64(home_node, d->home_node)
DOMAIN_SHOW_U64(pinnable, d->pinnable)
DOMAIN_COUNTERS(DOMAIN_SHOW_U64)

#define DOMAIN_STAT_FIELD(file, expr) \
	n += sysfs_emit_at(buf, n, "%s%llu", n ? " " : "", (unsigned long long)(expr));

/*
 * Every changing value in one read, as /sys/block/<dev>/stat does, and one
 * consistent snapshot: taken under the domain's lock.
 */
static ssize_t stat_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct pm_domain *d = to_domain(dev);
	int n = 0;

	mutex_lock(&d->lock);
	DOMAIN_COUNTERS(DOMAIN_STAT_FIELD)
	mutex_unlock(&d->lock);
	return n + sysfs_emit_at(buf, n, "\n");
}
static DEVICE_ATTR_RO(stat);

static const char *const pm_tier_policy_names[] = { "local-first", "interleave", "pool-first" };
static const char *const pm_pool_select_names[] = { "round-robin", "random", "nearest", "smart-idle" };

static ssize_t tier_policy_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", pm_tier_policy_names[to_domain(dev)->tier_policy]);
}
static DEVICE_ATTR_RO(tier_policy);

static ssize_t pool_select_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", pm_pool_select_names[to_domain(dev)->pool_select]);
}
static DEVICE_ATTR_RO(pool_select);

/* "<pool name> <chunks>" per allowed pool, one per line. */
static ssize_t pool_chunks_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct pm_domain *d = to_domain(dev);
	u64 mask;
	int n = 0;

	mutex_lock(&d->lock);
	for (mask = d->pool_mask; mask; mask &= mask - 1) {
		unsigned int id = __ffs64(mask);

		n += sysfs_emit_at(buf, n, "%s %llu\n", pm_pools[id]->name, d->chunks_per_pool[id]);
	}
	mutex_unlock(&d->lock);
	return n;
}
static DEVICE_ATTR_RO(pool_chunks);

/* PM_HIST_BUCKETS counts; bucket i holds faults of [2^i, 2^(i+1)) ns. */
static ssize_t fault_latency_histogram_show(struct device *dev, struct device_attribute *attr,
					    char *buf)
{
	struct pm_domain *d = to_domain(dev);
	int i, n = 0;

	for (i = 0; i < PM_HIST_BUCKETS; i++)
		n += sysfs_emit_at(buf, n, "%lld%c", atomic64_read(&d->hist[i]),
				   i == PM_HIST_BUCKETS - 1 ? '\n' : ' ');
	return n;
}
static DEVICE_ATTR_RO(fault_latency_histogram);

static struct attribute *pm_domain_attrs[] = {
	&dev_attr_size_bytes.attr,
	&dev_attr_chunk_bytes.attr,
	&dev_attr_local_quota_bytes.attr,
	&dev_attr_pool_quota_bytes.attr,
	&dev_attr_local_bytes.attr,
	&dev_attr_pool_bytes.attr,
	&dev_attr_chunks.attr,
	&dev_attr_faults.attr,
	&dev_attr_sigbus.attr,
	&dev_attr_discards.attr,
	&dev_attr_home_node.attr,
	&dev_attr_pinnable.attr,
	&dev_attr_tier_policy.attr,
	&dev_attr_pool_select.attr,
	&dev_attr_pool_chunks.attr,
	&dev_attr_fault_latency_histogram.attr,
	&dev_attr_fault_latency_sum_ns.attr,
	&dev_attr_stat.attr,
	NULL,
};
static const struct attribute_group pm_domain_group = { .attrs = pm_domain_attrs };
const struct attribute_group *pm_domain_groups[] = { &pm_domain_group, NULL };

/* ---- lifetime ---- */

/* The device node carries the owner and mode given at creation. */
static char *pm_domain_devnode(struct device *dev, umode_t *mode, kuid_t *uid, kgid_t *gid)
{
	struct pm_domain *d = to_domain(dev);

	if (mode)
		*mode = d->mode;
	if (uid)
		*uid = d->uid;
	if (gid)
		*gid = d->gid;
	return kasprintf(GFP_KERNEL, "poolmem/%s", d->name);
}

/*
 * The last reference is gone: no open file, no mapping, no sysfs reader.
 * Return every chunk, the admission commitment and the module reference.
 * Called in process context without pm_lock held.
 */
static void pm_domain_release(struct device *dev)
{
	struct pm_domain *d = to_domain(dev);
	bool listed = !list_empty(&d->list);
	u64 idx, mask;

	if (d->meta)
		for (idx = 0; idx < d->nr_chunks; idx++)
			if (d->meta[idx].present)
				pm_chunk_free(d, idx);

	if (listed) {
		mutex_lock(&pm_lock);
		for (mask = d->pool_mask; mask; mask &= mask - 1) {
			struct pm_pool *p = pm_pools[__ffs64(mask)];

			p->users--;
			p->committed -= d->quota[PM_TIER_POOL];
		}
		list_del(&d->list);
		mutex_unlock(&pm_lock);
	}
	if (d->inode)
		iput(d->inode);
	ida_free(&pm_minor_ida, MINOR(dev->devt));
	kvfree(d->units);
	kvfree(d->meta);
	kfree(d->batch);
	kfree(d);
	module_put(THIS_MODULE);
}

static const struct device_type pm_domain_type = {
	.name = "poolmem_domain",
	.devnode = pm_domain_devnode,
	.release = pm_domain_release,
};

static int pm_first_cpu_node(void)
{
	int nid;

	for_each_node_state(nid, N_CPU)
		if (node_state(nid, N_MEMORY))
			return nid;
	return NUMA_NO_NODE;
}

/*
 * Admission control, under pm_lock: the new domain's quotas must fit.
 * Local: the local quotas of all domains homed on the node must fit its
 * memory * local_overcommit_pct. Pools: over the set S of pools the domain
 * may use, the pool quotas of every domain allowed on any pool of S plus the
 * new one must fit the sum of S's limits (capacity * overcommit). A
 * pinnable domain must also fit with the other pinnable domains into the
 * memory outside ZONE_MOVABLE, the only memory its chunks can come from.
 */
/* Admission limit of the local tier on node @nid, as pm_pool_limit() for pools. */
static u64 pm_local_limit(int nid, bool pinnable)
{
	u64 bytes = pinnable ? pm_node_pinnable_bytes(nid) : pm_node_present_bytes(nid);

	return div_u64(bytes * pm_local_overcommit_pct, 100);
}

static int pm_admit(const struct poolmem_domain_create *a, u64 mask)
{
	bool pin = a->flags & POOLMEM_DOMAIN_PINNABLE;
	u64 local = a->quota[PM_TIER_LOCAL], pool = a->quota[PM_TIER_POOL];
	u64 pin_local = local, pin_pool = pool, limit = 0, pin_limit = 0;
	struct pm_domain *d;
	u64 m;

	list_for_each_entry(d, &pm_domains, list) {
		if (d->home_node == a->home_node) {
			local += d->quota[PM_TIER_LOCAL];
			if (d->pinnable)
				pin_local += d->quota[PM_TIER_LOCAL];
		}
		if (d->pool_mask & mask) {
			pool += d->quota[PM_TIER_POOL];
			if (d->pinnable)
				pin_pool += d->quota[PM_TIER_POOL];
		}
	}
	if (local > pm_local_limit(a->home_node, false))
		return -ENOSPC;
	if (pin && a->quota[PM_TIER_LOCAL] && pin_local > pm_local_limit(a->home_node, true))
		return -ENOSPC;
	if (!a->quota[PM_TIER_POOL])
		return 0;
	for (m = mask; m; m &= m - 1) {
		const struct pm_pool *p = pm_pools[__ffs64(m)];

		limit += pm_pool_limit(p, false);
		if (pin)
			pin_limit += pm_pool_limit(p, true);
	}
	if (pool > limit || (pin && pin_pool > pin_limit))
		return -ENOSPC;
	return 0;
}

static int pm_domain_check(struct poolmem_domain_create *a)
{
	if (!pm_name_valid(a->name) || memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (a->chunk_bytes == 0)
		a->chunk_bytes = PM_CHUNK_MIN;
	if (!is_power_of_2(a->chunk_bytes) || a->chunk_bytes < PM_CHUNK_MIN ||
	    a->chunk_bytes > PM_CHUNK_MAX)
		return -EINVAL;
	if (a->bytes == 0 || a->bytes > PM_DOMAIN_MAX_BYTES || a->bytes & (a->chunk_bytes - 1))
		return -EINVAL;
	/* quotas are hard and must cover the size, or the VM dies later */
	if (a->quota[PM_TIER_LOCAL] > a->bytes || a->quota[PM_TIER_POOL] > a->bytes ||
	    a->quota[PM_TIER_LOCAL] + a->quota[PM_TIER_POOL] < a->bytes)
		return -EINVAL;
	if ((a->quota[PM_TIER_LOCAL] | a->quota[PM_TIER_POOL]) & (a->chunk_bytes - 1))
		return -EINVAL;
	if (a->tier_policy >= POOLMEM_NR_TIER_POLICIES || a->pool_select >= POOLMEM_NR_POOL_SELECTS)
		return -EINVAL;
	if (a->mode == 0)
		a->mode = 0600;
	if (a->mode & ~0777)
		return -EINVAL;
	if (a->home_node == NUMA_NO_NODE)
		a->home_node = pm_first_cpu_node();
	if (a->home_node < 0 || a->home_node >= MAX_NUMNODES || !node_online(a->home_node) ||
	    !node_state(a->home_node, N_MEMORY))
		return -EINVAL;
	return 0;
}

int pm_domain_create(const struct poolmem_domain_create *arg)
{
	struct poolmem_domain_create a = *arg;
	struct pm_domain *d;
	kuid_t uid;
	kgid_t gid;
	u64 mask, m;
	int minor, ret, i;

	ret = pm_domain_check(&a);
	if (ret)
		return ret;
	uid = make_kuid(current_user_ns(), a.uid);
	gid = make_kgid(current_user_ns(), a.gid);
	if (!uid_valid(uid) || !gid_valid(gid))
		return -EINVAL;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	INIT_LIST_HEAD(&d->list);
	mutex_init(&d->lock);
	memcpy(d->name, a.name, POOLMEM_NAME_MAX);
	d->size = a.bytes;
	d->chunk_bytes = a.chunk_bytes;
	d->chunk_shift = ilog2(a.chunk_bytes);
	d->units_per_chunk = a.chunk_bytes >> PM_UNIT_SHIFT;
	d->nr_chunks = a.bytes >> d->chunk_shift;
	d->quota[PM_TIER_LOCAL] = a.quota[PM_TIER_LOCAL];
	d->quota[PM_TIER_POOL] = a.quota[PM_TIER_POOL];
	d->home_node = a.home_node;
	d->tier_policy = a.tier_policy;
	d->pool_select = a.pool_select;
	d->uid = uid;
	d->gid = gid;
	d->mode = a.mode;
	d->pinnable = a.flags & POOLMEM_DOMAIN_PINNABLE;

	if (!try_module_get(THIS_MODULE)) {
		kfree(d);
		return -ENODEV;
	}
	minor = ida_alloc_max(&pm_minor_ida, PM_MAX_DOMAINS - 1, GFP_KERNEL);
	if (minor < 0) {
		module_put(THIS_MODULE);
		kfree(d);
		return minor == -ENOSPC ? -ENOSPC : minor;
	}
	/* from here on, put_device() undoes everything (pm_domain_release) */
	device_initialize(&d->dev);
	d->dev.class = pm_class;
	d->dev.type = &pm_domain_type;
	d->dev.devt = MKDEV(MAJOR(pm_devt), minor);
	d->dev.groups = pm_domain_groups;
	ret = dev_set_name(&d->dev, "%s", d->name);
	if (ret)
		goto out_put;

	ret = -ENOMEM;
	d->units = kvcalloc(d->nr_chunks * d->units_per_chunk, sizeof(*d->units), GFP_KERNEL);
	d->meta = kvcalloc(d->nr_chunks, sizeof(*d->meta), GFP_KERNEL);
	d->batch = kmalloc_array(PM_UNIT_PAGES, sizeof(*d->batch), GFP_KERNEL);
	if (!d->units || !d->meta || !d->batch)
		goto out_put;
	d->inode = alloc_anon_inode(pm_mnt->mnt_sb);
	if (IS_ERR(d->inode)) {
		ret = PTR_ERR(d->inode);
		d->inode = NULL;
		goto out_put;
	}
	cdev_init(&d->cdev, &pm_domain_fops);
	d->cdev.owner = THIS_MODULE;

	mutex_lock(&pm_lock);
	ret = -EEXIST;
	if (pm_domain_find(d->name))
		goto out_unlock;
	/* allowed pools: every given bit must be a registered pool */
	mask = 0;
	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (pm_pools[i])
			mask |= BIT_ULL(i);
	ret = -EINVAL;
	if (a.pool_mask & ~mask)
		goto out_unlock;
	if (a.pool_mask)
		mask = a.pool_mask;
	ret = -ENOSPC;
	if (a.quota[PM_TIER_POOL] && !mask)
		goto out_unlock;
	d->pool_mask = a.quota[PM_TIER_POOL] ? mask : 0;
	ret = pm_admit(&a, d->pool_mask);
	if (ret)
		goto out_unlock;

	ret = cdev_device_add(&d->cdev, &d->dev);
	if (ret)
		goto out_unlock;
	for (m = d->pool_mask; m; m &= m - 1) {
		struct pm_pool *p = pm_pools[__ffs64(m)];

		p->users++;
		p->committed += d->quota[PM_TIER_POOL];
	}
	list_add_tail(&d->list, &pm_domains);
	mutex_unlock(&pm_lock);
	pr_info("domain %s: %llu MiB, chunk %llu KiB, quota local %llu MiB pool %llu MiB, home node %d%s\n",
		d->name, d->size >> 20, d->chunk_bytes >> 10, d->quota[PM_TIER_LOCAL] >> 20,
		d->quota[PM_TIER_POOL] >> 20, d->home_node, d->pinnable ? ", pinnable" : "");
	return 0;

out_unlock:
	mutex_unlock(&pm_lock);
out_put:
	put_device(&d->dev);
	return ret;
}

/*
 * Remove the device node (existing opens and mappings keep working); the
 * memory goes back when the last of them is gone.
 */
int pm_domain_destroy(const char *name)
{
	struct pm_domain *d;

	mutex_lock(&pm_lock);
	d = pm_domain_find(name);
	if (!d) {
		mutex_unlock(&pm_lock);
		return -ENOENT;
	}
	d->dead = true;
	cdev_device_del(&d->cdev, &d->dev);
	mutex_unlock(&pm_lock);
	pr_info("domain %s: destroyed\n", d->name);
	/* may free the domain right here: must not hold pm_lock */
	put_device(&d->dev);
	return 0;
}

/* Caller holds pm_lock. */
void pm_domain_fill_info(struct pm_domain *d, struct poolmem_domain_info *info)
{
	info->bytes = d->size;
	info->chunk_bytes = d->chunk_bytes;
	info->pool_mask = d->pool_mask;
	info->home_node = d->home_node;
	info->tier_policy = d->tier_policy;
	info->pool_select = d->pool_select;
	info->uid = from_kuid_munged(current_user_ns(), d->uid);
	info->gid = from_kgid_munged(current_user_ns(), d->gid);
	info->mode = d->mode;
	info->domain_flags = d->pinnable ? POOLMEM_DOMAIN_PINNABLE : 0;
	mutex_lock(&d->lock);
	memcpy(info->quota, d->quota, sizeof(info->quota));
	memcpy(info->usage, d->usage, sizeof(info->usage));
	info->chunks = d->chunks;
	info->faults = d->faults;
	info->sigbus = d->sigbus;
	info->discards = d->discards;
	mutex_unlock(&d->lock);
}

#define PM_MAP_BATCH	1024	/* ranges per POOLMEM_MAP call, at most */

/*
 * Forward chunk map from m->start: ranges contiguous in offset and in
 * physical address on one pool, at most min(m->count, PM_MAP_BATCH) of
 * them. Built in a kernel buffer under d->lock and copied out after it is
 * dropped: the user buffer may itself be a mapping of this domain, whose
 * fault takes d->lock. Caller holds pm_lock (not taken by faults).
 */
int pm_domain_map(struct pm_domain *d, struct poolmem_map *m)
{
	struct poolmem_map_range __user *out = u64_to_user_ptr(m->ranges);
	u32 max = min_t(u32, m->count, PM_MAP_BATCH);
	struct poolmem_map_range *buf = NULL, r = {};
	u64 off, end = d->size;
	bool open = false;
	u32 nr = 0;
	int ret = 0;

	if (m->nr || m->next || m->start > d->size)
		return -EINVAL;
	if (max) {
		buf = kvmalloc_array(max, sizeof(*buf), GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	mutex_lock(&d->lock);
	for (off = ALIGN_DOWN(m->start, PM_UNIT_BYTES); off < end; off += PM_UNIT_BYTES) {
		u64 idx = off >> d->chunk_shift;
		u64 u = (off & (d->chunk_bytes - 1)) >> PM_UNIT_SHIFT;
		struct page *page;
		u64 phys;
		u32 pool;

		if (!d->meta[idx].present) {
			off = ((idx + 1) << d->chunk_shift) - PM_UNIT_BYTES;
			continue;
		}
		page = d->units[idx * d->units_per_chunk + u];
		phys = PFN_PHYS(page_to_pfn(page));
		pool = d->meta[idx].pool == PM_POOL_NONE ? POOLMEM_POOL_LOCAL : d->meta[idx].pool;
		if (open && r.offset + r.length == off && r.phys + r.length == phys && r.pool == pool) {
			r.length += PM_UNIT_BYTES;
			continue;
		}
		if (open) {
			if (nr == max) {
				end = r.offset;	/* continue from this range next time */
				open = false;
				break;
			}
			buf[nr++] = r;
		}
		r.offset = off;
		r.length = PM_UNIT_BYTES;
		r.phys = phys;
		r.pool = pool;
		r.node = page_to_nid(page);
		open = true;
	}
	if (open) {
		if (nr == max)
			end = r.offset;
		else
			buf[nr++] = r;
	}
	mutex_unlock(&d->lock);

	if (nr && copy_to_user(out, buf, nr * sizeof(*buf)))
		ret = -EFAULT;
	kvfree(buf);
	m->nr = nr;
	m->next = min(end, d->size);
	return ret;
}

/*
 * The domain owning @slot (an entry of pm_rmap), with the unit's index in
 * its units[]. Caller holds pm_lock; releases take it before unlisting a
 * domain, so a listed domain's slots stay valid (a discard racing with a
 * lookup can only make the answer stale, never dangling).
 */
static struct pm_domain *pm_slot_owner(struct page **slot, size_t *unit)
{
	struct pm_domain *d;

	list_for_each_entry(d, &pm_domains, list) {
		size_t n = d->nr_chunks * d->units_per_chunk;

		if (slot >= d->units && slot < d->units + n) {
			*unit = slot - d->units;
			return d;
		}
	}
	return NULL;
}

/* Which domain holds @pfn, at which offset and in which pool. Caller holds pm_lock. */
struct pm_domain *pm_rmap_lookup(u64 pfn, u64 *offset, u32 *pool)
{
	struct page **slot = mtree_load(&pm_rmap, pfn);
	struct pm_domain *d;
	struct page *page;
	size_t i;

	if (!slot)
		return NULL;
	d = pm_slot_owner(slot, &i);
	if (!d)
		return NULL;
	/* a chunk still being allocated (busy) is not the domain's yet */
	mutex_lock(&d->lock);
	page = d->meta[i / d->units_per_chunk].present ? *slot : NULL;
	if (page) {
		*offset = ((u64)i << PM_UNIT_SHIFT) + PFN_PHYS(pfn - page_to_pfn(page));
		*pool = d->meta[i / d->units_per_chunk].pool == PM_POOL_NONE ?
				POOLMEM_POOL_LOCAL : d->meta[i / d->units_per_chunk].pool;
	}
	mutex_unlock(&d->lock);
	return page ? d : NULL;
}

/*
 * For the memory notifier: name the domain whose unit @entry (a pm_rmap
 * entry) is, and its offset. Caller holds pm_lock.
 */
const char *pm_rmap_entry_owner(void *entry, u64 *offset)
{
	size_t i;
	struct pm_domain *d = pm_slot_owner(entry, &i);

	if (!d)
		return NULL;
	*offset = (u64)i << PM_UNIT_SHIFT;
	return d->name;
}
