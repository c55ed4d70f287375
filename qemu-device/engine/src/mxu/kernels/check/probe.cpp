// SPDX-License-Identifier: MIT
// The child-process check: fork, run the check in the child and report through the exit
// status; the parent waits at most kTimeout and kills a child that has not finished.
#include "mxu/kernels/check/probe.hpp"

#include "mxu/kernels/check/check.hpp"

#if defined(__linux__)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#endif

namespace tpu::engine {

bool passes_check_in_child(const RowKernels &kernels) {
#if defined(__linux__)
    constexpr auto kTimeout = std::chrono::seconds(20);
    const pid_t child = fork();
    if (child < 0)
        return false;
    if (child == 0)
        _exit(kernels_match_model(kernels) ? 0 : 1);
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    int status = 0;
    for (;;) {
        const pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child)
            return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (done < 0 || std::chrono::steady_clock::now() > deadline) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
#else
    (void)kernels;
    return false;
#endif
}

} // namespace tpu::engine
