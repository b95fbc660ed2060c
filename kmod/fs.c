// SPDX-License-Identifier: GPL-2.0
/*
 * The poolmem file system: every domain is a regular file, every profile a
 * directory, as hugetlbfs gives QEMU and libvirt files of special memory.
 *
 *   mount -t poolmem poolmem /run/poolmem
 *
 * There is one superblock, shared by every mount (get_tree_single). The
 * module holds an internal mount (simple_pin_fs) for as long as a named
 * domain or a profile exists, so the control device can create them with
 * nothing mounted, and mounting later shows them. The root holds named
 * domains (created and destroyed through /dev/poolmem/control, or destroyed
 * by unlink) and profile directories (POOLMEM_PROFILE_CREATE); nobody
 * creates files or directories in the root itself. In a profile directory
 * anyone with write permission may create files and subdirectories
 * (libvirt's memory_backing_dir makes per-VM ones); subdirectories carry
 * the same profile. A file there becomes a domain when ftruncate() gives it
 * a size (admission control runs then), and is the domain for the rest of
 * its life: the inode owns the domain, so the domain ends when the last
 * name, open file and mapping are gone.
 *
 * A directory may be bound before it exists (POOLMEM_VM_BIND, for libvirt):
 * it then gets the binding's profile instead of its parent's, and its
 * first domain the VM's name (see the uapi header).
 *
 * Locking: the VFS holds the directory's inode lock for create, mkdir,
 * unlink and rmdir, and the file's inode lock for setattr (ftruncate);
 * the control device takes the root's inode lock the same way. pm_lock
 * nests inside both, and so does pm_bind_lock (bind.c), which is never held
 * together with pm_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fsnotify.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/statfs.h>

#include "poolmem.h"

static struct file_system_type pm_fs_type;
/* The internal mount and its pin count (simple_pin_fs); pin_fs_lock inside. */
static struct vfsmount *pm_mnt;
static int pm_mnt_count;

static const struct inode_operations pm_root_iops;
static const struct inode_operations pm_dir_iops;
static const struct super_operations pm_sops;

/* ---- profiles ---- */

/*
 * What is wrong with profile @c, or NULL; fills in the default mode. Like
 * pm_domain_check(), the reason goes to the log, so that an operator who
 * got EINVAL from a tool that checked less than poolctl can find it.
 */
static const char *pm_profile_check(struct poolmem_profile *c)
{
	enum pm_profile_geometry geo;

	if (!pm_name_valid(c->name, POOLMEM_NAME_MAX))
		return "invalid name";
	/* the chunk size and quotas: kmod/policy's rules, which poolctl checks too */
	geo = pm_profile_geometry(c->chunk_bytes, c->quota_pct, c->quota_bytes,
				  !!(c->flags & POOLMEM_DOMAIN_ZNUMA), NULL);
	if (geo != PM_PGEO_OK)
		return pm_profile_geometry_names[geo];
	if (c->tier_policy >= POOLMEM_NR_TIER_POLICIES)
		return "unknown tier policy";
	if (c->pool_select >= POOLMEM_NR_POOL_SELECTS)
		return "unknown pool selection";
	if (c->home_node != NUMA_NO_NODE &&
	    (c->home_node < 0 || c->home_node >= MAX_NUMNODES || !node_online(c->home_node) ||
	     !node_state(c->home_node, N_MEMORY)))
		return "home node offline or without memory";
	if (c->mode == 0)
		c->mode = 0700;
	if (c->mode & ~0777)
		return "mode has bits beyond 0777";
	return NULL;
}

/* ---- inodes ---- */

static struct inode *pm_new_inode(struct super_block *sb, umode_t mode)
{
	struct inode *inode = pm_should_fail(sizeof(*inode)) ? NULL : new_inode(sb);

	if (!inode)
		return NULL;
	inode->i_ino = get_next_ino();
	inode->i_mode = mode;
	pm_inode_init_times(inode);
	if (S_ISDIR(mode)) {
		inode->i_op = &pm_dir_iops;
		inode->i_fop = &simple_dir_operations;
		inc_nlink(inode);	/* "." besides the name: 2 */
	} else {
		inode->i_op = &pm_domain_iops;
		inode->i_fop = &pm_domain_fops;
	}
	return inode;
}

