// poolctl pool drain, undrain, offline and remove: a pool emptied of its
// chunks while its VMs run, its memory offlined, the pool unregistered.
#include "pool.hpp"
#include "moves.hpp"
#include "table.hpp"
#include <poolmem/chain.hpp>
#include <poolmem/control.hpp>
#include <poolmem/cxl.hpp>
#include <poolmem/dax.hpp>
#include <poolmem/error.hpp>
#include <poolmem/kmod.hpp>
#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>
#include <poolmem/topology.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolctl::pool_cmd {

void refuse_if_held(const GlobalOptions &g, const poolmem::PoolStats &p, const char *action)
{
	auto h = holders(g, p.name);
	if (h.empty() && p.chunks == 0)
		return;
	std::string who;
	for (const auto &[dom, chunks] : h)
		who += (who.empty() ? "" : ", ") + dom + " (" + poolmem::plural(chunks, "chunk") + ")";
	throw poolmem::Error::plain(p.name, std::string("cannot ") + action + ": chunks of domains live there: " +
						    (who.empty() ? "destroyed domains still mapped" : who),
				    EBUSY);
}

std::vector<unsigned> node_blocks(const GlobalOptions &g, int node)
{
	auto t = poolmem::read_topology(g.sysfs);
	const auto *n = t.node(node);
	return n ? n->blocks : std::vector<unsigned>{};
}

namespace {

/* Bytes the zero reserve holds on NODE (/sys/kernel/poolmem/zero_reserve). */
uint64_t node_reserve_bytes(const GlobalOptions &g, int node)
{
	for (const auto &z : poolmem::read_zero_reserves(g.sysfs))
		if (z.node == node)
			return z.bytes;
	return 0;
}

/*
 * Empty the zero reserve of a pool's node before its blocks go offline,
 * and put the setting back after (RAII). In ZONE_MOVABLE the kernel gives
 * reserve units back by itself when a block goes offline; in a normal zone
 * it refuses to isolate a block holding them (allocated memory) before
 * poolmem is asked, so the reserve must be empty first.
 */
struct ReserveEmptied {
	const GlobalOptions &g;
	std::string pool;
	std::optional<std::string> saved;

	ReserveEmptied(const GlobalOptions &g_, const std::string &pool_, int node) : g(g_), pool(pool_)
	{
		std::ifstream f(fs::path(g.sysfs) / "kernel/poolmem/pools" / pool / "zero_reserve");
		std::string v;
		if (f >> v) {
			saved = v;
			(void)poolmem::set_pool_zero_reserve(g.sysfs, pool, 0);
		}
		/* the kernel's thread trims at once when told; a second at most */
		for (int i = 0; i < 40 && node_reserve_bytes(g, node); i++)
			usleep(50000);
	}
	~ReserveEmptied()
	{
		/* best effort: a pool gone has nothing to restore, and the offline reports what matters */
		if (saved)
			(void)poolmem::restore_pool_zero_reserve(g.sysfs, pool, *saved);
	}
};

/* Offline NODE's blocks for POOL; their number. SAY: print a line. */
size_t offline_node(const GlobalOptions &g, const std::string &pool, int node, bool say)
{
	auto blocks = node_blocks(g, node);
	std::vector<int> errs;
	ReserveEmptied emptied(g, pool, node);
	auto refused = poolmem::offline_blocks(g.sysfs, blocks, &errs);
	if (!refused.empty())
		throw poolmem::Error(pool, "cannot offline memory" + std::string(" (memory") +
						   std::to_string(refused[0]) + " and " + std::to_string(refused.size() - 1) +
						   " more)",
				     errs[0]);
	if (say)
		std::printf("%s: offlined %zu blocks on node %d\n", pool.c_str(), blocks.size(), node);
	return blocks.size();
}

} // namespace

