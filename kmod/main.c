// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem: hot-plugged pooled memory (CXL expanders, DAX/PMem devices
 * onlined as system RAM) for VMs, with hard per-tier quotas.
 *
 * How it works
 * ------------
 * A *pool* is a NUMA node of far memory that the administrator registers
 * through /dev/poolmem/control (normally a CPU-less node that kmem created).
 * A *domain* is one VM's memory: a character device /dev/poolmem/<name> of a
 * fixed size that QEMU maps MAP_SHARED as guest RAM
 * (memory-backend-file,mem-path=/dev/poolmem/<name>,share=on).
 *
 * A domain is cut into chunks (2 MiB by default, up to 1 GiB). Nothing is
 * allocated at creation; the first touch of a chunk faults, and the fault
 * handler picks a tier (the local DRAM of the domain's home node, or the
 * pools) by the domain's tier policy and a pool by its pool-selection
 * policy (policy/pm_policy.c, plain C shared with the host unit tests),
 * allocates the chunk zeroed with __GFP_THISNODE from that node, charges it
 * to the tier, and maps it. A chunk is made of 2 MiB compound units. In a
 * mapping whose addresses and file offsets agree modulo 2 MiB (QEMU's, and
 * any mapping whose address the kernel picks: the device aligns it), the
 * touched unit is mapped with one PMD, as a THP of the page cache would be,
 * so a 2 MiB chunk costs one fault and one page-table entry; in any other
 * mapping the whole chunk is mapped at once with vm_insert_pages(). Pages
 * are ordinary struct pages, so get_user_pages() works on domain memory
 * (vhost, O_DIRECT). Quotas are hard: a chunk never lands in a tier whose quota is
 * used up. When no tier within quota can supply memory, the fault gets
 * SIGBUS and the domain's sigbus counter and a rate-limited log line say so.
 * Faults of one domain run in parallel (a VM's vCPUs): the domain lock
 * covers placement and mapping, not the allocation and zeroing of a chunk,
 * whose bytes are reserved in its tier's usage meanwhile; a fault on a
 * chunk being allocated waits for it, so it is allocated once.
 * Pinnable domains (POOLMEM_DOMAIN_PINNABLE) take chunks only from kernel
 * zones, so VFIO and RDMA can long-term pin them.
 *
 * Admission control at domain creation refuses (-ENOSPC) quotas that do not
 * fit the pools' capacity times their overcommit ratio, or the home node's
 * memory for the local tier.
 *
 * Every chunk is recorded in the domain's chunk map (forward: offset ->
 * pages) and in the global reverse map pm_rmap (a maple tree keyed by PFN
 * range), which answers "which domain owns this host physical address" and
 * lets the memory notifier veto, with -EBUSY, offlining a memory block that
 * holds chunks: the pages are not movable, and the kernel would otherwise
 * retry migrating them until the offline request times out.
 *
 * POOLMEM_DISCARD on a domain device unmaps whole chunks from every mapping
 * of the domain and returns them to their node; partial chunks are zeroed.
 * (fallocate(PUNCH_HOLE) would be the natural interface, but the VFS
 * refuses fallocate on character devices with -ENODEV before any driver
 * sees it.)
 * Destroying a domain removes its device node (no new opens); its memory is
 * freed when the last open file and mapping go away. Each live domain pins
 * the module, so rmmod fails while domains exist.
 *
 * Lock order: pm_lock -> pm_domain.lock -> (mm locks, i_mmap_rwsem, PTL)
 * -> pm_pool.af_lock. The fault path takes only pm_domain.lock and
 * af_lock (and sleeps on a busy chunk with pm_domain.lock dropped).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/memory.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/nodemask.h>
#include <linux/pseudo_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmstat.h>

#include "poolmem.h"

/*
 * Protects pm_pools[], pm_domains, the pools' committed/users, domain
 * names and creation/destruction. Never taken in the fault path.
 */
