// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem domain attributes: /sys/class/poolmem/<name>/ (see
 * Documentation/ABI/testing/sysfs-class-poolmem). Show functions take only
 * the domain's lock, so the device can be deleted under pm_lock.
 *
 * The same values of every domain in one read: /proc/poolmem/domains and
 * /proc/poolmem/domain_histograms (Documentation/ABI/testing/
 * procfs-poolmem), for readers of thousands of domains, to whom twenty
 * sysfs files per domain cost seconds.
 */
#include <linux/device.h>
#include <linux/mm.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>

#include "poolmem.h"

/*
 * Domain attributes are readable by root and the group stats_gid alone
 * (default 0: root only): names (the file, the creating command, the
 * profile) identify tenants, and placement, heat and fault latencies tell
 * one tenant about another's activity. The exporter runs in that group
 * (poolmem-exporter.service: SupplementaryGroups=poolmem; the install
 * sets stats_gid in modprobe.d). Pool attributes (host-wide) stay
 * world-readable.
 */
static unsigned int pm_stats_gid;
module_param_named(stats_gid, pm_stats_gid, uint, 0444);
MODULE_PARM_DESC(stats_gid, "Group that may read domain attributes in sysfs (default 0: root only)");

#define PM_DOMAIN_ATTR_RO(_name) \
	struct device_attribute dev_attr_##_name = __ATTR(_name, 0440, _name##_show, NULL)

/* class poolmem's get_ownership: domain directories and files root:stats_gid */
void pm_domain_ownership(pm_class_dev_t *dev, kuid_t *uid, kgid_t *gid)
{
	kgid_t g = make_kgid(&init_user_ns, pm_stats_gid);

	*uid = GLOBAL_ROOT_UID;
	*gid = gid_valid(g) ? g : GLOBAL_ROOT_GID;
}

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
static PM_DOMAIN_ATTR_RO(file);

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
	X(fault_latency_sum_ns, atomic64_read(&d->fault_ns))		\
	X(retired_chunks, d->retired)					\
	X(moves, d->moves)						\
	X(move_retries, d->move_retries)				\
	X(move_pins, d->move_pins)					\
	X(samples, d->samples)						\
	X(sample_hits, d->hits)						\
	X(promotions, d->promotions)					\
	X(demotions, d->demotions)					\
	X(tiering_scan_ns, d->scan_ns)					\
	X(revoked_chunks, d->revoked)					\
	X(memory_errors, d->mem_errors)					\
	X(sample_hits_pool, d->pool_hits)				\
	X(rebalanced_chunks, d->rebalanced)

DOMAIN_SHOW_U64(id, d->id)
DOMAIN_SHOW_U64(size_bytes, d->size)
DOMAIN_SHOW_U64(chunk_bytes, d->chunk_bytes)
DOMAIN_SHOW_U64(local_quota_bytes, d->quota[PM_TIER_LOCAL])
DOMAIN_SHOW_U64(pool_quota_bytes, d->quota[PM_TIER_POOL])
DOMAIN_SHOW_U64(home_node, d->home_node)
DOMAIN_SHOW_U64(pinnable, d->pinnable)
/* what a quota change left to move: the tier stays at its usage until it is 0 */
DOMAIN_SHOW_U64(moves_pending_bytes, pm_domain_moves_pending(d))
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
static PM_DOMAIN_ATTR_RO(stat);

static const char *const pm_tiering_names[POOLMEM_NR_TIERING] = { "off", "sample", "on" };

/* "<mode> <scan rate bytes/s> <hot ms>", e.g. "on 67108864 500" */
static ssize_t tiering_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct pm_domain *d = to_domain(dev);
	ssize_t n;

	mutex_lock(&d->lock);
	n = sysfs_emit(buf, "%s %llu %u\n", pm_tiering_names[d->tier_mode], d->scan_rate, d->hot_ms);
	mutex_unlock(&d->lock);
	return n;
}
static PM_DOMAIN_ATTR_RO(tiering);

/*
 * Chunks present that the last samples found hot and cold. Caller holds
 * d->lock (and, for the table, pm_lock): a multi-TiB domain with tiering
 * has millions of chunks, so the walk yields now and then.
 */
static void pm_domain_heat(struct pm_domain *d, u64 *hot, u64 *cold)
{
	u64 idx;

	*hot = *cold = 0;
	for (idx = 0; d->heat && idx < d->nr_chunks; idx++) {
		if (!(idx & 0xffff))
			cond_resched();
		if (!d->meta[idx].present)
			continue;
		*hot += d->heat[idx].hot;
		*cold += d->heat[idx].cold;
	}
}

