// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem domain files: open, mmap, the fault handler, fallocate (discard)
 * and llseek. A file in a profile directory has no domain until ftruncate()
 * sizes it (fs.c); until then it can't be mapped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/mempolicy.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched.h>

#include "poolmem.h"

/*
 * The domain of a file, or NULL while it has none. Published by fs.c with
 * smp_store_release() once the domain is complete; never changes after.
 */
static struct pm_domain *pm_file_domain(struct file *file)
{
	struct pm_file *pf = file_inode(file)->i_private;

	return smp_load_acquire(&pf->d);
}

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
 * Map @nr pages of a unit from @pages at @addr of a small mapping. Pages
 * some other thread mapped first (-EBUSY) are skipped. Caller holds
 * d->lock and the mmap lock.
 */
static vm_fault_t pm_insert_run(struct vm_area_struct *vma, unsigned long addr, struct page **pages,
				unsigned long left)
{
	while (left) {
		unsigned long num = left, i;
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
	return 0;
}

/*
 * Pages a small mapping's fault hands vm_insert_pages() at once, from the
 * stack: a per-domain array of a unit's 512 pointers cost every domain 4
 * KiB, and batches of 32 already make the page table walk per call a
 * small part of mapping a chunk (16 calls for 2 MiB, against zeroing it).
 */
#define PM_INSERT_BATCH		32

/*
 * Small mappings: map the part of chunk @idx that lies inside @vma, except
 * its hardware-poisoned pages: memory_failure() leaves our pages alone
 * (they are neither LRU nor movable, and a unit is compound: it can't be
 * split), so the poison flag is all there is, and a poisoned page must
 * never be mapped again. Returns VM_FAULT_HWPOISON when the page at @fault
 * (a domain offset) is one of them: the task gets SIGBUS with
 * BUS_MCEERR_AR, as for a poisoned page of any file, and KVM passes it to
 * QEMU, which injects a machine check into the guest. Caller holds d->lock
 * and the mmap lock.
 */
static vm_fault_t pm_map_chunk(struct pm_domain *d, struct vm_area_struct *vma, u64 idx, u64 fault)
{
	u64 chunk_off = idx << d->chunk_shift;
	u64 vma_off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 vma_end = vma_off + (vma->vm_end - vma->vm_start);
	u64 off = max(chunk_off, vma_off);
	u64 end = min(chunk_off + d->chunk_bytes, vma_end);
	struct page *batch[PM_INSERT_BATCH];
	vm_fault_t ret = VM_FAULT_NOPAGE, err;

	while (off < end) {
		u64 uend = min(end, round_down(off, PM_UNIT_BYTES) + PM_UNIT_BYTES);
		struct page *first = pm_page_at(d, off);
		unsigned long left = (uend - off) >> PAGE_SHIFT;
		unsigned long addr = vma->vm_start + (off - vma_off);
		unsigned long i, run = 0;

		/* runs of pages without poison, inserted PM_INSERT_BATCH at a time */
		for (i = 0; i <= left; i++) {
			bool good = i < left && !PageHWPoison(first + i) &&
				    !pm_poison_at(d, idx, off + ((u64)i << PAGE_SHIFT));

			if (good)
				batch[run++] = first + i;
			if (run && (!good || run == PM_INSERT_BATCH)) {
				err = pm_insert_run(vma, addr + ((i + good - run) << PAGE_SHIFT), batch, run);
				if (err)
					return err;
				run = 0;
			}
			if (good)
				continue;
			if (i < left && off + (i << PAGE_SHIFT) == (fault & PAGE_MASK))
				ret = VM_FAULT_HWPOISON;
		}
		off = uend;
	}
	return ret;
}

/*
 * Huge mappings: hand the page at @off to the core, referenced and locked.
 * The page lock, taken under d->lock, keeps pm_chunk_unmap() from freeing
 * the chunk between here and the core installing the mapping.
 */
static vm_fault_t pm_fault_page(struct pm_domain *d, struct vm_fault *vmf, u64 off)
{
	struct page *page = pm_page_at(d, off);
	struct page *head = compound_head(page);
	u64 idx = off >> d->chunk_shift;

	/*
	 * A memory error on a unit the core can't split (it has no mapping):
	 * report it, as for any poisoned page, rather than hand the page to
	 * __do_fault(), which would try to unmap it through its NULL mapping.
	 */
	if (PageHWPoison(page) || pm_poison_at(d, idx, off))
		return VM_FAULT_HWPOISON;
	/*
	 * A poisoned page elsewhere in the unit: one PMD would map it too.
	 * memory_failure() gave up on the unit before it could say so with
	 * PG_has_hwpoisoned (get_hwpoison_page() refuses pages that are
	 * neither LRU nor movable), so we say it: do_set_pmd() then falls
	 * back, and finish_fault() maps this page alone. The flag stays
	 * until the unit is freed (free_pages_prepare() clears it). Until
	 * then each fault that would map a clean unit whole reads its 512
	 * page flags (32 KiB of memmap): one look per 2 MiB mapped.
	 *
	 * The same goes for a unit that took over a lost page's offset when
	 * its chunk moved (mf.c): its own pages are sound, but the page at
	 * that offset must fault as poisoned, so the unit is mapped page by
	 * page. PG_has_hwpoisoned says no more than that to the core (it only
	 * keeps do_set_pmd() away, and the page allocator clears it).
	 */
	if (!PageHasHWPoisoned(head) &&
	    (pm_unit_poisoned(head) ||
	     (d->meta[idx].poison && pm_poison_in(d, round_down(off, PM_UNIT_BYTES), PM_UNIT_BYTES)))) {
		SetPageHasHWPoisoned(head);
		/* and out of the PMDs that map it whole already */
		pm_chunk_unmap(d, idx);
	}

	get_page(page);
	lock_page(page);
	vmf->page = page;
	return VM_FAULT_LOCKED;
}

/*
 * Chunk @idx is busy: being allocated by another fault, or being migrated
 * (unmapped, its pages frozen and copied). Wait for it the way a fault
 * waits for a page under I/O (filemap's lock_page_or_retry):
 *
 * - FAULT_FLAG_RETRY_NOWAIT (KVM's async page fault, FOLL_NOWAIT): don't
 *   wait at all, and keep the mmap lock: VM_FAULT_RETRY;
 * - first attempt, retry allowed: drop the mmap lock (holding the file, so
 *   the domain lives on), wait, and return VM_FAULT_RETRY, so that a
 *   migration never holds up mmap_lock writers (mmap, munmap, mprotect)
 *   of the VM process behind a copy;
 * - otherwise wait with the mmap lock held, then the caller looks again.
 *
 * Caller holds d->lock; this drops it. Returns 0 when the caller should
 * take d->lock and look again, or the fault's result.
 */
static vm_fault_t pm_fault_busy(struct pm_domain *d, struct vm_fault *vmf, u64 idx)
{
	struct pm_chunk_meta *meta = &d->meta[idx];
	struct file *fpin;
	u64 t0;

	mutex_unlock(&d->lock);
	if ((vmf->flags & (FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_RETRY_NOWAIT)) ==
	    (FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_RETRY_NOWAIT))
		return VM_FAULT_RETRY;
	t0 = ktime_get_ns();
	if (fault_flag_allow_retry_first(vmf->flags)) {
		fpin = get_file(vmf->vma->vm_file);
		mmap_read_unlock(vmf->vma->vm_mm);
		/* a fatal signal: the arch fault handler sees it after RETRY */
		if (!wait_var_event_killable(meta, !READ_ONCE(meta->busy)))
			pm_move_wait_done(ktime_get_ns() - t0);
		fput(fpin);
		return VM_FAULT_RETRY;
	}
	if (wait_var_event_killable(meta, !READ_ONCE(meta->busy)))
		return VM_FAULT_SIGBUS;	/* killed: it dies anyway */
	pm_move_wait_done(ktime_get_ns() - t0);
	return 0;
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
	int err;

	if (off >= d->size)
		return VM_FAULT_SIGBUS;
	idx = off >> d->chunk_shift;

	mutex_lock(&d->lock);
	while (d->meta[idx].busy) {
		ret = pm_fault_busy(d, vmf, idx);
		if (ret)
			return ret;
		mutex_lock(&d->lock);
	}
	if (!d->meta[idx].present) {
		err = pm_chunk_place(d, idx);
		if (err == -ENOMEM && d->retired) {
			/* quota held by retired chunks whose users may be letting go */
			mutex_unlock(&d->lock);
			pm_retired_reap_wait(d);
			mutex_lock(&d->lock);
			/* waits if it became busy meanwhile (a move) */
			err = pm_chunk_place(d, idx);
		}
		if (err == -EINTR) {
			/* killed while waiting for another fault: it dies anyway */
			mutex_unlock(&d->lock);
			return VM_FAULT_SIGBUS;
		}
		if (err == -EHWPOISON) {
			/*
			 * Revoked with its pool's memory: a memory error, as
			 * for a poisoned page (BUS_MCEERR_AR; KVM passes it to
			 * QEMU, which injects a machine check into the guest).
			 */
			mutex_unlock(&d->lock);
			return VM_FAULT_HWPOISON;
		}
		if (err) {
			d->sigbus++;
			pm_count(d->profile, sigbus, 1);
			pr_warn_ratelimited("domain %s: no memory within quota for offset %#llx (local %llu/%llu MiB, pool %llu/%llu MiB)\n",
					    d->name, off, d->usage[PM_TIER_LOCAL] >> 20,
					    d->quota[PM_TIER_LOCAL] >> 20, d->usage[PM_TIER_POOL] >> 20,
					    d->quota[PM_TIER_POOL] >> 20);
			mutex_unlock(&d->lock);
			return VM_FAULT_SIGBUS;
		}
	}
	/* never map the units of a chunk being moved: they may be frozen */
	VM_WARN_ON_ONCE(d->meta[idx].busy);
	/* a FOLL_LONGTERM pin (pin.c): only chunks that can be pinned */
	if (unlikely(current->flags & PF_MEMALLOC_PIN) && !pm_chunk_longterm_ok(d, idx)) {
		ret = pm_fault_longterm(d, vmf, idx);
		mutex_unlock(&d->lock);
		return ret;
	}
	p = pm_chunk_pool(d, idx);
	if (d->heat)
		pm_heat_refault(d, idx, p);
	if (vma->vm_flags & VM_MIXEDMAP)
		ret = pm_map_chunk(d, vma, idx, off);
	else
		ret = pm_fault_page(d, vmf, off);
	d->faults++;
	/*
	 * The pool is counted under d->lock: a chunk present on it keeps it
	 * registered (pm_pool_remove() wants none there) only while the
	 * chunk can't leave, and after the unlock a drain may move the chunk
	 * away or a discard free it, and the pool be removed and freed.
	 * af_lock nests inside d->lock (main.c's lock order).
	 */
	if (p) {
		atomic64_inc(&p->faults);
		pm_pool_event(p, 1);
	}
	mutex_unlock(&d->lock);

	ns = ktime_get_ns() - t0;
	atomic64_inc(&d->hist[min_t(unsigned int, ns ? ilog2(ns) : 0, PM_HIST_BUCKETS - 1)]);
	atomic64_add(ns, &d->fault_ns);
	return ret;
}

#ifdef CONFIG_NUMA
/*
 * Placement is the domain's policy, and its chunks move only by poolmem's
 * own migration (move.c), so NUMA balancing must not scan a domain's
 * mappings: its hinting faults would unmap guest RAM every scan period
 * (and KVM's EPT entries with it, through the mmu notifier) and then fail
 * to migrate pages that are on no LRU, waking kswapd on the target node
 * for nothing in tiering mode (numa_balancing=2).
 *
 * task_numa_work() skips a mapping whose vma_policy_mof() is false. On 6.1
 * a NULL from ->get_policy meant false; since 6.7 ("mempolicy:
 * alloc_pages_mpol() for NUMA policy without vma") NULL falls back to the
 * task's policy, whose default carries MPOL_F_MOF. So the mapping has a
 * policy of its own without MPOL_F_MOF, static as the kernel's
 * default_policy (never freed: not MPOL_F_SHARED, so mpol_cond_put()
 * leaves it alone; get_mempolicy(MPOL_F_ADDR) takes and drops a
 * reference, as on default_policy). numa_maps and get_mempolicy() say
 * "local" (MPOL_LOCAL) for a domain's addresses, where they said
 * "default"; it allocates nothing: the fault path does its own placement.
 * The one reference held past the mmap lock is get_mempolicy()'s, for
 * microseconds: an rmmod in between (no mapping left, no domain) would
 * see it dropped on module memory.
 */
static struct mempolicy pm_domain_policy = {
	.refcnt = ATOMIC_INIT(1),
	.mode = MPOL_LOCAL,
	.home_node = NUMA_NO_NODE,
};

static struct mempolicy *pm_vm_get_policy(PM_GET_POLICY_ARGS)
{
	return &pm_domain_policy;
}
#endif

/* A mapping holds the file, so the domain outlives it. */
static const struct vm_operations_struct pm_vm_ops = {
	.fault = pm_vm_fault,
#ifdef CONFIG_NUMA
	.get_policy = pm_vm_get_policy,
#endif
};

/*
 * The domain's own name (PM_WIN_WHOLE) among the names of its inode, with
 * a reference, or NULL once it was unlinked (the domain destroyed).
 */
static struct dentry *pm_whole_dentry(struct inode *inode)
{
	struct dentry *alias, *found = NULL;

	spin_lock(&inode->i_lock);
	hlist_for_each_entry(alias, &inode->i_dentry, d_u.d_alias) {
		if (pm_dentry_window(alias) == PM_WIN_WHOLE && !d_unhashed(alias)) {
			found = dget(alias);
			break;
		}
	}
	spin_unlock(&inode->i_lock);
	return found;
}

/*
 * A znuma profile's domain has no name of its own to open (pm_create()):
 * the pool window's inner file is an unnamed file of the inode, made as
 * anon_inode_getfile() makes one, on the window's mount. Its dentry is no
 * window (domain offsets) and lies in no directory, so no path-based
 * policy is asked twice: opening the window was the decision. The local
 * window starts at offset 0 and is mapped through its own file.
 */
static int pm_open_profile_window(struct file *file, enum pm_window w)
{
	struct inode *inode = file_inode(file);
	struct file *f;

	if (w == PM_WIN_LOCAL)
		return 0;
	ihold(inode);			/* for the new dentry */
	__module_get(THIS_MODULE);	/* alloc_file() takes none; __fput() drops one */
	f = alloc_file_pseudo(inode, file->f_path.mnt, file->f_path.dentry->d_name.name,
			      file->f_flags & (O_ACCMODE | O_LARGEFILE), &pm_domain_fops);
	if (IS_ERR(f)) {
		module_put(THIS_MODULE);
		iput(inode);
		return PTR_ERR(f);
	}
	f->private_data = (void *)(unsigned long)w;
	file->private_data = f;
	return 0;
}

/*
 * A window file (PM_WIN_LOCAL, PM_WIN_POOL) holds, in private_data, an
 * open file of the domain's own name: its mappings are made as mappings of
 * that file at the window's offset (pm_mmap()). It is opened here rather
 * than at mmap time, where mmap_lock is held for write and an open may
 * wait on fanotify permission events or lease breaks. The inner file's own
 * private_data records the window it serves, so that a later
 * remap_file_pages() on such a mapping (which maps vm_file, the inner
 * file) stays inside the window.
 *
 * The inner file's path is the main name on the window file's mount: the
 * main name must be reachable there (not so when only a window was
 * bind-mounted somewhere), and path-based security policies (AppArmor,
 * Landlock) must allow it as well as the window's name.
 */
static int pm_open_window(struct file *file, enum pm_window w)
{
	struct inode *inode = file_inode(file);
	struct pm_file *pf = inode->i_private;
	struct vfsmount *mnt = file->f_path.mnt;
	struct dentry *whole;
	struct file *f;

	if (pf->profile)
		return pm_open_profile_window(file, w);
	whole = pm_whole_dentry(inode);
	if (!whole)
		return -ENODEV;	/* the domain was destroyed */
	if (!is_subdir(whole, mnt->mnt_root)) {
		pr_warn_ratelimited("window %pd: the domain's own name is not under this mount: mount the poolmem file system whole\n",
				    file->f_path.dentry);
		dput(whole);
		return -EXDEV;
	}
	f = dentry_open(&(struct path){ .mnt = mnt, .dentry = whole },
			file->f_flags & (O_ACCMODE | O_LARGEFILE), file->f_cred);
	dput(whole);
	if (IS_ERR(f))
		return PTR_ERR(f);
	f->private_data = (void *)(unsigned long)w;
	file->private_data = f;
	return 0;
}

/*
 * A named domain that was destroyed (unlinked) takes no new opens, even
 * through /proc/PID/fd of a process that still has it open.
 */
static int pm_open(struct inode *inode, struct file *file)
{
	struct pm_file *pf = inode->i_private;
	struct pm_domain *d = smp_load_acquire(&pf->d);
	enum pm_window w = pm_dentry_window(file->f_path.dentry);

	if (d && !d->profile && READ_ONCE(d->dead))
		return -ENODEV;
	return w != PM_WIN_WHOLE ? pm_open_window(file, w) : 0;
}

static int pm_release(struct inode *inode, struct file *file)
{
	/* a window file's inner file (pm_open_window()); NULL or a window tag otherwise */
	if (pm_dentry_window(file->f_path.dentry) != PM_WIN_WHOLE && file->private_data)
		fput(file->private_data);
	return 0;
}

/*
 * Map window @w of @d through the window file @file: the window's offsets
 * become the domain's, and the mapping becomes one of the domain's own
 * file (the inner file pm_open_window() opened), so that everything that
 * finds a mapping by file offset sees domain offsets, whichever name the
 * mapping was made through: unmap_mapping_range() (discard, migration,
 * tiering) and madvise's MADV_REMOVE, which hands the mapping's file and
 * offset to ->fallocate, where a window file would add the window's base a
 * second time.
 */
static int pm_mmap_window(struct file *file, struct vm_area_struct *vma, struct pm_domain *d,
			  enum pm_window w)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 base, size;

	pm_domain_window(d, w, &base, &size);
	if (vma->vm_pgoff > (size >> PAGE_SHIFT) || len > size - ((u64)vma->vm_pgoff << PAGE_SHIFT))
		return -EINVAL;
	/*
	 * A profile's local window has no inner file: at base 0 its offsets
	 * are the domain's, and a remap through it comes back here.
	 */
	if (!file->private_data)
		return base ? -EINVAL : 0;
	vma->vm_pgoff += base >> PAGE_SHIFT;
	vma_set_file(vma, file->private_data);	/* takes its own reference */
	return 0;
}

