// Chunks moved in steps (moves.hpp): the loop, and the drain and domain
// change built on it.
#include <poolmem/moves.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

namespace poolmem {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void sleep_seconds(double s)
{
	if (s > 0)
		std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

} // namespace

MoveRun run_moves(const MovePolicy &policy, uint64_t total, const std::function<MoveStep(uint64_t bytes)> &step,
		  const std::function<bool(const MoveStep &)> &retry, const MoveProgress &progress,
		  const volatile std::sig_atomic_t *stop)
{
	const uint64_t rate = policy.rate;
	const uint64_t per_step = rate ? std::max<uint64_t>(rate / 10, 2ULL << 20) : policy.step;
	const auto stopped = [stop] { return stop && *stop; };
	const auto t0 = std::chrono::steady_clock::now();
	auto last_progress = t0;
	MoveRun run;

	for (unsigned steps = 0;; steps++) {
		if (stopped() && steps) {
			/* stopped during a sleep between steps: no step after it */
			run.interrupted = true;
			break;
		}
		const uint64_t left = policy.budget - std::min(policy.budget, run.moved_bytes);
		run.last = step(std::max<uint64_t>(std::min(per_step, left), 2ULL << 20));
		run.moved_bytes += run.last.moved_bytes;
		const double secs = seconds_since(t0);
		if (progress)
			progress(run.moved_bytes, std::max(total, run.moved_bytes + run.last.remaining_bytes), secs);
		if (run.last.err == EINTR || stopped()) {
			run.interrupted = true;
			break;
		}
		if (run.last.moved_bytes)
			last_progress = std::chrono::steady_clock::now();
		if (run.last.err && !(retry && retry(run.last)))
			break;
		if (!run.last.err && !run.last.remaining_bytes)
			break;
		if (run.moved_bytes >= policy.budget)
			break;
		if (!run.last.moved_bytes || run.last.err) {
			/* only referenced (busy, pinned for a moment, retired) chunks left: wait for them */
			if (seconds_since(last_progress) > policy.timeout) {
				run.timed_out = true;
				break;
			}
			sleep_seconds(run.last.err ? 0.2 : 0.1);
		}
		if (rate)
			sleep_seconds(static_cast<double>(run.moved_bytes) / static_cast<double>(rate) - seconds_since(t0));
	}
	run.seconds = seconds_since(t0);
	return run;
}

DrainRun drain(Control &ctl, const std::string &pool, bool allow_local, const MovePolicy &policy,
	       const MoveProgress &progress, const volatile std::sig_atomic_t *stop)
{
	DrainRun out;
	unsigned pinned = 0;
	std::string pinned_domain;
	uint64_t pinned_offset = 0;
	const uint64_t total = ctl.pool_drain(pool, 0, allow_local, true).remaining_bytes;
	static_cast<MoveRun &>(out) = run_moves(
		policy, total,
		[&](uint64_t bytes) {
			out.result = ctl.pool_drain(pool, bytes, allow_local);
			return MoveStep{out.result.err, out.result.moved_bytes, out.result.remaining_bytes};
		},
		[&](const MoveStep &s) {
			if (s.err != EBUSY)
				return false;
			/* a pin at a new chunk starts the count again */
			if (out.result.blocker != pinned_domain || out.result.blocker_offset != pinned_offset)
				pinned = 0;
			pinned_domain = out.result.blocker;
			pinned_offset = out.result.blocker_offset;
			return ++pinned < policy.pinned_tries;
		},
		progress, stop);
	return out;
}

SetRun set_moving(Control &ctl, const std::string &domain, const DomainChange *change, const MovePolicy &policy,
		  const MoveProgress &progress, const volatile std::sig_atomic_t *stop)
{
	SetRun out;
	const bool stepped = ctl.abi_version() >= 13;
	bool first = change != nullptr;
	unsigned pinned = 0;
	static_cast<MoveRun &>(out) = run_moves(
		policy, 0,
		[&](uint64_t bytes) {
			DomainChange c = first ? *change : DomainChange{};
			c.step = stepped ? bytes : 0;
			out.result = ctl.domain_set(domain, c);
			if (first && out.result.err == ENOSPC) /* refused: nothing changed */
				return MoveStep{ENOSPC, 0, 0};
			first = false;
			out.applied = true;
			if (out.result.err != EBUSY)
				pinned = 0;
			return MoveStep{out.result.err, out.result.moved_bytes, stepped ? out.result.remaining_bytes : 0};
		},
		[&](const MoveStep &s) {
			if (!out.applied)
				return false;
			/* referenced for a moment (I/O), or a pin that may be I/O */
			return s.err == EAGAIN || (s.err == EBUSY && ++pinned < policy.pinned_tries);
		},
		progress, stop);
	return out;
}

} // namespace poolmem
