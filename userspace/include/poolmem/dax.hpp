// DAX devices as pool memory: reconfiguration with libdaxctl, and block
// onlining that daxctl lacks (progress, time per GiB, progressive onlining).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace poolmem {

struct DaxInfo {
	std::string name;        ///< "dax0.0"
	int target_node = -1;    ///< node its memory joins in system-ram mode
	uint64_t resource = 0;   ///< host physical start
	uint64_t size = 0;
	bool system_ram = false; ///< bound to kmem
	bool enabled = false;
};

/// Which zone onlined blocks go to.
enum class Zone { movable, normal };

/// Progress of onlining: blocks done so far out of total.
using Progress = std::function<void(unsigned done, unsigned total)>;

/// The kernel's own onlining of hot-added memory switched off for this
/// object's life (/sys/devices/system/memory/auto_online_blocks, which
/// memhp_default_state= sets at boot; Debian's 6.12 onlines by default,
/// into ZONE_NORMAL). poolmem onlines the memory it adds itself, in the
/// zone it was asked for: a kmem bind under this guard leaves every block
/// offline. Held under an exclusive lock (RUN/auto-online.lock) against
/// other poolmem processes; the policy found is restored when the object
/// goes, and kept in RUN/auto-online.saved meanwhile, so that the next
/// holder restores it when a process died holding it. Other memory hot-
/// added during that window (a DIMM, virtio-mem) stays offline too; the
/// window is one kmem bind. A policy of "offline" is left alone.
class AutoOnlineOff {
public:
	explicit AutoOnlineOff(const std::filesystem::path &sysfs = "/sys",
			       const std::filesystem::path &run = "/run/poolctl");
	~AutoOnlineOff();
	AutoOnlineOff(const AutoOnlineOff &) = delete;
	AutoOnlineOff &operator=(const AutoOnlineOff &) = delete;
	/// The policy found ("online", "online_movable", ...); "offline" when nothing was changed.
	const std::string &was() const { return was_; }

private:
	int lock_ = -1;
	std::filesystem::path file_, saved_;
	std::string was_ = "offline";
};

/// A libdaxctl context. Not copyable; not thread-safe.
class Dax {
public:
	explicit Dax(std::filesystem::path sysfs = "/sys");
	~Dax();
	Dax(const Dax &) = delete;
	Dax &operator=(const Dax &) = delete;

	std::vector<DaxInfo> devices();
	/// Throws Error("NAME: no such dax device").
	DaxInfo device(const std::string &name);
	/// True when the kernel would online NAME's memory by itself
	/// (memhp_default_state / auto_online_blocks), racing our onlining.
	bool will_auto_online(const std::string &name);
	/// devdax -> system-ram (kmem), blocks left offline whatever the
	/// kernel's auto-online policy (AutoOnlineOff). No-op when already in
	/// system-ram mode. Throws naming the device and cause.
	void to_system_ram(const std::string &name);
	/// system-ram -> devdax; every block must be offline.
	void to_devdax(const std::string &name);

	/// Where kmem puts the memmap (struct pages) of NAME's memory when it
	/// binds it: true on the device itself (the first pages of each memory
	/// block), false in DRAM of the nearest node with memory. The
	/// device's memmap_on_memory attribute (6.8+); nullopt without it.
	/// It takes effect only where the kernel was booted with
	/// memory_hotplug.memmap_on_memory (memmap_on_memory_booted()).
	std::optional<bool> memmap_on_memory(const std::string &name);
	/// Set it on a device not bound to kmem. Throws Error EOPNOTSUPP
	/// naming the boot parameter when the kernel can't, EBUSY when the
	/// device is bound to kmem with the other setting.
	void set_memmap_on_memory(const std::string &name, bool on);

	/// Memory blocks (indexes) covering the device's range.
	std::vector<unsigned> blocks(const std::string &name);

	/// True when NAME's dax region is dynamic (dax_hmem: memory the
	/// firmware marked Soft Reserved): its devices can be resized and
	/// more made in it. Regions of NVDIMM/CXL pmem namespaces are static.
	bool dynamic(const std::string &name);
	/// Bytes of NAME's region no device holds.
	uint64_t region_available(const std::string &name);
	/// Set the size of disabled device NAME (a dynamic region's): a
	/// shrink gives back its tail, a grow takes the space that follows.
	void resize(const std::string &name, uint64_t bytes);
	/// A new device of BYTES in the region of device NEXT_TO, left
	/// disabled; returns its name.
	std::string create_device(const std::string &next_to, uint64_t bytes);
	/// Disable device NAME (its memory offline), give back its space
	/// and delete it.
	void destroy_device(const std::string &name);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
	std::filesystem::path sysfs_;
};

/// The kernel was booted with memory_hotplug.memmap_on_memory=1 (or
/// =force): hot-added memory may hold its own memmap. False on a kernel
/// without the parameter.
bool memmap_on_memory_booted(const std::filesystem::path &sysfs);

/// Bytes of memmap (struct pages, 64 bytes per 4 KiB page on x86-64) that
/// BYTES of memory take: 16 MiB per GiB.
constexpr uint64_t memmap_bytes(uint64_t bytes) { return bytes / 4096 * 64; }

/// Memory block size in bytes (devices/system/memory/block_size_bytes).
/// Throws Error when it can't be read.
uint64_t memory_block_size(const std::filesystem::path &sysfs);

/// State of memory block B ("online", "offline", ...); "" if it is gone.
std::string block_state(const std::filesystem::path &sysfs, unsigned b);

/// The zone online memory block B is in ("Normal", "Movable": valid_zones
/// of an online block names its zone alone); "" when unknown.
std::string block_zone(const std::filesystem::path &sysfs, unsigned b);

/// The order online_blocks() and offline_blocks() take BLOCKS in: by
/// address, but the second block onlined last (offlined first), so that the
/// kernel's zone-contiguity walk after each block stops at that hole
/// instead of walking every block before it (O(n) instead of O(n^2)).
std::vector<unsigned> online_order(std::vector<unsigned> blocks);
std::vector<unsigned> offline_order(std::vector<unsigned> blocks);

/// Online BLOCKS (memoryN indexes) in ZONE, in online_order(), calling
/// PROGRESS after each.
/// Blocks already online are counted as done. Throws Error naming the
/// first block that fails; blocks onlined before it stay online (the
/// caller decides whether to roll back with offline_blocks).
void online_blocks(const std::filesystem::path &sysfs, const std::vector<unsigned> &blocks, Zone zone,
		   const Progress &progress = {});

/// Offline BLOCKS, in offline_order(); returns the blocks that refused (state unchanged), with
/// the errno of each in ERRS when given.
std::vector<unsigned> offline_blocks(const std::filesystem::path &sysfs, const std::vector<unsigned> &blocks,
				     std::vector<int> *errs = nullptr);

} // namespace poolmem
