/* SPDX-License-Identifier: GPL-2.0 */
/*
 * poolmem builds from one source for Debian 12's Linux 6.1 and for the 6.12
 * LTS (Debian 13, and Debian 12's "+deb12" builds). Every kernel API that
 * differs between the two is bridged here, and only here: the files that
 * hold the logic carry no LINUX_VERSION_CODE test. Each shim names the
 * release (and the commit) that changed the API, so it can go once the
 * older kernel is no longer supported. Versions between the two are not
 * built or tested: their boundaries come from the changelogs.
 *
 * Only interfaces are bridged here. What changed underneath (the fault
 * path, NUMA balancing, memory tiers, hotplug) is in main.c's overview,
 * "Kernels".
 */
#ifndef POOLMEM_COMPAT_H
#define POOLMEM_COMPAT_H

#include <linux/dcache.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/version.h>

/*
 * 6.11, "mm/memory_hotplug: skip adjust_managed_page_count() for
 * PageOffline() pages when offlining": offline_pages() takes from the
 * managed page count only the pages that were not PageOffline already (the
 * driver that set PageOffline took them out itself, as virtio-mem does);
 * before, it took the whole range, and a driver gave its PageOffline pages
 * back in MEM_GOING_OFFLINE (unit.c).
 */
#define PM_OFFLINE_SKIPS_OFFLINE_PAGES	(LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0))

/* 6.4, "driver core: class: remove module * from class_create()" */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define pm_class_create(name)	class_create(name)
#else
#define pm_class_create(name)	class_create(THIS_MODULE, name)
#endif

/*
 * 6.2, "driver core: make struct class.get_ownership() take a const *":
 * the struct device a class's get_ownership() is given.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
typedef const struct device pm_class_dev_t;
#else
typedef struct device pm_class_dev_t;
#endif

/*
 * 6.3, "mm: introduce vma->vm_flags wrapper functions": vm_flags is
 * read-only outside them. A name of our own, so that a stable backport
 * of vm_flags_set() to 6.1 can't collide with the shim.
 */
static inline void pm_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * 6.3, "fs: introduce dedicated idmap type for mounts":
 * inode operations and the permission helpers take a struct mnt_idmap,
 * and the initial one is nop_mnt_idmap where it was init_user_ns.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
typedef struct mnt_idmap pm_idmap_t;
#define PM_NOP_IDMAP		(&nop_mnt_idmap)
#else
typedef struct user_namespace pm_idmap_t;
#define PM_NOP_IDMAP		(&init_user_ns)
#endif

/*
 * 6.6, "fs: pass the request_mask to generic_fillattr"; and the
 * timestamps behind accessors: ctime in 6.6 ("fs: add ctime accessors
 * infrastructure", i_ctime becoming __i_ctime), atime and mtime in 6.7
 * ("fs: add accessors for atime and mtime").
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define pm_generic_fillattr(idmap, mask, inode, stat) generic_fillattr(idmap, mask, inode, stat)
#else
#define pm_generic_fillattr(idmap, mask, inode, stat) generic_fillattr(idmap, inode, stat)
#endif

/* mtime and ctime to now: a directory's entries or a file's links changed */
static inline void pm_inode_touch(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	inode_set_mtime_to_ts(inode, inode_set_ctime_current(inode));
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	inode->i_mtime = inode_set_ctime_current(inode);
#else
	inode->i_mtime = inode->i_ctime = current_time(inode);
#endif
}

/* ctime alone to now: the inode changed (a link), not its contents */
static inline void pm_inode_touch_ctime(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	inode_set_ctime_current(inode);
#else
	inode->i_ctime = current_time(inode);
#endif
}

/* a new inode: all three timestamps to now */
static inline void pm_inode_init_times(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	simple_inode_init_ts(inode);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	inode->i_atime = inode->i_mtime = inode_set_ctime_current(inode);
#else
	inode->i_atime = inode->i_mtime = inode->i_ctime = current_time(inode);
#endif
}

/*
 * 6.8, "dentry: switch the lists of children to hlist":
 * a directory's children are d_children/d_sib. Walk under the parent's
 * d_lock either way.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define pm_for_each_child(child, parent) \
	hlist_for_each_entry(child, &(parent)->d_children, d_sib)
#else
#define pm_for_each_child(child, parent) \
	list_for_each_entry(child, &(parent)->d_subdirs, d_child)
#endif

/*
 * 6.7, "mm: shrinker: add infrastructure for dynamically allocating
 * shrinker": shrinkers are allocated by the core
 * (shrinker_alloc/register/free); register_shrinker() is gone. Returns
 * the registered shrinker or an ERR_PTR.
 */
static inline struct shrinker *
pm_shrinker_create(unsigned long (*count)(struct shrinker *, struct shrink_control *),
		   unsigned long (*scan)(struct shrinker *, struct shrink_control *),
		   int seeks, unsigned int flags, const char *name)
{
	struct shrinker *s;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	s = shrinker_alloc(flags, "%s", name);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->count_objects = count;
	s->scan_objects = scan;
	s->seeks = seeks;
	shrinker_register(s);
#else
	int ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->count_objects = count;
	s->scan_objects = scan;
	s->seeks = seeks;
	s->flags = flags;
	ret = register_shrinker(s, "%s", name);
	if (ret) {
		kfree(s);
		return ERR_PTR(ret);
	}
#endif
	return s;
}

static inline void pm_shrinker_destroy(struct shrinker *s)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	shrinker_free(s);
#else
	unregister_shrinker(s);
	kfree(s);
#endif
}

/*
 * 6.7, "mempolicy: alloc_pages_mpol() for NUMA policy without vma":
 * ->get_policy() also returns an interleave index. The parameters of a
 * ->get_policy() (file.c's), and what a NULL from it means changed too:
 * see pm_domain_policy.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define PM_GET_POLICY_ARGS struct vm_area_struct *vma, unsigned long addr, pgoff_t *ilx
#else
#define PM_GET_POLICY_ARGS struct vm_area_struct *vma, unsigned long addr
#endif

#endif /* POOLMEM_COMPAT_H */