/* A regular file's inode with its pm_file, or NULL; @vm from its directory's binding. */
static struct inode *pm_new_file(struct super_block *sb, umode_t mode, struct pm_profile *pr,
				 const char *vm)
{
	struct pm_file *pf = pm_should_fail(sizeof(*pf)) ? NULL : kzalloc(sizeof(*pf), GFP_KERNEL);
	struct inode *inode;

	if (!pf)
		return NULL;
	inode = pm_new_inode(sb, S_IFREG | (mode & 0777));
	if (!inode) {
		kfree(pf);
		return NULL;
	}
	if (pr) {
		kref_get(&pr->ref);
		pf->profile = pr;
	}
	if (vm)
		strscpy(pf->vm, vm, sizeof(pf->vm));
	inode->i_private = pf;
	return inode;
}

static void pm_dir_touch(struct inode *dir)
{
	pm_inode_touch(dir);
}

/* ---- zNUMA windows ---- */

const char *const pm_window_suffix[PM_NR_WIN] = { "", ".local", ".pool" };

/*
 * Look up window @w of named domain @name in @parent, locked by the
 * caller (at creation). Returns a dentry reference or an ERR_PTR.
 */
static struct dentry *pm_window_lookup(struct dentry *parent, const char *name, enum pm_window w)
{
	char buf[POOLMEM_NAME_MAX + 8];

	snprintf(buf, sizeof(buf), "%s%s", name, pm_window_suffix[w]);
	return lookup_one_len(buf, parent, strlen(buf));
}

/*
 * Remove the window names of a znuma domain whose own name is being
 * unlinked (@dir locked, and the inode too: it is the victim's). Windows
 * never outlive the name: nobody can open a window of a destroyed domain.
 */
static void pm_windows_unlink(struct inode *dir, struct pm_file *pf)
{
	enum pm_window w;

	for (w = PM_WIN_LOCAL; w < PM_NR_WIN; w++) {
		struct dentry *wd = pf->win[w];

		if (!wd)
			continue;
		pf->win[w] = NULL;
		dget(wd);
		simple_unlink(dir, wd);		/* drops the name's reference */
		d_delete_notify(dir, wd);
		dput(wd);
	}
}

/* Something is mounted on a window name: it would be left unreachable. */
static bool pm_windows_busy(const struct pm_file *pf)
{
	enum pm_window w;

	for (w = PM_WIN_LOCAL; w < PM_NR_WIN; w++)
		if (pf->win[w] && d_mountpoint(pf->win[w]))
			return true;
	return false;
}

/* ---- directory operations ---- */

/*
 * The local window in directory @parent that waits for a pool window from
 * the calling process, with a reference, or NULL. The caller holds the
 * directory's inode lock, so no name in it comes or goes; the children
 * list itself is walked under d_lock, as dcache pruning edits it.
 */
static struct inode *pm_znuma_partner(struct dentry *parent)
{
	struct pid *me = task_tgid(current);
	struct inode *found = NULL;
	struct dentry *child;

	spin_lock(&parent->d_lock);
	pm_for_each_child(child, parent) {
		struct inode *inode = d_inode(child);
		struct pm_file *pf;

		if (!inode || !d_is_reg(child) || d_unhashed(child))
			continue;
		pf = inode->i_private;
		/* pf->partner is written before pf->d is published */
		if (!smp_load_acquire(&pf->d) || READ_ONCE(pf->partner) != me ||
		    pm_dentry_window(child) != PM_WIN_LOCAL)
			continue;
		ihold(inode);	/* a positive name holds it: not being evicted */
		found = inode;
		break;
	}
	spin_unlock(&parent->d_lock);
	return found;
}

/*
 * A file in a profile directory: a domain once ftruncate() sizes it. In
 * a znuma profile, a file created by the process whose local window in
 * this directory still waits for its pool window is that pool window
 * instead: a second link to the domain's inode (so one address space, as
 * for a named domain's windows), sized at once. QEMU then finds the
 * window's size already set and maps it without ftruncate(); a guest
 * node of another size makes QEMU stop with "backing store size ... does
 * not match".
 */
