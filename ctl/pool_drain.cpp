// poolctl pool drain, undrain, offline and remove: a pool emptied of its
// chunks while its VMs run, its memory offlined, the pool unregistered.
#include "pool.hpp"
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
#include <csignal>
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
	fs::path attr;
	std::optional<std::string> saved;

	ReserveEmptied(const GlobalOptions &g_, const std::string &pool, int node) : g(g_)
	{
		attr = fs::path(g.sysfs) / "kernel/poolmem/pools" / pool / "zero_reserve";
		std::ifstream f(attr);
		std::string v;
		if (f >> v) {
			saved = v;
			write("0");
		}
		/* the kernel's thread trims at once when told; a second at most */
		for (int i = 0; i < 40 && node_reserve_bytes(g, node); i++)
			usleep(50000);
	}
	~ReserveEmptied()
	{
		if (saved)
			write(*saved);
	}
	void write(const std::string &v)
	{
		int fd = ::open(attr.c_str(), O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return;	/* the pool is gone: nothing to keep or restore */
		if (::write(fd, v.data(), v.size()) < 0) {
			/* best effort: the offline itself reports what matters */
		}
		::close(fd);
	}
};

void offline_node(const GlobalOptions &g, const std::string &pool, int node)
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
	std::printf("%s: offlined %zu blocks on node %d\n", pool.c_str(), blocks.size(), node);
}

} // namespace

void run_offline(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	refuse_if_held(g, p, "offline");
	::close(background_lock(p.name));
	if (o.check) {
		std::printf("%s: offline would go ahead: no chunk there, %zu blocks on node %d\n", p.name.c_str(),
			    node_blocks(g, p.node).size(), p.node);
		return;
	}
	offline_node(g, p.name, p.node);
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
	if (o.check) {
		std::printf("%s: remove would go ahead: no chunk there\n", p.name.c_str());
		return;
	}
	ctl.pool_remove(p.name);
	std::error_code ec;
	if (fs::exists(added_marker(p.name))) {
		/* pool add --node: its memory stays online, as it was found */
		fs::remove(added_marker(p.name), ec);
		std::printf("%s: unregistered; node %d's memory stays online\n", p.name.c_str(), p.node);
		return;
	}
	offline_node(g, p.name, p.node);
	poolmem::Dax dax(g.sysfs);
	if (auto pieces = read_pieces(p.name)) {
		size_t n = merge_pieces(dax, *pieces);
		std::printf("%s: %s handed back to devdax whole (%s, %s deleted)\n", p.name.c_str(),
			    pieces->device.c_str(), poolmem::format_size(pieces->size).c_str(),
			    poolmem::plural(n, "piece").c_str());
		fs::remove(pieces_file(p.name), ec);
	}
	for (const auto &d : dax.devices()) {
		if (d.system_ram && d.target_node == p.node) {
			dax.to_devdax(d.name);
			std::printf("%s: %s handed back to devdax\n", p.name.c_str(), d.name.c_str());
		}
	}
	fs::remove(state_dir / (p.name + ".online"), ec);
}

