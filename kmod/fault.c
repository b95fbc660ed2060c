// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem fault injection: every allocation the module makes asks
 * pm_should_fail() first; machine-check-safe reads ask pm_should_fail_mc();
 * chunk allocations can be slowed down (pm_inject_alloc_delay()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fault-inject.h>

#include "poolmem.h"

#ifdef CONFIG_FAULT_INJECTION
/*
 * Fault injection aimed at poolmem alone: every allocation the module
 * makes (chunk units, reverse-map entries, domain and file structures,
 * chunk maps, ioctl buffers) asks pm_should_fail() first, configured in
 * /sys/kernel/debug/poolmem/fail (Documentation/fault-injection: probability,
 * interval, times, verbose). Kernels without CONFIG_FAULT_INJECTION
 * (Debian's) compile it out.
 */
static DECLARE_FAULT_ATTR(pm_fail_attr);

/*
 * fail_mc: a machine-check-safe read of a tenant's page (copy_mc_to_kernel())
 * reports an uncorrectable error, as it would on real poison, which the
 * rig's TCG guests can't produce on a load. What follows is real: the page
 * goes to memory_failure().
 */
static DECLARE_FAULT_ATTR(pm_fail_mc_attr);

/*
 * alloc_delay_ms: a chunk allocation sleeps this long after each unit it
 * has put in the reverse map, and logs the unit's PFN first, so that a
 * test can meet a chunk half allocated (the error worker against an
 * allocation, mf.c).
 */
static u32 pm_alloc_delay_ms;

/*
 * hold_busy: a unit held for a memory error counts as still referenced by
 * someone else while this is set (pm_unit_hold() and its retries can't
 * freeze it), as when a PFN walker keeps a speculative reference: the
 * rig's way to an offline that meets such a unit.
 */
static bool pm_hold_busy;

bool pm_inject_hold_busy(void)
{
	return READ_ONCE(pm_hold_busy);
}

bool pm_should_fail(size_t size)
{
	return should_fail(&pm_fail_attr, size);
}

bool pm_should_fail_mc(void)
{
	return should_fail(&pm_fail_mc_attr, PAGE_SIZE);
}

void pm_inject_alloc_delay(struct pm_domain *d, size_t slot, struct page *unit)
{
	u32 ms = READ_ONCE(pm_alloc_delay_ms);

	if (!ms)
		return;
	pr_info("alloc_delay: domain %s slot %zu at PFN %#lx: waiting %u ms\n", d->name, slot,
		page_to_pfn(unit), ms);
	msleep(ms);
}

void pm_fault_debugfs(struct dentry *dir)
{
	fault_create_debugfs_attr("fail", dir, &pm_fail_attr);
	fault_create_debugfs_attr("fail_mc", dir, &pm_fail_mc_attr);
	debugfs_create_u32("alloc_delay_ms", 0600, dir, &pm_alloc_delay_ms);
	debugfs_create_bool("hold_busy", 0600, dir, &pm_hold_busy);
}
#else
bool pm_should_fail(size_t size)
{
	return false;
}

bool pm_inject_hold_busy(void)
{
	return false;
}

bool pm_should_fail_mc(void)
{
	return false;
}

void pm_inject_alloc_delay(struct pm_domain *d, size_t slot, struct page *unit)
{
}

void pm_fault_debugfs(struct dentry *dir)
{
}
#endif