static int pm_create(pm_idmap_t *idmap, struct inode *dir, struct dentry *dentry,
		     umode_t mode, bool excl)
{
	struct pm_dir *pd = dir->i_private;
	struct pm_profile *pr = pd->profile;
	struct inode *inode;

	if (pr->conf.flags & POOLMEM_DOMAIN_ZNUMA) {
		inode = pm_znuma_partner(dentry->d_parent);
		if (inode) {
			struct pm_file *pf = inode->i_private;
			struct pid *partner = pf->partner;
			int ret;

			/*
			 * The VFS checks no permission on a file ->create made
			 * (FMODE_CREATED): this is a link, and the caller must
			 * still be allowed the local window as it is now (a
			 * chmod or chown since the ftruncate counts).
			 */
			ret = inode_permission(idmap, inode, MAY_READ | MAY_WRITE);
			if (ret) {
				iput(inode);
				return ret;
			}
			WRITE_ONCE(pf->partner, NULL);
			put_pid(partner);
			dentry->d_fsdata = (void *)(unsigned long)PM_WIN_POOL;
			inc_nlink(inode);
			pm_inode_touch_ctime(inode);
			d_instantiate(dentry, inode);	/* takes the partner's reference */
			dget(dentry);
			pm_dir_touch(dir);
			pr_debug("%s: pool window %pd\n", pf->d->name, dentry);
			return 0;
		}
	}
	inode = pm_new_file(dir->i_sb, mode, pr, pd->vm);
	if (!inode)
		return -ENOMEM;
	/* a negative dentry a lookup kept alive keeps its old tag */
	dentry->d_fsdata = NULL;
	inode_init_owner(idmap, inode, dir, S_IFREG | (mode & 0777));
	d_instantiate(dentry, inode);
	dget(dentry);	/* the name keeps it, as in ramfs */
	pm_dir_touch(dir);
	return 0;
}

/*
 * A subdirectory of a profile directory carries the same profile, unless a
 * binding waits for its name: then the binding's profile and VM.
 */
static int pm_mkdir(pm_idmap_t *idmap, struct inode *dir, struct dentry *dentry,
		    umode_t mode)
{
	struct pm_dir *parent = dir->i_private;
	struct pm_dir *pd = pm_should_fail(sizeof(*pd)) ? NULL : kzalloc(sizeof(*pd), GFP_KERNEL);
	struct inode *inode;
	int ret;

	if (!pd)
		return -ENOMEM;
	ret = pm_bind_take(dentry, pd);
	if (ret) {
		kfree(pd);
		return ret;
	}
	inode = pm_new_inode(dir->i_sb, S_IFDIR | (mode & 0777));
	if (!inode) {
		if (pd->profile)
			pm_profile_put(pd->profile);
		kfree(pd);
		return -ENOMEM;
	}
	if (!pd->profile) {
		kref_get(&parent->profile->ref);
		pd->profile = parent->profile;
	}
	inode_init_owner(idmap, inode, dir, S_IFDIR | (mode & 0777));
	inode->i_private = pd;
	inc_nlink(dir);		/* its ".." */
	d_instantiate(dentry, inode);
	dget(dentry);
	pm_dir_touch(dir);
	return 0;
}

/*
 * Unlinking a named domain destroys it (its name is free at once; the
 * memory goes when the last open file and mapping do) and drops its pin
 * of the internal mount. That may be the last pin, but never the last
 * active reference to the superblock: whoever unlinks holds a mount (a
 * user mount, or the control device's own pin until after it unlocks),
 * so nothing is torn down under the directory lock held here.
 */
static int pm_unlink(struct inode *dir, struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct pm_file *pf = inode->i_private;
	struct pm_domain *d = pf->d;	/* stable: we hold the parent's lock, setattr can't
					 * run on a named domain's size anyway */
	bool named = !pf->profile;

	/*
	 * A named domain's window goes with its domain's name, never alone. A
	 * profile's windows are its only names: each goes as any link does,
	 * and the domain when the inode does.
	 */
	if (named && pm_dentry_window(dentry) != PM_WIN_WHOLE)
		return -EPERM;
	if (pm_windows_busy(pf))
		return -EBUSY;	/* as vfs_unlink() for the name itself */
	pm_windows_unlink(dir, pf);
	if (named && d)
		pm_domain_unlink(d);
	simple_unlink(dir, dentry);
	if (named)
		simple_release_fs(&pm_mnt, &pm_mnt_count);
	return 0;
}

