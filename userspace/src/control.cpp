#include "poolmem/control.hpp"

#include "poolmem/error.hpp"
#include "poolmem/size.hpp"

#include <uapi/poolmem.h>

#include "policy/pm_policy.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace poolmem {

namespace {

static_assert(PM_NR_TIER_POLICIES == POOLMEM_NR_TIER_POLICIES);
static_assert(PM_NR_POOL_SELECTS == POOLMEM_NR_POOL_SELECTS);
static_assert(PM_TIER_POOL == POOLMEM_TIER_POOL && PM_NAME_MAX == POOLMEM_NAME_MAX);

template <typename T> T arg()
{
	T a;
	std::memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	return a;
}

void set_name(char (&dst)[POOLMEM_NAME_MAX], const std::string &name, const char *what)
{
	if (name.empty() || name.size() >= POOLMEM_NAME_MAX)
		throw Error(std::string(what) + " '" + name + "'",
			    "invalid name (1 to " + std::to_string(POOLMEM_NAME_MAX - 1) + " characters)");
	std::memcpy(dst, name.data(), name.size());
}

/*
 * Issue CMD on a named pool or domain; on failure throw "NAME: no such KIND"
 * for ENOENT, otherwise "NAME: ACTION: strerror".
 */
void named_ioctl(int fd, unsigned long cmd, void *a, const std::string &name, const char *kind,
		 const char *action)
{
	if (ioctl(fd, cmd, a) == 0)
		return;
	int e = errno;
	if (e == ENOENT)
		throw Error::plain(name, std::string("no such ") + kind, e);
	throw Error(name, action, e);
}

std::string get_name(const char (&src)[POOLMEM_NAME_MAX])
{
	return std::string(src, strnlen(src, POOLMEM_NAME_MAX));
}

} // namespace

std::string to_string(TierPolicy p)
{
	auto i = static_cast<size_t>(p);
	return i < PM_NR_TIER_POLICIES ? pm_tier_policy_names[i] : "unknown";
}

std::string to_string(PoolSelect p)
{
	auto i = static_cast<size_t>(p);
	return i < PM_NR_POOL_SELECTS ? pm_pool_select_names[i] : "unknown";
}

std::optional<TierPolicy> parse_tier_policy(std::string_view s)
{
	int i = pm_name_index(pm_tier_policy_names, PM_NR_TIER_POLICIES, std::string(s).c_str());
	if (i < 0)
		return std::nullopt;
	return static_cast<TierPolicy>(i);
}

std::optional<PoolSelect> parse_pool_select(std::string_view s)
{
	int i = pm_name_index(pm_pool_select_names, PM_NR_POOL_SELECTS, std::string(s).c_str());
	if (i < 0)
		return std::nullopt;
	return static_cast<PoolSelect>(i);
}

Control::Control(const std::string &path)
{
	fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
	if (fd_ < 0) {
		int e = errno;
		if (e == ENOENT)
			throw Error(path, "cannot open (is the poolmem module loaded?)", e);
		throw Error(path, "cannot open", e);
	}
}

Control::~Control()
{
	if (fd_ >= 0)
		::close(fd_);
}

Control::Control(Control &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }

Control &Control::operator=(Control &&o) noexcept
{
	if (this != &o) {
		if (fd_ >= 0)
			::close(fd_);
		fd_ = o.fd_;
		o.fd_ = -1;
	}
	return *this;
}

uint32_t Control::abi_version()
{
	auto a = arg<poolmem_version>();
	if (ioctl(fd_, POOLMEM_VERSION, &a))
		throw Error("poolmem", "cannot read ABI version", errno);
	return a.abi;
}

uint32_t Control::pool_add(const std::string &name, int node, uint32_t overcommit_pct)
{
	auto a = arg<poolmem_pool_add>();
	set_name(a.name, name, "pool");
	a.node = node;
	a.tier = POOLMEM_TIER_POOL;
	a.overcommit_pct = overcommit_pct;
	if (ioctl(fd_, POOLMEM_POOL_ADD, &a)) {
		int e = errno;
		if (e == EEXIST)
			throw Error::plain(name, "cannot register pool: a pool of that name or on node " +
							 std::to_string(node) + " exists", e);
		throw Error(name, "cannot register pool on node " + std::to_string(node), e);
	}
	return a.id;
}

