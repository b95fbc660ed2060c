// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem control device: /dev/poolmem/control, root only. One handler per
 * ioctl in a table; the common part (size and flags header, copy in, copy
 * out) is done once, in pm_ctl_ioctl().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "poolmem.h"

#define PM_RESERVED_ZERO(arg) (!memchr_inv((arg)->reserved, 0, sizeof((arg)->reserved)))

/* Every argument struct a handler may get, for one allocation. */
union pm_ctl_arg {
	struct poolmem_version ver;
	struct poolmem_pool_add padd;
	struct poolmem_name_arg name;
	struct poolmem_pool_info pinfo;
	struct poolmem_list list;
	struct poolmem_domain_create dcreate;
	struct poolmem_domain_info dinfo;
	struct poolmem_map map;
	struct poolmem_map_reverse rev;
	struct poolmem_profile profile;
	struct poolmem_pool_drain drain;
	struct poolmem_domain_set dset;
	struct poolmem_memory_errors errs;
	struct poolmem_page_offline poff;
	struct poolmem_bind bind;
};

/*
 * One ioctl: @size is sizeof its struct, @flags the flags it accepts,
 * @out whether the struct is copied back on success, @out_err whether on
 * failure too (its figures explain the failure). Handlers run in process
 * context with no lock held.
 */
struct pm_ctl_cmd {
	unsigned int cmd;
	size_t size;
	u32 flags;
	bool out;
	long (*fn)(unsigned int cmd, union pm_ctl_arg *a);
	bool out_err;
};

static long pm_ctl_version(unsigned int cmd, union pm_ctl_arg *a)
{
	if (a->ver.reserved || a->ver.abi)
		return -EINVAL;
	a->ver.abi = POOLMEM_ABI_VERSION;
	return 0;
}

static long pm_ctl_pool_add(unsigned int cmd, union pm_ctl_arg *a)
{
	if (!PM_RESERVED_ZERO(&a->padd) || a->padd.id)
		return -EINVAL;
	return pm_pool_add(&a->padd);
}

static long pm_ctl_remove(unsigned int cmd, union pm_ctl_arg *a)
{
	if (!PM_RESERVED_ZERO(&a->name) || !pm_name_valid(a->name.name, POOLMEM_NAME_MAX))
		return -EINVAL;
	switch (cmd) {
	case POOLMEM_POOL_REMOVE:
		return pm_pool_remove(a->name.name);
	case POOLMEM_DOMAIN_DESTROY:
		return pm_fs_remove(a->name.name, false);
	default:
		return pm_fs_remove(a->name.name, true);
	}
}

/*
 * POOLMEM_*_LIST: the names are gathered into a kernel buffer under
 * pm_lock and copied out after it is dropped (the user buffer may be
 * domain memory, whose fault must not wait for pm_lock holders that wait
 * for it in turn, and copy_to_user may sleep for long).
 */
static long pm_ctl_list(unsigned int cmd, union pm_ctl_arg *a)
{
	struct poolmem_list *l = &a->list;
	char __user *names = u64_to_user_ptr(l->names);
	struct pm_profile *pr;
	struct pm_domain *d;
	char *buf = NULL;
	u32 n = 0, max;
	int i, ret = 0;

	if (!PM_RESERVED_ZERO(l) || l->total)
		return -EINVAL;
	mutex_lock(&pm_lock);
	if (cmd == POOLMEM_POOL_LIST) {
		for (i = 0; i < POOLMEM_MAX_POOLS; i++)
			n += !!pm_pools[i];
	} else if (cmd == POOLMEM_DOMAIN_LIST) {
		list_for_each_entry(d, &pm_domains, list)
			n += !d->dead && d->registered;
	} else {
		list_for_each_entry(pr, &pm_profiles, list)
			n++;
	}
	max = min(n, l->count);
	if (max) {
		buf = kvcalloc(max, POOLMEM_NAME_MAX, GFP_KERNEL);
		if (!buf) {
			mutex_unlock(&pm_lock);
			return -ENOMEM;
		}
	}
	n = 0;
#define PM_LIST_ADD(nm) do { if (n < max) memcpy(buf + (size_t)n * POOLMEM_NAME_MAX, nm, POOLMEM_NAME_MAX); n++; } while (0)
	if (cmd == POOLMEM_POOL_LIST) {
		for (i = 0; i < POOLMEM_MAX_POOLS; i++)
			if (pm_pools[i])
				PM_LIST_ADD(pm_pools[i]->name);
	} else if (cmd == POOLMEM_DOMAIN_LIST) {
		list_for_each_entry(d, &pm_domains, list)
			if (!d->dead && d->registered)
				PM_LIST_ADD(d->name);
	} else {
		list_for_each_entry(pr, &pm_profiles, list)
			PM_LIST_ADD(pr->conf.name);
	}
#undef PM_LIST_ADD
	mutex_unlock(&pm_lock);
	if (max && copy_to_user(names, buf, (size_t)max * POOLMEM_NAME_MAX))
		ret = -EFAULT;
	kvfree(buf);
	l->total = n;
	return ret;
}