/* Removing a profile's own directory removes the profile (it must be empty). */
static int pm_rmdir(struct inode *dir, struct dentry *dentry)
{
	struct pm_dir *pd = d_inode(dentry)->i_private;
	struct pm_profile *pr = pd->profile;
	bool top = dentry->d_parent == dir->i_sb->s_root;

	if (!simple_empty(dentry))
		return -ENOTEMPTY;
	if (top) {
		mutex_lock(&pm_lock);
		list_del_init(&pr->list);
		/* its counts' directory stays while domains made from it live */
		pm_profile_sysfs_drop(pr);
		mutex_unlock(&pm_lock);
		pr_info("profile %s: removed\n", pr->conf.name);
	}
	simple_rmdir(dir, dentry);
	if (top)
		simple_release_fs(&pm_mnt, &pm_mnt_count);
	return 0;
}

/* The root: named domains and profiles, made only through the control device. */
static const struct inode_operations pm_root_iops = {
	.lookup = simple_lookup,
	.unlink = pm_unlink,
	.rmdir = pm_rmdir,
};

static const struct inode_operations pm_dir_iops = {
	.lookup = simple_lookup,
	.create = pm_create,
	.mkdir = pm_mkdir,
	.unlink = pm_unlink,
	.rmdir = pm_rmdir,
};

/* ---- regular files: size and attributes ---- */

/* Is @name free for a new domain (pm_domain_new() takes the final decision)? */
static bool pm_domain_name_free(const char *name)
{
	bool free;

	mutex_lock(&pm_lock);
	free = !pm_domain_find(name) && !pm_profile_find(name);
	mutex_unlock(&pm_lock);
	return free;
}

/*
 * The name of the domain a profile file @dentry becomes: "<profile>.<inode>"
 * (unique while the inode lives, and valid). In a directory bound to a VM:
 * the VM's name for its first domain, so that series join with libvirt's
 * and survive a restart; "<vm>.<file>" for more (a guest NUMA node each),
 * when it is a valid name, else "<vm>.<inode>". A name taken meanwhile is
 * -EEXIST from pm_domain_new().
 */
static void pm_file_domain_name(struct pm_domain_spec *a, const struct pm_file *pf,
				const struct pm_profile *pr, const struct dentry *dentry,
				const struct inode *inode)
{
	const char *base = pf->vm[0] ? pf->vm : pr->conf.name;
	char ino[24];
	int len;

	if (pf->vm[0]) {
		if (pm_domain_name_free(pf->vm)) {
			strscpy(a->name, pf->vm, sizeof(a->name));
			return;
		}
		if (strlen(pf->vm) + 1 + dentry->d_name.len < sizeof(a->name)) {
			snprintf(a->name, sizeof(a->name), "%s.%s", pf->vm, dentry->d_name.name);
			if (pm_name_valid(a->name, sizeof(a->name)) && pm_domain_name_free(a->name))
				return;
		}
	}
	len = snprintf(ino, sizeof(ino), ".%lu", inode->i_ino);
	snprintf(a->name, sizeof(a->name), "%.*s%s",
		 (int)min_t(size_t, strlen(base), POOLMEM_NAME_MAX - 1 - len), base, ino);
}

/*
 * ftruncate() of a profile file that has no domain yet: admission, then
 * the domain. Caller holds the inode lock. Refusals are logged with the
 * figures by admission control and return -ENOSPC.
 */
