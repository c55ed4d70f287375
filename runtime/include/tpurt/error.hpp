// SPDX-License-Identifier: MIT
// error.hpp - the runtime's exception types: tpurt::Error for every failure (with a code, the
// errno of a failed system call and a message that says what to do about it) and
// tpurt::JobError for a job the card ended with an error.
#pragma once

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>

namespace tpurt {

enum class ErrorCode {
    NoDevice,        // no TPU device node exists
    DeviceAccess,    // a device node exists but cannot be opened
    SystemCall,      // an ioctl, mmap or other system call failed (see Error::sys_errno())
    InvalidArgument, // a caller-supplied shape, size or buffer is unusable
    Unsupported,     // the card cannot run the request (missing capability, too-small memories)
    JobFailed,       // the card ended a job with an error (see JobError)
    Timeout,         // a wait ran out before the job ended; the job is still pending
};

class Error : public std::runtime_error {
  public:
    Error(ErrorCode code, const std::string &message, int sys_errno = 0);

    ErrorCode code() const { return code_; }
    // errno of the failed system call for ErrorCode::SystemCall/DeviceAccess, else 0.
    int sys_errno() const { return sys_errno_; }

  private:
    ErrorCode code_;
    int sys_errno_;
};

// The card (or the driver, for DRM_TPU_JOB_*) ended a job with a status other than TPU_ERR_NONE.
class JobError : public Error {
  public:
    JobError(std::uint64_t job_id, std::uint32_t status, std::uint32_t error_pc,
             std::uint64_t fault_addr);
    // The same for a job of op `op` (a stream's job), whose name starts the message.
    JobError(std::uint64_t job_id, std::uint32_t status, std::uint32_t error_pc,
             std::uint64_t fault_addr, const std::string &op);

    const std::string &op() const { return op_; } // "" unless the job belonged to a queued op
    std::uint64_t job_id() const { return job_id_; }
    std::uint32_t status() const { return status_; } // TPU_ERR_* or DRM_TPU_JOB_*
    std::uint32_t error_pc() const { return error_pc_; }
    std::uint64_t fault_addr() const { return fault_addr_; }

  private:
    std::uint64_t job_id_;
    std::uint32_t status_;
    std::uint32_t error_pc_;
    std::uint64_t fault_addr_;
    std::string op_;
};

// Symbolic name of a job status: "TPU_ERR_MMU_FAULT", "DRM_TPU_JOB_TIMEOUT", ...
std::string job_status_name(std::uint32_t status);
// One-line explanation of a job status, e.g. "unmapped device address or permission denied".
const char *job_status_description(std::uint32_t status);

// Whether `e` says the card lost the work rather than refused it: a job that hung
// (DRM_TPU_JOB_TIMEOUT), was ended by a queue or card reset (DRM_TPU_JOB_CANCELED,
// TPU_ERR_ABORTED), or a SUBMIT refused with ECANCELED because the file was banned after repeated
// hangs. The same work, submitted again on the device opened again, may then succeed; any other
// error (a bad shape or program, a fault, no device) will not.
bool is_retryable(const std::exception &e);

} // namespace tpurt