DEFINE_MUTEX(pm_lock);
struct pm_pool *pm_pools[POOLMEM_MAX_POOLS];
LIST_HEAD(pm_domains);
/* PFN range of every allocated unit -> its slot in a domain's units[]. */
struct maple_tree pm_rmap = MTREE_INIT(pm_rmap, 0);
/* Chunk allocations between the page allocator and pm_rmap. */
atomic_t pm_inflight = ATOMIC_INIT(0);
struct class *pm_class;
dev_t pm_devt;
/* Pseudo filesystem whose anonymous inodes give domains their mapping. */
struct vfsmount *pm_mnt;

#define POOLMEM_FS_MAGIC 0x706d656d	/* "pmem" */

static int pm_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, POOLMEM_FS_MAGIC) ? 0 : -ENOMEM;
}

/* No .owner: the module's own mount would pin it and rmmod could never work. */
static struct file_system_type pm_fs_type = {
	.name = "poolmem",
	.init_fs_context = pm_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

unsigned int pm_window_ms = 1000;
module_param_named(window_ms, pm_window_ms, uint, 0644);
MODULE_PARM_DESC(window_ms, "Length of one access-factor window in milliseconds (default 1000)");

unsigned int pm_local_overcommit_pct = 100;
module_param_named(local_overcommit_pct, pm_local_overcommit_pct, uint, 0644);
MODULE_PARM_DESC(local_overcommit_pct,
		 "Local-tier admission limit: home node memory * pct / 100 (default 100)");

int pm_name_valid(const char *name)
{
	size_t len = strnlen(name, POOLMEM_NAME_MAX);
	size_t i;

	if (len == 0 || len == POOLMEM_NAME_MAX)
		return 0;
	if (name[0] == '.' || name[0] == '-' || !strcmp(name, "control"))
		return 0;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return 0;
	}
	/* the rest of the buffer must be zero too: no hidden bytes */
	return !memchr_inv(name + len, 0, POOLMEM_NAME_MAX - len);
}

u64 pm_epoch(void)
{
	unsigned int ms = max(pm_window_ms, 1U);

	return div_u64(jiffies_to_msecs(jiffies), ms);
}

u64 pm_node_present_bytes(int nid)
{
	return (u64)node_present_pages(nid) << PAGE_SHIFT;
}

u64 pm_node_free_bytes(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long pages = 0;
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++)
		pages += zone_page_state(&pgdat->node_zones[z], NR_FREE_PAGES);
	return (u64)pages << PAGE_SHIFT;
}

/* Memory of node @nid outside ZONE_MOVABLE: what can be long-term pinned. */
u64 pm_node_pinnable_bytes(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long pages = 0;
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++)
		if (z != ZONE_MOVABLE)
			pages += READ_ONCE(pgdat->node_zones[z].present_pages);
	return (u64)pages << PAGE_SHIFT;
}

/*
 * Copy an ioctl argument in: its first u32 must be the struct's size and
 * its flags (second u32) a subset of @flags.
 */
static int pm_copy_in_flags(void *karg, size_t ksize, void __user *uarg, u32 flags)
{
	u32 hdr[2];

	if (copy_from_user(hdr, uarg, sizeof(hdr)))
		return -EFAULT;
	if (hdr[0] != ksize || hdr[1] & ~flags)
		return -EINVAL;
	if (copy_from_user(karg, uarg, ksize))
		return -EFAULT;
	/* a second read: the flags checked must be the flags used */
	if (((u32 *)karg)[1] != hdr[1])
		return -EINVAL;
	return 0;
}

static int pm_copy_in(void *karg, size_t ksize, void __user *uarg)
{
	return pm_copy_in_flags(karg, ksize, uarg, 0);
}

#define PM_RESERVED_ZERO(arg) (!memchr_inv((arg)->reserved, 0, sizeof((arg)->reserved)))