static long pm_ctl_pool_info(unsigned int cmd, union pm_ctl_arg *a)
{
	struct pm_pool *p;

	if (!pm_name_valid(a->pinfo.name, POOLMEM_NAME_MAX) || a->pinfo.state || a->pinfo.reserved32 ||
	    a->pinfo.moved_in || a->pinfo.moved_out || a->pinfo.memory_errors)
		return -EINVAL;
	mutex_lock(&pm_lock);
	p = pm_pool_find(a->pinfo.name);
	if (p)
		pm_pool_fill_info(p, &a->pinfo);
	mutex_unlock(&pm_lock);
	return p ? 0 : -ENOENT;
}

static long pm_ctl_domain_create(unsigned int cmd, union pm_ctl_arg *a)
{
	struct poolmem_domain_create *c = &a->dcreate;
	struct pm_refusal r = { .why = POOLMEM_REFUSED_NONE };
	struct pm_domain_spec spec = {};
	struct pm_domain *d;
	kuid_t uid;
	kgid_t gid;
	int ret;

	/* the out fields come in zero */
	if (c->refused || c->reserved32 || c->committed_bytes || c->limit_bytes ||
	    memchr_inv(c->reserved, 0, sizeof(c->reserved)))
		return -EINVAL;
	if (c->mode == 0)
		c->mode = 0600;
	if (c->mode & ~0777)
		return -EINVAL;
	uid = make_kuid(current_user_ns(), c->uid);
	gid = make_kgid(current_user_ns(), c->gid);
	if (!uid_valid(uid) || !gid_valid(gid))
		return -EINVAL;
	BUILD_BUG_ON(sizeof(spec.name) != sizeof(c->name) || ARRAY_SIZE(spec.quota) != ARRAY_SIZE(c->quota));
	memcpy(spec.name, c->name, sizeof(spec.name));	/* pm_domain_new() checks it */
	spec.flags = c->flags;
	spec.bytes = c->bytes;
	spec.chunk_bytes = c->chunk_bytes;
	memcpy(spec.quota, c->quota, sizeof(spec.quota));
	spec.pool_mask = c->pool_mask;
	spec.home_node = c->home_node;
	spec.tier_policy = c->tier_policy;
	spec.pool_select = c->pool_select;
	d = pm_domain_new(&spec, NULL, c->flags & POOLMEM_DOMAIN_CHECK ? "POOLMEM_DOMAIN_CREATE (check)" :
				       "POOLMEM_DOMAIN_CREATE", &r);
	if (IS_ERR_OR_NULL(d)) {	/* NULL: a check that passed */
		/* the figures go back to the caller (copied out on error too) */
		c->refused = r.why;
		c->committed_bytes = r.committed;
		c->limit_bytes = r.limit;
		if (r.why != POOLMEM_REFUSED_NONE)
			c->home_node = r.node;
		return PTR_ERR_OR_ZERO(d);
	}
	ret = pm_fs_create_domain(d, c->mode, uid, gid);
	if (ret)
		pm_domain_abandon(d);
	return ret;
}

static long pm_ctl_domain_info(unsigned int cmd, union pm_ctl_arg *a)
{
	struct pm_domain *d;

	if (a->dinfo.reserved32 || a->dinfo.retired_chunks || a->dinfo.moves || a->dinfo.memory_errors ||
	    !pm_name_valid(a->dinfo.name, POOLMEM_NAME_MAX))
		return -EINVAL;
	mutex_lock(&pm_lock);
	d = pm_domain_find_live(a->dinfo.name);
	if (d)
		pm_domain_fill_info(d, &a->dinfo);
	mutex_unlock(&pm_lock);
	return d ? 0 : -ENOENT;
}

