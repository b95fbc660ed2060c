// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem's 2 MiB units out of use for good: the held list. And the
 * kernel's reads of a tenant's pages, which must survive a memory error in
 * them (pm_page_zero_mc()).
 *
 * A unit with a poisoned page (mf.c), or one of a revoked chunk, whose
 * memory may be another host's by now (offline.c), must reach neither a
 * tenant nor the page allocator: the allocator's next user would find the
 * poisoned page in check_new_pages() and drop the whole block with it, and
 * init_on_free would write to memory that is not ours. Such a unit is
 * held: frozen at refcount 0, every page PageOffline (virtio-mem's
 * protocol for pages a driver took away from the system), on the held
 * list, until its memory block goes offline and takes the memory with it.
 * The list runs through the head page's lru, which a frozen unit on no
 * other list leaves free, so holding never allocates and never fails.
 *
 * What memory offline does with a held unit:
 *  - isolation: has_unmovable_pages() passes any page of ZONE_MOVABLE
 *    (pool memory onlined movable). In a kernel zone it refuses a compound
 *    page that is neither LRU nor movable before it looks at PageOffline,
 *    so a block there that holds a unit can't be isolated, and its offline
 *    fails with -EBUSY before any notifier runs (pinnable pools, local
 *    DRAM);
 *  - test_pages_isolated() passes PageOffline pages at refcount 0, and
 *    HWPoison pages, and __offline_isolated_pages() skips both;
 *  - a unit whose reference could not be dropped when it was held (a PFN
 *    walker kept one) would make offline_pages() loop until a signal: the
 *    notifier tries again to freeze it, and refuses the offline at once,
 *    naming it, while it is still referenced (pm_held_going_offline()).
 *    Such a unit is also tried again every 100 ms until it freezes
 *    (pm_held_retry_fn()): an offline whose MEM_GOING_OFFLINE passed
 *    before the unit was held retries in offline_pages(), as for any page
 *    pinned in ZONE_MOVABLE, and goes on as soon as the other reference
 *    is gone and the unit is PageOffline at refcount 0.
 *
 * The managed page count. A held page is no longer the system's memory, so
 * it leaves the zone's managed pages (and MemTotal) when it is held, as
 * virtio-mem's fake-offline pages do. Since 6.11 (compat.h,
 * PM_OFFLINE_SKIPS_OFFLINE_PAGES) offline_pages() subtracts only the pages
 * that were not PageOffline already, and expects just that; HWPoison pages
 * it subtracts itself, so those stay in the count until then. Before, it
 * subtracted the whole range, and a driver gave its PageOffline pages back
 * to the count in MEM_GOING_OFFLINE and took them again in
 * MEM_CANCEL_OFFLINE, as virtio-mem did (pm_held_cancel_offline()).
 * head->private is how many pages of a unit are out of the count.
 *
 * pm_held_lock (mutex) protects the list, each held unit's private and
 * pm_held_first/last; under it only the page counters and
 * page_offline_begin() (a percpu rwsem that /proc/kcore's readers take,
 * holding none of ours) are taken, and it nests inside the memory hotplug
 * lock (the notifier). Offlines are
 * serialised by the hotplug lock, so one range at most is going offline.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "poolmem.h"

static LIST_HEAD(pm_held_list);
static DEFINE_MUTEX(pm_held_lock);
/*
 * Kernels before 6.11: the range between a MEM_GOING_OFFLINE that gave its
 * held units back to the managed count and its MEM_OFFLINE or
 * MEM_CANCEL_OFFLINE (first > last: none). A unit held in it meanwhile is
 * not taken out of the count: the offline is about to subtract it.
 */
static unsigned long pm_held_first = 1, pm_held_last;

static void pm_held_retry_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pm_held_retry, pm_held_retry_fn);
#define PM_HELD_RETRY_MS	100

/* Drop our reference on @unit if it is the last: refcount 0, frozen. */
static bool pm_held_freeze(struct page *unit)
{
	return !pm_inject_hold_busy() && page_ref_freeze(unit, 1);
}

static bool pm_unit_in(struct page *unit, unsigned long first, unsigned long last)
{
	unsigned long pfn = page_to_pfn(unit);

	return pfn >= first && pfn + PM_UNIT_PAGES - 1 <= last;
}

/* Pages of held @unit that memory offline counts as already out of the managed count. */
static unsigned long pm_held_uncounted(struct page *unit)
{
	unsigned long i, n = 0;

	for (i = 0; i < PM_UNIT_PAGES; i++)
		n += PageOffline(unit + i) && !PageHWPoison(unit + i);
	return n;
}

/*
 * Take frozen @unit out of the managed count, unless an offline that
 * subtracts it is under way (kernels before 6.11). Caller holds
 * pm_held_lock.
 */
