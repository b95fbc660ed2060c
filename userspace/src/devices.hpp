// The device libraries' entry points, as a table (private to libpoolmem).
//
// libdaxctl, libcxl, libndctl and libkmod (and through them libcrypto,
// libzstd, liblzma and libudev) are what a poolctl process spent most of
// its start on: the dynamic linker resolved some 5,000 symbols in them for
// every command, and under TCG that was 40-60 ms of a 100 ms vm map. Only
// the verbs that reshape devices, read their chain or load the module use
// them. So dax.cpp, cxl.cpp, chain.cpp and kmod.cpp are built into a
// plugin, poolmem-devices.so, whose one exported symbol returns this
// table; poolctl links devices_stub.cpp, which loads the plugin the first
// time one of those calls is made and forwards to it. The daemons and the
// tests link the four files directly (poolmem_devices), as before.
//
// The table's types are the public headers' own: the plugin and its
// caller are one build (the same compiler and libstdc++), and abi below
// refuses any other plugin. Exceptions (poolmem::Error) cross it as
// thrown.
#pragma once

#include "poolmem/chain.hpp"
#include "poolmem/cxl.hpp"
#include "poolmem/dax.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace poolmem::devices {

/// Bump when the table changes: the stub refuses a plugin of another build.
constexpr unsigned abi = 1;

struct Ops {
	unsigned abi;
	const char *release; ///< POOLMEM_RELEASE of the plugin's build

	/* class Dax: an opaque handle per object */
	void *(*dax_new)(const std::filesystem::path &sysfs);
	void (*dax_free)(void *dax);
	std::vector<DaxInfo> (*dax_devices)(void *dax);
	DaxInfo (*dax_device)(void *dax, const std::string &name);
	bool (*dax_will_auto_online)(void *dax, const std::string &name);
	void (*dax_to_system_ram)(void *dax, const std::string &name);
	void (*dax_to_devdax)(void *dax, const std::string &name);
	std::optional<bool> (*dax_memmap_on_memory)(void *dax, const std::string &name);
	void (*dax_set_memmap_on_memory)(void *dax, const std::string &name, bool on);
	std::vector<unsigned> (*dax_blocks)(void *dax, const std::string &name);
	bool (*dax_dynamic)(void *dax, const std::string &name);
	uint64_t (*dax_region_available)(void *dax, const std::string &name);
	void (*dax_resize)(void *dax, const std::string &name, uint64_t bytes);
	std::string (*dax_create_device)(void *dax, const std::string &next_to, uint64_t bytes);
	void (*dax_destroy_device)(void *dax, const std::string &name);

	/* cxl.hpp */
	CxlDevdax (*cxl_make_devdax)(const std::vector<std::string> &memdevs, uint64_t region_size);
	CxlHealth (*cxl_health)(const std::string &memdev);
	void (*cxl_destroy_devdax)(const CxlDevdax &d);

	/* chain.hpp */
	std::vector<DeviceChain> (*device_chain)(int node);

	/* kmod.hpp */
	void (*load_module)(const std::string &name);
};

} // namespace poolmem::devices

/// The plugin's one exported symbol.
extern "C" const poolmem::devices::Ops *poolmem_devices_v1();
