// SPDX-License-Identifier: MIT
// stream_state.cpp - a stream's timeline: submitting its jobs chained by syncobj points,
// retiring them once their points have signalled, deferred host work on a helper thread,
// waits for other streams' points, host waits and errors (see stream.hpp).
#include "stream/stream_state.hpp"

#include "device/device_state.hpp"
#include "profile/profiler_record.hpp"
#include "tpurt/error.hpp"

#include <tpu_hw.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <optional>

namespace tpurt::detail {

namespace {

using Clock = std::chrono::steady_clock;

// Submitted jobs kept before the stream looks for retired ones (the driver allows 4096 jobs
// not yet waited for and 1024 in flight per file).
constexpr std::size_t retire_batch = 256;

std::int64_t monotonic_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t deadline_after(std::chrono::nanoseconds timeout) {
    const std::int64_t now = monotonic_ns();
    return timeout.count() > INT64_MAX - now ? INT64_MAX : now + timeout.count();
}

[[noreturn]] void system_error(const char *what, int err) {
    throw Error(ErrorCode::SystemCall, std::string(what) + " failed: " + std::strerror(err), err);
}

// The latest signalled point, or 0 if the backend cannot say.
std::uint64_t value_or_zero(const Backend &backend, std::uint32_t timeline) noexcept {
    try {
        return backend.timeline_value(timeline);
    } catch (...) {
        return 0;
    }
}

} // namespace

StreamState::StreamState(Device device, StreamOptions options)
    : device_(std::move(device)), options_(options), backend_(state_of(device_).backend) {
    if (options.priority < static_cast<int>(lowest_priority) ||
        options.priority > static_cast<int>(highest_priority))
        throw Error(ErrorCode::InvalidArgument,
                    "stream priority " + std::to_string(options.priority) + " is not in " +
                        std::to_string(lowest_priority) + " (low) .. " +
                        std::to_string(highest_priority) + " (high)");
    syncobj_ = backend_->create_timeline();
}

StreamState::~StreamState() {
    drain();
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    work_ready_.notify_all();
    if (worker_.joinable())
        worker_.join();
    backend_->destroy_timeline(syncobj_);
}

std::uint64_t StreamState::end_point() {
    std::lock_guard lock(mutex_);
    return assigned_;
}

bool StreamState::reached(std::uint64_t point) const {
    if (point == 0)
        return true;
    return backend_->timeline_value(syncobj_) >= point;
}

bool StreamState::wait_point(std::uint64_t point, std::int64_t deadline_ns) const {
    if (point == 0)
        return true;
    return backend_->wait_timeline(syncobj_, point, deadline_ns);
}

void StreamState::fail(std::exception_ptr error) noexcept {
    if (!error_)
        error_ = std::move(error);
}

void StreamState::enqueue(OpLaunch launch) {
    if (!launch.executable)
        throw Error(ErrorCode::InvalidArgument, "an op launch without an executable");
    const std::vector<const Buffer *> buffers = launch.buffer_pointers();
    for (const Buffer *buffer : buffers)
        if (!buffer || buffer->handle() == 0)
            throw Error(ErrorCode::InvalidArgument,
                        launch.name() + ": a buffer is missing or was moved from or released");
    launch.executable->check_arguments(launch.bases, buffers);
    if (Lock lock(mutex_); captured_) {
        captured_->push_back(std::move(launch));
        return;
    }
    auto op = std::make_shared<StreamOp>();
    op->jobs_left = launch.executable->program_count();
    op->launch = std::move(launch);
    if (profiler::active()) // the op's wall time is only recorded then
        op->start = Clock::now();
    Lock lock(mutex_);
    const std::uint64_t first = assigned_ + 1;
    assigned_ += op->jobs_left;
    if (deferred_.empty()) {
        submit_op(lock, op, first);
        return;
    }
    DeferredWork work;
    work.first = first;
    work.last = assigned_;
    work.op = op;
    deferred_.push_back(std::move(work));
}

void StreamState::submit_op(Lock &lock, const std::shared_ptr<StreamOp> &op, std::uint64_t first) {
    const std::size_t programs = op->launch.executable->program_count();
    const bool profiling = profiler::active();
    for (std::size_t p = 0; p < programs; ++p) {
        const auto submit_start = profiling ? Clock::now() : Clock::time_point{};
        std::optional<PooledBuffer> program;
        std::uint64_t id = 0;
        try {
            program.emplace(
                state_of(device_).programs->acquire(op->launch.executable->program_bytes(p)));
            id = submit_job(lock, *op, p, first + p, program->buffer());
        } catch (...) {
            // Keep the timeline whole so that waiters see the points: the failed job's point
            // (and the op's later ones) signal at once, after the earlier jobs.
            fail(std::current_exception());
            for (std::size_t q = p; q < programs; ++q)
                signal(first + q);
            return;
        }
        in_flight_.push_back({first + p, id, std::move(*program), op});
        if (profiling)
            record_host(
                {"submit", op->launch.name(), device_.info().minor, profile_us(submit_start),
                 std::chrono::duration<double, std::micro>(Clock::now() - submit_start).count()});
    }
    if (in_flight_.size() >= retire_batch)
        if (const std::uint64_t value = value_or_zero(*backend_, syncobj_))
            retire(value);
}

std::uint64_t StreamState::submit_job(Lock &lock, const StreamOp &op, std::size_t index,
                                      std::uint64_t point, Buffer &program) {
    (void)lock;
    const Executable &exe = *op.launch.executable;
    const std::size_t bytes = exe.program_bytes(index);
    exe.patch(index, op.launch.bases,
              {static_cast<union tpu_insn *>(program.data()), bytes / TPU_INSN_SIZE});
    handles_.clear(); // kept between jobs: no allocation per launch
    for (const std::shared_ptr<Buffer> &buffer : op.launch.buffers)
        handles_.push_back(buffer->handle());
    const TimelinePoint in{syncobj_, point - 1};
    const TimelinePoint out{syncobj_, point};
    SubmitRequest submit;
    submit.program = program.handle();
    submit.program_bytes = static_cast<std::uint32_t>(bytes);
    submit.buffers = handles_;
    // No dependency on a point known to have signalled (after a host wait, say), nor on the
    // stream's own previous job: the driver queues a file's jobs of one priority in order on
    // one card queue, which runs them one after the other. With the fence as a dependency,
    // drm_sched would hold this job until the previous one had ended instead of handing it
    // to the ring at once. A point from elsewhere (another stream's event) is waited for.
    if (point > 1 && point - 1 > signalled_ && point - 1 != own_point_)
        submit.wait = &in;
    submit.signal = &out;
    submit.priority = static_cast<std::uint32_t>(options_.priority);
    std::int64_t give_up = 0; // once the card or the file is full
    for (;;) {
        std::uint64_t job_id = 0;
        const int err = backend_->submit(submit, job_id);
        if (err == 0) {
            own_point_ = point;
            return job_id;
        }
        if (give_up == 0)
            give_up = deadline_after(Job::default_timeout);
        if ((err != EDQUOT && err != ENOSPC && err != EBUSY) || monotonic_ns() > give_up)
            throw Error(ErrorCode::SystemCall,
                        op.launch.name() +
                            ": DRM_IOCTL_TPU_SUBMIT on a stream failed: " + std::strerror(err) +
                            (err == EACCES && options_.priority > static_cast<int>(lowest_priority)
                                 ? " (stream priority " + std::to_string(options_.priority) +
                                       " takes CAP_SYS_NICE)"
                                 : ""),
                        err);
        // The file's or card's jobs in flight are at their limit: let the older half of
        // ours end, or, with none of ours in flight, give other users a moment.
        if (!in_flight_.empty()) {
            const std::uint64_t older = in_flight_[in_flight_.size() / 2].point;
            if (wait_point(older, give_up))
                retire(older);
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
}

void StreamState::retire(std::uint64_t upto) noexcept {
    const DeviceInfo &info = device_.info();
    signalled_ = std::max(signalled_, upto);
    while (!in_flight_.empty() && in_flight_.front().point <= upto) {
        StreamJob &job = in_flight_.front();
        if (job.waited_on)
            return; // another thread's wait collects it and retires from there
        JobRecord wait = job.record;
        int err = 0;
        if (!job.ended) {
            // Its fence has signalled: this only collects its record.
            err = backend_->wait(job.id, 0, false, wait);
            if (err == ETIMEDOUT)
                return;
        }
        StreamOp &op = *job.op;
        if (err != 0)
            fail(std::make_exception_ptr(Error(
                ErrorCode::SystemCall,
                op.launch.name() + ": DRM_IOCTL_TPU_WAIT failed: " + std::strerror(err), err)));
        else if (wait.status != TPU_ERR_NONE)
            fail(std::make_exception_ptr(
                JobError(job.id, wait.status, wait.error_pc, wait.fault_addr, op.launch.name())));
        op.stats.cycles += wait.cycles;
        op.stats.macs += wait.macs;
        op.stats.jobs++;
        // An op enqueued before the profiler started has no start time: not recorded.
        if (--op.jobs_left == 0 && profiler::active() && op.start != Clock::time_point{}) {
            op.stats.wall = Clock::now() - op.start;
            const Executable &exe = *op.launch.executable;
            record_op(
                {.name = exe.name(),
                 .device = info.minor,
                 .start_us = profile_us(op.start),
                 .wall_us = std::chrono::duration<double, std::micro>(op.stats.wall).count(),
                 .card_us = std::chrono::duration<double, std::micro>(op.stats.modelled_time(info))
                                .count(),
                 .cycles = op.stats.cycles,
                 .macs = op.stats.macs,
                 .bytes = exe.bytes_moved(),
                 .jobs = op.stats.jobs,
                 .utilisation = op.stats.utilisation(info)});
        }
        in_flight_.pop_front(); // the program buffer goes back to its pool, the op's buffers
                                // are released with the op's last job
    }
}

void StreamState::signal(std::uint64_t point) {
    backend_->signal_timeline(syncobj_, point);
}

void StreamState::transfer(const StreamState &other, std::uint64_t other_point,
                           std::uint64_t point) {
    if (other.backend_ != backend_)
        throw Error(ErrorCode::InvalidArgument,
                    "a stream can only wait for events of streams on the same Device");
    // The new point is the other stream's fence: a timeline point signals only after every
    // earlier point, so this stream's later jobs wait for both streams' work.
    backend_->import_point(syncobj_, point, {other.syncobj_, other_point});
}

void StreamState::wait_for(const std::shared_ptr<StreamState> &other, std::uint64_t point) {
    if (!other || point == 0 || other.get() == this)
        return; // already happened, or in this stream's own order
    Lock lock(mutex_);
    refuse_in_capture("a wait for another stream's event");
    const std::uint64_t mine = ++assigned_;
    if (deferred_.empty()) {
        try {
            transfer(*other, point, mine);
        } catch (...) {
            signal(mine);
            throw;
        }
        return;
    }
    DeferredWork work;
    work.first = work.last = mine;
    work.other = other;
    work.other_point = point;
    deferred_.push_back(std::move(work));
}

void StreamState::enqueue_host(std::string name, std::function<void()> work,
                               std::vector<std::shared_ptr<Buffer>> buffers) {
    Lock lock(mutex_);
    refuse_in_capture(name);
    DeferredWork item;
    item.host = std::move(work);
    item.host_name = std::move(name);
    item.keep = std::move(buffers);
    if (deferred_.empty() && reached(assigned_)) {
        run_host(item); // nothing of the stream is pending: no point needed
        return;
    }
    item.first = item.last = ++assigned_;
    deferred_.push_back(std::move(item));
    start_worker(lock);
    work_ready_.notify_one();
}

void StreamState::run_host(const DeferredWork &work) noexcept {
    try {
        work.host();
    } catch (const JobError &e) { // a job the work ran (a collective's part), named by it
        fail(std::make_exception_ptr(
            JobError(e.job_id(), e.status(), e.error_pc(), e.fault_addr(), work.host_name)));
    } catch (const Error &e) {
        fail(std::make_exception_ptr(
            Error(e.code(), work.host_name + " on a stream: " + e.what(), e.sys_errno())));
    } catch (const std::exception &e) {
        fail(std::make_exception_ptr(
            Error(ErrorCode::InvalidArgument, work.host_name + " on a stream: " + e.what())));
    }
}

void StreamState::start_worker(Lock &lock) {
    (void)lock;
    if (!worker_.joinable())
        worker_ = std::thread([this] { worker_loop(); });
}

void StreamState::worker_loop() {
    Lock lock(mutex_);
    for (;;) {
        work_ready_.wait(lock, [this] { return stopping_ || !deferred_.empty(); });
        if (deferred_.empty())
            return; // stopping
        DeferredWork &work = deferred_.front();
        if (work.host) {
            // Wait (unlocked) for the stream's earlier points, run the work, signal its point.
            const std::uint64_t before = work.first - 1;
            lock.unlock();
            bool ok = true;
            try {
                ok = wait_point(before, INT64_MAX);
            } catch (...) {
                ok = false;
            }
            lock.lock();
            DeferredWork &front = deferred_.front();
            if (ok)
                run_host(front);
            try {
                signal(front.first);
            } catch (...) {
                fail(std::current_exception());
            }
        } else if (work.op) {
            submit_op(lock, work.op, work.first);
        } else {
            try {
                transfer(*work.other, work.other_point, work.first);
            } catch (...) {
                fail(std::current_exception());
                signal(work.first);
            }
        }
        deferred_.pop_front();
        if (deferred_.empty())
            drained_.notify_all();
    }
}

bool StreamState::wait_job(Lock &lock, std::uint64_t point, std::int64_t deadline_ns) {
    // The job that signals `point`, if it is one of ours not yet retired: the job wait on it
    // waits for the same fence and returns its completion record in the same call. Its
    // point signalled means every earlier one did (a timeline point signals after the earlier).
    auto it = std::find_if(in_flight_.rbegin(), in_flight_.rend(),
                           [&](const StreamJob &job) { return job.point <= point; });
    if (it == in_flight_.rend() || it->point != point || it->waited_on || it->ended ||
        !deferred_.empty())
        return false;
    it->waited_on = true;
    const std::uint64_t id = it->id;
    JobRecord wait;
    lock.unlock();
    const int err = backend_->wait(id, deadline_ns, true, wait);
    lock.lock();
    // Jobs are only removed by retire(), which leaves a job being waited on in place.
    auto job = std::find_if(in_flight_.begin(), in_flight_.end(),
                            [&](const StreamJob &j) { return j.point == point; });
    job->waited_on = false;
    if (err == ETIMEDOUT)
        throw Error(ErrorCode::Timeout, "stream work still running at the deadline; wait "
                                        "again or check the card (dmesg)");
    if (err != 0)
        system_error("DRM_IOCTL_TPU_WAIT", err);
    job->ended = true;
    job->record = wait;
    return true;
}

void StreamState::wait(std::uint64_t point, std::chrono::nanoseconds timeout) {
    const std::int64_t deadline = deadline_after(timeout);
    Lock lock(mutex_);
    if (!wait_job(lock, point, deadline)) {
        lock.unlock();
        if (!wait_point(point, deadline))
            throw Error(ErrorCode::Timeout, "stream work still running after " +
                                                std::to_string(timeout.count() / 1000000) +
                                                " ms; wait again or check the card (dmesg)");
        lock.lock();
    }
    retire(point);
    if (error_)
        std::rethrow_exception(std::exchange(error_, nullptr));
}

void StreamState::refuse_in_capture(const std::string &what) const {
    if (captured_)
        throw Error(ErrorCode::InvalidArgument,
                    what + " cannot be captured: only ops on the card are (collectives and host "
                           "copies neither); queue it before begin_capture() or after "
                           "end_capture()");
}

void StreamState::begin_capture() {
    Lock lock(mutex_);
    if (captured_)
        throw Error(ErrorCode::InvalidArgument, "the stream is capturing already");
    captured_.emplace();
}

bool StreamState::capturing() const {
    Lock lock(mutex_);
    return captured_.has_value();
}

std::vector<OpLaunch> StreamState::end_capture() {
    Lock lock(mutex_);
    if (!captured_)
        throw Error(ErrorCode::InvalidArgument, "end_capture() without begin_capture()");
    std::vector<OpLaunch> launches = std::move(*captured_);
    captured_.reset();
    return launches;
}

void StreamState::drain() noexcept {
    try {
        std::uint64_t end = 0;
        {
            Lock lock(mutex_);
            drained_.wait(lock, [this] { return deferred_.empty(); });
            end = assigned_;
        }
        const bool ended = wait_point(end, deadline_after(Job::default_timeout));
        Lock lock(mutex_);
        if (ended)
            retire(end);
        error_ = nullptr;
    } catch (...) {
    }
}

} // namespace tpurt::detail