/* The map is built under the domain's lock only, pm_lock dropped: see pm_domain_map(). */
static long pm_ctl_map(unsigned int cmd, union pm_ctl_arg *a)
{
	struct pm_domain *d;
	long ret;

	if (!PM_RESERVED_ZERO(&a->map) || !pm_name_valid(a->map.name, POOLMEM_NAME_MAX))
		return -EINVAL;
	mutex_lock(&pm_lock);
	d = pm_domain_find_live(a->map.name);
	if (d)
		get_device(&d->dev);
	mutex_unlock(&pm_lock);
	if (!d)
		return -ENOENT;
	ret = pm_domain_map(d, &a->map);
	put_device(&d->dev);
	return ret;
}

static long pm_ctl_map_reverse(unsigned int cmd, union pm_ctl_arg *a)
{
	struct poolmem_map_reverse *r = &a->rev;
	struct pm_domain *d;
	u64 offset;
	u32 pool;

	if (!PM_RESERVED_ZERO(r) || memchr_inv(r->name, 0, sizeof(r->name)) || r->offset ||
	    r->pool || r->node)
		return -EINVAL;
	mutex_lock(&pm_lock);
	d = pm_rmap_lookup(PHYS_PFN(r->phys), &offset, &pool);
	if (d) {
		memcpy(r->name, d->name, POOLMEM_NAME_MAX);
		r->offset = offset + offset_in_page(r->phys);
		r->pool = pool;
		r->node = pool == POOLMEM_POOL_LOCAL ? d->home_node : pm_pools[pool]->node;
	}
	mutex_unlock(&pm_lock);
	return d ? 0 : -ENOENT;
}

static long pm_ctl_profile_create(unsigned int cmd, union pm_ctl_arg *a)
{
	if (!PM_RESERVED_ZERO(&a->profile) || a->profile.domains)
		return -EINVAL;
	return pm_profile_create(&a->profile);
}

static long pm_ctl_vm_bind(unsigned int cmd, union pm_ctl_arg *a)
{
	if (!PM_RESERVED_ZERO(&a->bind) ||
	    !memchr(a->bind.profile, 0, sizeof(a->bind.profile)) ||
	    !memchr(a->bind.vm, 0, sizeof(a->bind.vm)))
		return -EINVAL;
	return pm_vm_bind(&a->bind);
}

static long pm_ctl_profile_info(unsigned int cmd, union pm_ctl_arg *a)
{
	struct poolmem_profile *c = &a->profile;
	struct pm_profile *pr;

	if (!pm_name_valid(c->name, POOLMEM_NAME_MAX) || c->flags || c->domains ||
	    !PM_RESERVED_ZERO(c) ||
	    memchr_inv((char *)c + offsetof(struct poolmem_profile, chunk_bytes), 0,
		       offsetof(struct poolmem_profile, domains) -
		       offsetof(struct poolmem_profile, chunk_bytes)))
		return -EINVAL;
	mutex_lock(&pm_lock);
	pr = pm_profile_find(c->name);
	if (pr) {
		*c = pr->conf;
		c->uid = from_kuid_munged(current_user_ns(), make_kuid(&init_user_ns, pr->conf.uid));
		c->gid = from_kgid_munged(current_user_ns(), make_kgid(&init_user_ns, pr->conf.gid));
		c->domains = atomic64_read(&pr->domains);
	}
	mutex_unlock(&pm_lock);
	return pr ? 0 : -ENOENT;
}

