// libpoolmem's loop of moves (poolmem/moves.hpp), against a scripted
// kernel: budget, rate, retries, the timeout and a stop request.
#include <poolmem/moves.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <vector>

using poolmem::MovePolicy;
using poolmem::MoveStep;
using poolmem::run_moves;

namespace {

/* A pool of BYTES to move, at most what a step asks for each time. */
struct FakeKernel {
	uint64_t left;
	std::vector<uint64_t> asked;
	MoveStep operator()(uint64_t bytes)
	{
		asked.push_back(bytes);
		const uint64_t n = std::min(bytes, left);
		left -= n;
		return {0, n, left};
	}
};

constexpr uint64_t MiB = 1ULL << 20;

} // namespace

TEST(Moves, StepsUntilNothingIsLeft)
{
	FakeKernel k{600 * MiB, {}};
	uint64_t last_done = 0, last_total = 0;
	const auto run = run_moves(MovePolicy{}, 600 * MiB, std::ref(k), {}, [&](uint64_t d, uint64_t t, double) {
		last_done = d;
		last_total = t;
	});
	EXPECT_TRUE(run.done());
	EXPECT_EQ(run.moved_bytes, 600 * MiB);
	EXPECT_EQ(k.asked, (std::vector<uint64_t>{256 * MiB, 256 * MiB, 256 * MiB}));
	EXPECT_EQ(last_done, 600 * MiB);
	EXPECT_EQ(last_total, 600 * MiB);
}

TEST(Moves, BudgetEndsTheRunAndShrinksTheLastStep)
{
	FakeKernel k{600 * MiB, {}};
	MovePolicy p;
	p.budget = 300 * MiB;
	const auto run = run_moves(p, 0, std::ref(k));
	EXPECT_EQ(run.moved_bytes, 300 * MiB);
	EXPECT_EQ(k.asked, (std::vector<uint64_t>{256 * MiB, 44 * MiB}));
	EXPECT_FALSE(run.done()); /* 300 MiB still to move */
	EXPECT_FALSE(run.timed_out);

	FakeKernel none{10 * MiB, {}};
	p.budget = 0; /* one chunk's step at least */
	EXPECT_EQ(run_moves(p, 0, std::ref(none)).moved_bytes, 2 * MiB);
}

TEST(Moves, RatePacesTheSteps)
{
	FakeKernel k{8 * MiB, {}};
	MovePolicy p;
	p.rate = 20 * MiB; /* steps of 2 MiB, a tenth of a second each */
	const auto run = run_moves(p, 0, std::ref(k));
	EXPECT_TRUE(run.done());
	EXPECT_EQ(k.asked.size(), 4u);
	EXPECT_GE(run.seconds, 0.29); /* the fourth step waits until 6 MiB took 0.3 s */
}

TEST(Moves, RetriesWhileAskedThenTimesOut)
{
	unsigned calls = 0, retries = 0;
	MovePolicy p;
	p.timeout = 0.3;
	const auto run = run_moves(
		p, 0, [&](uint64_t) { return ++calls == 1 ? MoveStep{0, 2 * MiB, 2 * MiB} : MoveStep{EAGAIN, 0, 2 * MiB}; },
		[&](const MoveStep &s) {
			retries++;
			return s.err == EAGAIN;
		});
	EXPECT_TRUE(run.timed_out);
	EXPECT_EQ(run.last.err, EAGAIN);
	EXPECT_EQ(run.moved_bytes, 2 * MiB);
	EXPECT_GE(retries, 2u);

	/* no retry: the first failure ends it */
	calls = 0;
	const auto once = run_moves(p, 0, [&](uint64_t) { return ++calls, MoveStep{EBUSY, 0, 4 * MiB}; });
	EXPECT_EQ(calls, 1u);
	EXPECT_EQ(once.last.err, EBUSY);
	EXPECT_FALSE(once.timed_out);
}

TEST(Moves, StopEndsTheRunAfterTheStepInProgress)
{
	volatile std::sig_atomic_t stop = 0;
	FakeKernel k{100 * MiB, {}};
	MovePolicy p;
	p.step = 2 * MiB;
	const auto run = run_moves(
		p, 0,
		[&](uint64_t b) {
			if (k.asked.size() == 2)
				stop = 1; /* a signal during the third step */
			return k(b);
		},
		{}, {}, &stop);
	EXPECT_TRUE(run.interrupted);
	EXPECT_EQ(run.moved_bytes, 6 * MiB);
	EXPECT_FALSE(run.done());

	/* a step that returns EINTR (the signal broke the ioctl) is the same */
	const auto eintr = run_moves(p, 0, [](uint64_t) { return MoveStep{EINTR, 0, 2 * MiB}; });
	EXPECT_TRUE(eintr.interrupted);
}
