// A dax device's memory brought online and registered as a pool: the one
// onlining path (poolctl pool online, for a dax device or a CXL memdev's
// new region). Progressive onlining puts the first part online before it
// returns and the rest in a detached child process; anything that fails
// before the pool is registered is undone, leaving the device as it was.
// The state a background onlining leaves is kept in /run/poolctl, where
// pool show, offline and remove read it.
#pragma once

#include <poolmem/control.hpp>
#include <poolmem/dax.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace poolmem {

/// Where onlining keeps its state: <pool>.online, .pieces, .lock, .added.
inline const std::filesystem::path online_state_dir = "/run/poolctl";

/// Progress of a pool's onlining, kept in <pool>.online as "done total
/// seconds state".
struct OnlineState {
	unsigned done = 0, total = 0;
	double seconds = 0;
	std::string state; ///< "running", "done", "failed: ..."
};
std::optional<OnlineState> read_online_state(const std::string &pool);

/// A device progressive onlining split: the device given and its size, and
/// the devices made from the rest of its region (<pool>.pieces).
struct Pieces {
	std::string device;
	uint64_t size = 0;
	std::vector<std::string> made;
};
std::filesystem::path pieces_file(const std::string &pool);
std::optional<Pieces> read_pieces(const std::string &pool);
/// Give a split device back as it was: the pieces made are deleted and the
/// device grows back to its size, in devdax mode. Every block must be
/// offline. Returns the pieces deleted.
size_t merge_pieces(Dax &dax, const Pieces &p);

/// A pool registered from memory online already (pool add --node): remove
/// only unregisters it, as it found it.
std::filesystem::path added_marker(const std::string &pool);

/// The exclusive lock a background onlining of POOL holds while it runs
/// (it goes with the process, however that ends); an fd to close. EBUSY,
/// naming the pool, while another holds it.
int lock_onlining(const std::string &pool);

/// What to online.
struct OnlineRequest {
	std::string pool;   ///< the name to register (checked unused)
	std::string device; ///< the dax device
	Zone zone = Zone::movable;
	std::string memmap = "auto"; ///< where kmem puts the struct pages: auto, local, device
	uint32_t overcommit_pct = 100;
	/// Online about FIRST_BYTES now (a block at least) and the rest in a
	/// detached child; a devdax device of a dynamic region is split so the
	/// first part need not wait for the whole device's memmap.
	bool progressive = false;
	uint64_t first_bytes = 0;
	std::filesystem::path sysfs = "/sys";
	/// Blocks online so far of the total, in the foreground part.
	Progress progress;
	/// A line worth telling the operator (blocks the kernel had onlined
	/// into another zone, taken back).
	std::function<void(const std::string &)> note;
};

/// What online_dax() did.
struct OnlineResult {
	int node = -1;
	unsigned blocks = 0, blocks_total = 0; ///< online now, and in all
	uint64_t online_bytes = 0;
	uint64_t memmap_bytes = 0;
	bool memmap_device = false; ///< the memmap is on the device, not in local DRAM
	bool background = false;    ///< the rest continues in a child
	bool split = false;	    ///< ... as a second dax device
	double seconds = 0;
};

/// Online REQ.device and register it as pool REQ.pool. On a failure
/// before the registration, everything done is undone; throws Error
/// naming the device or the pool.
OnlineResult online_dax(Control &ctl, const OnlineRequest &req);

/// Online again the offline blocks of NODE in ZONE (the way back after
/// pool offline); the blocks onlined.
unsigned online_again(const std::filesystem::path &sysfs, int node, Zone zone, const Progress &progress = {});

} // namespace poolmem