/*
 * The inner file of window @w (domain offsets): a mapping stays inside the
 * window (remap_file_pages() maps vm_file again at an offset of its
 * caller's choosing).
 */
static bool pm_in_window(struct pm_domain *d, enum pm_window w, struct vm_area_struct *vma)
{
	u64 base, size, off = (u64)vma->vm_pgoff << PAGE_SHIFT;

	pm_domain_window(d, w, &base, &size);
	return off >= base && off - base <= size && vma->vm_end - vma->vm_start <= size - (off - base);
}

static int pm_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pm_domain *d = pm_file_domain(file);
	enum pm_window w = pm_dentry_window(file->f_path.dentry);
	unsigned long len = vma->vm_end - vma->vm_start;
	int ret;

	/*
	 * No domain: a profile file that ftruncate() never sized, or whose
	 * size admission refused (QEMU only prints ftruncate's error and
	 * goes on to map the file).
	 */
	if (!d)
		return -ENOSPC;
	/* a private mapping would need copy-on-write of pages we own */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (w != PM_WIN_WHOLE) {
		ret = pm_mmap_window(file, vma, d, w);
		if (ret)
			return ret;
		file = vma->vm_file;
	} else if (file->private_data &&
		   !pm_in_window(d, (enum pm_window)(unsigned long)file->private_data, vma)) {
		return -EINVAL;
	}
	if (vma->vm_pgoff > (d->size >> PAGE_SHIFT) ||
	    len > d->size - ((u64)vma->vm_pgoff << PAGE_SHIFT))
		return -EINVAL;

	/*
	 * VM_DONTEXPAND: no mremap growth past the size, and (VM_SPECIAL)
	 * no mlock of pages the LRU doesn't know. Small mappings need
	 * VM_MIXEDMAP before their first vm_insert_pages().
	 */
	file_accessed(file);
	pm_vm_flags_set(vma, VM_DONTEXPAND);
	if (!pm_vma_huge(vma))
		pm_vm_flags_set(vma, VM_MIXEDMAP);
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

		struct page *page = pm_page_at(d, from);

		/* a lost page stays lost (and is not written) */
		if (!PageHWPoison(page) && !pm_poison_at(d, from >> d->chunk_shift, from))
			memzero_page(page, pofs, len);
		from += len;
	}
}

