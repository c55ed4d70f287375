// SPDX-License-Identifier: MIT
// errors.cpp - the runtime's exceptions as Python exceptions carrying the runtime's message:
// tpurt::Error -> tpurt.Error (a RuntimeError; attributes `code`, the ErrorCode's name, and
// `errno`), tpurt::JobError -> tpurt.JobError (a tpurt.Error; also `status`, its name
// `status_name`, `op`, `job_id`, `error_pc`, `fault_addr`), and a data set's
// tpu_data::DataError (a missing or malformed file), tpumodel::FormatError (a malformed
// .tpumodel file) and tpumodel::card::ExecError (a model node the card refuses) -> tpurt.Error
// with code "DataError".
#include "bindings.hpp"

#include <tpu_data/error.hpp>
#include <tpumodel/card_executor.hpp>
#include <tpumodel/model.hpp>
#include <tpurt/error.hpp>

namespace tpurt_python {

namespace {

const char *code_name(tpurt::ErrorCode code) {
    switch (code) {
    case tpurt::ErrorCode::NoDevice:
        return "NoDevice";
    case tpurt::ErrorCode::DeviceAccess:
        return "DeviceAccess";
    case tpurt::ErrorCode::SystemCall:
        return "SystemCall";
    case tpurt::ErrorCode::InvalidArgument:
        return "InvalidArgument";
    case tpurt::ErrorCode::Unsupported:
        return "Unsupported";
    case tpurt::ErrorCode::JobFailed:
        return "JobFailed";
    case tpurt::ErrorCode::Timeout:
        return "Timeout";
    }
    return "?";
}

// The exception types live as long as the interpreter: never destroyed (module teardown order).
PyObject *error_type = nullptr;
PyObject *job_error_type = nullptr;

// Raises an instance of `type` with the message, then `fill` sets its attributes.
template <typename Fill> void raise(PyObject *type, const char *message, Fill &&fill) {
    py::object e = py::reinterpret_borrow<py::object>(type)(message);
    fill(e);
    PyErr_SetObject(type, e.ptr());
}

// A file or model the workloads or the compiler's executor refuse: code "DataError".
void raise_data_error(const std::exception &e) {
    raise(error_type, e.what(), [](py::object &o) {
        o.attr("code") = "DataError";
        o.attr("errno") = 0;
    });
}

} // namespace

void bind_errors(py::module_ &m) {
    error_type = (new py::exception<tpurt::Error>(m, "Error", PyExc_RuntimeError))->ptr();
    job_error_type = (new py::exception<tpurt::JobError>(m, "JobError", error_type))->ptr();
    py::setattr(m.attr("Error"), "__doc__",
                py::str("A failure of the TPU runtime, with its message saying what to do. "
                        "Attributes: code (NoDevice, DeviceAccess, SystemCall, InvalidArgument, "
                        "Unsupported, JobFailed, Timeout or DataError) and errno (of a failed "
                        "system call, else 0)."));
    py::setattr(m.attr("JobError"), "__doc__",
                py::str("A job the card ended with an error (a tpurt.Error). Attributes: status "
                        "(TPU_ERR_* or DRM_TPU_JOB_*), status_name, op (the queued op's name or "
                        "''), job_id, error_pc, fault_addr."));
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p)
                std::rethrow_exception(p);
        } catch (const tpurt::JobError &e) {
            raise(job_error_type, e.what(), [&](py::object &o) {
                o.attr("code") = code_name(e.code());
                o.attr("errno") = e.sys_errno();
                o.attr("status") = e.status();
                o.attr("status_name") = tpurt::job_status_name(e.status());
                o.attr("op") = e.op();
                o.attr("job_id") = e.job_id();
                o.attr("error_pc") = e.error_pc();
                o.attr("fault_addr") = e.fault_addr();
            });
        } catch (const tpurt::Error &e) {
            raise(error_type, e.what(), [&](py::object &o) {
                o.attr("code") = code_name(e.code());
                o.attr("errno") = e.sys_errno();
            });
        } catch (const tpu_data::DataError &e) {
            raise_data_error(e);
        } catch (const tpumodel::FormatError &e) {
            raise_data_error(e);
        } catch (const tpumodel::card::ExecError &e) {
            raise_data_error(e);
        }
    });
}

} // namespace tpurt_python
