// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem placement policy (see pm_policy.h). No kernel headers, no
 * allocation, no floating point: the same file runs in the module and in
 * host unit tests.
 */
#include "pm_policy.h"

const char *const pm_tier_names[PM_NR_TIERS] = { "local", "pool" };
const char *const pm_tier_policy_names[PM_NR_TIER_POLICIES] = {
	"local-first", "interleave", "pool-first"
};
const char *const pm_pool_select_names[PM_NR_POOL_SELECTS] = {
	"round-robin", "random", "nearest", "smart-idle"
};

static int pm_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

int pm_name_index(const char *const *names, unsigned int n, const char *s)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (pm_streq(names[i], s))
			return (int)i;
	return -1;
}

int pm_name_valid(const char *buf, unsigned int size)
{
	unsigned int len = 0, i;

	if (size > PM_NAME_MAX)
		size = PM_NAME_MAX;
	while (len < size && buf[len])
		len++;
	if (len == 0 || len == size)
		return 0;
	if (buf[0] == '.' || buf[0] == '-' || pm_streq(buf, "control"))
		return 0;
	for (i = 0; i < len; i++) {
		char c = buf[i];

		/* ASCII only: isalnum() in the kernel accepts Latin-1 letters */
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	for (i = len; i < size; i++)
		if (buf[i])
			return 0;
	return 1;
}

const char *const pm_geometry_names[PM_NR_GEO] = {
	[PM_GEO_OK] = "valid",
	[PM_GEO_CHUNK] = "chunk size not a power of two from 2 MiB to 1 GiB",
	[PM_GEO_SIZE] = "size 0 or above 64 TiB",
	[PM_GEO_SIZE_ALIGN] = "size not a multiple of the chunk size",
	[PM_GEO_QUOTA_ABOVE] = "a tier quota above the size",
	[PM_GEO_QUOTA_COVER] = "quotas do not cover the size",
	[PM_GEO_QUOTA_ALIGN] = "a quota not a multiple of the chunk size",
};

enum pm_geometry pm_domain_geometry(u64 bytes, u64 chunk, const u64 quota[PM_NR_TIERS])
{
	if (chunk < PM_DOMAIN_CHUNK_MIN || chunk > PM_DOMAIN_CHUNK_MAX || (chunk & (chunk - 1)))
		return PM_GEO_CHUNK;
	if (bytes == 0 || bytes > PM_DOMAIN_BYTES_MAX)
		return PM_GEO_SIZE;
	if (bytes & (chunk - 1))
		return PM_GEO_SIZE_ALIGN;
	if (quota[PM_TIER_LOCAL] > bytes || quota[PM_TIER_POOL] > bytes)
		return PM_GEO_QUOTA_ABOVE;
	if (quota[PM_TIER_LOCAL] + quota[PM_TIER_POOL] < bytes)
		return PM_GEO_QUOTA_COVER;
	if ((quota[PM_TIER_LOCAL] | quota[PM_TIER_POOL]) & (chunk - 1))
		return PM_GEO_QUOTA_ALIGN;
	return PM_GEO_OK;
}

const char *const pm_profile_geometry_names[PM_NR_PGEO] = {
	[PM_PGEO_OK] = "valid",
	[PM_PGEO_CHUNK] = "chunk size not a power of two from 2 MiB to 1 GiB",
	[PM_PGEO_PCT_ABOVE] = "quota above 100%",
	[PM_PGEO_PCT_AND_BYTES] = "a tier's quota both a percentage and bytes",
	[PM_PGEO_QUOTA_ALIGN] = "quota not a multiple of the chunk size",
	[PM_PGEO_QUOTA_MAX] = "quota above the largest domain",
	[PM_PGEO_COVER] = "quotas do not cover 100% of a size",
	[PM_PGEO_ZNUMA] = "znuma: the local and pool quotas must be percentages adding up to 100, neither 0",
};

enum pm_profile_geometry pm_profile_geometry(u64 chunk, const u32 pct[PM_NR_TIERS], const u64 bytes[PM_NR_TIERS],
					     int znuma, u32 *tier)
{
	u32 t;

	if (!chunk)
		chunk = PM_DOMAIN_CHUNK_MIN;
	if (chunk < PM_DOMAIN_CHUNK_MIN || chunk > PM_DOMAIN_CHUNK_MAX || (chunk & (chunk - 1)))
		return PM_PGEO_CHUNK;
	for (t = 0; t < PM_NR_TIERS; t++) {
		enum pm_profile_geometry bad = PM_PGEO_OK;

		if (pct[t] > 100)
			bad = PM_PGEO_PCT_ABOVE;
		else if (pct[t] && bytes[t])
			bad = PM_PGEO_PCT_AND_BYTES;
		else if (bytes[t] & (chunk - 1))
			bad = PM_PGEO_QUOTA_ALIGN;
		else if (bytes[t] > PM_DOMAIN_BYTES_MAX)
			bad = PM_PGEO_QUOTA_MAX;
		if (bad != PM_PGEO_OK) {
			if (tier)
				*tier = t;
			return bad;
		}
	}
	/* percentages alone must cover every size */
	if (!bytes[PM_TIER_LOCAL] && !bytes[PM_TIER_POOL] && pct[PM_TIER_LOCAL] + pct[PM_TIER_POOL] < 100)
		return PM_PGEO_COVER;
	/*
	 * znuma: the local window's size gives the domain's by the ratio of
	 * the percentages (the kernel's pm_profile_fill_create()), so both
	 * are percentages.
	 */
	if (znuma && (bytes[PM_TIER_LOCAL] || bytes[PM_TIER_POOL] || !pct[PM_TIER_LOCAL] || !pct[PM_TIER_POOL] ||
		      pct[PM_TIER_LOCAL] + pct[PM_TIER_POOL] != 100))
		return PM_PGEO_ZNUMA;
	return PM_PGEO_OK;
}

u64 pm_pct_of(u64 bytes, u32 pct)
{
	return bytes / 100 * pct + bytes % 100 * pct / 100;
}

u64 pm_profile_quota(u64 size, u64 chunk, u32 pct, u64 cap)
{
	u64 q;

	if (pct) {
		q = pm_pct_of(size, pct);
		q = (q + chunk - 1) & ~(chunk - 1);
	} else {
		q = cap;
	}
	return q < size ? q : size;
}

unsigned int pm_tier_order(u32 policy, const struct pm_tier_view *t, u32 order[PM_NR_TIERS])
{
	int room_l = t->used[PM_TIER_LOCAL] < t->quota[PM_TIER_LOCAL];
	int room_p = t->used[PM_TIER_POOL] < t->quota[PM_TIER_POOL];
	u32 first, second;
	unsigned int n = 0;

	switch (policy) {
	case PM_TIER_LOCAL_FIRST:
		first = PM_TIER_LOCAL;
		break;
	case PM_TIER_POOL_FIRST:
		first = PM_TIER_POOL;
		break;
	case PM_TIER_INTERLEAVE:
		/*
		 * used_l / quota_l <= used_p / quota_p, cross-multiplied;
		 * chunk counts stay far below 2^32, so no overflow.
		 */
		if (room_l && room_p)
			first = t->used[PM_TIER_LOCAL] * t->quota[PM_TIER_POOL] <=
					t->used[PM_TIER_POOL] * t->quota[PM_TIER_LOCAL] ?
				PM_TIER_LOCAL : PM_TIER_POOL;
		else
			first = room_l ? PM_TIER_LOCAL : PM_TIER_POOL;
		break;
	default:
		return 0;
	}
	second = first == PM_TIER_LOCAL ? PM_TIER_POOL : PM_TIER_LOCAL;

	if (first == PM_TIER_LOCAL ? room_l : room_p)
		order[n++] = first;
	if (second == PM_TIER_LOCAL ? room_l : room_p)
		order[n++] = second;
	return n;
}

/*
 * A window number far behind the current one means the window length was
 * changed (window_ms): the old windows mean nothing now, start afresh.
 * A number a little behind is a late event from a racing CPU.
 */
static int pm_af_restarted(struct pm_af *a, u64 epoch)
{
	int i;

	if (epoch + PM_AF_WINDOWS > a->epoch)
		return 0;
	for (i = 0; i < PM_AF_WINDOWS; i++)
		a->win[i] = 0;
	a->epoch = epoch;
	return 1;
}

void pm_af_advance(struct pm_af *a, u64 epoch)
{
	u64 shift;
	int i;

	if (pm_af_restarted(a, epoch) || epoch <= a->epoch)
		return;
	shift = epoch - a->epoch;
	for (i = PM_AF_WINDOWS - 1; i >= 0; i--)
		a->win[i] = (u64)i >= shift ? a->win[i - shift] : 0;
	a->epoch = epoch;
}

void pm_af_add(struct pm_af *a, u64 epoch, u64 n)
{
	pm_af_advance(a, epoch);
	if (epoch == a->epoch)
		a->win[0] += n;
	else if (a->epoch - epoch < PM_AF_WINDOWS)
		a->win[a->epoch - epoch] += n;	/* late event, older window */
}

u64 pm_af_value(const struct pm_af *a, u64 epoch)
{
	u64 age = epoch > a->epoch ? epoch - a->epoch : 0;
	u64 v = 0;
	int i;

	for (i = 0; i < PM_AF_WINDOWS; i++) {
		u64 w = (u64)i + age;

		if (w < PM_AF_WINDOWS)
			v += a->win[i] << (PM_AF_WINDOWS - 1 - w);
	}
	return v;
}

unsigned int pm_smart_idle_m(unsigned int n)
{
	unsigned int m = 0;

	while ((1u << m) < n)
		m++;
	return m ? m : 1;
}

/* Insertion sort of idx[lo..hi) by the key cmp says is smaller. */
typedef int (*pm_less_fn)(const struct pm_pool_view *a, const struct pm_pool_view *b);

static void sort_idx(const struct pm_pool_view *v, u32 *idx, unsigned int lo, unsigned int hi,
		     pm_less_fn less)
{
	unsigned int i, j;

	for (i = lo + 1; i < hi; i++) {
		u32 x = idx[i];

		for (j = i; j > lo && less(&v[x], &v[idx[j - 1]]); j--)
			idx[j] = idx[j - 1];
		idx[j] = x;
	}
}

static int less_distance(const struct pm_pool_view *a, const struct pm_pool_view *b)
{
	return a->distance != b->distance ? a->distance < b->distance : a->id < b->id;
}

static int less_af(const struct pm_pool_view *a, const struct pm_pool_view *b)
{
	return a->af != b->af ? a->af < b->af : a->id < b->id;
}

static int less_allocated(const struct pm_pool_view *a, const struct pm_pool_view *b)
{
	return a->allocated != b->allocated ? a->allocated < b->allocated : a->id < b->id;
}

const char *const pm_rr_start_names[PM_NR_RR_STARTS] = { "zero", "random", "sequence", "salted" };

u32 pm_rr_cursor_start(u32 how, u32 seq, u32 salt, u32 rnd)
{
	switch (how) {
	case PM_RR_START_ZERO:
		return 0;
	case PM_RR_START_RANDOM:
		return rnd;
	case PM_RR_START_SEQUENCE:
		return seq;
	default:
		return seq + salt;	/* u32 wrap is harmless: only cursor % n is used */
	}
}

unsigned int pm_pool_order(u32 policy, const struct pm_pool_view *v, unsigned int n,
			   u32 cursor, u32 rnd, u32 *order)
{
	unsigned int i, m;

	if (n == 0 || n > PM_MAX_POOLS)
		return 0;

	switch (policy) {
	case PM_SELECT_ROUND_ROBIN:
	case PM_SELECT_RANDOM: {
		u32 start = (policy == PM_SELECT_RANDOM ? rnd : cursor) % n;

		for (i = 0; i < n; i++)
			order[i] = (start + i) % n;
		return n;
	}
	case PM_SELECT_NEAREST:
		for (i = 0; i < n; i++)
			order[i] = i;
		sort_idx(v, order, 0, n, less_distance);
		return n;
	case PM_SELECT_SMART_IDLE:
		for (i = 0; i < n; i++)
			order[i] = i;
		sort_idx(v, order, 0, n, less_af);
		m = pm_smart_idle_m(n);
		sort_idx(v, order, 0, m, less_allocated);
		return n;
	default:
		return 0;
	}
}
