#include "poolmem/dax.hpp"

#include "poolmem/error.hpp"
#include "sysfs.hpp"

#include <daxctl/libdaxctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolmem {

struct Dax::Impl {
	daxctl_ctx *ctx = nullptr;

	/*
	 * libdaxctl lists a region's devices once per context; after a
	 * device is made or deleted, a new context sees the change.
	 */
	void refresh()
	{
		daxctl_ctx *fresh;
		int rc = daxctl_new(&fresh);
		if (rc < 0)
			throw Error("libdaxctl", "cannot initialise", -rc);
		daxctl_unref(ctx);
		ctx = fresh;
	}

	daxctl_dev *find(const std::string &name)
	{
		daxctl_region *region;
		daxctl_dev *dev;
		daxctl_region_foreach(ctx, region)
			daxctl_dev_foreach(region, dev)
				if (name == daxctl_dev_get_devname(dev))
					return dev;
		throw Error::plain(name, "no such dax device", ENOENT);
	}
};

Dax::Dax(fs::path sysfs) : impl_(std::make_unique<Impl>()), sysfs_(std::move(sysfs))
{
	int rc = daxctl_new(&impl_->ctx);
	if (rc < 0)
		throw Error("libdaxctl", "cannot initialise", -rc);
}

Dax::~Dax() { daxctl_unref(impl_->ctx); }

static DaxInfo info_of(daxctl_dev *dev)
{
	DaxInfo d;
	d.name = daxctl_dev_get_devname(dev);
	d.target_node = daxctl_dev_get_target_node(dev);
	d.resource = daxctl_dev_get_resource(dev);
	d.size = daxctl_dev_get_size(dev);
	d.enabled = daxctl_dev_is_enabled(dev);
	d.system_ram = d.enabled && daxctl_dev_get_memory(dev) != nullptr;
	return d;
}

std::vector<DaxInfo> Dax::devices()
{
	std::vector<DaxInfo> out;
	daxctl_region *region;
	daxctl_dev *dev;
	daxctl_region_foreach(impl_->ctx, region)
		daxctl_dev_foreach(region, dev)
			if (daxctl_dev_get_size(dev))
				out.push_back(info_of(dev));
	return out;
}

DaxInfo Dax::device(const std::string &name) { return info_of(impl_->find(name)); }

bool Dax::will_auto_online(const std::string &name)
{
	return daxctl_dev_will_auto_online_memory(impl_->find(name)) > 0;
}

void Dax::to_system_ram(const std::string &name)
{
	daxctl_dev *dev = impl_->find(name);
	if (daxctl_dev_is_enabled(dev) && daxctl_dev_get_memory(dev))
		return;
	/* the kernel must not online the new blocks itself: we do, in our zone */
	AutoOnlineOff guard(sysfs_);
	int rc;
	if (daxctl_dev_is_enabled(dev) && (rc = daxctl_dev_disable(dev)) < 0)
		throw Error(name, "cannot disable device (is it in use?)", -rc);
	if ((rc = daxctl_dev_enable_ram(dev)) < 0) {
		daxctl_dev_enable_devdax(dev); /* put it back as it was */
		throw Error(name, "cannot reconfigure to system-ram", -rc);
	}
}

void Dax::to_devdax(const std::string &name)
{
	daxctl_dev *dev = impl_->find(name);
	int rc;
	if (daxctl_dev_is_enabled(dev) && (rc = daxctl_dev_disable(dev)) < 0)
		throw Error(name, "cannot disable system-ram (is memory still online?)", -rc);
	if ((rc = daxctl_dev_enable_devdax(dev)) < 0)
		throw Error(name, "cannot reconfigure to devdax", -rc);
	/*
	 * libdaxctl (76) keeps the device's kmod module across a change of
	 * driver; a second change in one context (devdax, then system-ram
	 * again, as a progressive online of a device the kernel bound to
	 * kmem does) used a freed one in libkmod. A new context lists the
	 * device as it is now.
	 */
	impl_->refresh();
}

std::optional<bool> Dax::memmap_on_memory(const std::string &name)
{
	auto v = sysfs::read(sysfs_ / "bus/dax/devices" / name / "memmap_on_memory");
	if (!v)
		return std::nullopt;
	return *v == "1";
}

