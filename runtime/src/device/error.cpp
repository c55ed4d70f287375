// SPDX-License-Identifier: MIT
// error.cpp - tpurt::Error and tpurt::JobError, and the names and explanations of the card's
// job status codes used in their messages.
#include "tpurt/error.hpp"

#include "backend/backend.hpp"

#include <tpu_hw.h>

#include <cerrno>
#include <cstdio>

namespace tpurt {

namespace {

struct StatusText {
    const char *name;
    const char *description;
};

StatusText status_text(std::uint32_t status) {
    switch (status) {
    case TPU_ERR_NONE:
        return {"TPU_ERR_NONE", "success"};
    case TPU_ERR_BAD_OPCODE:
        return {"TPU_ERR_BAD_OPCODE", "unknown instruction opcode"};
    case TPU_ERR_BAD_OPERAND:
        return {"TPU_ERR_BAD_OPERAND",
                "bad dtype, flags, reserved bits, alignment, or zero/oversized shape"};
    case TPU_ERR_UB_RANGE:
        return {"TPU_ERR_UB_RANGE", "unified buffer access out of range"};
    case TPU_ERR_ACC_RANGE:
        return {"TPU_ERR_ACC_RANGE", "accumulator access out of range or misaligned"};
    case TPU_ERR_MMU_FAULT:
        return {"TPU_ERR_MMU_FAULT", "MMU fault: unmapped device address or permission denied"};
    case TPU_ERR_BUS:
        return {"TPU_ERR_BUS", "host memory access failed at a physical address"};
    case TPU_ERR_BAD_CTX:
        return {"TPU_ERR_BAD_CTX", "context id out of range or context not valid"};
    case TPU_ERR_PROGRAM:
        return {"TPU_ERR_PROGRAM", "program size zero, misaligned or over the limit"};
    case TPU_ERR_RING_ENTRY:
        return {"TPU_ERR_RING_ENTRY", "bad ring entry"};
    case TPU_ERR_NO_WEIGHTS:
        return {"TPU_ERR_NO_WEIGHTS", "MATMUL without matching loaded weights"};
    case TPU_ERR_ABORTED:
        return {"TPU_ERR_ABORTED", "stopped by a card reset"};
    case TPU_ERR_LINK_DOWN:
        return {"TPU_ERR_LINK_DOWN", "no link on the port, or the link went down"};
    case TPU_ERR_LINK_MISMATCH:
        return {"TPU_ERR_LINK_MISMATCH",
                "the message waiting on the link has another tag or length"};
    case TPU_ERR_LINK_PARTIAL:
        return {"TPU_ERR_LINK_PARTIAL", "the sender cut the message short"};
    case detail::job_timeout_status:
        return {"DRM_TPU_JOB_TIMEOUT", "the job hung and the driver reset the card"};
    case detail::job_canceled_status:
        return {"DRM_TPU_JOB_CANCELED", "the card was reset before the job ended; submit it again"};
    default:
        return {nullptr, "unknown status"};
    }
}

std::string hex(std::uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

// Where a fault address points depends on the error: a device VA, or an on-chip offset.
std::string fault_location(std::uint32_t status, std::uint64_t fault_addr) {
    switch (status) {
    case TPU_ERR_MMU_FAULT:
        return " at device address " + hex(fault_addr);
    case TPU_ERR_BUS:
        return " at physical address " + hex(fault_addr);
    case TPU_ERR_UB_RANGE:
        return " at unified-buffer offset " + hex(fault_addr);
    case TPU_ERR_ACC_RANGE:
        return " at accumulator offset " + hex(fault_addr);
    default:
        return "";
    }
}

std::string job_error_message(std::uint64_t job_id, std::uint32_t status, std::uint32_t error_pc,
                              std::uint64_t fault_addr) {
    std::string message = "job " + std::to_string(job_id) + " failed: " + job_status_name(status) +
                          " (" + job_status_description(status) + ")" +
                          fault_location(status, fault_addr);
    if (status < TPU_ERR_COUNT)
        message += " (instruction " + std::to_string(error_pc) + ")";
    return message;
}

} // namespace

Error::Error(ErrorCode code, const std::string &message, int sys_errno)
    : std::runtime_error(message), code_(code), sys_errno_(sys_errno) {}

JobError::JobError(std::uint64_t job_id, std::uint32_t status, std::uint32_t error_pc,
                   std::uint64_t fault_addr)
    : Error(ErrorCode::JobFailed, job_error_message(job_id, status, error_pc, fault_addr)),
      job_id_(job_id), status_(status), error_pc_(error_pc), fault_addr_(fault_addr) {}

JobError::JobError(std::uint64_t job_id, std::uint32_t status, std::uint32_t error_pc,
                   std::uint64_t fault_addr, const std::string &op)
    : Error(ErrorCode::JobFailed,
            op + ": " + job_error_message(job_id, status, error_pc, fault_addr)),
      job_id_(job_id), status_(status), error_pc_(error_pc), fault_addr_(fault_addr), op_(op) {}

std::string job_status_name(std::uint32_t status) {
    const char *name = status_text(status).name;
    return name ? name : "status " + hex(status);
}

const char *job_status_description(std::uint32_t status) {
    return status_text(status).description;
}

bool is_retryable(const std::exception &e) {
    if (const auto *job = dynamic_cast<const JobError *>(&e)) {
        const std::uint32_t s = job->status();
        return s == detail::job_timeout_status || s == detail::job_canceled_status ||
               s == TPU_ERR_ABORTED;
    }
    if (const auto *err = dynamic_cast<const Error *>(&e))
        return err->code() == ErrorCode::SystemCall && err->sys_errno() == ECANCELED;
    return false;
}

} // namespace tpurt
