// SPDX-License-Identifier: GPL-2.0
/*
 * Bindings of directories to come (POOLMEM_VM_BIND): libvirt's qemu hook
 * binds the per-VM directory libvirtd is about to make in a profile
 * directory to the VM's name and profile; the mkdir (fs.c) takes the
 * binding. A binding waits at most POOLMEM_BIND_TIMEOUT_S.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "poolmem.h"

/*
 * A binding waiting for its directory. pm_bind_lock protects pm_binds and
 * pm_nr_binds; it is taken by the ioctl with no lock held and by mkdir
 * under the parent directory's inode lock, and nothing is taken under it
 * (profile references are dropped after it is released).
 */
struct pm_bind {
	struct list_head list;
	char dir[POOLMEM_BIND_DIR_MAX];
	char vm[POOLMEM_NAME_MAX];
	struct pm_profile *pr;		/* a reference, or NULL: the parent's */
	unsigned long since;		/* jiffies */
};

static DEFINE_MUTEX(pm_bind_lock);
static LIST_HEAD(pm_binds);
static unsigned int pm_nr_binds;

/* The waiting binding for @dir, or NULL. Caller holds pm_bind_lock. */
static struct pm_bind *pm_bind_find(const char *dir, size_t len)
{
	struct pm_bind *b;

	list_for_each_entry(b, &pm_binds, list)
		if (strlen(b->dir) == len && !memcmp(b->dir, dir, len))
			return b;
	return NULL;
}

/*
 * Move the bindings that waited too long to @gone, for the caller to free
 * after it dropped pm_bind_lock (which it holds).
 */
static void pm_bind_expire(struct list_head *gone)
{
	struct pm_bind *b, *n;

	list_for_each_entry_safe(b, n, &pm_binds, list) {
		if (time_before(jiffies, b->since + POOLMEM_BIND_TIMEOUT_S * HZ))
			continue;
		pr_info("binding of directory %s to VM %s expired: no such directory made in %d s\n",
			b->dir, b->vm, POOLMEM_BIND_TIMEOUT_S);
		list_move(&b->list, gone);
		pm_nr_binds--;
	}
}

static void pm_bind_free_list(struct list_head *gone)
{
	struct pm_bind *b, *n;

	list_for_each_entry_safe(b, n, gone, list) {
		if (b->pr)
			pm_profile_put(b->pr);
		kfree(b);
	}
}

/*
 * mkdir of @dentry: if a binding waits for its name, hand its profile
 * reference (or NULL) and VM name to @pd and forget it. A binding whose
 * profile was removed since fails the mkdir (-ENOENT) rather than put
 * the VM in a profile it did not ask for.
 */