void Control::pool_remove(const std::string &name)
{
	auto a = arg<poolmem_name_arg>();
	set_name(a.name, name, "pool");
	if (ioctl(fd_, POOLMEM_POOL_REMOVE, &a)) {
		int e = errno;
		if (e == EBUSY)
			throw Error::plain(name,
					   "cannot unregister pool: domains may allocate from it (drain it "
					   "first: poolctl pool drain " + name + ")",
					   e);
		throw Error(name, "cannot unregister pool", e);
	}
}

PoolInfo Control::pool_info(const std::string &name)
{
	auto a = arg<poolmem_pool_info>();
	set_name(a.name, name, "pool");
	named_ioctl(fd_, POOLMEM_POOL_INFO, &a, name, "pool", "cannot read pool");
	PoolInfo p;
	p.name = name;
	p.id = a.id;
	p.node = a.node;
	p.overcommit_pct = a.overcommit_pct;
	p.capacity_bytes = a.capacity_bytes;
	p.free_bytes = a.free_bytes;
	p.allocated_bytes = a.allocated_bytes;
	p.committed_bytes = a.committed_bytes;
	p.chunks = a.chunks;
	p.allocations = a.allocations;
	p.faults = a.faults;
	p.failures = a.failures;
	p.access_factor = a.access_factor;
	p.moved_in = a.moved_in;
	p.moved_out = a.moved_out;
	p.draining = a.state & POOLMEM_POOL_DRAINING;
	return p;
}

DrainStep Control::pool_drain(const std::string &name, uint64_t max_bytes, bool allow_local,
			      bool check_only)
{
	auto a = arg<poolmem_pool_drain>();
	set_name(a.name, name, "pool");
	a.flags = (allow_local ? POOLMEM_DRAIN_ALLOW_LOCAL : 0) | (check_only ? POOLMEM_DRAIN_CHECK : 0);
	a.max_bytes = max_bytes;
	DrainStep r;
	if (ioctl(fd_, POOLMEM_POOL_DRAIN, &a)) {
		r.err = errno;
		if (r.err == ENOENT)
			throw Error::plain(name, "no such pool", r.err);
		if (r.err != EINTR && r.err != EBUSY && r.err != EIO && r.err != ENOSPC)
			throw Error(name, "cannot drain pool", r.err);
	}
	r.moved_bytes = a.moved_bytes;
	r.remaining_bytes = a.remaining_bytes;
	r.busy_chunks = a.busy_chunks;
	r.blocker = get_name(a.blocker);
	r.blocker_offset = a.blocker_offset;
	r.need_bytes = a.need_bytes;
	r.room_bytes = a.room_bytes;
	return r;
}

void Control::pool_undrain(const std::string &name)
{
	auto a = arg<poolmem_pool_drain>();
	set_name(a.name, name, "pool");
	a.flags = POOLMEM_DRAIN_CANCEL;
	named_ioctl(fd_, POOLMEM_POOL_DRAIN, &a, name, "pool", "cannot end draining");
}

void Control::pool_revoke(const std::string &name)
{
	auto a = arg<poolmem_pool_drain>();
	set_name(a.name, name, "pool");
	a.flags = POOLMEM_DRAIN_REVOKE;
	named_ioctl(fd_, POOLMEM_POOL_DRAIN, &a, name, "pool", "cannot revoke");
}

static std::vector<std::string> list_names(int fd, unsigned long cmd)
{
	for (;;) {
		auto a = arg<poolmem_list>();
		if (ioctl(fd, cmd, &a))
			throw Error("poolmem", "cannot list", errno);
		std::vector<char> buf(static_cast<size_t>(a.total) * POOLMEM_NAME_MAX);
		uint32_t want = a.total;
		a = arg<poolmem_list>();
		a.count = want;
		a.names = reinterpret_cast<uintptr_t>(buf.data());
		if (ioctl(fd, cmd, &a))
			throw Error("poolmem", "cannot list", errno);
		if (a.total > want)
			continue; /* grew in between: again */
		std::vector<std::string> out;
		for (uint32_t i = 0; i < a.total; i++) {
			const char *n = buf.data() + static_cast<size_t>(i) * POOLMEM_NAME_MAX;
			out.emplace_back(n, strnlen(n, POOLMEM_NAME_MAX));
		}
		return out;
	}
}