static int pm_file_make_domain(struct dentry *dentry, struct inode *inode, struct pm_file *pf,
			       loff_t size)
{
	struct pm_domain_spec a;
	struct pm_profile *pr = pf->profile;
	char *buf, *path, *why;
	struct pm_domain *d;
	int ret;

	if (!pr)
		return -EINVAL;	/* named domains are born sized */
	/*
	 * A directory bound to another profile (POOLMEM_VM_BIND) may outlive
	 * that profile's own directory: no new domain of a removed profile.
	 */
	if (list_empty_careful(&pr->list)) {
		pr_warn_ratelimited("%pd: profile %s was removed: no new domain of it\n", dentry, pr->conf.name);
		return -ENOENT;
	}
	buf = pm_should_fail(PATH_MAX) ? NULL : kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	path = dentry_path_raw(dentry, buf, PATH_MAX);
	if (IS_ERR(path))
		path = (char *)dentry->d_name.name;
	why = kasprintf(GFP_KERNEL, "profile %s: file %s", pr->conf.name, path);
	if (!why) {
		kfree(buf);
		return -ENOMEM;
	}

	/* windows are names of one inode: one that has none can't get a second */
	if ((pr->conf.flags & POOLMEM_DOMAIN_ZNUMA) && !inode->i_nlink) {
		pr_warn("%s: a znuma profile's windows must be named files (this one is unlinked)\n",
			why);
		ret = -EINVAL;
		goto out;
	}
	ret = pm_profile_fill_create(pr, size, &a, why);
	if (ret)
		goto out;
	pm_file_domain_name(&a, pf, pr, dentry, inode);
	if (size & (a.chunk_bytes - 1)) {
		pr_warn("%s: size %lld is not a multiple of the chunk size %llu\n", why, size,
			a.chunk_bytes);
		ret = -EINVAL;
		goto out;
	}
	d = pm_domain_new(&a, pr, why, NULL);
	if (IS_ERR(d)) {
		ret = PTR_ERR(d);
		goto out;
	}
	ret = pm_domain_register(d, inode, path);
	if (ret) {
		pm_domain_abandon(d);
		goto out;
	}
	i_size_write(inode, d->size);
	if (d->znuma) {
		pf->partner = get_pid(task_tgid(current));
		/*
		 * The file is the local window from now on (its size, its
		 * offsets, pm_mmap()): a window of base 0, so a file opened
		 * before needs no inner file (pm_open_window()). Tagged before
		 * the domain is published: whoever sees the domain (acquire)
		 * sees the window too, and never maps the whole domain through
		 * this name. The tag alone, without a domain, changes nothing.
		 */
		WRITE_ONCE(dentry->d_fsdata, (void *)(unsigned long)PM_WIN_LOCAL);
	}
	smp_store_release(&pf->d, d);
out:
	kfree(why);
	kfree(buf);
	return ret;
}

static int pm_file_setattr(pm_idmap_t *idmap, struct dentry *dentry,
			   struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	struct pm_file *pf = inode->i_private;
	int ret;

	ret = setattr_prepare(idmap, dentry, attr);
	if (ret)
		return ret;
	if (attr->ia_valid & ATTR_SIZE && pf->d && pm_dentry_window(dentry) != PM_WIN_WHOLE) {
		u64 base, size;

		/* a window's size is its own, and fixed as the domain's */
		pm_domain_window(pf->d, pm_dentry_window(dentry), &base, &size);
		if (attr->ia_size != size)
			return -EBUSY;
		attr->ia_valid &= ~ATTR_SIZE;
	} else if (attr->ia_valid & ATTR_SIZE && attr->ia_size != i_size_read(inode)) {
		/* a domain's size is fixed: QEMU sizes only empty files */
		if (pf->d)
			return -EBUSY;
		if (attr->ia_size) {
			ret = pm_file_make_domain(dentry, inode, pf, attr->ia_size);
			if (ret)
				return ret;
		}
	}
	setattr_copy(idmap, inode, attr);
	return 0;
}

/* st_blocks counts the bytes the domain holds, so du(1) shows its memory. */
static int pm_file_getattr(pm_idmap_t *idmap, const struct path *path,
			   struct kstat *stat, u32 request_mask, unsigned int flags)
{
	struct inode *inode = d_inode(path->dentry);
	struct pm_file *pf = inode->i_private;
	struct pm_domain *d = smp_load_acquire(&pf->d);

	enum pm_window w = pm_dentry_window(path->dentry);
	u64 base, size;

	pm_generic_fillattr(idmap, request_mask, inode, stat);
	stat->blksize = PM_UNIT_BYTES;
	if (d && w != PM_WIN_WHOLE) {
		/* a window: its size, and what its tier holds */
		pm_domain_window(d, w, &base, &size);
		stat->size = size;
		stat->blocks = READ_ONCE(d->usage[w == PM_WIN_LOCAL ? PM_TIER_LOCAL : PM_TIER_POOL]) >> 9;
		return 0;
	}
	stat->blocks = d ? (READ_ONCE(d->usage[PM_TIER_LOCAL]) +
			    READ_ONCE(d->usage[PM_TIER_POOL])) >> 9 : 0;
	return 0;
}

const struct inode_operations pm_domain_iops = {
	.setattr = pm_file_setattr,
	.getattr = pm_file_getattr,
};

/* ---- superblock ---- */

/*
 * Capacity and free memory of the pools a domain created here may use:
 * a profile's allowed pools (all when it names none), or every pool.
 */