/* Does chunk @idx read as zeroes? Lost pages (never read) count as such. */
static bool pm_chunk_is_zero(struct pm_domain *d, u64 idx)
{
	struct page **slot = &d->units[idx * d->units_per_chunk];
	void *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	unsigned int u, i;
	bool zero = !!buf;

	/* machine-check-safe reads: a tenant's page may hold a latent error */
	for (u = 0; u < d->units_per_chunk && zero; u++) {
		for (i = 0; i < PM_UNIT_PAGES && zero; i++)
			if (!PageHWPoison(slot[u] + i))
				zero = pm_page_zero_mc(slot[u] + i, buf);
		cond_resched();
	}
	kfree(buf);
	return zero;
}

/*
 * A chunk of @d that was on pool @p (NULL: the local tier) went back by a
 * discard: count it. Caller holds d->lock (which keeps @p registered: its
 * removal detaches every domain allowed there under their locks first).
 */
static void pm_discard_count(struct pm_domain *d, struct pm_pool *p)
{
	d->discards++;
	pm_count(d->profile, discarded_bytes, d->chunk_bytes);
	if (p)
		atomic64_add(d->chunk_bytes, &p->discarded_bytes);
}

/*
 * Chunk @idx had @bytes zeroed by a partial discard: free it once it reads
 * as zeroes. QEMU discards ballooned guest memory a page at a time (its
 * page size for any file but hugetlbfs is 4 KiB), and only a discard of a
 * whole chunk returns one: without this, a ballooned guest would give
 * nothing back, and a guest that zeroes the pages it hands its balloon
 * (init_on_alloc) would even fault in again chunks that free page
 * reporting had returned. As the kernel's own split of underused huge
 * pages (thp_underused(), 6.12) frees zero-filled subpages, a chunk that
 * reads as zeroes is freed; a later touch places a fresh zeroed chunk, so
 * the tenant reads the same bytes.
 *
 * meta.zeroed counts the pages partial discards zeroed since the last look
 * (saturating; a page zeroed twice counts twice: it only decides when to
 * look, so a look costs one chunk read per chunk's worth of discards). The
 * chunk is unmapped before it is read (its mappings' references go with
 * it): with d->lock held no fault maps it again, so no store through a
 * mapping can land between the check and the free. A chunk that something
 * else still references after the unmap (a pin, O_DIRECT in flight: they
 * may still write), or that has lost pages, stays; a fault maps it again.
 * Caller holds d->lock; the chunk is present and not busy.
 */
