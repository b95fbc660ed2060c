// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem fault injection: every allocation the module makes asks
 * pm_should_fail() first.
 */
#include <linux/debugfs.h>
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

bool pm_should_fail(size_t size)
{
	return should_fail(&pm_fail_attr, size);
}

void pm_fault_debugfs(struct dentry *dir)
{
	fault_create_debugfs_attr("fail", dir, &pm_fail_attr);
}
#else
bool pm_should_fail(size_t size)
{
	return false;
}

void pm_fault_debugfs(struct dentry *dir)
{
}
#endif