static int pm_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct inode *inode = d_inode(dentry);
	struct pm_profile *pr = NULL;
	u64 mask = ~0ULL, cap = 0, free = 0;
	int i;

	simple_statfs(dentry, buf);
	buf->f_type = POOLMEM_FS_MAGIC;
	buf->f_bsize = PM_UNIT_BYTES;
	buf->f_frsize = PM_UNIT_BYTES;
	if (S_ISDIR(inode->i_mode) && dentry != dentry->d_sb->s_root)
		pr = ((struct pm_dir *)inode->i_private)->profile;
	else if (S_ISREG(inode->i_mode))
		pr = ((struct pm_file *)inode->i_private)->profile;
	if (pr && pr->conf.pool_mask)
		mask = pr->conf.pool_mask;
	mutex_lock(&pm_lock);
	for (i = 0; i < POOLMEM_MAX_POOLS; i++) {
		if (!pm_pools[i] || !(mask & BIT_ULL(i)))
			continue;
		cap += pm_node_present_bytes(pm_pools[i]->node);
		free += pm_node_free_bytes(pm_pools[i]->node);
	}
	mutex_unlock(&pm_lock);
	buf->f_blocks = cap >> PM_UNIT_SHIFT;
	buf->f_bfree = buf->f_bavail = free >> PM_UNIT_SHIFT;
	return 0;
}

/*
 * The last name, open file and mapping of an inode are gone: a domain's
 * file drops its domain (memory returned), a directory its profile.
 */
static void pm_evict_inode(struct inode *inode)
{
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (S_ISREG(inode->i_mode) && inode->i_private) {
		struct pm_file *pf = inode->i_private;

		if (pf->d) {
			pm_tier_stop(pf->d);	/* its work uses the inode */
			pm_domain_evict(pf->d);
		}
		put_pid(pf->partner);	/* NULL-safe */
		if (pf->profile)
			pm_profile_put(pf->profile);
		kfree(pf);
	} else if (S_ISDIR(inode->i_mode) && inode->i_private) {
		struct pm_dir *pd = inode->i_private;

		pm_profile_put(pd->profile);
		kfree(pd);
	}
}

static const struct super_operations pm_sops = {
	.statfs = pm_statfs,
	.evict_inode = pm_evict_inode,
	.drop_inode = generic_delete_inode,
};

static int pm_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct inode *root;

	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = POOLMEM_FS_MAGIC;
	sb->s_op = &pm_sops;
	sb->s_d_op = &simple_dentry_operations;
	sb->s_time_gran = 1;
	sb->s_maxbytes = PM_DOMAIN_MAX_BYTES;

	root = pm_new_inode(sb, S_IFDIR | 0755);
	if (!root)
		return -ENOMEM;
	root->i_op = &pm_root_iops;
	sb->s_root = d_make_root(root);
	return sb->s_root ? 0 : -ENOMEM;
}

static int pm_get_tree(struct fs_context *fc)
{
	return get_tree_single(fc, pm_fill_super);
}

static const struct fs_context_operations pm_fs_context_ops = {
	.get_tree = pm_get_tree,
};

static int pm_init_fs_context(struct fs_context *fc)
{
	fc->ops = &pm_fs_context_ops;
	return 0;
}

static struct file_system_type pm_fs_type = {
	.owner = THIS_MODULE,
	.name = "poolmem",
	.init_fs_context = pm_init_fs_context,
	.kill_sb = kill_litter_super,
};
MODULE_ALIAS_FS("poolmem");

/* ---- objects the control device makes in the root ---- */

/*
 * Pin the internal mount and lock the root; look up @name in it. Returns
 * the dentry (a reference) with the root locked and the mount pinned, or
 * an ERR_PTR with neither.
 */
static struct dentry *pm_root_lookup(const char *name)
{
	struct dentry *root, *dentry;
	int ret;

	ret = simple_pin_fs(&pm_fs_type, &pm_mnt, &pm_mnt_count);
	if (ret)
		return ERR_PTR(ret);
	root = pm_mnt->mnt_root;
	/* the parent's class, as do_unlinkat(): vfs_unlink/vfs_rmdir lock the victim */
	inode_lock_nested(d_inode(root), I_MUTEX_PARENT);
	dentry = lookup_one_len(name, root, strlen(name));
	if (IS_ERR(dentry)) {
		inode_unlock(d_inode(root));
		simple_release_fs(&pm_mnt, &pm_mnt_count);
	}
	return dentry;
}

