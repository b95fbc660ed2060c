// poolmem's statistics as sysfs shows them (Documentation/ABI/testing/
// sysfs-kernel-poolmem, sysfs-class-poolmem). Reading needs no privilege
// and no open control device; the sysfs root is a parameter for fixtures.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace poolmem {

struct PoolStats {
	std::string name;
	unsigned id = 0;
	int node = -1;
	std::string tier;
	uint64_t overcommit_pct = 100;
	uint64_t capacity_bytes = 0, free_bytes = 0, allocated_bytes = 0, committed_bytes = 0;
	uint64_t pinnable_bytes = 0; ///< of capacity_bytes, outside ZONE_MOVABLE
	uint64_t chunks = 0, allocations = 0, faults = 0, failures = 0, access_factor = 0;
	uint64_t moved_in = 0, moved_out = 0; ///< chunks migrated here / away
	uint64_t accesses = 0;                ///< estimated from sampled refaults (tiering)
	uint64_t moved_bytes = 0, move_retries = 0, move_pins = 0;
	uint64_t samples = 0, promotions = 0, demotions = 0; ///< tier moves: to local, from local
	/// zero reserve (pre-zeroed units of the pool's node): held now, units
	/// zeroed into it, chunk units taken from it / zeroed on the fault path
	uint64_t zero_reserve_bytes = 0, zero_reserve_refills = 0, zero_reserve_hits = 0, zero_reserve_misses = 0;
	uint64_t zero_reserve_target_bytes = 0;
	/// memory errors in the pool's memory (pages poisoned, their data lost
	/// if a domain held them) and pages soft-offlined (moved off first);
	/// since the module was loaded (ABI 7)
	uint64_t memory_errors = 0, soft_offlines = 0;
	/// chunks of the pool given back by discards (fallocate PUNCH_HOLE,
	/// MADV_REMOVE, chunks zeroed by partial discards), bytes (ABI 8)
	uint64_t discarded_bytes = 0;
	/// chunks rebalancing moved away from the pool, and whether it is
	/// contended now (ABI 15; 0 and false before)
	uint64_t rebalanced_chunks = 0;
	bool contended = false;
	std::string error_policy = "report"; ///< "report", "drain N" or "drain N/SECONDS"
	bool degraded = false;                ///< memory errors past error_policy: draining for good
	std::string zero_reserve;             ///< as configured: "1%" or bytes
	std::string state;                    ///< "online" or "draining"
	std::vector<uint64_t> window_counts;  ///< newest first
};

struct DomainStats {
	std::string name;
	/// the module's id of the domain, never reused until its 32 bits wrap
	/// (ABI 12); 0 from an older module
	uint32_t id = 0;
	uint64_t size_bytes = 0, chunk_bytes = 0;
	uint64_t local_quota_bytes = 0, pool_quota_bytes = 0, local_bytes = 0, pool_bytes = 0;
	uint64_t chunks = 0, faults = 0, sigbus = 0, discards = 0;
	int home_node = -1;
	bool pinnable = false; ///< chunks only outside ZONE_MOVABLE (long-term pins work)
	std::string tier_policy, pool_select;
	std::map<std::string, uint64_t> pool_chunks;  ///< pool name -> chunks
	std::vector<uint64_t> fault_latency_histogram; ///< bucket i: [2^i, 2^(i+1)) ns
	uint64_t fault_latency_sum_ns = 0;
	uint64_t retired_chunks = 0; ///< discarded while still referenced: still charged
	uint64_t moves = 0;          ///< chunks migrated (drain, live changes)
	uint64_t move_retries = 0;   ///< moves put off: short-lived references
	uint64_t move_pins = 0;      ///< moves refused: long-term pins
	uint64_t revoked_chunks = 0; ///< lost to a revoked pool (cumulative; ABI 6)
	uint64_t memory_errors = 0;  ///< pages lost to memory errors (cumulative; ABI 7)
	/// Tiering: chunks unmapped for sampling, those faulted in again
	/// (accessed), chunks moved to the local tier (hot) and to the pool
	/// tier (cold), and the sampling worker's CPU time.
	uint64_t samples = 0, sample_hits = 0, promotions = 0, demotions = 0, tiering_scan_ns = 0;
	/// of sample_hits, refaults of chunks in the pool tier (ABI 14; 0 before)
	uint64_t sample_hits_pool = 0;
	/// chunks rebalancing moved off contended pools (ABI 15; 0 before)
	uint64_t rebalanced_chunks = 0;
	/// what a quota change left to move (sysfs moves_pending_bytes, ABI
	/// 15; 0 before, and in what read_proc_domains() returns)
	uint64_t moves_pending_bytes = 0;
	std::string tiering = "off"; ///< off, sample or on
	uint64_t scan_rate = 0;      ///< bytes sampled per second
	uint64_t hot_ms = 0;         ///< a refault within this makes a chunk hot
	uint64_t hot_chunks = 0, cold_chunks = 0;
	std::string profile;         ///< profile it was made from; empty for a named domain
	std::string file;            ///< path under the mount point, e.g. "/web1"
	std::string creator;         ///< "<pid> <comm>" of the process that made it
	/// zNUMA windows ("local", "pool"): bytes [base, base + size) of the
	/// domain, each also a file NAME.local / NAME.pool; empty otherwise
	struct Window {
		std::string name;
		uint64_t base = 0, size = 0;
		bool operator==(const Window &) const = default;
	};
	std::vector<Window> windows;
	bool operator==(const DomainStats &) const = default;
};