/* Chunks the last samples found hot and cold ("<hot> <cold>"). */
static ssize_t heat_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct pm_domain *d = to_domain(dev);
	u64 hot, cold;

	mutex_lock(&d->lock);
	pm_domain_heat(d, &hot, &cold);
	mutex_unlock(&d->lock);
	return sysfs_emit(buf, "%llu %llu\n", hot, cold);
}
static PM_DOMAIN_ATTR_RO(heat);

/* The profile the domain was made from; empty for a named domain. */
static ssize_t profile_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct pm_domain *d = to_domain(dev);

	return sysfs_emit(buf, "%s\n", d->profile ? d->profile->conf.name : "");
}
static PM_DOMAIN_ATTR_RO(profile);

/* The domain file's path under the mount point when it was made. */
static ssize_t file_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_domain(dev)->path);
}
static PM_DOMAIN_ATTR_RO(file);

/*
 * A znuma domain's windows, one line each, "NAME BASE SIZE" in bytes of
 * the domain ("local 0 L", "pool L P"); empty for any other domain.
 */
static ssize_t windows_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct pm_domain *d = to_domain(dev);
	enum pm_window w;
	u64 base, size;
	int n = 0;

	for (w = PM_WIN_LOCAL; d->znuma && w < PM_NR_WIN; w++) {
		pm_domain_window(d, w, &base, &size);
		n += sysfs_emit_at(buf, n, "%s %llu %llu\n", pm_window_suffix[w] + 1, base, size);
	}
	return n;
}
static PM_DOMAIN_ATTR_RO(windows);

/* "<pid> <comm>" of the process that made the domain (ftruncate for profiles). */
static ssize_t creator_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct pm_domain *d = to_domain(dev);

	return sysfs_emit(buf, "%d %s\n", d->creator, d->creator_comm);
}
static PM_DOMAIN_ATTR_RO(creator);

static ssize_t tier_policy_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", pm_tier_policy_names[to_domain(dev)->tier_policy]);
}
static PM_DOMAIN_ATTR_RO(tier_policy);

static ssize_t pool_select_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", pm_pool_select_names[to_domain(dev)->pool_select]);
}
static PM_DOMAIN_ATTR_RO(pool_select);

/* "<pool name> <chunks>" per allowed pool, one per line. */
static ssize_t pool_chunks_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct pm_domain *d = to_domain(dev);
	u64 mask;
	int n = 0;

	mutex_lock(&d->lock);
	for (mask = d->pool_mask; mask; mask &= mask - 1) {
		unsigned int id = __ffs64(mask);

		n += sysfs_emit_at(buf, n, "%s %u\n", pm_pools[id]->name, d->chunks_per_pool[id]);
	}
	mutex_unlock(&d->lock);
	return n;
}
static PM_DOMAIN_ATTR_RO(pool_chunks);

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
static PM_DOMAIN_ATTR_RO(fault_latency_histogram);

static struct attribute *pm_domain_attrs[] = {
	&dev_attr_id.attr,
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
	&dev_attr_moves_pending_bytes.attr,
	&dev_attr_tier_policy.attr,
	&dev_attr_pool_select.attr,
	&dev_attr_pool_chunks.attr,
	&dev_attr_fault_latency_histogram.attr,
	&dev_attr_fault_latency_sum_ns.attr,
	&dev_attr_stat.attr,
	&dev_attr_retired_chunks.attr,
	&dev_attr_moves.attr,
	&dev_attr_move_retries.attr,
	&dev_attr_move_pins.attr,
	&dev_attr_samples.attr,
	&dev_attr_sample_hits.attr,
	&dev_attr_sample_hits_pool.attr,
	&dev_attr_rebalanced_chunks.attr,
	&dev_attr_promotions.attr,
	&dev_attr_demotions.attr,
	&dev_attr_tiering_scan_ns.attr,
	&dev_attr_revoked_chunks.attr,
	&dev_attr_memory_errors.attr,
	&dev_attr_tiering.attr,
	&dev_attr_heat.attr,
	&dev_attr_profile.attr,
	&dev_attr_file.attr,
	&dev_attr_creator.attr,
	&dev_attr_windows.attr,
	NULL,
};
static const struct attribute_group pm_domain_group = { .attrs = pm_domain_attrs };
const struct attribute_group *pm_domain_groups[] = { &pm_domain_group, NULL };

/*
 * /proc/poolmem/domains: one line per domain with the values of its
 * attribute files, after a header line naming the columns (a reader maps
 * columns by that name; later versions only append columns). Strings that
 * are not validated names (file, creator_comm) are escaped as /proc/mounts
 * does, and an empty value is "-" (which no name can be). Each line is one
 * snapshot, taken under pm_lock and the domain's lock; the file as a whole
 * is not: a domain made or destroyed while it is read may or may not be in
 * it.
 *
 * The seq_file iterator stands at a domain id (pm_domain_ids, an
 * allocating xarray of every listed domain, in id order: the lowest free
 * at admission). A read resumes at the id where the last one stopped, so
 * reading the whole file costs O(domains) rather than the
 * O(domains^2 / lines per page) of a walk from the start at every page.
 * (A seek goes through traverse(), which steps with next() from the
 * start.) pm_lock is held from start to stop: at most one buffer's worth
 * of lines (PM_TABLE_BUF), each also waiting for its domain's lock.
 * (No __acquires/__releases on start and stop: sparse does not see a
 * mutex as a context, so they would only make it report an imbalance.)
 */