void run_offline(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	refuse_if_held(g, p, "offline");
	::close(background_lock(p.name));
	const size_t blocks = node_blocks(g, p.node).size();
	if (o.check) {
		report(g, o.json,
		       p.name + ": offline would go ahead: no chunk there, " + std::to_string(blocks) + " blocks on node " +
			       std::to_string(p.node),
		       {{"name", p.name}, {"offlined", false}, {"node", p.node}, {"blocks", blocks}});
		return;
	}
	const size_t n = offline_node(g, p.name, p.node, !o.json);
	if (o.json)
		print_json(g, {{"name", p.name}, {"offlined", true}, {"node", p.node}, {"blocks", n}});
}

void run_remove(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	refuse_if_held(g, p, "remove");
	const int lock = background_lock(p.name);
	struct Unlock {
		int fd;
		~Unlock() { ::close(fd); }
	} unlock{lock};
	poolmem::Control ctl = open_control(g);
	/* --json: one object at the end; "devices" are those handed back to devdax */
	nlohmann::json result = {{"name", p.name}, {"removed", !o.check}, {"node", p.node}, {"offlined_blocks", 0},
				 {"devices", nlohmann::json::array()}};
	if (o.check) {
		report(g, o.json, p.name + ": remove would go ahead: no chunk there", result);
		return;
	}
	ctl.pool_remove(p.name);
	std::error_code ec;
	if (fs::exists(added_marker(p.name))) {
		/* pool add --node: its memory stays online, as it was found */
		fs::remove(added_marker(p.name), ec);
		report(g, o.json, p.name + ": unregistered; node " + std::to_string(p.node) + "'s memory stays online",
		       result);
		return;
	}
	result["offlined_blocks"] = offline_node(g, p.name, p.node, !o.json);
	poolmem::Dax dax(g.sysfs);
	if (auto pieces = read_pieces(p.name)) {
		size_t n = merge_pieces(dax, *pieces);
		if (!o.json)
			std::printf("%s: %s handed back to devdax whole (%s, %s deleted)\n", p.name.c_str(),
				    pieces->device.c_str(), poolmem::format_size(pieces->size).c_str(),
				    poolmem::plural(n, "piece").c_str());
		result["devices"].push_back(pieces->device);
		fs::remove(pieces_file(p.name), ec);
	}
	for (const auto &d : dax.devices()) {
		if (d.system_ram && d.target_node == p.node) {
			dax.to_devdax(d.name);
			if (!o.json)
				std::printf("%s: %s handed back to devdax\n", p.name.c_str(), d.name.c_str());
			result["devices"].push_back(d.name);
		}
	}
	fs::remove(state_dir / (p.name + ".online"), ec);
	if (o.json)
		print_json(g, result);
}

namespace {

std::string hex(uint64_t v)
{
	char b[32];
	std::snprintf(b, sizeof(b), "%#llx", static_cast<unsigned long long>(v));
	return b;
}

} // namespace

/*
 * poolctl pool drain: move every chunk off the pool while VMs run, in
 * steps (one ioctl each) so that Ctrl-C, --rate and the progress bar work;
 * the kernel keeps the pool draining between steps, so a second run goes
 * on where the first stopped.
 */
