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

namespace {

std::string read_line(const fs::path &p)
{
	std::string s = sysfs::read(p).value_or("");
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	return s;
}

void write_policy(const fs::path &p, const std::string &v)
{
	int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
	if (fd < 0 || ::write(fd, v.data(), v.size()) < 0) {
		const int e = errno;
		if (fd >= 0)
			::close(fd);
		throw Error(p.string(), "cannot set the kernel's auto-online policy to " + v, e);
	}
	::close(fd);
}

} // namespace

AutoOnlineOff::AutoOnlineOff(const fs::path &sysfs, const fs::path &run)
    : file_(sysfs / "devices/system/memory/auto_online_blocks"), saved_(run / "auto-online.saved")
{
	if (!fs::exists(file_))
		return; /* no memory hotplug: nothing onlines by itself */
	std::error_code ec;
	fs::create_directories(run, ec);
	const fs::path lock = run / "auto-online.lock";
	lock_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_ < 0)
		throw Error(lock.string(), "cannot open", errno);
	if (::flock(lock_, LOCK_EX) < 0) {
		const int e = errno;
		::close(lock_);
		throw Error(lock.string(), "cannot lock", e);
	}
	try {
		/* a holder that died left the policy it found: put it back first */
		if (const std::string left = read_line(saved_); !left.empty())
			write_policy(file_, left);
		const std::string cur = read_line(file_);
		if (cur.empty() || cur == "offline") {
			fs::remove(saved_, ec);
			return;
		}
		{
			const fs::path tmp = saved_.string() + ".tmp";
			std::FILE *f = std::fopen(tmp.c_str(), "w");
			if (!f || std::fprintf(f, "%s\n", cur.c_str()) < 0 || std::fclose(f))
				throw Error(tmp.string(), "cannot write", errno);
			fs::rename(tmp, saved_);
		}
		write_policy(file_, "offline");
		was_ = cur;
	} catch (...) {
		::close(lock_);
		throw;
	}
}

AutoOnlineOff::~AutoOnlineOff()
{
	if (lock_ < 0)
		return;
	if (was_ != "offline") {
		try {
			write_policy(file_, was_);
			std::error_code ec;
			fs::remove(saved_, ec);
		} catch (const Error &e) {
			/* left in auto-online.saved: the next holder restores it */
			std::fprintf(stderr, "poolmem: %s\n", e.what());
		}
	}
	::close(lock_);
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

bool memmap_on_memory_booted(const fs::path &sysfs)
{
	auto v = sysfs::read(sysfs / "module/memory_hotplug/parameters/memmap_on_memory");
	return v && (*v == "Y" || *v == "y" || *v == "1" || *v == "force");
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

uint64_t memory_block_size(const fs::path &sysfs)
{
	auto bs = sysfs::read(sysfs / "devices/system/memory/block_size_bytes");
	if (!bs || bs->empty())
		throw Error("memory blocks", "cannot read block size", errno ? errno : ENOENT);
	return std::stoull(*bs, nullptr, 16); /* hex without 0x */
}

std::string block_state(const fs::path &sysfs, unsigned b)
{
	return sysfs::read(sysfs / ("devices/system/memory/memory" + std::to_string(b)) / "state").value_or("");
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

std::string block_zone(const fs::path &sysfs, unsigned b)
{
	const std::string z =
		sysfs::read(sysfs / ("devices/system/memory/memory" + std::to_string(b)) / "valid_zones").value_or("");
	return z.substr(0, z.find_first_of(" \n"));
}

static int write_state(const fs::path &sysfs, unsigned block, const char *state)
{
	fs::path p = sysfs / ("devices/system/memory/memory" + std::to_string(block)) / "state";
	int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ssize_t n = ::write(fd, state, strlen(state));
	int e = n < 0 ? errno : 0;
	::close(fd);
	return e;
}

/*
 * The order of a range's blocks matters to the kernel's time, not to the
 * result. Onlining a block calls set_zone_contiguous() (6.1:
 * move_pfn_range_to_zone(), before the block's sections are marked
 * online; offlining: remove_pfn_range_from_zone(), after they are marked
 * offline), which walks the zone a pageblock at a time from its start
 * until the first pageblock that is not online in the zone. In address
 * order every block's walk covers all the blocks before it: O(n^2)
 * pageblocks over a device (64 blocks of 128 MiB: 133,120 pageblocks
 * walked, where the range holds 4,096; a 512 GiB expander in 2 GiB blocks:
 * 34 million). With the range's second block onlined last (offlined
 * first), every walk stops at the hole it leaves right after the first
 * block: O(n). The end state is the same: the last block's walk ends
 * where it would have (on onlining, at that block itself). daxctl onlines
 * in sysfs directory order (kernfs keeps a directory's entries in hash
 * order), which leaves such holes by chance.
 */
std::vector<unsigned> online_order(std::vector<unsigned> blocks)
{
	std::sort(blocks.begin(), blocks.end());
	if (blocks.size() > 2)
		std::rotate(blocks.begin() + 1, blocks.begin() + 2, blocks.end()); /* b0 b2 b3 ... b1 */
	return blocks;
}

/* The same for offlining: the second block first makes the hole. */
std::vector<unsigned> offline_order(std::vector<unsigned> blocks)
{
	std::sort(blocks.begin(), blocks.end());
	if (blocks.size() > 2)
		std::rotate(blocks.begin(), blocks.begin() + 1, blocks.end()); /* b1 b2 ... b0 */
	return blocks;
}

void online_blocks(const fs::path &sysfs, const std::vector<unsigned> &blocks, Zone zone, const Progress &progress)
{
	const char *state = zone == Zone::movable ? "online_movable" : "online_kernel";
	unsigned done = 0;
	for (unsigned b : online_order(blocks)) {
		/*
		 * Write first, ask after: the kernel refuses (EINVAL) to online
		 * a block that is online, and only then is its state read. A
		 * sysfs access is dear under emulation, and onlining is mostly
		 * the kernel's work, so the common path is one write per block.
		 */
		int e = write_state(sysfs, b, state);
		if (e == EINVAL && block_state(sysfs, b) == "online")
			e = 0;
		if (e)
			throw Error("memory" + std::to_string(b), "cannot online memory", e);
		done++;
		if (progress)
			progress(done, static_cast<unsigned>(blocks.size()));
	}
}

std::vector<unsigned> offline_blocks(const fs::path &sysfs, const std::vector<unsigned> &blocks, std::vector<int> *errs)
{
	std::vector<unsigned> refused;
	for (unsigned b : offline_order(blocks)) {
		if (block_state(sysfs, b) == "offline")
			continue;
		if (int e = write_state(sysfs, b, "offline")) {
			refused.push_back(b);
			if (errs)
				errs->push_back(e);
		}
	}
	return refused;
}

} // namespace poolmem