/// "p0 3\np1 5\n" -> {p0: 3, p1: 5}; throws std::invalid_argument on junk.
std::map<std::string, uint64_t> parse_pool_chunks(std::string_view text);
/// "1 2 3" -> {1, 2, 3}; throws std::invalid_argument on junk.
std::vector<uint64_t> parse_u64_list(std::string_view text);

/// One node's zero reserve, from /sys/kernel/poolmem/zero_reserve: pools'
/// nodes and the local tier's (nodes with CPUs) alike.
struct NodeZeroReserve {
	int node = -1;
	uint64_t target_bytes = 0, bytes = 0; ///< to hold; held now
	uint64_t refills = 0, hits = 0, misses = 0; ///< units zeroed ahead; taken / zeroed at the fault
};

/// "NODE TARGET BYTES REFILLS HITS MISSES" lines -> one entry per line;
/// throws std::invalid_argument on a malformed line.
std::vector<NodeZeroReserve> parse_zero_reserves(std::string_view text);
/// Every node's zero reserve, sorted by node; empty when the module is not
/// loaded (or is older than the file).
std::vector<NodeZeroReserve> read_zero_reserves(const std::filesystem::path &sysfs = "/sys");

/// Whether the module's sysfs is there (module loaded).
bool module_sysfs_present(const std::filesystem::path &sysfs = "/sys");

/// The loaded module's ioctl ABI version (/sys/kernel/poolmem/abi_version,
/// ABI 9); nullopt when no module is loaded or it is older than the file.
std::optional<uint32_t> read_module_abi(const std::filesystem::path &sysfs = "/sys");

/// One line on a module whose ABI is not @ours (poolctl's): which is older
/// and what to do; empty when they match.
std::string abi_mismatch(uint32_t module_abi, uint32_t ours);

/// Counts that outlive domains (ABI 8): host-wide in /sys/kernel/poolmem/,
/// per profile in /sys/kernel/poolmem/profiles/<name>/, since the module
/// was loaded (or the profile created).
struct Counts {
	std::string profile; ///< empty: host-wide
	uint64_t sigbus = 0;             ///< faults denied: no memory within quota
	uint64_t admission_refusals = 0; ///< domains refused at creation (ENOSPC)
	uint64_t domains_created = 0, domains_destroyed = 0;
	uint64_t discarded_bytes = 0;    ///< chunks given back by discards, bytes
};
/// The host-wide counts; nullopt when the module is not loaded or older
/// than ABI 8.
std::optional<Counts> read_counts(const std::filesystem::path &sysfs = "/sys");
/// Every profile's counts, sorted by name; a profile removed while it is
/// being read is skipped.
std::vector<Counts> read_profile_counts(const std::filesystem::path &sysfs = "/sys");

/// Every pool, sorted by id. Empty when the module is not loaded. A pool
/// removed while it is being read is skipped.
/// Every pool. A pool whose directory is there but a file of which can't
/// be read (EACCES, EIO) is left out and, with ERRORS, named there.
std::vector<PoolStats> read_pools(const std::filesystem::path &sysfs = "/sys",
				  std::vector<std::string> *errors = nullptr);
std::optional<PoolStats> read_pool(const std::filesystem::path &sysfs, const std::string &name);