std::vector<std::string> Control::pool_names() { return list_names(fd_, POOLMEM_POOL_LIST); }
std::vector<std::string> Control::domain_names() { return list_names(fd_, POOLMEM_DOMAIN_LIST); }

namespace {

/*
 * Admission control's refusal as one clause with its figures: what the
 * request asks in the refused tier, against the limit and what the other
 * domains hold (POOLMEM_DOMAIN_CREATE copies them out on -ENOSPC).
 */
std::string refusal_text(const DomainSpec &s, const poolmem_domain_create &a)
{
	const uint64_t ask = a.refused <= POOLMEM_REFUSED_LOCAL_PINNABLE ? s.local_quota : s.pool_quota;
	const uint64_t left = a.limit_bytes > a.committed_bytes ? a.limit_bytes - a.committed_bytes : 0;
	std::string pools = "every pool";
	if (!s.pools.empty()) {
		pools = "pools ";
		for (size_t i = 0; i < s.pools.size(); i++)
			pools += (i ? "," : "") + s.pools[i];
	}
	const std::string figures = "asks " + format_size(ask) + ", " + format_size(left) + " left of " +
				    format_size(a.limit_bytes) + " (" + format_size(a.committed_bytes) +
				    " committed to other domains)";
	const std::string node = a.home_node >= 0 ? "node " + std::to_string(a.home_node) : "the home node";
	switch (a.refused) {
	case POOLMEM_REFUSED_LOCAL:
		return "local tier on " + node + " " + figures +
		       "; the limit is the node's memory x local_overcommit_pct";
	case POOLMEM_REFUSED_LOCAL_PINNABLE:
		return "pinnable local tier on " + node + " " + figures + "; only memory outside ZONE_MOVABLE counts";
	case POOLMEM_REFUSED_POOL:
		return "pool tier on " + pools + " " + figures + "; the limit is capacity x overcommit";
	case POOLMEM_REFUSED_POOL_PINNABLE:
		return "pinnable pool tier on " + pools + " " + figures +
		       "; only pool memory onlined --zone normal counts";
	case POOLMEM_REFUSED_NO_POOL:
		return "a pool quota of " + format_size(s.pool_quota) + " but no pool is registered";
	default:
		return "quotas exceed what the pools and the home node can hold (admission control)";
	}
}

} // namespace

void Control::domain_create(const DomainSpec &s, bool check)
{
	auto a = arg<poolmem_domain_create>();
	set_name(a.name, s.name, "domain");
	a.bytes = s.bytes;
	a.chunk_bytes = s.chunk_bytes;
	a.quota[POOLMEM_TIER_LOCAL] = s.local_quota;
	a.quota[POOLMEM_TIER_POOL] = s.pool_quota;
	for (const auto &p : s.pools)
		a.pool_mask |= 1ULL << pool_info(p).id;
	a.home_node = s.home_node;
	a.tier_policy = static_cast<uint32_t>(s.tier_policy);
	a.pool_select = static_cast<uint32_t>(s.pool_select);
	a.uid = s.uid;
	a.gid = s.gid;
	a.mode = s.mode;
	if (s.pinnable)
		a.flags |= POOLMEM_DOMAIN_PINNABLE;
	if (s.znuma)
		a.flags |= POOLMEM_DOMAIN_ZNUMA;
	if (check)
		a.flags |= POOLMEM_DOMAIN_CHECK;
	if (ioctl(fd_, POOLMEM_DOMAIN_CREATE, &a)) {
		int e = errno;
		switch (e) {
		case EEXIST:
			throw Error::plain(s.name, s.znuma ? "cannot create domain: a domain or file of that name, or "
							     "NAME.local or NAME.pool, exists"
							   : "cannot create domain: a domain of that name exists",
					   e);
		case ENOSPC:
			throw Error::plain(s.name, "cannot create domain: " + refusal_text(s, a), e);
		case EINVAL:
			throw Error::plain(s.name, "cannot create domain: the kernel refused the request (its log "
						   "names the check)",
					   e);
		default:
			throw Error(s.name, "cannot create domain", e);
		}
	}
}

void Control::domain_destroy(const std::string &name)
{
	auto a = arg<poolmem_name_arg>();
	set_name(a.name, name, "domain");
	named_ioctl(fd_, POOLMEM_DOMAIN_DESTROY, &a, name, "domain", "cannot destroy domain");
}