void Dax::set_memmap_on_memory(const std::string &name, bool on)
{
	const fs::path p = sysfs_ / "bus/dax/devices" / name / "memmap_on_memory";
	int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			throw Error::plain(name, "this kernel cannot put a dax device's memmap on its memory (Linux 6.8 "
						 "and later can); use --memmap local",
					   EOPNOTSUPP);
		throw Error(name, "cannot open memmap_on_memory", errno);
	}
	const char *val = on ? "1" : "0";
	const int e = ::write(fd, val, 1) < 0 ? errno : 0;
	::close(fd);
	if (e == EOPNOTSUPP)
		throw Error::plain(name, "the kernel cannot put the memmap on hot-added memory: boot it with "
					 "memory_hotplug.memmap_on_memory=1, or use --memmap local",
				   EOPNOTSUPP);
	if (e == EBUSY)
		throw Error::plain(name, std::string("bound to kmem with its memmap ") +
						 (on ? "in local DRAM" : "on the device") +
						 ": offline the device's memory first",
				   EBUSY);
	if (e)
		throw Error(name, "cannot set memmap_on_memory", e);
}

bool Dax::dynamic(const std::string &name)
{
	daxctl_region *region = daxctl_dev_get_region(impl_->find(name));
	/* the kernel shows "create" only on a region that is not static */
	return fs::exists(fs::path(daxctl_region_get_path(region)) / "dax_region/create");
}

uint64_t Dax::region_available(const std::string &name)
{
	return daxctl_region_get_available_size(daxctl_dev_get_region(impl_->find(name)));
}

void Dax::resize(const std::string &name, uint64_t bytes)
{
	daxctl_dev *dev = impl_->find(name);
	int rc;
	if (daxctl_dev_is_enabled(dev) && (rc = daxctl_dev_disable(dev)) < 0)
		throw Error(name, "cannot disable device (is it in use?)", -rc);
	if ((rc = daxctl_dev_set_size(dev, bytes)) < 0)
		throw Error(name, "cannot resize to " + std::to_string(bytes) + " bytes", -rc);
	/* libdaxctl keeps the start it read when it listed the device */
	impl_->refresh();
}

std::string Dax::create_device(const std::string &next_to, uint64_t bytes)
{
	daxctl_region *region = daxctl_dev_get_region(impl_->find(next_to));
	const std::string rname = daxctl_region_get_devname(region);
	int rc = daxctl_region_create_dev(region);
	if (rc < 0)
		throw Error(rname, "cannot make a dax device", -rc);
	impl_->refresh();
	std::string seed;
	daxctl_region_foreach(impl_->ctx, region)
		if (rname == daxctl_region_get_devname(region))
			if (daxctl_dev *d = daxctl_region_get_dev_seed(region))
				seed = daxctl_dev_get_devname(d);
	if (seed.empty())
		throw Error::plain(rname, "made a dax device but the region shows no seed", ENXIO);
	try {
		resize(seed, bytes);
	} catch (...) {
		destroy_device(seed);
		throw;
	}
	return seed;
}

void Dax::destroy_device(const std::string &name)
{
	daxctl_dev *dev = impl_->find(name);
	int rc;
	if (daxctl_dev_is_enabled(dev) && (rc = daxctl_dev_disable(dev)) < 0)
		throw Error(name, "cannot disable device (is memory still online?)", -rc);
	if (daxctl_dev_get_size(dev) && (rc = daxctl_dev_set_size(dev, 0)) < 0)
		throw Error(name, "cannot give back its space", -rc);
	if ((rc = daxctl_region_destroy_dev(daxctl_dev_get_region(dev), dev)) < 0)
		throw Error(name, "cannot delete the device", -rc);
	impl_->refresh();
}

std::vector<unsigned> Dax::blocks(const std::string &name)
{
	DaxInfo d = device(name);
	const uint64_t block = memory_block_size(sysfs_);
	std::vector<unsigned> out;
	/* blocks wholly inside the device; kmem adds only those */
	for (uint64_t a = (d.resource + block - 1) / block * block; a + block <= d.resource + d.size; a += block) {
		unsigned idx = static_cast<unsigned>(a / block);
		if (fs::exists(sysfs_ / ("devices/system/memory/memory" + std::to_string(idx))))
			out.push_back(idx);
	}
	return out;
}

} // namespace poolmem