static void pm_held_uncount(struct page *unit)
{
	unsigned long n = 0;

	if (PM_OFFLINE_SKIPS_OFFLINE_PAGES || !pm_unit_in(unit, pm_held_first, pm_held_last))
		n = pm_held_uncounted(unit);
	adjust_managed_page_count(unit, -(long)n);
	set_page_private(unit, n);
}

/*
 * @unit is frozen at refcount 0: PageOffline, and out of the managed count.
 * PageOffline is set under page_offline_begin(), as virtio-mem does, so
 * that /proc/kcore's readers (page_offline_freeze()) skip the pages
 * reliably: a revoked unit may hold another host's data by now. Caller
 * holds pm_held_lock.
 */
static void pm_held_take(struct page *unit)
{
	unsigned int i;

	page_offline_begin();
	for (i = 0; i < PM_UNIT_PAGES; i++)
		__SetPageOffline(unit + i);
	page_offline_end();
	pm_held_uncount(unit);
	if (page_zonenum(unit) != ZONE_MOVABLE)
		pr_warn("held unit at PFN %#lx (node %d) is in a kernel zone: its memory block can't go offline again until a reboot (isolation refuses it outside ZONE_MOVABLE); pools onlined movable have no such limit\n",
			page_to_pfn(unit), page_to_nid(unit));
}

/*
 * Hold @unit, frozen at refcount 0 by the caller (a revoked chunk's, after
 * its move was frozen) and out of the reverse map. Process context.
 */
void pm_held_add_frozen(struct page *unit)
{
	mutex_lock(&pm_held_lock);
	pm_held_take(unit);
	list_add_tail(&unit->lru, &pm_held_list);
	mutex_unlock(&pm_held_lock);
}

/*
 * Hold @unit, which has a poisoned page, out of use for good. The caller
 * has the one reference and has erased the unit from the reverse map. A
 * transient reference (a PFN walker's speculative get_page_unless_zero())
 * is waited out for up to 20 ms; if one stays, the unit is held with our
 * reference, not frozen, and the offline of its block tries again
 * (pm_held_going_offline()). Process context; may sleep.
 */
void pm_unit_hold(struct page *unit)
{
	bool frozen = false;
	unsigned int try;

	for (try = 0; try < 100; try++) {
		frozen = pm_held_freeze(unit);
		if (frozen)
			break;
		usleep_range(100, 200);
	}
	mutex_lock(&pm_held_lock);
	if (frozen)
		pm_held_take(unit);
	else
		set_page_private(unit, 0);
	list_add_tail(&unit->lru, &pm_held_list);
	mutex_unlock(&pm_held_lock);
	if (!frozen) {
		pr_warn("unit at PFN %#lx has a poisoned page and is still referenced: held out of use; its block goes offline once the reference is gone\n",
			page_to_pfn(unit));
		schedule_delayed_work(&pm_held_retry, msecs_to_jiffies(PM_HELD_RETRY_MS));
	}
}

/*
 * Held units still referenced: freeze each whose other references went,
 * and come back while any is left. Process context (system workqueue).
 */
static void pm_held_retry_fn(struct work_struct *work)
{
	struct page *unit;
	bool left = false;

	mutex_lock(&pm_held_lock);
	list_for_each_entry(unit, &pm_held_list, lru) {
		if (!page_ref_count(unit))
			continue;
		if (pm_held_freeze(unit)) {
			pm_held_take(unit);
			pr_info("held unit at PFN %#lx: the last other reference went; out of use for good\n",
				page_to_pfn(unit));
		} else {
			left = true;
		}
	}
	mutex_unlock(&pm_held_lock);
	if (left)
		schedule_delayed_work(&pm_held_retry, msecs_to_jiffies(PM_HELD_RETRY_MS));
}

/*
 * An uncorrectable error met by a machine-check-safe read of @page: tell
 * memory_failure(), as copy_mc_user_highpage() does for the core's copies.
 * It marks the page, and its verdict reaches mf.c, which records the page
 * lost. Any context memory_failure_queue() allows; returns -EIO.
 */
int pm_page_mc_failed(struct page *page)
{
	if (IS_ENABLED(CONFIG_MEMORY_FAILURE))
		memory_failure_queue(page_to_pfn(page), 0);
	return -EIO;
}

/*
 * Does tenant page @page read as zeroes? It is read into @buf (PAGE_SIZE)
 * with copy_mc_to_kernel(): a latent uncorrectable error in it, met by a
 * plain load in kernel mode, would be a machine check with no fixup, a host
 * panic. A page that can't be read is reported (pm_page_mc_failed()) and
 * reads as not zero. Process context.
 */
bool pm_page_zero_mc(struct page *page, void *buf)
{
	void *va = kmap_local_page(page);
	unsigned long left = copy_mc_to_kernel(buf, va, PAGE_SIZE);

	kunmap_local(va);
	if (pm_should_fail_mc())
		left = PAGE_SIZE;
	if (left) {
		pm_page_mc_failed(page);
		return false;
	}
	return !memchr_inv(buf, 0, PAGE_SIZE);
}

