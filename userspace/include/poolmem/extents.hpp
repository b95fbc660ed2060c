// The extents of shared devices as memory of this host: the cluster
// agent's ExtentMemory (agent.hpp) on a dax device bound to kmem, whose
// memory blocks go online and offline an extent at a time, registered as a
// pool.
#pragma once

#include <poolmem/agent.hpp>
#include <poolmem/cluster.hpp>
#include <poolmem/control.hpp>
#include <poolmem/dax.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace poolmem::cluster {

/// One shared device as this host sees it.
struct ExtentDevice {
	std::string name; ///< the ledger's device
	std::string dax;  ///< this host's dax device of it
	std::string pool; ///< the pool its extents form
	Zone zone = Zone::movable;
};

/*
 * Extents as memory blocks of this host's dax device of the shared memory:
 * extent i is blocks [i*k, (i+1)*k) of the device's blocks, k the extent
 * size in blocks. The device is bound to kmem with its blocks offline
 * (pool online --async --first 0, or daxctl reconfigure-device
 * --no-online); only claimed extents are ever onlined.
 */
class DaxExtentMemory : public ExtentMemory {
public:
	/// Binds each device to kmem (blocks offline). Throws Error naming a
	/// device whose extent size is not whole blocks or that is smaller
	/// than the ledger says. WARN gets a line for what goes wrong without
	/// stopping anything (a pool's zero reserve that stays on).
	DaxExtentMemory(const std::filesystem::path &sysfs, const std::string &control,
			const std::vector<ExtentDevice> &devices, Ledger &ledger,
			std::function<void(const std::string &)> warn = {});
	void online(const std::string &dev, unsigned i) override;
	void offline(const std::string &dev, unsigned i) override;
	bool is_online(const std::string &dev, unsigned i) override;
	void revoke(const std::string &dev) override;

private:
	struct Dev {
		ExtentDevice conf;
		unsigned per_extent = 1;
		std::vector<unsigned> blocks;
		int node = -1;
		bool pool_added = false;
		bool revoked = false;
	};
	void undrain(Dev &d);
	static std::vector<unsigned> range(const Dev &d, unsigned i);

	std::filesystem::path sysfs_;
	std::function<void(const std::string &)> warn_;
	Dax dax_;
	Control ctl_;
	std::map<std::string, Dev> devs_;
};

} // namespace poolmem::cluster