struct pm_table_iter {
	unsigned long id;	/* id of the domain at position pos; ULONG_MAX: the end */
	loff_t pos;		/* 0: nothing to resume */
};

/*
 * The first listed domain, with its sysfs directory, whose id is at least
 * *id; *id becomes its id. Caller holds pm_lock, which keeps it alive
 * (pm_domain_release() erases it under pm_lock first).
 */
static struct pm_domain *pm_table_seek(unsigned long *id)
{
	struct pm_domain *d;

	for (d = xa_find(&pm_domain_ids, id, ULONG_MAX, XA_PRESENT); d;
	     d = xa_find_after(&pm_domain_ids, id, ULONG_MAX, XA_PRESENT))
		if (!d->dead && d->registered)
			return d;
	return NULL;
}

static void *pm_table_start(struct seq_file *m, loff_t *pos)
{
	struct pm_table_iter *it = m->private;
	struct pm_domain *d;
	unsigned long id = 0;
	loff_t n;

	mutex_lock(&pm_lock);
	if (*pos == 0)
		return SEQ_START_TOKEN;
	if (it->pos && *pos == it->pos) {
		id = it->id;
		return pm_table_seek(&id);
	}
	/* a position the iterator did not stop at: count from the first domain */
	for (n = 1, d = pm_table_seek(&id); d && n < *pos; n++) {
		id = d->id + 1UL;
		d = pm_table_seek(&id);
	}
	return d;
}

static void *pm_table_next(struct seq_file *m, void *v, loff_t *pos)
{
	unsigned long id = v == SEQ_START_TOKEN ? 0 : ((struct pm_domain *)v)->id + 1UL;

	++*pos;
	return pm_table_seek(&id);
}

/*
 * Remember where the next read resumes: the domain not shown yet, at
 * m->index, or the end. A reader that reached the end stays there: a
 * walk from the start to its position would show again domains that
 * moved up as others were made in lower ids (a read during churn saw a
 * domain twice that way).
 */
static void pm_table_stop(struct seq_file *m, void *v)
{
	struct pm_table_iter *it = m->private;

	it->pos = 0;
	if (v != SEQ_START_TOKEN) {
		it->id = v ? ((struct pm_domain *)v)->id : ULONG_MAX;
		it->pos = m->index;
	}
	mutex_unlock(&pm_lock);
}

/* @s escaped as in /proc/mounts; "-" for an empty or "-" string. */
static void pm_seq_string(struct seq_file *m, const char *s)
{
	if (!*s)
		seq_putc(m, '-');
	else if (!strcmp(s, "-"))
		seq_puts(m, "\\055");
	else
		seq_escape(m, s, " \t\n\\");
}

#define PM_TABLE_FIELD(file, expr) seq_put_decimal_ull(m, " ", (expr));
#define PM_TABLE_NAME(file, expr) " " #file

static int pm_table_show(struct seq_file *m, void *v)
{
	struct pm_domain *d = v;
	const char *sep = "";
	enum pm_window w;
	u64 hot, cold, mask, base, size;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "# name size_bytes chunk_bytes local_quota_bytes pool_quota_bytes home_node pinnable"
			 " tier_policy pool_select tiering scan_rate hot_ms hot_chunks cold_chunks"
			 DOMAIN_COUNTERS(PM_TABLE_NAME)
			 " pool_chunks windows profile file creator_pid creator_comm id\n");
		return 0;
	}
	seq_puts(m, d->name);	/* a validated name: nothing to escape */
	mutex_lock(&d->lock);
	seq_printf(m, " %llu %llu %llu %llu %d %d %s %s %s %llu %u", d->size, d->chunk_bytes,
		   d->quota[PM_TIER_LOCAL], d->quota[PM_TIER_POOL], d->home_node, d->pinnable,
		   pm_tier_policy_names[d->tier_policy], pm_pool_select_names[d->pool_select],
		   pm_tiering_names[d->tier_mode], d->scan_rate, d->hot_ms);
	pm_domain_heat(d, &hot, &cold);
	seq_printf(m, " %llu %llu", hot, cold);
	DOMAIN_COUNTERS(PM_TABLE_FIELD)
	/* "p0:3,p1:5": pool names are validated names (no ',' or ':') */
	seq_putc(m, ' ');
	if (!d->pool_mask)
		seq_putc(m, '-');
	for (mask = d->pool_mask; mask; mask &= mask - 1, sep = ",") {
		unsigned int id = __ffs64(mask);

		seq_printf(m, "%s%s:%u", sep, pm_pools[id]->name, d->chunks_per_pool[id]);
	}
	mutex_unlock(&d->lock);
	/* "local:BASE:SIZE,pool:BASE:SIZE" for a znuma domain */
	seq_putc(m, ' ');
	if (!d->znuma)
		seq_putc(m, '-');
	for (sep = "", w = PM_WIN_LOCAL; d->znuma && w < PM_NR_WIN; w++, sep = ",") {
		pm_domain_window(d, w, &base, &size);
		seq_printf(m, "%s%s:%llu:%llu", sep, pm_window_suffix[w] + 1, base, size);
	}
	seq_putc(m, ' ');
	seq_puts(m, d->profile ? d->profile->conf.name : "-");
	seq_putc(m, ' ');
	pm_seq_string(m, d->path);
	seq_printf(m, " %d ", d->creator);
	pm_seq_string(m, d->creator_comm);
	seq_printf(m, " %u\n", d->id);
	return 0;
}

