// SPDX-License-Identifier: MIT
// isolate.cpp - the steps that run inside Debian's libonnx (parse and checker, opset conversion,
// shape inference) in a child process. ONNX 1.12's converter and shape inference dereference
// what a malformed model leaves out (fuzz_onnx found both), so a model could crash tpu-compile;
// in a child, such a crash becomes a CompileError like any other refusal. The child sends back
// one message on a pipe: 'M', the source opset and node count, then the inferred model; or 'E'
// and the CompileError's text.
#include "passes.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

namespace tpu_onnx {

namespace {

void write_all(int fd, const std::string &bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; // the parent is gone or reads no more: nothing to tell it
        done += std::size_t(n);
    }
}

std::string read_all(int fd) {
    std::string bytes;
    char buf[65536];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return bytes;
        bytes.append(buf, std::size_t(n));
    }
}

void put_u64(std::string &s, std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
        s.push_back(char(v >> (8 * i)));
}

std::uint64_t get_u64(const std::string &s, std::size_t at) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= std::uint64_t(std::uint8_t(s[at + std::size_t(i)])) << (8 * i);
    return v;
}

// The child's work: the message for the parent.
std::string child_message(const std::string &bytes, const std::string &path,
                          const CompileOptions &options) {
    try {
        CompileSummary summary;
        onnx::ModelProto model = load_checked(bytes, path, summary);
        convert_opset(model, path);
        infer_shapes(model, options.input_shapes, path);
        std::string out = "M";
        put_u64(out, std::uint64_t(summary.source_opset));
        put_u64(out, summary.onnx_nodes);
        if (!model.AppendToString(&out))
            return "E" + path + ": the checked model does not serialise";
        return out;
    } catch (const CompileError &e) {
        return std::string("E") + e.what();
    } catch (const std::exception &e) {
        return "E" + path + ": libonnx failed on the model: " + e.what();
    }
}

} // namespace

onnx::ModelProto load_and_infer(const std::string &bytes, const std::string &path,
                                const CompileOptions &options, CompileSummary &summary) {
    int fds[2];
    if (pipe(fds) != 0)
        throw CompileError(path + ": cannot create a pipe: " + std::strerror(errno));
    const pid_t pid = fork();
    if (pid < 0) {
        const int err = errno;
        close(fds[0]);
        close(fds[1]);
        throw CompileError(path +
                           ": cannot start the ONNX checker's process: " + std::strerror(err));
    }
    if (pid == 0) {
        // A crash ends the child and nothing else: no handler of the parent's (a sanitizer's, a
        // fuzzer's) runs in it.
        for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
            signal(sig, SIG_DFL);
        close(fds[0]);
        write_all(fds[1], child_message(bytes, path, options));
        _exit(0);
    }
    close(fds[1]);
    const std::string message = read_all(fds[0]);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const bool exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (exited && !message.empty() && message[0] == 'E')
        throw CompileError(message.substr(1));
    onnx::ModelProto model;
    if (!exited || message.size() < 17 || message[0] != 'M' ||
        !model.ParseFromArray(message.data() + 17, int(message.size() - 17)))
        throw CompileError(path + ": ONNX 1.12's checker, opset converter or shape inference " +
                           "crashed on the model" +
                           (WIFSIGNALED(status)
                                ? " (signal " + std::to_string(WTERMSIG(status)) + ")"
                                : std::string()) +
                           ": the file is malformed");
    summary.source_opset = std::int64_t(get_u64(message, 1));
    summary.onnx_nodes = std::size_t(get_u64(message, 9));
    return model;
}

} // namespace tpu_onnx