static void pm_discard_partial(struct pm_domain *d, u64 idx, u64 bytes)
{
	struct pm_chunk_meta *m = &d->meta[idx];
	struct page **slot = &d->units[idx * d->units_per_chunk];
	u32 want = min_t(u64, d->chunk_bytes >> PAGE_SHIFT, U16_MAX);

	m->zeroed = min_t(u64, (u64)m->zeroed + DIV_ROUND_UP(bytes, PAGE_SIZE), U16_MAX);
	if (m->zeroed < want)
		return;
	m->zeroed = 0;
	if (m->poison)
		return;
	pm_chunk_unmap(d, idx);
	if (pm_units_shared(slot, d->units_per_chunk) || !pm_chunk_is_zero(d, idx))
		return;
	pm_discard_count(d, pm_chunk_pool(d, idx));
	pm_chunk_free(d, idx);
}

/*
 * Discard [offset, offset + len) of the domain: whole chunks go back to
 * their node (unmapped from every mapping first; retired if still
 * referenced); partial chunks are zeroed in place, and freed once they
 * read as zeroes (pm_discard_partial()). The next touch of a freed chunk
 * places it anew. Caller has the domain's file open.
 */
int pm_discard(struct pm_domain *d, u64 offset, u64 len)
{
	u64 start = offset, end, idx;

	if (len == 0 || offset >= d->size)
		return 0;
	end = offset + min(len, d->size - offset);

	mutex_lock(&d->lock);
	for (idx = start >> d->chunk_shift; idx <= (end - 1) >> d->chunk_shift; idx++) {
		u64 cstart = idx << d->chunk_shift, cend = cstart + d->chunk_bytes;
		u64 from = max(start, cstart), to = min(end, cend);

		cond_resched();
		/* a chunk being migrated is discarded (or zeroed) where it lands */
		if (pm_chunk_wait(d, idx)) {
			mutex_unlock(&d->lock);
			return -EINTR;
		}
		if (!d->meta[idx].present) {
			/* a lost chunk discarded whole is a hole again */
			if (from == cstart && to == cend) {
				d->meta[idx].lost = 0;
				pm_poison_forget(d, idx);
			}
			continue;
		}
		if (from == cstart && to == cend) {
			struct pm_pool *p = pm_chunk_pool(d, idx);

			if (pm_chunk_discard(d, idx))
				pm_discard_count(d, p);
		} else {
			pm_zero(d, from, to);
			pm_discard_partial(d, idx, to - from);
		}
	}
	mutex_unlock(&d->lock);
	return 0;
}

