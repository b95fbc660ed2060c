// poolctl: the loop that moves chunks in steps, shared by pool drain and
// vm set (moves.hpp).
#include "moves.hpp"

#include <poolmem/size.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>

#include <unistd.h>

namespace poolctl {

namespace {

volatile std::sig_atomic_t move_interrupted = 0;

void on_move_signal(int) { move_interrupted = 1; }

void bytes_bar(uint64_t done, uint64_t total, double secs)
{
	int width = 40, fill = total ? static_cast<int>(width * std::min(done, total) / total) : width;
	std::fprintf(stderr, "\r[%s%s] %s/%s %.0f MiB/s ", std::string(fill, '#').c_str(),
		     std::string(width - fill, ' ').c_str(), poolmem::format_size(done).c_str(),
		     poolmem::format_size(total).c_str(), secs > 0 ? static_cast<double>(done) / secs / (1 << 20) : 0.0);
}

/* SIGINT and SIGTERM set a flag while a run lasts, without SA_RESTART so
 * that the ioctl in progress returns EINTR; the old handlers come back. */
struct SignalsCaught {
	struct sigaction old_int = {}, old_term = {};
	SignalsCaught()
	{
		struct sigaction sa = {};
		sa.sa_handler = on_move_signal;
		move_interrupted = 0;
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
	}
	~SignalsCaught()
	{
		sigaction(SIGINT, &old_int, nullptr);
		sigaction(SIGTERM, &old_term, nullptr);
	}
};

} // namespace

MoveRun run_moves(const MoveOptions &o, uint64_t total, uint64_t default_step,
		  const std::function<MoveStep(uint64_t bytes)> &step,
		  const std::function<bool(const MoveStep &)> &retry)
{
	const uint64_t rate = o.rate.empty() ? 0 : size_value("--rate", o.rate);
	if (!o.rate.empty() && !rate)
		throw UsageError("--rate: must be above 0");
	const double timeout = seconds_value("--timeout", o.timeout);
	const uint64_t bytes = rate ? std::max<uint64_t>(rate / 10, 2 << 20) : default_step;
	const bool tty = isatty(STDERR_FILENO);
	const auto t0 = std::chrono::steady_clock::now();
	auto last_progress = t0;
	SignalsCaught caught;
	MoveRun run;

	for (;;) {
		if (move_interrupted && run.moved_bytes) {
			/* Ctrl-C during the rate's sleep: no step after it */
			run.interrupted = true;
			break;
		}
		run.last = step(bytes);
		run.moved_bytes += run.last.moved_bytes;
		const double secs = seconds_since(t0);
		if (tty)
			bytes_bar(run.moved_bytes, std::max(total, run.moved_bytes + run.last.remaining_bytes), secs);
		if (run.last.err == EINTR || move_interrupted) {
			run.interrupted = true;
			break;
		}
		if (run.last.moved_bytes)
			last_progress = std::chrono::steady_clock::now();
		if (run.last.err && !(retry && retry(run.last)))
			break;
		if (!run.last.err && !run.last.remaining_bytes)
			break;
		if (!run.last.moved_bytes || run.last.err) {
			/* only referenced (busy, pinned for a moment, retired) chunks left: wait for them */
			if (seconds_since(last_progress) > timeout) {
				run.timed_out = true;
				break;
			}
			usleep(run.last.err ? 200000 : 100000);
		}
		if (rate && run.moved_bytes > rate * secs)
			usleep(static_cast<useconds_t>((static_cast<double>(run.moved_bytes) / rate - secs) * 1e6));
	}
	if (tty)
		std::fprintf(stderr, "\n");
	run.seconds = seconds_since(t0);
	return run;
}

} // namespace poolctl
