// The thread pool covers every index exactly once and hands out valid worker indices.
#include "address_space_limit.h"
#include "kernels/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

using namespace mb::kernels;

TEST(ThreadPool, CoversEveryIndexOnce) {
    for (int threads : {1, 2, 3, 8}) {
        ThreadPool pool(threads);
        for (int64_t count : {0, 1, 2, 7, 64, 1000}) {
            for (int64_t grain : {1, 4, 16}) {
                std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
                auto body = [&](int64_t b, int64_t e, int worker) {
                    EXPECT_GE(worker, 0);
                    EXPECT_LT(worker, threads);
                    EXPECT_TRUE(b % grain == 0);
                    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
                };
                pool.parallelFor(count, body, grain);
                for (int64_t i = 0; i < count; ++i)
                    ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1)
                        << "threads " << threads << " count " << count << " grain " << grain << " index " << i;
            }
        }
    }
}

TEST(ThreadPool, ManySmallJobsInARow) {
    ThreadPool pool(4);
    std::atomic<int64_t> total{0};
    for (int job = 0; job < 20000; ++job) {
        auto body = [&](int64_t b, int64_t e) { total.fetch_add(e - b); };
        pool.parallelFor(8, body);
    }
    EXPECT_EQ(total.load(), 20000 * 8);
}

TEST(ThreadPool, WorkerIndicesAreDistinctWithinAJob) {
    ThreadPool pool(3);
    for (int job = 0; job < 2000; ++job) {
        std::atomic<int> busy[3] = {0, 0, 0};
        auto body = [&](int64_t, int64_t, int worker) {
            // Two chunks running at once under one index would share per-thread scratch.
            EXPECT_EQ(busy[worker].fetch_add(1), 0);
            busy[worker].fetch_sub(1);
        };
        pool.parallelFor(64, body);
    }
}

// Under an address-space limit only a few dozen 8 MiB stacks fit: the pool must join the
// threads it started and say so, not abort with "terminate called without an active
// exception" from a joinable std::thread destroyed by the unwinding.
TEST(ThreadPool, ThreadsTheSystemRefusesGiveAClearErrorNotAnAbort) {
    if (!mb::test::kAddressSpaceLimitWorks) GTEST_SKIP() << "address-space limits do not work under a sanitizer";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            ::alarm(120); // before the fix the child could hang in the abort: fail, don't stick
            if (!mb::test::limitAddressSpace(size_t{300} << 20)) std::_Exit(3);
            try {
                ThreadPool pool(1024);
                std::_Exit(4); // all 1024 started: the limit did not bite
            } catch (const std::runtime_error& e) {
                const std::string what = e.what();
                const bool clear = what.rfind("cannot start 1024 threads: only ", 0) == 0 &&
                                   what.find("use fewer --threads") != std::string::npos;
                std::_Exit(clear ? 0 : 5);
            }
        },
        ::testing::ExitedWithCode(0), "");
}