/*
 * fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE), and MADV_REMOVE,
 * which the kernel turns into it: QEMU's discard of guest RAM (balloon,
 * free page reporting, virtio-mem, postcopy). The VFS has checked that the
 * file is open for writing and the range is sane. A hole beyond the size
 * is a no-op, as for any file. Nothing else is supported: a domain's size
 * is fixed and its memory is allocated on touch.
 */
static long pm_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	struct pm_domain *d = pm_file_domain(file);
	enum pm_window w = pm_dentry_window(file->f_path.dentry);
	u64 base, size;

	if (mode != (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	if (!d)
		return 0;	/* nothing allocated, nothing to punch */
	if (w != PM_WIN_WHOLE) {
		/* window offsets; a hole past the window's end is a no-op */
		pm_domain_window(d, w, &base, &size);
		if (offset >= size)
			return 0;
		return pm_discard(d, base + offset, min_t(u64, len, size - offset));
	}
	return pm_discard(d, offset, len);
}

/* lseek(SEEK_END) gives a window's size through a window's name (QEMU sizes by it). */
static loff_t pm_llseek(struct file *file, loff_t offset, int whence)
{
	struct pm_domain *d = pm_file_domain(file);
	enum pm_window w = pm_dentry_window(file->f_path.dentry);
	u64 base, size;

	if (!d || w == PM_WIN_WHOLE)
		return generic_file_llseek(file, offset, whence);
	pm_domain_window(d, w, &base, &size);
	return generic_file_llseek_size(file, offset, whence, file->f_mapping->host->i_sb->s_maxbytes, size);
}

const struct file_operations pm_domain_fops = {
	.owner = THIS_MODULE,
	.open = pm_open,
	.release = pm_release,
	.llseek = pm_llseek,	/* QEMU reads the size with lseek(SEEK_END) */
	.mmap = pm_mmap,
	.get_unmapped_area = thp_get_unmapped_area,
	.fallocate = pm_fallocate,
	.fsync = noop_fsync,	/* nothing to write back: msync(MS_SYNC) succeeds */
};