/// A pool's settings, each one write() of its sysfs file
/// (/sys/kernel/poolmem/pools/POOL/...): 0, or the errno of the open or
/// of the write (the kernel's refusal: EINVAL, ENOSPC ...). The only place
/// poolctl and the agent change a pool's sysfs file.
/// overcommit_pct: the admission ratio in percent (100 to 1000).
int set_pool_overcommit(const std::filesystem::path &sysfs, const std::string &pool, uint32_t pct);
/// error_policy: report, or drain after THRESHOLD errors (1 to 64) within
/// PERIOD_S seconds (0: ever).
int set_pool_error_policy(const std::filesystem::path &sysfs, const std::string &pool, bool drain,
			  unsigned threshold = 0, uint32_t period_s = 0);
/// zero_reserve: bytes kept zeroed ahead (0: off), or a percentage of the
/// pool (0 to 50) when PERCENT.
int set_pool_zero_reserve(const std::filesystem::path &sysfs, const std::string &pool, uint64_t value,
			  bool percent = false);
/// The zero reserve as read from zero_reserve ("0", "64M" or "10%"),
/// written back as it was.
int restore_pool_zero_reserve(const std::filesystem::path &sysfs, const std::string &pool, const std::string &as_read);
/// remote_load: the access factor and bytes other hosts put on the pool's
/// shared device (the cluster agent's).
int set_pool_remote_load(const std::filesystem::path &sysfs, const std::string &pool, uint64_t access_factor,
			 uint64_t bytes);

/// The procfs root that goes with a sysfs root: /proc for /sys, and for a
/// fixture tree's DIR/sys its DIR/proc (tests/exporter/make-fixture.py).
std::filesystem::path procfs_for(const std::filesystem::path &sysfs);

/// Every domain of /proc/poolmem/domains (@table; Documentation/ABI/
/// testing/procfs-poolmem), with fault_latency_histogram from
/// /proc/poolmem/domain_histograms (@histograms) when that is given.
/// Columns are found by the header's names; nullopt when a column this
/// library reads is missing (a module that does not have it: read sysfs).
/// Throws std::invalid_argument on a malformed table.
std::optional<std::vector<DomainStats>> parse_domain_table(std::string_view table,
							   std::optional<std::string_view> histograms = std::nullopt);

/// Every live domain, sorted by name. A domain destroyed while it is being
/// read is skipped. One read of PROCFS/poolmem/domains where the module
/// has it; each domain's sysfs files otherwise (an empty PROCFS: always).
std::vector<DomainStats> read_domains(const std::filesystem::path &sysfs = "/sys");
std::vector<DomainStats> read_domains(const std::filesystem::path &sysfs, const std::filesystem::path &procfs);
std::optional<DomainStats> read_domain(const std::filesystem::path &sysfs, const std::string &name);

/// read_domains() for callers that read again and again (the exporter): what
/// never changes in a domain's life (size, chunk size, home node, pinnable,
/// profile, file, creator) is read once per domain, which is the same domain while its
/// sysfs directory keeps its inode number and change time; every scrape
/// reads only stat, quotas, policies, pool_chunks and
/// fault_latency_histogram. Thread-safe.
class DomainReader {
public:
	/// Every domain; one whose directory is there but a file of which
	/// can't be read (EACCES: not in group stats_gid) is left out and, with
	/// ERRORS, named there ("web1/stat: cannot read: Permission denied").
	/// Without HISTOGRAMS, fault_latency_histogram is left empty (not read).
	/// Where PROCFS/poolmem/domains can be read (the module has it and the
	/// caller may read it), that one file is read instead of every domain's
	/// sysfs files; PROCFS defaults to procfs_for(SYSFS), and an empty
	/// PROCFS means sysfs always.
	std::vector<DomainStats> read(const std::filesystem::path &sysfs = "/sys",
				      std::vector<std::string> *errors = nullptr, bool histograms = true,
				      const std::optional<std::filesystem::path> &procfs = std::nullopt);

private:
	std::vector<DomainStats> read_sysfs(const std::filesystem::path &sysfs, std::vector<std::string> *errors,
					    bool histograms);
	struct Entry;
	std::mutex mu_;
	std::map<std::string, std::shared_ptr<const Entry>> cache_; ///< by directory path
};

/// A process that maps a domain's file.
struct Mapper {
	int pid = 0;
	std::string comm;
	uint64_t mapped_bytes = 0; ///< the length of its mappings of the file
};

/// The processes that map FILE (a domain's "file", as "/web1") of the
/// poolmem file system mounted at MOUNT, named or unlinked, from
/// PROCFS/<pid>/maps (the mappings on that mount's device whose path is
/// MOUNT FILE, "(deleted)" or not), by pid. Processes whose maps can't be
/// read are left out.
std::vector<Mapper> domain_mappers(const std::filesystem::path &procfs, const std::filesystem::path &mount,
				   const std::string &file);

} // namespace poolmem
