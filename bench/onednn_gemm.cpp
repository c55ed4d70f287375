// SPDX-License-Identifier: MIT
// oneDNN matmul baseline.
#include "onednn_gemm.hpp"

#include <omp.h>

#include <chrono>
#include <cstring>
#include <unordered_map>

namespace tpu::bench {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dt input_type(uint8_t dtype) {
    switch (dtype) {
    case TPU_DT_INT8:
        return dt::s8;
    case TPU_DT_BF16:
        return dt::bf16;
    default:
        return dt::f32;
    }
}

} // namespace

OnednnGemm::OnednnGemm(const Gemm &g, int threads, const void *a, const void *b) {
    omp_set_num_threads(threads);
    engine_ = dnnl::engine(dnnl::engine::kind::cpu, 0);
    stream_ = dnnl::stream(engine_);

    const dnnl::memory::dim m = g.m, k = g.k, n = g.n;
    const dt in = input_type(g.dtype);
    const dt out = g.dtype == TPU_DT_INT8 ? dt::s32 : dt::f32;
    const dnnl::memory::desc a_md({m, k}, in, tag::ab);
    const dnnl::memory::desc b_md({k, n}, in, tag::ab);
    const dnnl::memory::desc c_md({m, n}, out, tag::ab);
    pd_ = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), engine_);
    prim_ = dnnl::matmul(pd_);

    a_ = dnnl::memory(a_md, engine_);
    b_ = dnnl::memory(b_md, engine_);
    c_ = dnnl::memory(c_md, engine_);
    std::memcpy(a_.get_data_handle(), a, a_md.get_size());
    std::memcpy(b_.get_data_handle(), b, b_md.get_size());
}

double OnednnGemm::run() {
    const std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}};
    const auto start = std::chrono::steady_clock::now();
    prim_.execute(stream_, args);
    stream_.wait();
    const auto end = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(end - start).count();
}

std::vector<uint8_t> OnednnGemm::c() const {
    std::vector<uint8_t> out(c_.get_desc().get_size());
    std::memcpy(out.data(), c_.get_data_handle(), out.size());
    return out;
}

} // namespace tpu::bench
