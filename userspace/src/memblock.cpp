// Memory blocks and the kernel's auto-online policy, through sysfs: what
// onlining a dax device's memory does after kmem bound it (dax.hpp). Apart
// from dax.cpp, which needs libdaxctl, so that poolctl loads libdaxctl only
// for the verbs that reshape devices (devices.cpp).
#include "poolmem/dax.hpp"

#include "poolmem/error.hpp"
#include "sysfs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolmem {

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

bool memmap_on_memory_booted(const fs::path &sysfs)
{
	auto v = sysfs::read(sysfs / "module/memory_hotplug/parameters/memmap_on_memory");
	return v && (*v == "Y" || *v == "y" || *v == "1" || *v == "force");
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