namespace {

volatile std::sig_atomic_t drain_interrupted = 0;

void on_drain_signal(int) { drain_interrupted = 1; }

/// Seconds from "90", "90s", "5m", "1h"; UsageError naming OPTION.
double seconds_value(const std::string &option, const std::string &text)
{
	size_t pos = 0;
	double v = -1;
	try {
		v = std::stod(text, &pos);
	} catch (const std::exception &) {
		pos = 0;
	}
	std::string unit = text.substr(pos);
	double mult = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
	if (pos == 0 || v < 0 || mult < 0)
		throw UsageError(option + ": invalid duration '" + text + "' (e.g. 90, 90s, 5m)");
	return v * mult;
}

void bytes_bar(uint64_t done, uint64_t total, double secs)
{
	int width = 40, fill = total ? static_cast<int>(width * std::min(done, total) / total) : width;
	std::fprintf(stderr, "\r[%s%s] %s/%s %.0f MiB/s ", std::string(fill, '#').c_str(),
		     std::string(width - fill, ' ').c_str(), poolmem::format_size(done).c_str(),
		     poolmem::format_size(total).c_str(), secs > 0 ? static_cast<double>(done) / secs / (1 << 20) : 0.0);
}

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
	const uint64_t rate = o.rate.empty() ? 0 : size_value("--rate", o.rate);
	const double timeout = seconds_value("--timeout", o.timeout);
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
		std::printf("%s: can drain: %s to move\n", p.name.c_str(),
			    poolmem::format_size(first.remaining_bytes).c_str());
		return;
	}

	struct sigaction sa = {}, old_int = {}, old_term = {};
	sa.sa_handler = on_drain_signal; /* no SA_RESTART: the ioctl returns EINTR */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	const bool tty = isatty(STDERR_FILENO);
	const auto t0 = std::chrono::steady_clock::now();
	auto last_progress = t0;
	const uint64_t total = first.remaining_bytes;
	uint64_t moved = 0;
	/*
	 * With --rate, steps of a tenth of a second's worth (at least a
	 * chunk); without, 256 MiB: 64 runs of drain_batch 2 to share out
	 * among the kernel's drain workers, a fraction of a second each.
	 */
	const uint64_t step = rate ? std::max<uint64_t>(rate / 10, 2 << 20) : 256 << 20;
	poolmem::DrainStep r;
	unsigned pinned_tries = 0;
	std::string pinned_at;
	for (;;) {
		r = ctl.pool_drain(p.name, step, o.allow_local);
		if (r.err == EBUSY) {
			const std::string at = r.blocker + "@" + hex(r.blocker_offset);
			if (at != pinned_at)
				pinned_tries = 0;
			pinned_at = at;
		}
		/*
		 * A pin the kernel saw for ~10 ms: gone a moment later if it
		 * was I/O (process_vm_readv, O_DIRECT); a pin still there after
		 * a few tries is long-term (VFIO, RDMA, AF_XDP).
		 */
		if (r.err == EBUSY && ++pinned_tries < 5 && !drain_interrupted) {
			moved += r.moved_bytes;
			usleep(200000);
			continue;
		}
		moved += r.moved_bytes;
		const double secs = seconds_since(t0);
		if (tty)
			bytes_bar(moved, std::max(total, moved + r.remaining_bytes), secs);
		if (r.err == EINTR || drain_interrupted)
			break;
		if (r.err)
			break;
		if (r.remaining_bytes == 0)
			break;
		if (r.moved_bytes)
			last_progress = std::chrono::steady_clock::now();
		else if (seconds_since(last_progress) > timeout)
			break;
		else
			usleep(100000); /* only referenced (busy or retired) chunks left: wait for them */
		if (rate && moved > rate * secs)
			usleep(static_cast<useconds_t>((static_cast<double>(moved) / rate - secs) * 1e6));
	}
	sigaction(SIGINT, &old_int, nullptr);
	sigaction(SIGTERM, &old_term, nullptr);
	if (tty)
		std::fprintf(stderr, "\n");
	const double secs = seconds_since(t0);
	const std::string left = poolmem::format_size(r.remaining_bytes);
	if (r.err == EINTR || drain_interrupted)
		throw poolmem::Error::plain(p.name, "drain interrupted after " + poolmem::format_size(moved) + ", " + left +
							    " left; the pool stays draining: run again to go on, or "
							    "poolctl pool undrain " + p.name,
					    EINTR);
	if (r.err == EBUSY)
		throw poolmem::Error::plain(p.name, "cannot drain: domain " + r.blocker + " offset " + hex(r.blocker_offset) +
							    " is long-term pinned (VFIO, RDMA, AF_XDP: a device "
							    "may DMA to it); " + left + " left, the pool stays draining",
					    EBUSY);
	if (r.err == EIO)
		throw poolmem::Error::plain(p.name, "cannot drain: domain " + r.blocker + " offset " + hex(r.blocker_offset) +
							    " has an uncorrectable memory error; " + left + " left",
					    EIO);
	if (r.err == ENOSPC)
		throw poolmem::Error::plain(p.name, "cannot drain: no room elsewhere for domain " + r.blocker + " offset " +
							    hex(r.blocker_offset) + "; " + left + " left" +
							    (o.allow_local ? "" : " (--allow-local lets chunks move to local quota)"),
					    ENOSPC);
	if (r.remaining_bytes)
		throw poolmem::Error::plain(p.name, "drain timed out after " + o.timeout + " s without progress: " + left +
							    " still referenced (I/O in flight, a pipe or a discarded "
							    "chunk's last user); the pool stays draining",
					    EBUSY);
	std::printf("%s: drained %s in %.2f s (%.0f MiB/s)\n", p.name.c_str(), poolmem::format_size(moved).c_str(),
		    secs, secs > 0 ? static_cast<double>(moved) / secs / (1 << 20) : 0.0);
	if (o.offline)
		offline_node(g, p.name, p.node);
}

void run_undrain(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	poolmem::Control ctl = open_control(g);
	if (o.check) {
		std::printf("%s: undrain would go ahead (state %s)\n", p.name.c_str(), p.state.c_str());
		return;
	}
	ctl.pool_undrain(p.name);
	std::printf("%s: takes chunks again\n", p.name.c_str());
}

} // namespace poolctl::pool_cmd
