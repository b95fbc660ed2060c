// The poolmem kernel module's control interface (/dev/poolmem/control).
// Only libpoolmem issues its ioctls; see kmod/include/uapi/poolmem.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace poolmem {

enum class TierPolicy { local_first = 0, interleave = 1, pool_first = 2 };
enum class PoolSelect { round_robin = 0, random = 1, nearest = 2, smart_idle = 3 };

std::string to_string(TierPolicy p);
std::string to_string(PoolSelect p);
/// "local-first" etc. (the kernel's own name tables, kmod/policy); nullopt
/// for an unknown name.
std::optional<TierPolicy> parse_tier_policy(std::string_view s);
std::optional<PoolSelect> parse_pool_select(std::string_view s);

/// A pool-tier chunk's pool id in MapRange::pool when it is local.
constexpr uint32_t local_pool = 0xffffffffu;

struct PoolInfo {
	std::string name;
	uint32_t id = 0;
	int node = -1;
	uint32_t overcommit_pct = 100;
	uint64_t capacity_bytes = 0, free_bytes = 0, allocated_bytes = 0, committed_bytes = 0;
	uint64_t chunks = 0, allocations = 0, faults = 0, failures = 0, access_factor = 0;
	uint64_t moved_in = 0, moved_out = 0; ///< chunks migrated here / away
	bool draining = false;                ///< takes no new chunks
};

/// One POOLMEM_POOL_DRAIN call: what moved and, when it stopped early,
/// why (err: 0, EINTR, EBUSY (pinned), EIO (memory error), ENOSPC).
struct DrainStep {
	int err = 0;
	uint64_t moved_bytes = 0, remaining_bytes = 0, busy_chunks = 0;
	std::string blocker; ///< the domain that stopped it
	uint64_t blocker_offset = 0, need_bytes = 0, room_bytes = 0;
};

/// What POOLMEM_DOMAIN_SET changes; unset fields stay as they are.
struct DomainChange {
	std::optional<uint64_t> local_quota, pool_quota; ///< both or neither are sent
	std::optional<std::vector<std::string>> pools;   ///< empty = every pool
	std::optional<TierPolicy> tier_policy;
	std::optional<PoolSelect> pool_select;
	/// Tiering (0 off, 1 sample, 2 on), with scan rate (bytes/s) and hot
	/// threshold (ms); 0 keeps the domain's value.
	std::optional<uint32_t> tiering;
	uint64_t scan_rate = 0;
	uint32_t hot_ms = 0;
	/// Every check (admission and room for the moves included), nothing
	/// changed: POOLMEM_SET_CHECK.
	bool check = false;
	/// Move at most this many bytes, then return (POOLMEM_SET_STEP, ABI
	/// 13); 0: every move at once. With no field above set, a step goes on
	/// with the moves an earlier change left.
	uint64_t step = 0;
};

struct DomainSetResult {
	int err = 0; ///< 0, ENOSPC (need/room say why), EBUSY, EAGAIN, EIO, EINTR
	uint64_t moved_bytes = 0, need_bytes = 0, room_bytes = 0;
	uint64_t remaining_bytes = 0; ///< still to move, at least (ABI 13)
};

struct DomainSpec {
	std::string name;
	uint64_t bytes = 0;
	uint64_t chunk_bytes = 0; ///< 0 = 2 MiB
	uint64_t local_quota = 0, pool_quota = 0;
	std::vector<std::string> pools; ///< allowed pools; empty = all
	int home_node = -1;             ///< -1 = first node with CPUs
	TierPolicy tier_policy = TierPolicy::local_first;
	PoolSelect pool_select = PoolSelect::round_robin;
	uint32_t uid = 0, gid = 0, mode = 0600;
	/// Chunks only from memory outside ZONE_MOVABLE, so VFIO/RDMA can
	/// long-term pin the domain (POOLMEM_DOMAIN_PINNABLE).
	bool pinnable = false;
	/// Two windows, NAME.local ([0, local_quota)) and NAME.pool (the
	/// rest), offered to the guest as two NUMA nodes (POOLMEM_DOMAIN_ZNUMA):
	/// local_quota + pool_quota must equal bytes.
	bool znuma = false;
};

struct DomainInfo {
	std::string name;
	uint64_t bytes = 0, chunk_bytes = 0;
	uint64_t local_quota = 0, pool_quota = 0, local_bytes = 0, pool_bytes = 0;
	uint64_t pool_mask = 0;
	int home_node = -1;
	TierPolicy tier_policy = TierPolicy::local_first;
	PoolSelect pool_select = PoolSelect::round_robin;
	uint32_t uid = 0, gid = 0, mode = 0;
	uint64_t chunks = 0, faults = 0, sigbus = 0, discards = 0;
	/// Chunks discarded while still referenced elsewhere: still charged.
	uint64_t retired_chunks = 0;
	uint64_t moves = 0; ///< chunks migrated
	bool pinnable = false;
	bool znuma = false; ///< POOLMEM_DOMAIN_ZNUMA: windows NAME.local, NAME.pool
};

/// Quota of one tier in a profile: a percentage of the domain's size or a
/// byte cap (both 0: none).
struct ProfileQuota {
	uint32_t pct = 0;
	uint64_t bytes = 0;
};

