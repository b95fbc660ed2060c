// Chunks moved in steps, one ioctl each: the one loop behind pool drain,
// vm set, the autopilot's quota changes and the agent's offline of an
// extent. The kernel keeps what a step left (a pool stays draining, a
// shrunk tier keeps its pending moves), so a run that stops early can be
// taken up by the next one, in this process or another.
#pragma once

#include <poolmem/control.hpp>

#include <csignal>
#include <cstdint>
#include <functional>
#include <string>

namespace poolmem {

/// How fast and how long a run of steps may go.
struct MovePolicy {
	uint64_t rate = 0;	       ///< bytes/s; 0: as fast as the kernel moves
	uint64_t step = 256ULL << 20;  ///< bytes per step without a rate
	uint64_t budget = UINT64_MAX;  ///< stop once this many bytes moved (one step at least)
	double timeout = 60;	       ///< give up after this many seconds with nothing moved
	/// EBUSY steps in a row (at one chunk, for a drain) before the pin
	/// counts as long-term: a pin the kernel saw for ~10 ms is gone a
	/// moment later if it was I/O (process_vm_readv, O_DIRECT). 1: no
	/// second try.
	unsigned pinned_tries = 5;
};

/// What one step (one ioctl) did.
struct MoveStep {
	int err = 0;		      ///< 0 or the errno that stopped the step
	uint64_t moved_bytes = 0;     ///< in this step
	uint64_t remaining_bytes = 0; ///< still to move after it
};

/// How a run of steps ended.
struct MoveRun {
	uint64_t moved_bytes = 0;
	MoveStep last;
	double seconds = 0;
	bool interrupted = false; ///< *stop was set, or a step returned EINTR
	bool timed_out = false;	  ///< MovePolicy::timeout passed with nothing moved
	bool done() const { return !interrupted && !timed_out && !last.err && !last.remaining_bytes; }
};

/// Called after every step: bytes moved so far, the total as now known,
/// seconds since the start.
using MoveProgress = std::function<void(uint64_t done, uint64_t total, double seconds)>;

/// Call STEP(bytes) until nothing remains, the budget is spent, a step
/// fails and RETRY(step) says not to try again, *STOP is set (the first
/// step is always made: it may be the one that applies a change), or the
/// policy's timeout passes with nothing moved. Steps are a tenth of a
/// second's worth at a rate (at least a 2 MiB chunk), else policy.step.
/// A signal handler that sets *STOP should be installed without
/// SA_RESTART, so that a step in progress returns EINTR.
MoveRun run_moves(const MovePolicy &policy, uint64_t total, const std::function<MoveStep(uint64_t bytes)> &step,
		  const std::function<bool(const MoveStep &)> &retry = {}, const MoveProgress &progress = {},
		  const volatile std::sig_atomic_t *stop = nullptr);

/// A drain's run, with its last step's figures (who stopped it, where).
struct DrainRun : MoveRun {
	DrainStep result;
};

/// Move every chunk off POOL (marking it draining; it stays so until
/// Control::pool_undrain()), to other pools or, with ALLOW_LOCAL, to the
/// domains' local quota. A pin at one chunk is tried policy.pinned_tries
/// times; chunks referenced for a moment are waited for up to the timeout.
/// Throws what Control::pool_drain() throws.
DrainRun drain(Control &ctl, const std::string &pool, bool allow_local, const MovePolicy &policy,
	       const MoveProgress &progress = {}, const volatile std::sig_atomic_t *stop = nullptr);

/// A domain change's run.
struct SetRun : MoveRun {
	DomainSetResult result; ///< the last step's
	/// The first step applied CHANGE. False: the kernel refused it (its
	/// result says why) and nothing changed.
	bool applied = false;
};

/// Apply CHANGE to DOMAIN with its first step, then move what it leaves in
/// further steps (POOLMEM_SET_STEP, ABI 13; an older module moves all in
/// the one call). CHANGE null: go on with the moves an earlier change
/// left. EAGAIN (chunks referenced for a moment) is waited for up to the
/// timeout. Throws what Control::domain_set() throws.
SetRun set_moving(Control &ctl, const std::string &domain, const DomainChange *change, const MovePolicy &policy,
		  const MoveProgress &progress = {}, const volatile std::sig_atomic_t *stop = nullptr);

} // namespace poolmem