DomainInfo Control::domain_info(const std::string &name)
{
	auto a = arg<poolmem_domain_info>();
	set_name(a.name, name, "domain");
	named_ioctl(fd_, POOLMEM_DOMAIN_INFO, &a, name, "domain", "cannot read domain");
	DomainInfo d;
	d.name = name;
	d.bytes = a.bytes;
	d.chunk_bytes = a.chunk_bytes;
	d.local_quota = a.quota[POOLMEM_TIER_LOCAL];
	d.pool_quota = a.quota[POOLMEM_TIER_POOL];
	d.local_bytes = a.usage[POOLMEM_TIER_LOCAL];
	d.pool_bytes = a.usage[POOLMEM_TIER_POOL];
	d.pool_mask = a.pool_mask;
	d.home_node = a.home_node;
	d.tier_policy = static_cast<TierPolicy>(a.tier_policy);
	d.pool_select = static_cast<PoolSelect>(a.pool_select);
	d.uid = a.uid;
	d.gid = a.gid;
	d.mode = a.mode;
	d.chunks = a.chunks;
	d.faults = a.faults;
	d.sigbus = a.sigbus;
	d.discards = a.discards;
	d.retired_chunks = a.retired_chunks;
	d.moves = a.moves;
	d.pinnable = a.domain_flags & POOLMEM_DOMAIN_PINNABLE;
	d.znuma = a.domain_flags & POOLMEM_DOMAIN_ZNUMA;
	return d;
}

DomainSetResult Control::domain_set(const std::string &name, const DomainChange &c)
{
	auto a = arg<poolmem_domain_set>();
	set_name(a.name, name, "domain");
	if (c.local_quota || c.pool_quota) {
		/* the kernel takes both: the one not given stays as it is */
		auto cur = domain_info(name);
		a.flags |= POOLMEM_SET_QUOTA;
		a.quota[POOLMEM_TIER_LOCAL] = c.local_quota.value_or(cur.local_quota);
		a.quota[POOLMEM_TIER_POOL] = c.pool_quota.value_or(cur.pool_quota);
	}
	if (c.pools) {
		a.flags |= POOLMEM_SET_POOL_MASK;
		for (const auto &p : *c.pools)
			a.pool_mask |= 1ULL << pool_info(p).id;
	}
	if (c.tier_policy) {
		a.flags |= POOLMEM_SET_TIER_POLICY;
		a.tier_policy = static_cast<uint32_t>(*c.tier_policy);
	}
	if (c.pool_select) {
		a.flags |= POOLMEM_SET_POOL_SELECT;
		a.pool_select = static_cast<uint32_t>(*c.pool_select);
	}
	if (c.tiering) {
		a.flags |= POOLMEM_SET_TIERING;
		a.tiering = *c.tiering;
		a.scan_rate = c.scan_rate;
		a.hot_ms = c.hot_ms;
	}
	if (c.check)
		a.flags |= POOLMEM_SET_CHECK;
	if (c.step) {
		a.flags |= POOLMEM_SET_STEP;
		a.move_bytes = c.step;
	}
	DomainSetResult r;
	if (ioctl(fd_, POOLMEM_DOMAIN_SET, &a)) {
		r.err = errno;
		if (r.err == ENOENT)
			throw Error::plain(name, "no such domain", r.err);
		if (r.err == EINVAL)
			throw Error::plain(name,
					   "invalid change: quotas must be chunk multiples, each at most the "
					   "size and together at least the size",
					   r.err);
		if (r.err != ENOSPC && r.err != EBUSY && r.err != EAGAIN && r.err != EIO &&
		    r.err != EINTR)
			throw Error(name, "cannot change domain", r.err);
	}
	r.moved_bytes = a.moved_bytes;
	r.need_bytes = a.need_bytes;
	r.room_bytes = a.room_bytes;
	r.remaining_bytes = a.remaining_bytes;
	return r;
}

