// poolctl: the options, progress bar and signals of a run of moves
// (moves.hpp); the loop itself is libpoolmem's.
#include "moves.hpp"

#include <poolmem/size.hpp>

#include <algorithm>
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

} // namespace

poolmem::MovePolicy move_policy(const MoveOptions &o, poolmem::MovePolicy p)
{
	p.rate = o.rate.empty() ? 0 : size_value("--rate", o.rate);
	if (!o.rate.empty() && !p.rate)
		throw UsageError("--rate: must be above 0");
	p.timeout = seconds_value("--timeout", o.timeout);
	return p;
}

MoveUi::MoveUi() : tty_(isatty(STDERR_FILENO))
{
	struct sigaction sa = {};
	sa.sa_handler = on_move_signal;
	move_interrupted = 0;
	sigaction(SIGINT, &sa, &old_int_);
	sigaction(SIGTERM, &sa, &old_term_);
}

MoveUi::~MoveUi()
{
	sigaction(SIGINT, &old_int_, nullptr);
	sigaction(SIGTERM, &old_term_, nullptr);
	if (drawn_)
		std::fprintf(stderr, "\n");
}

poolmem::MoveProgress MoveUi::progress() const
{
	if (!tty_)
		return {};
	return [this](uint64_t done, uint64_t total, double secs) {
		if (!done && !total)
			return; /* a change that moves nothing (vm set --tiering): no bar */
		drawn_ = true;
		bytes_bar(done, total, secs);
	};
}

const volatile std::sig_atomic_t *MoveUi::stop() const { return &move_interrupted; }

} // namespace poolctl