/*
 * Free one unit of ours that nothing else references: to the page
 * allocator, or, with a poisoned page, to the held list. Process context.
 */
void pm_unit_put(struct page *unit)
{
	if (likely(!pm_unit_poisoned(unit)))
		put_page(unit);
	else
		pm_unit_hold(unit);
}

/*
 * MEM_GOING_OFFLINE of [@first, @last], after the chunks there have gone:
 * every held unit there is frozen (one still referenced refuses the
 * offline, with -EBUSY and a line naming it, instead of a loop in
 * offline_pages()), and the managed count is made what the offline
 * expects. Called by the memory notifier under the hotplug lock.
 */
int pm_held_going_offline(unsigned long first, unsigned long last)
{
	struct page *unit;
	int ret = 0;

	mutex_lock(&pm_held_lock);
	list_for_each_entry(unit, &pm_held_list, lru) {
		if (!pm_unit_in(unit, first, last) || !page_ref_count(unit))
			continue;
		if (!pm_held_freeze(unit)) {
			pr_warn("memory offline of PFNs %#lx-%#lx refused: held unit at PFN %#lx (a poisoned page) is still referenced by someone else; try again later\n",
				first, last, page_to_pfn(unit));
			ret = -EBUSY;
			goto out;
		}
		pm_held_take(unit);
	}
	list_for_each_entry(unit, &pm_held_list, lru) {
		unsigned long n;

		if (!pm_unit_in(unit, first, last))
			continue;
		/*
		 * 6.11+: a page poisoned after it was held is subtracted by
		 * the offline itself; before: the offline subtracts all.
		 */
		n = PM_OFFLINE_SKIPS_OFFLINE_PAGES ? pm_held_uncounted(unit) : 0;
		if (page_private(unit) > n) {
			adjust_managed_page_count(unit, page_private(unit) - n);
			set_page_private(unit, n);
		}
	}
	if (!PM_OFFLINE_SKIPS_OFFLINE_PAGES) {
		pm_held_first = first;
		pm_held_last = last;
	}
out:
	mutex_unlock(&pm_held_lock);
	return ret;
}

/*
 * MEM_CANCEL_OFFLINE of [@first, @last]: the held units there stay, and
 * (before 6.11) leave the managed count again.
 */
void pm_held_cancel_offline(unsigned long first, unsigned long last)
{
	struct page *unit;

	mutex_lock(&pm_held_lock);
	if (!PM_OFFLINE_SKIPS_OFFLINE_PAGES && pm_held_first == first && pm_held_last == last) {
		pm_held_first = 1;
		pm_held_last = 0;
		list_for_each_entry(unit, &pm_held_list, lru)
			if (pm_unit_in(unit, first, last) && !page_ref_count(unit) && !page_private(unit))
				pm_held_uncount(unit);
	}
	mutex_unlock(&pm_held_lock);
}

/* MEM_OFFLINE of [@first, @last]: the held units there went with the block. */
void pm_held_offline(unsigned long first, unsigned long last)
{
	struct page *unit, *tmp;

	mutex_lock(&pm_held_lock);
	list_for_each_entry_safe(unit, tmp, &pm_held_list, lru)
		if (pm_unit_in(unit, first, last))
			list_del(&unit->lru);
	pm_held_first = 1;
	pm_held_last = 0;
	mutex_unlock(&pm_held_lock);
}

/*
 * Module exit: units still held are memory that may be another host's.
 * They stay as they are (PageOffline, refcount 0: lost to this host until
 * their block goes offline, which needs no module). No notifier will
 * make the managed count what that offline expects, so it is made so now:
 * before 6.11 every page goes back to the count (the offline subtracts
 * the range); since, the pages poisoned after the unit was held (the
 * offline subtracts HWPoison pages itself).
 */
void pm_held_exit(void)
{
	struct page *unit, *tmp;
	unsigned long n = 0;

	/* the notifier is gone; nothing schedules the retry but a hold */
	cancel_delayed_work_sync(&pm_held_retry);
	mutex_lock(&pm_held_lock);
	list_for_each_entry_safe(unit, tmp, &pm_held_list, lru) {
		/* what the offline will subtract itself: 6.11+ HWPoison pages (as in going_offline) */
		unsigned long keep = PM_OFFLINE_SKIPS_OFFLINE_PAGES && !page_ref_count(unit) ?
					     pm_held_uncounted(unit) : 0;

		n++;
		if (page_private(unit) > keep)
			adjust_managed_page_count(unit, page_private(unit) - keep);
		set_page_private(unit, 0);
		list_del(&unit->lru);
	}
	mutex_unlock(&pm_held_lock);
	if (n)
		pr_warn("%lu held units (%lu MiB, revoked or poisoned) never went offline: they stay out of use until they do\n",
			n, n * (PM_UNIT_BYTES >> 20));
}
