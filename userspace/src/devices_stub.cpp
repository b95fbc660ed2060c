// dax.hpp's Dax, cxl.hpp, chain.hpp's device_chain and kmod.hpp's
// load_module for poolctl: the device libraries are loaded (the plugin
// poolmem-devices.so, devices.hpp) the first time one of these is called,
// not at every start.
#include "devices.hpp"

#include "poolmem/error.hpp"
#include "poolmem/kmod.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>

#include <dlfcn.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolmem {
namespace devices {
namespace {

/*
 * Where the plugin is: beside the running binary (the rig's /rig/bin),
 * in the build tree (build/ctl/poolctl -> build/userspace/), then where
 * the package installs it. The binary's own directory comes first, so a
 * build run on a host with the package installed uses its own plugin.
 */
std::vector<fs::path> candidates()
{
	std::vector<fs::path> out;
	std::error_code ec;
	const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
	if (!ec) {
		out.push_back(exe.parent_path() / "poolmem-devices.so");
		out.push_back(exe.parent_path().parent_path() / "userspace" / "poolmem-devices.so");
	}
	out.push_back(fs::path(POOLMEM_PLUGIN_DIR) / "poolmem-devices.so");
	return out;
}

const Ops &load()
{
	static const Ops *ops;
	static std::once_flag once;
	std::call_once(once, [] {
		std::string tried;
		for (const auto &p : candidates()) {
			if (!fs::exists(p))
				continue;
			void *h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
			if (!h) {
				tried = dlerror();
				continue;
			}
			auto entry = reinterpret_cast<const Ops *(*)()>(dlsym(h, "poolmem_devices_v1"));
			const Ops *o = entry ? entry() : nullptr;
			if (!o || o->abi != abi || std::string(o->release) != POOLMEM_RELEASE) {
				tried = p.string() + " is of another build (" + (o ? o->release : "no entry point") +
					"; this is " + POOLMEM_RELEASE + ")";
				dlclose(h);
				continue;
			}
			ops = o; /* stays loaded for the process's life */
			return;
		}
		throw Error::plain("poolmem-devices.so",
				   "cannot load the device libraries' plugin (libdaxctl, libcxl, libndctl, libkmod): " +
					   (tried.empty() ? "not found beside the binary nor in " POOLMEM_PLUGIN_DIR
							  : tried) +
					   " (reinstall poolmem-tools)",
				   ENOENT);
	});
	return *ops;
}

} // namespace
} // namespace devices

using devices::load;

struct Dax::Impl {
	void *h = nullptr;
};

Dax::Dax(fs::path sysfs) : impl_(std::make_unique<Impl>()), sysfs_(std::move(sysfs))
{
	impl_->h = load().dax_new(sysfs_);
}

Dax::~Dax() { load().dax_free(impl_->h); }

std::vector<DaxInfo> Dax::devices() { return load().dax_devices(impl_->h); }
DaxInfo Dax::device(const std::string &name) { return load().dax_device(impl_->h, name); }
bool Dax::will_auto_online(const std::string &name) { return load().dax_will_auto_online(impl_->h, name); }
void Dax::to_system_ram(const std::string &name) { load().dax_to_system_ram(impl_->h, name); }
void Dax::to_devdax(const std::string &name) { load().dax_to_devdax(impl_->h, name); }
std::optional<bool> Dax::memmap_on_memory(const std::string &name)
{
	return load().dax_memmap_on_memory(impl_->h, name);
}
void Dax::set_memmap_on_memory(const std::string &name, bool on)
{
	load().dax_set_memmap_on_memory(impl_->h, name, on);
}
std::vector<unsigned> Dax::blocks(const std::string &name) { return load().dax_blocks(impl_->h, name); }
bool Dax::dynamic(const std::string &name) { return load().dax_dynamic(impl_->h, name); }
uint64_t Dax::region_available(const std::string &name) { return load().dax_region_available(impl_->h, name); }
void Dax::resize(const std::string &name, uint64_t bytes) { load().dax_resize(impl_->h, name, bytes); }
std::string Dax::create_device(const std::string &next_to, uint64_t bytes)
{
	return load().dax_create_device(impl_->h, next_to, bytes);
}
void Dax::destroy_device(const std::string &name) { load().dax_destroy_device(impl_->h, name); }

CxlDevdax cxl_make_devdax(const std::vector<std::string> &memdevs, uint64_t region_size)
{
	return load().cxl_make_devdax(memdevs, region_size);
}
CxlHealth cxl_health(const std::string &memdev) { return load().cxl_health(memdev); }
void cxl_destroy_devdax(const CxlDevdax &d) { load().cxl_destroy_devdax(d); }

std::vector<DeviceChain> device_chain(int node) { return load().device_chain(node); }

void load_module(const std::string &name)
{
	if (module_loaded(name))
		return; /* the common case, without loading anything */
	load().load_module(name);
}

} // namespace poolmem
