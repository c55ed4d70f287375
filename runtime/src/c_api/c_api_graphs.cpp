// SPDX-License-Identifier: MIT
// c_api_graphs.cpp - the C API's capture and replay (tpurt.h, tpurt/graph.hpp): a stream's ops
// recorded into a graph, its parameters and its replays.
#include "c_api/c_api_internal.hpp"

using tpurt::c_api::guarded;
using tpurt::c_api::require;

extern "C" {

int tpurt_stream_begin_capture(tpurt_stream *stream) {
    return guarded([&] {
        require(stream, "tpurt_stream_begin_capture", "stream");
        stream->stream.begin_capture();
        return static_cast<int>(TPURT_OK);
    });
}

int tpurt_stream_end_capture(tpurt_stream *stream, const char *name, tpurt_graph **out) {
    return guarded([&] {
        require(stream, "tpurt_stream_end_capture", "stream");
        require(out, "tpurt_stream_end_capture", "out");
        *out = new tpurt_graph{stream->stream.end_capture(name ? name : "graph")};
        return static_cast<int>(TPURT_OK);
    });
}

void tpurt_graph_destroy(tpurt_graph *graph) {
    delete graph;
}

int tpurt_graph_jobs(const tpurt_graph *graph, size_t *jobs, size_t *eager_jobs) {
    return guarded([&] {
        require(graph, "tpurt_graph_jobs", "graph");
        if (jobs)
            *jobs = graph->graph.job_count();
        if (eager_jobs)
            *eager_jobs = graph->graph.eager_job_count();
        return static_cast<int>(TPURT_OK);
    });
}

int tpurt_graph_add_parameter(tpurt_graph *graph, const char *name, const tpurt_tensor *slot) {
    return guarded([&] {
        require(graph, "tpurt_graph_add_parameter", "graph");
        require(name, "tpurt_graph_add_parameter", "name");
        require(slot, "tpurt_graph_add_parameter", "slot");
        graph->graph.add_parameter(name, slot->tensor);
        return static_cast<int>(TPURT_OK);
    });
}

int tpurt_graph_set_parameter(tpurt_graph *graph, const char *name, const void *data,
                              size_t bytes) {
    return guarded([&] {
        require(graph, "tpurt_graph_set_parameter", "graph");
        require(name, "tpurt_graph_set_parameter", "name");
        require(data, "tpurt_graph_set_parameter", "data");
        graph->graph.set_parameter(name, data, bytes);
        return static_cast<int>(TPURT_OK);
    });
}

int tpurt_graph_replay(tpurt_graph *graph, tpurt_stream *stream) {
    return guarded([&] {
        require(graph, "tpurt_graph_replay", "graph");
        require(stream, "tpurt_graph_replay", "stream");
        graph->graph.replay(stream->stream);
        return static_cast<int>(TPURT_OK);
    });
}

} // extern "C"