int pm_bind_take(struct dentry *dentry, struct pm_dir *pd)
{
	struct pm_bind *b;
	LIST_HEAD(gone);
	int ret = 0;

	/*
	 * The common case, no libvirt hook, without the lock. A binding made
	 * before this mkdir was asked for is seen: the hook binds, exits, and
	 * only then does libvirt, which waited for it, make the directory.
	 */
	if (list_empty_careful(&pm_binds))
		return 0;
	/*
	 * Only a privileged mkdir (libvirtd's) takes a binding: a tenant who
	 * may write in some profile directory must not claim another VM's
	 * binding, and with it a profile whose directory it can't write in,
	 * by making the predictable <id>-<vm> name first.
	 */
	if (!ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return 0;
	mutex_lock(&pm_bind_lock);
	pm_bind_expire(&gone);
	b = pm_bind_find(dentry->d_name.name, dentry->d_name.len);
	if (b) {
		list_move(&b->list, &gone);
		pm_nr_binds--;
		if (b->pr && list_empty_careful(&b->pr->list)) {
			pr_warn("directory %pd for VM %s: profile %s was removed after the VM was bound to it\n",
				dentry, b->vm, b->pr->conf.name);
			ret = -ENOENT;
		} else {
			pd->profile = b->pr;	/* the binding's reference */
			b->pr = NULL;
			strscpy(pd->vm, b->vm, sizeof(pd->vm));
			pr_debug("directory %pd: VM %s, profile %s\n", dentry, pd->vm,
				 pd->profile ? pd->profile->conf.name : "(its parent's)");
		}
	}
	mutex_unlock(&pm_bind_lock);
	pm_bind_free_list(&gone);
	return ret;
}

/*
 * /sys/kernel/poolmem/vm_bindings: the bindings still waiting, a line
 * each, "<vm> <profile, or - for the parent's> <seconds waited> <dir>"
 * (the directory last: libvirt's VM names may hold spaces), as many as fit
 * in the page. Root only: VM names are tenants' names.
 */
ssize_t pm_vm_bindings_show(char *buf)
{
	struct pm_bind *b;
	int len = 0;

	mutex_lock(&pm_bind_lock);
	list_for_each_entry(b, &pm_binds, list) {
		const char *pr = b->pr ? b->pr->conf.name : "-";
		unsigned long age = (jiffies - b->since) / HZ;

		if (len + snprintf(NULL, 0, "%s %s %lu %s\n", b->vm, pr, age, b->dir) >= PAGE_SIZE)
			break;
		len += sysfs_emit_at(buf, len, "%s %s %lu %s\n", b->vm, pr, age, b->dir);
	}
	mutex_unlock(&pm_bind_lock);
	return len;
}

/* POOLMEM_VM_BIND */
int pm_vm_bind(const struct poolmem_bind *a)
{
	size_t len = strnlen(a->dir, sizeof(a->dir));
	struct pm_profile *pr = NULL;
	struct pm_bind *b, *old, *n;
	LIST_HEAD(gone);
	int ret;

	if (a->flags & POOLMEM_BIND_REMOVE) {
		if (len || a->profile[0] || !pm_name_valid(a->vm, POOLMEM_NAME_MAX))
			return -EINVAL;
		mutex_lock(&pm_bind_lock);
		list_for_each_entry_safe(b, n, &pm_binds, list) {
			if (strcmp(b->vm, a->vm))
				continue;
			list_move(&b->list, &gone);
			pm_nr_binds--;
		}
		mutex_unlock(&pm_bind_lock);
		ret = list_empty(&gone) ? -ENOENT : 0;
		pm_bind_free_list(&gone);
		return ret;
	}
	if (len == 0 || len == sizeof(a->dir) || memchr(a->dir, '/', len) ||
	    !strcmp(a->dir, ".") || !strcmp(a->dir, ".."))
		return -EINVAL;
	if (!pm_name_valid(a->vm, POOLMEM_NAME_MAX) ||
	    (a->profile[0] && !pm_name_valid(a->profile, POOLMEM_NAME_MAX)))
		return -EINVAL;
	if (a->profile[0]) {
		mutex_lock(&pm_lock);
		pr = pm_profile_find(a->profile);
		if (pr)
			kref_get(&pr->ref);
		mutex_unlock(&pm_lock);
		if (!pr)
			return -ENOENT;
	}
	b = pm_should_fail(sizeof(*b)) ? NULL : kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b) {
		if (pr)
			pm_profile_put(pr);
		return -ENOMEM;
	}
	memcpy(b->dir, a->dir, len);
	strscpy(b->vm, a->vm, sizeof(b->vm));
	b->pr = pr;
	b->since = jiffies;

	mutex_lock(&pm_bind_lock);
	pm_bind_expire(&gone);
	old = pm_bind_find(a->dir, len);
	if (old) {
		list_move(&old->list, &gone);
		pm_nr_binds--;
	}
	ret = -ENOSPC;
	if (pm_nr_binds < POOLMEM_BINDS_MAX) {
		list_add_tail(&b->list, &pm_binds);
		pm_nr_binds++;
		ret = 0;
	}
	mutex_unlock(&pm_bind_lock);
	pm_bind_free_list(&gone);
	if (ret) {
		if (pr)
			pm_profile_put(pr);
		kfree(b);
		return ret;
	}
	pr_debug("directory %s: bound to VM %s, profile %s\n", b->dir, b->vm,
		 a->profile[0] ? a->profile : "(its parent's)");
	return 0;
}

/* Module exit, after the file system went: no mkdir can take one now. */
void pm_binds_exit(void)
{
	LIST_HEAD(gone);

	mutex_lock(&pm_bind_lock);
	list_splice_init(&pm_binds, &gone);
	pm_nr_binds = 0;
	mutex_unlock(&pm_bind_lock);
	pm_bind_free_list(&gone);
}