static long pm_ctl_pool_drain(unsigned int cmd, union pm_ctl_arg *a)
{
	struct poolmem_pool_drain *u = &a->drain;
	struct pm_drain_req r = { .flags = u->flags, .max_bytes = u->max_bytes };
	int ret;

	/* the out fields come in zero; CHECK and CANCEL exclude each other; REVOKE is alone */
	if (!PM_RESERVED_ZERO(u) || !pm_name_valid(u->name, POOLMEM_NAME_MAX) ||
	    memchr_inv(u->blocker, 0, sizeof(u->blocker)) || u->moved_bytes || u->remaining_bytes ||
	    u->busy_chunks || u->blocker_offset || u->need_bytes || u->room_bytes ||
	    hweight32(u->flags & (POOLMEM_DRAIN_CHECK | POOLMEM_DRAIN_CANCEL)) > 1 ||
	    ((u->flags & POOLMEM_DRAIN_REVOKE) && u->flags != POOLMEM_DRAIN_REVOKE))
		return -EINVAL;
	/* one handler per operation */
	if (u->flags & POOLMEM_DRAIN_CANCEL)
		ret = pm_pool_undrain(u->name, &r.remaining_bytes);
	else if (u->flags & POOLMEM_DRAIN_REVOKE)
		ret = pm_pool_revoke(u->name, &r.remaining_bytes);
	else
		ret = pm_pool_drain(u->name, &r);
	u->moved_bytes = r.moved_bytes;
	u->remaining_bytes = r.remaining_bytes;
	u->busy_chunks = r.busy_chunks;
	memcpy(u->blocker, r.blocker, sizeof(u->blocker));
	u->blocker_offset = r.blocker_offset;
	u->need_bytes = r.need_bytes;
	u->room_bytes = r.room_bytes;
	return ret;
}

/* POOLMEM_DOMAIN_SET's arguments alone: flags and the fields they allow, ranges. */
static int pm_set_check_args(const struct poolmem_domain_set *a)
{
	if (!pm_name_valid(a->name, POOLMEM_NAME_MAX) || a->moved_bytes || a->need_bytes ||
	    a->room_bytes || a->remaining_bytes)
		return -EINVAL;
	/* a step has a size; STEP with CHECK would move nothing anyway */
	if ((a->flags & POOLMEM_SET_STEP) ? !a->move_bytes || (a->flags & POOLMEM_SET_CHECK) : a->move_bytes)
		return -EINVAL;
	if ((!(a->flags & POOLMEM_SET_TIERING) && (a->tiering || a->hot_ms || a->scan_rate)) ||
	    a->tiering >= POOLMEM_NR_TIERING || a->hot_ms > 3600 * 1000 ||
	    a->scan_rate > POOLMEM_SCAN_RATE_MAX)
		return -EINVAL;
	if ((!(a->flags & POOLMEM_SET_QUOTA) && (a->quota[0] || a->quota[1])) ||
	    (!(a->flags & POOLMEM_SET_POOL_MASK) && a->pool_mask) ||
	    (!(a->flags & POOLMEM_SET_TIER_POLICY) && a->tier_policy) ||
	    (!(a->flags & POOLMEM_SET_POOL_SELECT) && a->pool_select))
		return -EINVAL;
	return 0;
}

static long pm_ctl_domain_set(unsigned int cmd, union pm_ctl_arg *a)
{
	struct poolmem_domain_set *u = &a->dset;
	struct pm_set_req r = {
		.flags = u->flags, .pool_mask = u->pool_mask, .tier_policy = u->tier_policy,
		.pool_select = u->pool_select, .tiering = u->tiering, .hot_ms = u->hot_ms,
		.scan_rate = u->scan_rate, .move_bytes = u->move_bytes,
	};
	int ret;

	ret = pm_set_check_args(u);
	if (ret)
		return ret;
	BUILD_BUG_ON(sizeof(r.name) != sizeof(u->name) || ARRAY_SIZE(r.quota) != ARRAY_SIZE(u->quota));
	memcpy(r.name, u->name, sizeof(r.name));
	memcpy(r.quota, u->quota, sizeof(r.quota));
	ret = pm_domain_set(&r);
	u->moved_bytes = r.moved_bytes;
	u->need_bytes = r.need_bytes;
	u->room_bytes = r.room_bytes;
	u->remaining_bytes = r.remaining_bytes;
	return ret;
}

static long pm_ctl_memory_errors(unsigned int cmd, union pm_ctl_arg *a)
{
	return pm_mf_errors(&a->errs);
}

static long pm_ctl_page_offline(unsigned int cmd, union pm_ctl_arg *a)
{
	return pm_mf_soft_offline(&a->poff);
}

