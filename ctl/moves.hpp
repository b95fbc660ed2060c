// poolctl: chunks moved in steps (pool drain, vm set) through libpoolmem's
// loop (poolmem/moves.hpp): the policy --rate and --timeout give, the
// progress bar and Ctrl-C, and one JSON and exit code for a move that
// stopped halfway.
#pragma once

#include "commands.hpp"

#include <poolmem/error.hpp>
#include <poolmem/moves.hpp>

#include <chrono>
#include <csignal>
#include <string>

namespace poolctl {

/// Seconds from T0 to now.
inline double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The policy --rate and --timeout give, over DEFAULTS; UsageError naming
/// the option.
poolmem::MovePolicy move_policy(const MoveOptions &o, poolmem::MovePolicy defaults = {});

/// While it lives, SIGINT and SIGTERM set stop() (without SA_RESTART, so
/// that the step in progress returns EINTR) and progress() draws a bar on
/// stderr when it is a terminal; the old handlers come back after.
class MoveUi {
public:
	MoveUi();
	~MoveUi();
	MoveUi(const MoveUi &) = delete;
	MoveUi &operator=(const MoveUi &) = delete;
	poolmem::MoveProgress progress() const;
	const volatile std::sig_atomic_t *stop() const;

private:
	struct sigaction old_int_ = {}, old_term_ = {};
	bool tty_;
	mutable bool drawn_ = false;
};

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
