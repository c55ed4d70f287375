// SPDX-License-Identifier: MIT
// stream.cpp - tpurt::Stream and tpurt::Event on top of the shared stream state (see
// stream.hpp and stream_state.hpp).
#include "tpurt/stream.hpp"

#include "graph/graph_state.hpp"
#include "stream/stream_state.hpp"
#include "tpurt/error.hpp"

namespace tpurt {

namespace {

detail::StreamState &live(const std::shared_ptr<detail::StreamState> &state) {
    if (!state)
        throw Error(ErrorCode::InvalidArgument, "the stream was moved from");
    return *state;
}

} // namespace

bool Event::query() const {
    return !stream_ || stream_->reached(point_);
}

void Event::wait(std::chrono::nanoseconds timeout) const {
    if (stream_)
        stream_->wait(point_, timeout);
}

Stream::Stream(Device &device, StreamOptions options)
    : device_(device), options_(options),
      state_(std::make_shared<detail::StreamState>(device, options)) {}

Stream::~Stream() {
    if (state_)
        state_->drain();
}

void Stream::enqueue(OpLaunch launch) {
    live(state_).enqueue(std::move(launch));
}

void Stream::enqueue(OpSequence sequence) {
    for (OpLaunch &launch : sequence.launches)
        enqueue(std::move(launch));
}

void Stream::enqueue_host(std::string name, std::function<void()> work,
                          std::vector<std::shared_ptr<Buffer>> buffers) {
    live(state_).enqueue_host(std::move(name), std::move(work), std::move(buffers));
}

void Stream::copy_from_host(const Tensor &tensor, const void *data, std::size_t bytes) {
    const std::uint64_t expected = tensor.element_count() * element_size(tensor.dtype());
    if (bytes != expected)
        throw Error(ErrorCode::InvalidArgument,
                    "copy to " + tensor.layout().describe() + ": " + std::to_string(bytes) +
                        " bytes given, the tensor holds " + std::to_string(expected));
    enqueue_host("copy_from_host",
                 [t = Tensor(tensor), data, bytes]() mutable { t.copy_from_host(data, bytes); },
                 {tensor.storage()});
}

void Stream::copy_to_host(const Tensor &tensor, void *data, std::size_t bytes) {
    const std::uint64_t expected = tensor.element_count() * element_size(tensor.dtype());
    if (bytes != expected)
        throw Error(ErrorCode::InvalidArgument,
                    "copy from " + tensor.layout().describe() + ": " + std::to_string(bytes) +
                        " bytes given, the tensor holds " + std::to_string(expected));
    enqueue_host("copy_to_host", [tensor, data, bytes] { tensor.copy_to_host(data, bytes); },
                 {tensor.storage()});
}

void Stream::begin_capture() {
    live(state_).begin_capture();
}

Graph Stream::end_capture(std::string name) {
    return Graph(detail::make_graph(device_, std::move(name), live(state_).end_capture()));
}

bool Stream::capturing() const {
    return live(state_).capturing();
}

Event Stream::record() const {
    return Event(state_, live(state_).end_point());
}

void Stream::wait(const Event &event) {
    live(state_).wait_for(event.stream_, event.point_);
}

void Stream::synchronize(std::chrono::nanoseconds timeout) {
    detail::StreamState &state = live(state_);
    state.wait(state.end_point(), timeout);
}

} // namespace tpurt