static const struct pm_ctl_cmd pm_ctl_cmds[] = {
	{ POOLMEM_VERSION, sizeof(struct poolmem_version), 0, true, pm_ctl_version },
	{ POOLMEM_POOL_ADD, sizeof(struct poolmem_pool_add), 0, true, pm_ctl_pool_add },
	{ POOLMEM_POOL_REMOVE, sizeof(struct poolmem_name_arg), 0, false, pm_ctl_remove },
	{ POOLMEM_POOL_LIST, sizeof(struct poolmem_list), 0, true, pm_ctl_list },
	{ POOLMEM_POOL_INFO, sizeof(struct poolmem_pool_info), 0, true, pm_ctl_pool_info },
	{ POOLMEM_POOL_DRAIN, sizeof(struct poolmem_pool_drain), POOLMEM_DRAIN_FLAGS, true,
	  pm_ctl_pool_drain, true },
	{ POOLMEM_DOMAIN_CREATE, sizeof(struct poolmem_domain_create),
	  POOLMEM_DOMAIN_FLAGS | POOLMEM_DOMAIN_CHECK, true,
	  pm_ctl_domain_create, true },
	{ POOLMEM_DOMAIN_DESTROY, sizeof(struct poolmem_name_arg), 0, false, pm_ctl_remove },
	{ POOLMEM_DOMAIN_LIST, sizeof(struct poolmem_list), 0, true, pm_ctl_list },
	{ POOLMEM_DOMAIN_INFO, sizeof(struct poolmem_domain_info), 0, true, pm_ctl_domain_info },
	{ POOLMEM_DOMAIN_SET, sizeof(struct poolmem_domain_set), POOLMEM_SET_FLAGS, true,
	  pm_ctl_domain_set, true },
	{ POOLMEM_MAP, sizeof(struct poolmem_map), 0, true, pm_ctl_map },
	{ POOLMEM_MAP_REVERSE, sizeof(struct poolmem_map_reverse), 0, true, pm_ctl_map_reverse },
	{ POOLMEM_PROFILE_CREATE, sizeof(struct poolmem_profile), POOLMEM_DOMAIN_FLAGS, false,
	  pm_ctl_profile_create },
	{ POOLMEM_PROFILE_REMOVE, sizeof(struct poolmem_name_arg), 0, false, pm_ctl_remove },
	{ POOLMEM_PROFILE_LIST, sizeof(struct poolmem_list), 0, true, pm_ctl_list },
	{ POOLMEM_PROFILE_INFO, sizeof(struct poolmem_profile), 0, true, pm_ctl_profile_info },
	{ POOLMEM_VM_BIND, sizeof(struct poolmem_bind), POOLMEM_BIND_REMOVE, false, pm_ctl_vm_bind },
	{ POOLMEM_MEMORY_ERRORS, sizeof(struct poolmem_memory_errors), 0, true, pm_ctl_memory_errors },
	{ POOLMEM_PAGE_OFFLINE, sizeof(struct poolmem_page_offline), 0, true, pm_ctl_page_offline },
};

/*
 * Copy an ioctl argument in: its first u32 must be the struct's size and
 * its flags (second u32) a subset of @flags; the flags checked must be the
 * flags used, so they are compared again after the full copy.
 */
static int pm_copy_in(void *karg, size_t ksize, void __user *uarg, u32 flags)
{
	u32 hdr[2];

	if (copy_from_user(hdr, uarg, sizeof(hdr)))
		return -EFAULT;
	if (hdr[0] != ksize || hdr[1] & ~flags)
		return -EINVAL;
	if (copy_from_user(karg, uarg, ksize))
		return -EFAULT;
	if (((u32 *)karg)[0] != hdr[0] || ((u32 *)karg)[1] != hdr[1])
		return -EINVAL;
	return 0;
}

static long pm_ctl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	const struct pm_ctl_cmd *c = NULL;
	union pm_ctl_arg *a;
	unsigned int i;
	long ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	for (i = 0; i < ARRAY_SIZE(pm_ctl_cmds); i++)
		if (pm_ctl_cmds[i].cmd == cmd)
			c = &pm_ctl_cmds[i];
	if (!c)
		return -ENOTTY;

	a = pm_should_fail(sizeof(*a)) ? NULL : kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	ret = pm_copy_in(a, c->size, uarg, c->flags);
	if (!ret)
		ret = c->fn(cmd, a);
	if ((!ret || c->out_err) && c->out && copy_to_user(uarg, a, c->size) && !ret)
		ret = -EFAULT;
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

int pm_ctl_init(void)
{
	return misc_register(&pm_ctl_dev);
}

void pm_ctl_exit(void)
{
	misc_deregister(&pm_ctl_dev);
}
