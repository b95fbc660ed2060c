// poolctl: chunks moved in steps (pool drain, vm set): one loop for the
// progress bar, --rate, --timeout and Ctrl-C, and one JSON and exit code
// for a move that stopped halfway.
#pragma once

#include "commands.hpp"

#include <poolmem/error.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace poolctl {

/// Seconds from T0 to now.
inline double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// What one step (one ioctl) did.
struct MoveStep {
	int err = 0;		     ///< 0 or the errno that stopped the step
	uint64_t moved_bytes = 0;    ///< in this step
	uint64_t remaining_bytes = 0; ///< still to move after it
};

/// How a run of steps ended.
struct MoveRun {
	uint64_t moved_bytes = 0;
	MoveStep last;
	double seconds = 0;
	bool interrupted = false; ///< SIGINT or SIGTERM
	bool timed_out = false;	  ///< --timeout without progress
	bool done() const { return !interrupted && !timed_out && !last.err && !last.remaining_bytes; }
};

/// Call STEP(bytes) until nothing remains, a step fails (RETRY(step)
/// false), SIGINT/SIGTERM, or --timeout passes with nothing moved. Steps
/// of a tenth of a second's worth with --rate (at least a 2 MiB chunk),
/// else DEFAULT_STEP; a progress bar on stderr when it is a terminal,
/// sized from TOTAL. RETRY, given a failed step, says whether to try
/// again after a moment (a pin that may be I/O).
MoveRun run_moves(const MoveOptions &o, uint64_t total, uint64_t default_step,
		  const std::function<MoveStep(uint64_t bytes)> &step,
		  const std::function<bool(const MoveStep &)> &retry = {});

/// Thrown when a command changed something and stopped before the end
/// (exit code EXIT_PARTIAL): the message says what is left and how to go
/// on. RESULT, if not null, is what --json prints to stdout first.
struct PartialError : poolmem::Error {
	PartialError(const std::string &object, const std::string &why, int err, nlohmann::json result = nullptr)
		: poolmem::Error(poolmem::Error::plain(object, why, err)), json(std::move(result))
	{
	}
	nlohmann::json json;
};

} // namespace poolctl