/* Undo pm_root_lookup(): drop the dentry, unlock, unpin (maybe the last pin). */
static void pm_root_done(struct dentry *dentry)
{
	struct inode *root = d_inode(dentry->d_parent);

	dput(dentry);
	inode_unlock(root);
	simple_release_fs(&pm_mnt, &pm_mnt_count);
}

/*
 * The file <mount>/<name> of new named domain @d (from pm_domain_new(),
 * whose reference the file takes over), owned by @uid:@gid with @mode.
 * The file pins the internal mount until it is unlinked.
 */
int pm_fs_create_domain(struct pm_domain *d, umode_t mode, kuid_t uid, kgid_t gid)
{
	struct dentry *dentry = pm_root_lookup(d->name);
	struct dentry *win[PM_NR_WIN] = {};
	struct inode *inode;
	struct pm_file *pf;
	enum pm_window w;
	int ret;

	if (IS_ERR(dentry))
		return PTR_ERR(dentry);
	ret = -EEXIST;
	if (d_really_is_positive(dentry))
		goto out;
	/* a znuma domain's window names must be free too */
	for (w = PM_WIN_LOCAL; d->znuma && w < PM_NR_WIN; w++) {
		win[w] = pm_window_lookup(dentry->d_parent, d->name, w);
		if (IS_ERR(win[w])) {
			ret = PTR_ERR(win[w]);
			win[w] = NULL;
			goto out;
		}
		ret = -EEXIST;
		if (d_really_is_positive(win[w]))
			goto out;
	}
	ret = -ENOMEM;
	inode = pm_new_file(dentry->d_sb, mode, NULL, NULL);
	if (!inode)
		goto out;
	inode->i_uid = uid;
	inode->i_gid = gid;
	inode->i_size = d->size;
	/* the file's pin; the lookup's dentry reference stays with the name */
	ret = simple_pin_fs(&pm_fs_type, &pm_mnt, &pm_mnt_count);
	if (WARN_ON_ONCE(ret)) {	/* can't fail: we hold a pin */
		iput(inode);
		goto out;
	}
	ret = pm_domain_register(d, inode, NULL);
	if (ret) {
		/* out of sight before the inode goes: d->inode must not dangle */
		pm_domain_unpublish(d);
		iput(inode);
		simple_release_fs(&pm_mnt, &pm_mnt_count);
		goto out;
	}
	pf = inode->i_private;
	smp_store_release(&pf->d, d);
	dentry->d_fsdata = NULL;	/* a reused negative dentry's old tag */
	d_instantiate(dentry, inode);
	dget(dentry);	/* the name's reference; pm_root_done() drops the lookup's */
	/*
	 * The windows after the main name (lookups don't take the directory
	 * lock, and opening a window needs the main name): more names of the
	 * inode, as link(2) makes them.
	 */
	for (w = PM_WIN_LOCAL; d->znuma && w < PM_NR_WIN; w++) {
		win[w]->d_fsdata = (void *)(unsigned long)w;
		inc_nlink(inode);
		ihold(inode);
		d_instantiate(win[w], inode);
		pf->win[w] = dget(win[w]);	/* the name's reference */
	}
	pm_dir_touch(d_inode(dentry->d_parent));
out:
	for (w = PM_WIN_LOCAL; w < PM_NR_WIN; w++)
		dput(win[w]);	/* NULL-safe */
	pm_root_done(dentry);
	return ret;
}

/* POOLMEM_DOMAIN_DESTROY (@dir false) and POOLMEM_PROFILE_REMOVE (@dir true). */
int pm_fs_remove(const char *name, bool dir)
{
	struct dentry *dentry = pm_root_lookup(name);
	struct inode *root, *inode;
	int ret;

	if (IS_ERR(dentry))
		return PTR_ERR(dentry);
	root = d_inode(dentry->d_parent);
	inode = d_inode(dentry);
	ret = -ENOENT;
	if (!inode || S_ISDIR(inode->i_mode) != dir)
		goto out;
	/* the VFS's own protocol: victim locked, S_DEAD, dcache and fsnotify */
	ret = dir ? vfs_rmdir(PM_NOP_IDMAP, root, dentry) :
		    vfs_unlink(PM_NOP_IDMAP, root, dentry, NULL);
out:
	pm_root_done(dentry);
	return ret;
}

