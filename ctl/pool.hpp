// poolctl pool: what its files (pool.cpp, pool_online.cpp, pool_drain.cpp)
// share: the options of its subcommands, the state kept in /run/poolctl,
// and the functions one file calls in another.
#pragma once

#include "commands.hpp"
#include "moves.hpp"

#include <poolmem/control.hpp>
#include <poolmem/dax.hpp>
#include <poolmem/online.hpp>
#include <poolmem/stats.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace poolctl::pool_cmd {

namespace fs = std::filesystem;

inline const fs::path &state_dir = poolmem::online_state_dir;

struct OnlineOptions {
	std::string dax;
	std::vector<std::string> cxl;
	std::string name;
	std::string zone = "movable";
	bool async = false;
	std::string first = "1G";
	std::string size; ///< --cxl: region size (default: all the capacity)
	bool force = false;
	std::string overcommit = "1"; ///< admission ratio: 1.5 or 150%
	std::string memmap = "auto"; ///< where kmem puts the struct pages: auto, local, device
	bool check = false;          ///< --check: the checks before the first side effect, nothing else
	bool json = false;           ///< --json: the result as one object (Documentation/json.md)
	/// --cxl: the region made for the device, for --json
	std::string made_region;
};

struct NameOptions {
	std::string name;
	bool json = false;
	bool check = false; ///< --check: the checks alone (offline, remove, undrain, vm destroy)
};

struct AddOptions {
	std::string name;
	int node = -1;
	std::string overcommit = "1"; ///< admission ratio: 1.5 or 150%
	bool force = false;
	bool check = false;
	bool json = false;
};

struct DrainOptions {
	std::string name;
	bool offline = false, allow_local = false, check = false, json = false;
	MoveOptions moves; ///< --rate, --timeout
};

struct SetOptions {
	std::string name;
	std::string zero_reserve;
	std::string on_errors;	     ///< report or drain
	std::string error_threshold; ///< N or N/PERIOD (PERIOD: 30s, 10m, 24h, 7d)
	std::string overcommit;	     ///< a new admission ratio: 1.5 or 150%
	bool check = false;
	bool json = false;
};

/// --overcommit's value as the kernel's percent; a UsageError naming it otherwise.
uint32_t overcommit_pct(const std::string &value);


/* onlining's state in /run/poolctl (poolmem/online.hpp) */
using poolmem::added_marker;
using poolmem::merge_pieces;
using poolmem::OnlineState;
using poolmem::Pieces;
using poolmem::pieces_file;
using poolmem::read_pieces;
inline std::optional<OnlineState> read_state(const std::string &pool) { return poolmem::read_online_state(pool); }
inline int background_lock(const std::string &pool) { return poolmem::lock_onlining(pool); }
std::map<std::string, uint64_t> holders(const GlobalOptions &g, const std::string &pool);
void run_online(const GlobalOptions &g, const OnlineOptions &o);
void online_dax(const GlobalOptions &g, const OnlineOptions &o, poolmem::Control &ctl, const std::string &name,
		const std::string &devname, uint64_t first_bytes);
void reonline_pool(const GlobalOptions &g, const OnlineOptions &o, const poolmem::PoolStats &p);
void run_add(const GlobalOptions &g, const AddOptions &o);
void refuse_if_held(const GlobalOptions &g, const poolmem::PoolStats &p, const char *action);
std::vector<unsigned> node_blocks(const GlobalOptions &g, int node);
void run_offline(const GlobalOptions &g, const NameOptions &o);
void run_remove(const GlobalOptions &g, const NameOptions &o);
void run_drain(const GlobalOptions &g, const DrainOptions &o);
void run_undrain(const GlobalOptions &g, const NameOptions &o);
std::vector<poolmem::PoolStats> pools_or_throw(const GlobalOptions &g);
poolmem::PoolStats pool_or_throw(const GlobalOptions &g, const std::string &name);
void run_list(const GlobalOptions &g, bool json);
void run_show(const GlobalOptions &g, const NameOptions &o);
void run_set(const GlobalOptions &g, const SetOptions &o);
std::string describe_error_policy(const std::string &policy);

struct EventsOptions {
	std::string pool, domain;
	bool json = false;
};
struct SoftOfflineOptions {
	std::string address;
	bool check = false, json = false;
};
struct PoisonScanOptions {
	std::string name; ///< one pool; empty: all
	bool offline = true;
	bool json = false;
	bool check = false; ///< the same as --no-offline
};
void run_events(const GlobalOptions &g, const EventsOptions &o);
void run_poison_scan(const GlobalOptions &g, const PoisonScanOptions &o);
void run_soft_offline(const GlobalOptions &g, const SoftOfflineOptions &o);
nlohmann::json memory_error_json(const poolmem::MemoryError &e);

} // namespace poolctl::pool_cmd
