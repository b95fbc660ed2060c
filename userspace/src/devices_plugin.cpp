// poolmem-devices.so: the device libraries behind a table (devices.hpp).
#include "devices.hpp"

#include "poolmem/kmod.hpp"

namespace poolmem::devices {
namespace {

Dax &dax(void *d) { return *static_cast<Dax *>(d); }

const Ops table = {
	.abi = abi,
	.release = POOLMEM_RELEASE,
	.dax_new = [](const std::filesystem::path &sysfs) -> void * { return new Dax(sysfs); },
	.dax_free = [](void *d) { delete static_cast<Dax *>(d); },
	.dax_devices = [](void *d) { return dax(d).devices(); },
	.dax_device = [](void *d, const std::string &n) { return dax(d).device(n); },
	.dax_will_auto_online = [](void *d, const std::string &n) { return dax(d).will_auto_online(n); },
	.dax_to_system_ram = [](void *d, const std::string &n) { dax(d).to_system_ram(n); },
	.dax_to_devdax = [](void *d, const std::string &n) { dax(d).to_devdax(n); },
	.dax_memmap_on_memory = [](void *d, const std::string &n) { return dax(d).memmap_on_memory(n); },
	.dax_set_memmap_on_memory = [](void *d, const std::string &n, bool on) { dax(d).set_memmap_on_memory(n, on); },
	.dax_blocks = [](void *d, const std::string &n) { return dax(d).blocks(n); },
	.dax_dynamic = [](void *d, const std::string &n) { return dax(d).dynamic(n); },
	.dax_region_available = [](void *d, const std::string &n) { return dax(d).region_available(n); },
	.dax_resize = [](void *d, const std::string &n, uint64_t b) { dax(d).resize(n, b); },
	.dax_create_device = [](void *d, const std::string &n, uint64_t b) { return dax(d).create_device(n, b); },
	.dax_destroy_device = [](void *d, const std::string &n) { dax(d).destroy_device(n); },
	.cxl_make_devdax = [](const std::vector<std::string> &m, uint64_t s) { return cxl_make_devdax(m, s); },
	.cxl_health = [](const std::string &m) { return cxl_health(m); },
	.cxl_destroy_devdax = [](const CxlDevdax &d) { cxl_destroy_devdax(d); },
	.device_chain = [](int node) { return device_chain(node); },
	.load_module = [](const std::string &n) { load_module(n); },
};

} // namespace
} // namespace poolmem::devices

extern "C" __attribute__((visibility("default"))) const poolmem::devices::Ops *poolmem_devices_v1()
{
	return &poolmem::devices::table;
}