void run_drain(const GlobalOptions &g, const DrainOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	poolmem::Control ctl = open_control(g);

	auto first = ctl.pool_drain(p.name, 0, o.allow_local, true);
	if (first.err == ENOSPC) {
		std::string where = first.blocker.empty() ? "its domains" : "domain " + first.blocker;
		throw poolmem::Error::plain(
			p.name, "cannot drain: " + where + " hold" + (first.blocker.empty() ? " " : "s ") +
					poolmem::format_size(first.need_bytes) + " there but may use only " +
					poolmem::format_size(first.room_bytes) + " elsewhere" +
					(o.allow_local ? "" : " (--allow-local lets chunks move to local quota)"),
			ENOSPC);
	}
	if (o.check) {
		if (o.json)
			print_json(g, {{"name", p.name}, {"drained", false}, {"moved_bytes", 0},
				       {"remaining_bytes", first.remaining_bytes}});
		else
			std::printf("%s: can drain: %s to move\n", p.name.c_str(),
				    poolmem::format_size(first.remaining_bytes).c_str());
		return;
	}

	/*
	 * Steps of 256 MiB without --rate: 64 runs of drain_batch 2 to share
	 * out among the kernel's drain workers, a fraction of a second each.
	 */
	const auto policy = move_policy(o.moves);
	const auto run = [&] {
		MoveUi ui; /* its bar ends before the lines below */
		return poolmem::drain(ctl, p.name, o.allow_local, policy, ui.progress(), ui.stop());
	}();
	const poolmem::DrainStep &r = run.result;
	const std::string left = poolmem::format_size(r.remaining_bytes);
	nlohmann::json result = {{"name", p.name},
				 {"drained", run.done()},
				 {"moved_bytes", run.moved_bytes},
				 {"remaining_bytes", r.remaining_bytes},
				 {"seconds", run.seconds}};
	if (run.interrupted)
		throw PartialError(p.name, "drain interrupted after " + poolmem::format_size(run.moved_bytes) + ", " + left +
						   " left; the pool stays draining: run again to go on, or "
						   "poolctl pool undrain " + p.name,
				   EINTR, o.json ? result : nullptr);
	if (r.err == EBUSY)
		throw PartialError(p.name, "cannot drain: domain " + r.blocker + " offset " + hex(r.blocker_offset) +
						   " is long-term pinned (VFIO, RDMA, AF_XDP: a device "
						   "may DMA to it); " + left + " left, the pool stays draining",
				   EBUSY, o.json ? result : nullptr);
	if (r.err == EIO)
		throw PartialError(p.name, "cannot drain: domain " + r.blocker + " offset " + hex(r.blocker_offset) +
						   " has an uncorrectable memory error; " + left + " left",
				   EIO, o.json ? result : nullptr);
	if (r.err == ENOSPC)
		throw PartialError(p.name, "cannot drain: no room elsewhere for domain " + r.blocker + " offset " +
						   hex(r.blocker_offset) + "; " + left + " left" +
						   (o.allow_local ? "" : " (--allow-local lets chunks move to local quota)"),
				   ENOSPC, o.json ? result : nullptr);
	if (r.err)
		throw PartialError(p.name, "cannot drain after " + poolmem::format_size(run.moved_bytes) + ": " +
						   std::strerror(r.err) + "; " + left + " left, the pool stays draining",
				   r.err, o.json ? result : nullptr);
	if (run.timed_out || r.remaining_bytes)
		throw PartialError(p.name, "drain timed out after " + o.moves.timeout + " s without progress: " + left +
						   " still referenced (I/O in flight, a pipe or a discarded "
						   "chunk's last user); the pool stays draining",
				   EBUSY, o.json ? result : nullptr);
	const double secs = run.seconds;
	if (!o.json)
		std::printf("%s: drained %s in %.2f s (%.0f MiB/s)\n", p.name.c_str(),
			    poolmem::format_size(run.moved_bytes).c_str(), secs,
			    secs > 0 ? static_cast<double>(run.moved_bytes) / secs / (1 << 20) : 0.0);
	if (o.offline) {
		const size_t blocks = offline_node(g, p.name, p.node, !o.json);
		result["offlined_blocks"] = blocks;
	}
	if (o.json)
		print_json(g, result);
}

void run_undrain(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	poolmem::Control ctl = open_control(g);
	if (o.check) {
		report(g, o.json, p.name + ": undrain would go ahead (state " + p.state + ")",
		       {{"name", p.name}, {"undrained", false}, {"state", p.state}});
		return;
	}
	ctl.pool_undrain(p.name);
	report(g, o.json, p.name + ": takes chunks again",
	       {{"name", p.name}, {"undrained", true}, {"state", pool_or_throw(g, p.name).state}});
}

} // namespace poolctl::pool_cmd