std::vector<MapRange> Control::domain_map(const std::string &name)
{
	const uint64_t size = domain_info(name).bytes;
	std::vector<poolmem_map_range> buf(512);
	std::vector<MapRange> out;
	uint64_t start = 0;
	while (start < size) {
		auto a = arg<poolmem_map>();
		set_name(a.name, name, "domain");
		a.start = start;
		a.ranges = reinterpret_cast<uintptr_t>(buf.data());
		a.count = static_cast<uint32_t>(buf.size());
		named_ioctl(fd_, POOLMEM_MAP, &a, name, "domain", "cannot read chunk map");
		for (uint32_t i = 0; i < a.nr; i++) {
			const auto &r = buf[i];
			out.push_back({r.offset, r.length, r.phys, r.pool, r.node});
		}
		if (a.next <= start)
			throw Error(name, "chunk map made no progress");
		start = a.next; /* == size once the kernel has no more ranges */
	}
	return out;
}

std::optional<ReverseHit> Control::reverse(uint64_t phys)
{
	auto a = arg<poolmem_map_reverse>();
	a.phys = phys;
	if (ioctl(fd_, POOLMEM_MAP_REVERSE, &a)) {
		if (errno == ENOENT)
			return std::nullopt;
		throw Error("poolmem", "cannot look up address", errno);
	}
	return ReverseHit{get_name(a.name), a.offset, a.pool, a.node};
}

MemoryErrors Control::memory_errors(uint64_t from)
{
	std::vector<poolmem_memory_error> buf(POOLMEM_MEMORY_ERRORS_KEPT);
	auto a = arg<poolmem_memory_errors>();
	a.from = from;
	a.errors = reinterpret_cast<uintptr_t>(buf.data());
	a.count = static_cast<uint32_t>(buf.size());
	if (ioctl(fd_, POOLMEM_MEMORY_ERRORS, &a))
		throw Error("poolmem", "cannot read the memory errors", errno);
	MemoryErrors r;
	r.next = a.next;
	r.total = a.total;
	r.kept = POOLMEM_MEMORY_ERRORS_KEPT;
	for (uint32_t i = 0; i < a.nr && i < buf.size(); i++) {
		const auto &e = buf[i];
		r.errors.push_back({e.seq, e.time_ns, e.phys, e.offset, get_name(e.domain), get_name(e.pool),
				    e.kind == POOLMEM_MEMERR_SOFT ? "soft" : "hard",
				    e.action == POOLMEM_MEMERR_ISOLATED ? "isolated"
				    : e.action == POOLMEM_MEMERR_MOVED  ? "moved"
				    : e.action == POOLMEM_MEMERR_UNUSED ? "unused"
									: "failed",
				    e.node, e.domain_id});
	}
	return r;
}

ReverseHit Control::page_offline(uint64_t phys)
{
	auto a = arg<poolmem_page_offline>();
	a.phys = phys;
	if (ioctl(fd_, POOLMEM_PAGE_OFFLINE, &a)) {
		char what[40];
		std::snprintf(what, sizeof(what), "page 0x%llx", static_cast<unsigned long long>(phys));
		if (errno == ENOENT)
			throw Error::plain(what, "not in a domain's chunk", ENOENT);
		throw Error(what, "soft offline failed", errno);
	}
	return ReverseHit{get_name(a.name), a.offset, a.pool, -1};
}

void Control::profile_create(const ProfileSpec &s)
{
	auto a = arg<poolmem_profile>();
	set_name(a.name, s.name, "profile");
	a.chunk_bytes = s.chunk_bytes;
	a.quota_pct[POOLMEM_TIER_LOCAL] = s.local.pct;
	a.quota_bytes[POOLMEM_TIER_LOCAL] = s.local.bytes;
	a.quota_pct[POOLMEM_TIER_POOL] = s.pool.pct;
	a.quota_bytes[POOLMEM_TIER_POOL] = s.pool.bytes;
	for (const auto &p : s.pools)
		a.pool_mask |= 1ULL << pool_info(p).id;
	a.home_node = s.home_node;
	a.tier_policy = static_cast<uint32_t>(s.tier_policy);
	a.pool_select = static_cast<uint32_t>(s.pool_select);
	a.uid = s.uid;
	a.gid = s.gid;
	a.mode = s.mode;
	if (s.pinnable)
		a.flags |= POOLMEM_DOMAIN_PINNABLE;
	if (s.znuma)
		a.flags |= POOLMEM_DOMAIN_ZNUMA;
	if (ioctl(fd_, POOLMEM_PROFILE_CREATE, &a)) {
		int e = errno;
		if (e == EEXIST)
			throw Error::plain(s.name, "cannot create profile: a profile or domain of that name exists", e);
		if (e == EINVAL)
			throw Error::plain(s.name, "cannot create profile: invalid quotas, chunk, node or policy "
						   "(percentages of at most 100 that add up to 100 or more, "
						   "or chunk-multiple byte caps)",
					   e);
		throw Error(s.name, "cannot create profile", e);
	}
}