/* POOLMEM_PROFILE_CREATE: the directory <mount>/<name>, pinning the mount. */
int pm_profile_create(const struct poolmem_profile *conf)
{
	struct poolmem_profile c = *conf;
	struct pm_profile *pr;
	struct pm_dir *pd;
	struct dentry *dentry;
	struct inode *inode;
	const char *bad;
	kuid_t uid;
	kgid_t gid;
	int ret, i;

	bad = pm_profile_check(&c);
	if (bad) {
		pr_info_ratelimited("POOLMEM_PROFILE_CREATE: profile %.*s refused: %s\n",
				    (int)strnlen(c.name, POOLMEM_NAME_MAX), c.name, bad);
		return -EINVAL;
	}
	uid = make_kuid(current_user_ns(), c.uid);
	gid = make_kgid(current_user_ns(), c.gid);
	if (!uid_valid(uid) || !gid_valid(gid)) {
		pr_info_ratelimited("POOLMEM_PROFILE_CREATE: profile %s refused: owner not mapped in the caller's user namespace\n",
				    c.name);
		return -EINVAL;
	}
	c.uid = __kuid_val(uid);
	c.gid = __kgid_val(gid);

	pd = pm_should_fail(sizeof(*pd)) ? NULL : kzalloc(sizeof(*pd), GFP_KERNEL);
	if (!pd)
		return -ENOMEM;
	pr = pm_should_fail(sizeof(*pr)) ? NULL : kzalloc(sizeof(*pr), GFP_KERNEL);
	if (!pr) {
		kfree(pd);
		return -ENOMEM;
	}
	pd->profile = pr;
	kref_init(&pr->ref);	/* the directory's */
	INIT_LIST_HEAD(&pr->list);
	atomic64_set(&pr->domains, 0);
	pr->conf = c;

	dentry = pm_root_lookup(c.name);
	if (IS_ERR(dentry)) {
		kfree(pr);
		kfree(pd);
		return PTR_ERR(dentry);
	}
	mutex_lock(&pm_lock);
	ret = -EEXIST;
	if (d_really_is_positive(dentry) || pm_domain_find(c.name))
		goto out_unlock;
	ret = -EINVAL;
	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (c.pool_mask & BIT_ULL(i) && !pm_pools[i])
			goto out_unlock;
	/* its name's counts: an earlier profile's, while its domains live */
	ret = pm_profile_sysfs_add(pr);
	if (ret)
		goto out_unlock;
	ret = -ENOMEM;
	inode = pm_new_inode(dentry->d_sb, S_IFDIR | c.mode);
	if (!inode)
		goto out_unlock;
	ret = simple_pin_fs(&pm_fs_type, &pm_mnt, &pm_mnt_count);
	if (WARN_ON_ONCE(ret)) {
		iput(inode);
		goto out_unlock;
	}
	inode->i_uid = uid;
	inode->i_gid = gid;
	inode->i_private = pd;	/* the inode owns it now */
	pd = NULL;
	inc_nlink(d_inode(dentry->d_parent));
	d_instantiate(dentry, inode);
	dget(dentry);	/* the name's reference */
	pm_dir_touch(d_inode(dentry->d_parent));
	list_add_tail(&pr->list, &pm_profiles);
	mutex_unlock(&pm_lock);
	pm_root_done(dentry);
	pr_info("profile %s: local %u%%/%llu MiB, pool %u%%/%llu MiB, %s, %s\n", c.name,
		c.quota_pct[PM_TIER_LOCAL], c.quota_bytes[PM_TIER_LOCAL] >> 20,
		c.quota_pct[PM_TIER_POOL], c.quota_bytes[PM_TIER_POOL] >> 20,
		pm_tier_policy_names[c.tier_policy], pm_pool_select_names[c.pool_select]);
	return 0;

out_unlock:
	if (pr->pk)
		pm_profile_sysfs_drop(pr);
	mutex_unlock(&pm_lock);
	pm_root_done(dentry);
	pm_profile_put(pr);
	kfree(pd);
	return ret;
}

int pm_fs_init(void)
{
	return register_filesystem(&pm_fs_type);
}

/* Module exit: nothing is mounted or pinned (each would hold the module). */
void pm_fs_exit(void)
{
	unregister_filesystem(&pm_fs_type);
	pm_binds_exit();
}