static long pm_list(struct poolmem_list *l, void __user *uarg, bool pools)
{
	char __user *names = u64_to_user_ptr(l->names);
	struct pm_domain *d;
	u32 n = 0;
	int i, ret = 0;

	if (!PM_RESERVED_ZERO(l) || l->total)
		return -EINVAL;
	mutex_lock(&pm_lock);
	if (pools) {
		for (i = 0; i < POOLMEM_MAX_POOLS && !ret; i++) {
			if (!pm_pools[i])
				continue;
			if (n < l->count && copy_to_user(names + (size_t)n * POOLMEM_NAME_MAX,
							 pm_pools[i]->name, POOLMEM_NAME_MAX))
				ret = -EFAULT;
			n++;
		}
	} else {
		list_for_each_entry(d, &pm_domains, list) {
			if (d->dead)
				continue;
			if (n < l->count && copy_to_user(names + (size_t)n * POOLMEM_NAME_MAX,
							 d->name, POOLMEM_NAME_MAX)) {
				ret = -EFAULT;
				break;
			}
			n++;
		}
	}
	mutex_unlock(&pm_lock);
	if (ret)
		return ret;
	l->total = n;
	return copy_to_user(uarg, l, sizeof(*l)) ? -EFAULT : 0;
}

static long pm_ctl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	union {
		struct poolmem_version ver;
		struct poolmem_pool_add padd;
		struct poolmem_name_arg name;
		struct poolmem_pool_info pinfo;
		struct poolmem_list list;
		struct poolmem_domain_create dcreate;
		struct poolmem_domain_info dinfo;
		struct poolmem_map map;
		struct poolmem_map_reverse rev;
	} *a;
	long ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (_IOC_TYPE(cmd) != POOLMEM_IOC_MAGIC || _IOC_SIZE(cmd) > sizeof(*a))
		return -ENOTTY;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;

	switch (cmd) {
	case POOLMEM_VERSION:
		ret = pm_copy_in(&a->ver, sizeof(a->ver), uarg);
		if (ret)
			break;
		if (a->ver.reserved || a->ver.abi) {
			ret = -EINVAL;
			break;
		}
		a->ver.abi = POOLMEM_ABI_VERSION;
		ret = copy_to_user(uarg, &a->ver, sizeof(a->ver)) ? -EFAULT : 0;
		break;

	case POOLMEM_POOL_ADD:
		ret = pm_copy_in(&a->padd, sizeof(a->padd), uarg);
		if (ret)
			break;
		if (!PM_RESERVED_ZERO(&a->padd) || a->padd.id) {
			ret = -EINVAL;
			break;
		}
		ret = pm_pool_add(&a->padd);
		if (!ret && copy_to_user(uarg, &a->padd, sizeof(a->padd)))
			ret = -EFAULT;
		break;

	case POOLMEM_POOL_REMOVE:
	case POOLMEM_DOMAIN_DESTROY:
		ret = pm_copy_in(&a->name, sizeof(a->name), uarg);
		if (ret)
			break;
		if (!PM_RESERVED_ZERO(&a->name) || !pm_name_valid(a->name.name)) {
			ret = -EINVAL;
			break;
		}
		ret = cmd == POOLMEM_POOL_REMOVE ? pm_pool_remove(a->name.name) :
						   pm_domain_destroy(a->name.name);
		break;

	case POOLMEM_POOL_LIST:
	case POOLMEM_DOMAIN_LIST:
		ret = pm_copy_in(&a->list, sizeof(a->list), uarg);
		if (!ret)
			ret = pm_list(&a->list, uarg, cmd == POOLMEM_POOL_LIST);
		break;

	case POOLMEM_POOL_INFO: {
		struct pm_pool *p;

		ret = pm_copy_in(&a->pinfo, sizeof(a->pinfo), uarg);
		if (ret)
			break;
		if (!PM_RESERVED_ZERO(&a->pinfo) || !pm_name_valid(a->pinfo.name)) {
			ret = -EINVAL;
			break;
		}
		mutex_lock(&pm_lock);
		p = pm_pool_find(a->pinfo.name);
		if (p)
			pm_pool_fill_info(p, &a->pinfo);
		mutex_unlock(&pm_lock);
		if (!p)
			ret = -ENOENT;
		else if (copy_to_user(uarg, &a->pinfo, sizeof(a->pinfo)))
			ret = -EFAULT;
		break;
	}

	case POOLMEM_DOMAIN_CREATE:
		ret = pm_copy_in_flags(&a->dcreate, sizeof(a->dcreate), uarg, POOLMEM_DOMAIN_FLAGS);
		if (!ret)
			ret = pm_domain_create(&a->dcreate);
		break;

	case POOLMEM_DOMAIN_INFO:
	case POOLMEM_MAP: {
		struct pm_domain *d;
		char *name = cmd == POOLMEM_MAP ? a->map.name : a->dinfo.name;
		size_t sz = cmd == POOLMEM_MAP ? sizeof(a->map) : sizeof(a->dinfo);
		u64 *reserved = cmd == POOLMEM_MAP ? a->map.reserved : a->dinfo.reserved;
		size_t rsz = cmd == POOLMEM_MAP ? sizeof(a->map.reserved) : sizeof(a->dinfo.reserved);

		ret = pm_copy_in(a, sz, uarg);
		if (ret)
			break;
		if (memchr_inv(reserved, 0, rsz) || !pm_name_valid(name) ||
		    (cmd == POOLMEM_DOMAIN_INFO && a->dinfo.reserved32)) {
			ret = -EINVAL;
			break;
		}
		mutex_lock(&pm_lock);
		d = pm_domain_find(name);
		if (!d)
			ret = -ENOENT;
		else if (cmd == POOLMEM_DOMAIN_INFO)
			pm_domain_fill_info(d, &a->dinfo);
		else
			ret = pm_domain_map(d, &a->map);
		mutex_unlock(&pm_lock);
		if (!ret && copy_to_user(uarg, a, sz))
			ret = -EFAULT;
		break;
	}

	case POOLMEM_MAP_REVERSE: {
		struct pm_domain *d;
		u64 offset;
		u32 pool;

		ret = pm_copy_in(&a->rev, sizeof(a->rev), uarg);
		if (ret)
			break;
		if (!PM_RESERVED_ZERO(&a->rev) || memchr_inv(a->rev.name, 0, sizeof(a->rev.name)) ||
		    a->rev.offset || a->rev.pool || a->rev.node) {
			ret = -EINVAL;
			break;
		}
		mutex_lock(&pm_lock);
		d = pm_rmap_lookup(PHYS_PFN(a->rev.phys), &offset, &pool);
		if (d) {
			memcpy(a->rev.name, d->name, POOLMEM_NAME_MAX);
			a->rev.offset = offset + offset_in_page(a->rev.phys);
			a->rev.pool = pool;
			a->rev.node = pool == POOLMEM_POOL_LOCAL ? d->home_node : pm_pools[pool]->node;
		}
		mutex_unlock(&pm_lock);
		if (!d)
			ret = -ENOENT;
		else if (copy_to_user(uarg, &a->rev, sizeof(a->rev)))
			ret = -EFAULT;
		break;
	}

	default:
		ret = -ENOTTY;
	}
	kfree(a);
	return ret;
}

