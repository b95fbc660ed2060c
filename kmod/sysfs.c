// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem domain attributes: /sys/class/poolmem/<name>/ (see
 * Documentation/ABI/testing/sysfs-class-poolmem). Show functions take only
 * the domain's lock, so the device can be deleted under pm_lock.
 */
#include <linux/device.h>
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
	X(memory_errors, d->mem_errors)

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

/* Chunks the last samples found hot and cold ("<hot> <cold>"). */
static ssize_t heat_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct pm_domain *d = to_domain(dev);
	u64 idx, hot = 0, cold = 0;

	mutex_lock(&d->lock);
	for (idx = 0; d->heat && idx < d->nr_chunks; idx++) {
		if (!d->meta[idx].present)
			continue;
		hot += d->heat[idx].hot;
		cold += d->heat[idx].cold;
	}
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

		n += sysfs_emit_at(buf, n, "%s %llu\n", pm_pools[id]->name, d->chunks_per_pool[id]);
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
	&dev_attr_retired_chunks.attr,
	&dev_attr_moves.attr,
	&dev_attr_move_retries.attr,
	&dev_attr_move_pins.attr,
	&dev_attr_samples.attr,
	&dev_attr_sample_hits.attr,
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