/// A profile: a directory of the poolmem file system whose files become
/// domains with these quotas and policies when ftruncate() sizes them.
struct ProfileSpec {
	std::string name;
	uint64_t chunk_bytes = 0; ///< 0 = 2 MiB
	ProfileQuota local, pool;
	std::vector<std::string> pools; ///< allowed pools; empty = all
	int home_node = -1;
	TierPolicy tier_policy = TierPolicy::local_first;
	PoolSelect pool_select = PoolSelect::round_robin;
	uint32_t uid = 0, gid = 0, mode = 0700; ///< the directory's
	bool pinnable = false;
	bool znuma = false; ///< a VM's files are the windows of one domain (percentages only)
};

struct ProfileInfo {
	ProfileSpec spec;
	uint64_t pool_mask = 0;
	uint64_t domains = 0; ///< live domains made from it
};

struct MapRange {
	uint64_t offset = 0, length = 0, phys = 0;
	uint32_t pool = local_pool;
	int node = -1;
};

struct ReverseHit {
	std::string domain;
	uint64_t offset = 0;
	uint32_t pool = local_pool;
	int node = -1;
};

/// A memory error poolmem handled (POOLMEM_MEMORY_ERRORS).
struct MemoryError {
	uint64_t seq = 0;
	uint64_t time_ns = 0; ///< CLOCK_REALTIME
	uint64_t phys = 0;    ///< host physical address of the page
	uint64_t offset = 0;  ///< in the domain
	std::string domain;   ///< empty: the page held no domain's data
	std::string pool;     ///< empty: a local node's memory
	std::string kind;     ///< "hard" (uncorrectable) or "soft" (soft offline)
	std::string action;   ///< "isolated", "moved", "unused" or "failed"
	int node = -1;
	uint32_t domain_id = 0; ///< DomainStats::id of that domain; 0 from an older module
};

/// Memory errors from sequence number FROM on, and how many there were in all.
struct MemoryErrors {
	std::vector<MemoryError> errors;
	uint64_t next = 0, total = 0;
	unsigned kept = 0; ///< how many the module keeps (the oldest go)
};

/// An open control device. Not copyable; movable. Methods are not
/// thread-safe on one object (use one Control per thread). Every failure
/// throws poolmem::Error naming the pool or domain and the kernel's cause.
class Control {
public:
	/// Open /dev/poolmem/control (or PATH). Throws when the module is not
	/// loaded or the caller lacks CAP_SYS_ADMIN.
	explicit Control(const std::string &path = "/dev/poolmem/control");
	~Control();
	Control(const Control &) = delete;
	Control &operator=(const Control &) = delete;
	Control(Control &&other) noexcept;
	Control &operator=(Control &&other) noexcept;

	uint32_t abi_version();

	uint32_t pool_add(const std::string &name, int node, uint32_t overcommit_pct = 100);
	void pool_remove(const std::string &name);
	std::vector<std::string> pool_names();
	PoolInfo pool_info(const std::string &name);
	/// Move up to MAX_BYTES (0: all) off pool NAME; marks it draining.
	/// Errors that explain themselves come back in DrainStep::err; others
	/// (no such pool, bad arguments) throw.
	DrainStep pool_drain(const std::string &name, uint64_t max_bytes, bool allow_local,
			     bool check_only = false);
	void pool_undrain(const std::string &name);
	/// The pool's memory is no longer this host's (a lost lease on a
	/// shared device): offlining it drops the chunks there unread, and
	/// their domains get memory errors on them (POOLMEM_DRAIN_REVOKE).
	/// pool_undrain() ends it.
	void pool_revoke(const std::string &name);

	/// Create domain SPEC; with CHECK, run every check the kernel runs
	/// (admission included) and create nothing (POOLMEM_DOMAIN_CHECK):
	/// the same errors as a create.
	void domain_create(const DomainSpec &spec, bool check = false);
	void domain_destroy(const std::string &name);
	std::vector<std::string> domain_names();
	DomainInfo domain_info(const std::string &name);
	/// Change a live domain's quotas, pools and policies (chunks move as
	/// needed). Refusals with figures come back in the result; EINVAL,
	/// ENOENT and the like throw.
	DomainSetResult domain_set(const std::string &name, const DomainChange &change);
	/// The whole chunk map of NAME, coalesced by the kernel.
	std::vector<MapRange> domain_map(const std::string &name);
	/// Which domain holds host physical address PHYS (nullopt: none).
	std::optional<ReverseHit> reverse(uint64_t phys);
	/// The memory errors the module kept (its last 256), oldest first,
	/// from sequence number FROM on.
	MemoryErrors memory_errors(uint64_t from = 0);
	/// Soft offline of the page at PHYS: its chunk moves with its data,
	/// the page leaves use. Throws (ENOENT: not in a domain's chunk).
	ReverseHit page_offline(uint64_t phys);

	void profile_create(const ProfileSpec &spec);
	void profile_remove(const std::string &name);
	std::vector<std::string> profile_names();
	ProfileInfo profile_info(const std::string &name);
	/// The next directory named DIR made below a profile directory (libvirt's
	/// <id>-<vm>) gets PROFILE ("" = its parent's) and names its first
	/// domain VM (POOLMEM_VM_BIND). Throws ENOENT for an unknown profile.
	void vm_bind(const std::string &dir, const std::string &profile, const std::string &vm);
	/// Take back VM's bindings still waiting for their directories; false
	/// if none waited.
	bool vm_unbind(const std::string &vm);

private:
	int fd_ = -1;
};

} // namespace poolmem