static int pm_ctl_open(struct inode *inode, struct file *file)
{
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

static const struct file_operations pm_ctl_fops = {
	.owner = THIS_MODULE,
	.open = pm_ctl_open,
	.unlocked_ioctl = pm_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice pm_ctl_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "poolmem-control",
	.nodename = "poolmem/control",
	.mode = 0600,
	.fops = &pm_ctl_fops,
};

/*
 * Veto offlining memory that holds domain chunks: their pages can't be
 * migrated yet, and offline_pages() would retry until it times out.
 * Called by the memory hotplug core with the hotplug lock held.
 */
static int pm_memory_callback(struct notifier_block *nb, unsigned long action, void *arg)
{
	struct memory_notify *mn = arg;
	unsigned long index = mn->start_pfn;
	const char *owner;
	u64 offset = 0;
	void *entry;

	if (action != MEM_GOING_OFFLINE)
		return NOTIFY_OK;
	if (atomic_read(&pm_inflight)) {
		pr_info("memory offline of PFNs %#lx-%#lx refused: chunk allocations in flight\n",
			mn->start_pfn, mn->start_pfn + mn->nr_pages - 1);
		return notifier_from_errno(-EBUSY);
	}
	entry = mt_find(&pm_rmap, &index, mn->start_pfn + mn->nr_pages - 1);
	if (!entry)
		return NOTIFY_OK;

	/* mt_find() moved index past the entry: name the owner by the entry */
	mutex_lock(&pm_lock);
	owner = pm_rmap_entry_owner(entry, &offset);
	pr_info("memory offline of PFNs %#lx-%#lx refused: domain %s has chunks there (offset %#llx)\n",
		mn->start_pfn, mn->start_pfn + mn->nr_pages - 1, owner ? owner : "(being freed)", offset);
	mutex_unlock(&pm_lock);
	return notifier_from_errno(-EBUSY);
}

static struct notifier_block pm_memory_nb = {
	.notifier_call = pm_memory_callback,
	/* before kmem and others act on MEM_GOING_OFFLINE */
	.priority = 100,
};

static char *pm_devnode(struct device *dev, umode_t *mode)
{
	return kasprintf(GFP_KERNEL, "poolmem/%s", dev_name(dev));
}

static int __init pm_init(void)
{
	int ret;

	pm_mnt = kern_mount(&pm_fs_type);
	if (IS_ERR(pm_mnt))
		return PTR_ERR(pm_mnt);

	ret = alloc_chrdev_region(&pm_devt, 0, PM_MAX_DOMAINS, "poolmem");
	if (ret)
		goto out_unmount;

	pm_class = class_create(THIS_MODULE, "poolmem");
	if (IS_ERR(pm_class)) {
		ret = PTR_ERR(pm_class);
		goto out_unreg_chrdev;
	}
	pm_class->devnode = pm_devnode;

	ret = pm_pools_sysfs_init();
	if (ret)
		goto out_destroy_class;

	ret = register_memory_notifier(&pm_memory_nb);
	if (ret)
		goto out_pools_sysfs;

	ret = misc_register(&pm_ctl_dev);
	if (ret)
		goto out_unreg_notifier;

	pr_info("ABI %d ready: /dev/poolmem/control\n", POOLMEM_ABI_VERSION);
	return 0;

out_unreg_notifier:
	unregister_memory_notifier(&pm_memory_nb);
out_pools_sysfs:
	pm_pools_sysfs_exit();
out_destroy_class:
	class_destroy(pm_class);
out_unreg_chrdev:
	unregister_chrdev_region(pm_devt, PM_MAX_DOMAINS);
out_unmount:
	kern_unmount(pm_mnt);
	return ret;
}

/* Only reachable with no domains left: each one holds a module reference. */
static void __exit pm_exit(void)
{
	misc_deregister(&pm_ctl_dev);
	unregister_memory_notifier(&pm_memory_nb);
	pm_pools_remove_all();
	pm_pools_sysfs_exit();
	class_destroy(pm_class);
	unregister_chrdev_region(pm_devt, PM_MAX_DOMAINS);
	kern_unmount(pm_mnt);
	mtree_destroy(&pm_rmap);
}

module_init(pm_init);
module_exit(pm_exit);
MODULE_DESCRIPTION("Pooled memory (CXL, DAX, PMem) for VMs with per-tier quotas");
MODULE_LICENSE("GPL");