void Control::profile_remove(const std::string &name)
{
	auto a = arg<poolmem_name_arg>();
	set_name(a.name, name, "profile");
	if (ioctl(fd_, POOLMEM_PROFILE_REMOVE, &a)) {
		int e = errno;
		if (e == ENOENT)
			throw Error::plain(name, "no such profile", e);
		if (e == ENOTEMPTY)
			throw Error::plain(name, "cannot remove profile: its directory is not empty", e);
		throw Error(name, "cannot remove profile", e);
	}
}

std::vector<std::string> Control::profile_names() { return list_names(fd_, POOLMEM_PROFILE_LIST); }

ProfileInfo Control::profile_info(const std::string &name)
{
	auto a = arg<poolmem_profile>();
	set_name(a.name, name, "profile");
	named_ioctl(fd_, POOLMEM_PROFILE_INFO, &a, name, "profile", "cannot read profile");
	ProfileInfo p;
	p.spec.name = name;
	p.spec.chunk_bytes = a.chunk_bytes ? a.chunk_bytes : 2ULL << 20;
	p.spec.local = {a.quota_pct[POOLMEM_TIER_LOCAL], a.quota_bytes[POOLMEM_TIER_LOCAL]};
	p.spec.pool = {a.quota_pct[POOLMEM_TIER_POOL], a.quota_bytes[POOLMEM_TIER_POOL]};
	p.spec.home_node = a.home_node;
	p.spec.tier_policy = static_cast<TierPolicy>(a.tier_policy);
	p.spec.pool_select = static_cast<PoolSelect>(a.pool_select);
	p.spec.uid = a.uid;
	p.spec.gid = a.gid;
	p.spec.mode = a.mode;
	p.spec.pinnable = a.flags & POOLMEM_DOMAIN_PINNABLE;
	p.spec.znuma = a.flags & POOLMEM_DOMAIN_ZNUMA;
	p.pool_mask = a.pool_mask;
	p.domains = a.domains;
	return p;
}

namespace {

void set_bind_dir(poolmem_bind &a, const std::string &dir)
{
	if (dir.empty() || dir.size() >= sizeof(a.dir) || dir.find('/') != std::string::npos || dir == "." ||
	    dir == "..")
		throw Error::plain("directory '" + dir + "'",
				   "invalid name (1 to " + std::to_string(sizeof(a.dir) - 1) + " bytes, no '/')", EINVAL);
	std::memcpy(a.dir, dir.data(), dir.size());
}

} // namespace

void Control::vm_bind(const std::string &dir, const std::string &profile, const std::string &vm)
{
	auto a = arg<poolmem_bind>();
	set_bind_dir(a, dir);
	set_name(a.vm, vm, "VM");
	if (!profile.empty())
		set_name(a.profile, profile, "profile");
	if (ioctl(fd_, POOLMEM_VM_BIND, &a)) {
		int e = errno;
		if (e == ENOENT)
			throw Error::plain("profile " + profile, "no such profile", e);
		if (e == ENOSPC)
			throw Error::plain("VM " + vm, "cannot bind: " + std::to_string(POOLMEM_BINDS_MAX) +
							   " bindings already wait for their directories", e);
		if (e == EINVAL)
			throw Error::plain("VM " + vm, "cannot bind: invalid name (domain names are [A-Za-z0-9_.-], "
							   "not starting with '.' or '-')", e);
		throw Error("VM " + vm, "cannot bind", e);
	}
}

bool Control::vm_unbind(const std::string &vm)
{
	auto a = arg<poolmem_bind>();
	set_name(a.vm, vm, "VM");
	a.flags = POOLMEM_BIND_REMOVE;
	if (ioctl(fd_, POOLMEM_VM_BIND, &a) == 0)
		return true;
	if (errno == ENOENT)
		return false;
	throw Error("VM " + vm, "cannot take back its bindings", errno);
}

} // namespace poolmem