/* "NAME C0 .. C39": fault_latency_histogram of every domain; atomics, no lock */
static int pm_table_hist_show(struct seq_file *m, void *v)
{
	struct pm_domain *d = v;
	int i;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "# name fault_latency_histogram\n");
		return 0;
	}
	seq_puts(m, d->name);
	for (i = 0; i < PM_HIST_BUCKETS; i++)
		seq_put_decimal_ull(m, " ", atomic64_read(&d->hist[i]));
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations pm_table_ops = {
	.start = pm_table_start,
	.next = pm_table_next,
	.stop = pm_table_stop,
	.show = pm_table_show,
};

static const struct seq_operations pm_table_hist_ops = {
	.start = pm_table_start,
	.next = pm_table_next,
	.stop = pm_table_stop,
	.show = pm_table_hist_show,
};

/*
 * A buffer of 64 KiB rather than seq_file's page: a reader of 10,000
 * domains makes 16 times fewer reads, each taking pm_lock once, for at
 * most a few hundred lines. Without it (no memory), seq_file's own page.
 */
#define PM_TABLE_BUF	SZ_64K

static int pm_table_open_ops(struct file *file, const struct seq_operations *ops)
{
	struct seq_file *m;
	int ret;

	ret = seq_open_private(file, ops, sizeof(struct pm_table_iter));
	if (ret)
		return ret;
	m = file->private_data;
	m->buf = kvmalloc(PM_TABLE_BUF, GFP_KERNEL_ACCOUNT);	/* seq_release() frees it */
	if (m->buf)
		m->size = PM_TABLE_BUF;
	return 0;
}

static int pm_table_open(struct inode *inode, struct file *file)
{
	return pm_table_open_ops(file, &pm_table_ops);
}

static int pm_table_hist_open(struct inode *inode, struct file *file)
{
	return pm_table_open_ops(file, &pm_table_hist_ops);
}

static const struct proc_ops pm_table_fops = {
	.proc_open = pm_table_open,
	.proc_read_iter = seq_read_iter,
	.proc_lseek = seq_lseek,
	.proc_release = seq_release_private,
};

static const struct proc_ops pm_table_hist_fops = {
	.proc_open = pm_table_hist_open,
	.proc_read_iter = seq_read_iter,
	.proc_lseek = seq_lseek,
	.proc_release = seq_release_private,
};

static struct proc_dir_entry *pm_proc_dir;

/*
 * /proc/poolmem/: the tables, root:stats_gid 0440 as the domains' sysfs
 * directories (the group is a read-only parameter: fixed at load).
 */
int pm_proc_init(void)
{
	static const struct {
		const char *name;
		const struct proc_ops *fops;
	} files[] = {
		{ "domains", &pm_table_fops },
		{ "domain_histograms", &pm_table_hist_fops },
	};
	kgid_t gid = make_kgid(&init_user_ns, pm_stats_gid);
	struct proc_dir_entry *pde;
	int i;

	pm_proc_dir = proc_mkdir("poolmem", NULL);
	if (!pm_proc_dir)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		pde = proc_create(files[i].name, 0440, pm_proc_dir, files[i].fops);
		if (!pde) {
			proc_remove(pm_proc_dir);
			return -ENOMEM;
		}
		proc_set_user(pde, GLOBAL_ROOT_UID, gid_valid(gid) ? gid : GLOBAL_ROOT_GID);
	}
	return 0;
}

/* Removes the files and waits for their readers. */
void pm_proc_exit(void)
{
	proc_remove(pm_proc_dir);
}
