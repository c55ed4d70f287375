// SPDX-License-Identifier: MIT
// op_registry_test.cpp - the op registry without a device: every registered op's cache key
// changes when any field of its problem (or of the card's limits) changes, but for the address
// fields its argument list binds; names are unique and listed with their signatures; an op
// compiled by name from tensor layouts is the executable of the problem the typed API builds;
// unknown ops, wrong operand counts and bad attributes are refused with errors that say so;
// composite ops (several launches, scratch of their own) are listed but not compiled alone.
#include "engine_runner.hpp"

#include <tpurt/codegen/op_executables.hpp>
#include <tpurt/codegen/vector_compiler.hpp>
#include <tpurt/error.hpp>
#include <tpurt/ops/op_registry.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <set>
#include <string>

using runtime_test::engine_config;
using runtime_test::limits_of;
using tpurt::DType;
using tpurt::TensorLayout;

namespace {

const tpurt::ArrayLimits card = limits_of(engine_config(128, 128, 8u << 20, 4u << 20));

tpurt::DeviceInfo card_info() {
    tpurt::DeviceInfo info;
    info.caps = TPU_CAP_INT8 | TPU_CAP_BF16 | TPU_CAP_FP32 | TPU_CAP_VPU | TPU_CAP_VPU_TRAIN;
    info.limits = card;
    return info;
}

bool same_executable(const tpurt::Executable &a, const tpurt::Executable &b) {
    if (a.name() != b.name() || a.args().size() != b.args().size() ||
        a.program_count() != b.program_count())
        return false;
    std::vector<std::uint64_t> bases;
    for (std::size_t i = 0; i < a.args().size(); ++i) {
        if (a.args()[i].name != b.args()[i].name || a.args()[i].bytes != b.args()[i].bytes)
            return false;
        bases.push_back(tpurt::Executable::placeholder(i));
    }
    for (std::size_t p = 0; p < a.program_count(); ++p) {
        const tpurt::Program x = a.patched(p, bases), y = b.patched(p, bases);
        if (x.insns.size() != y.insns.size() ||
            std::memcmp(x.insns.data(), y.insns.data(), x.size_bytes()) != 0)
            return false;
    }
    return true;
}

} // namespace

TEST_CASE("every registered op's key covers every field of its problem", "[registry]") {
    REQUIRE(tpurt::op_count() > 0);
    for (std::size_t i = 0; i < tpurt::op_count(); ++i) {
        const tpurt::OpInfo &op = tpurt::op_info(i);
        INFO(op.signature());
        if (op.composite) { // other kernels' launches, or its own key by cache_key()
            CHECK(tpurt::op_key_checks(op.name, card).empty());
            continue;
        }
        std::size_t keyed = 0, arguments = 0;
        for (const tpurt::KeyFieldCheck &check : tpurt::op_key_checks(op.name, card)) {
            INFO(check.field);
            CHECK((check.changes_key || check.bound_argument));
            CHECK(!(check.changes_key && check.bound_argument));
            keyed += check.changes_key;
            arguments += check.bound_argument;
        }
        CHECK(keyed > 4);      // dtypes, shapes, and the four limits at least
        CHECK(arguments >= 2); // the sample binds an input and an output at least
    }
}

TEST_CASE("registered ops have unique names and readable signatures", "[registry]") {
    std::set<std::string> names;
    for (std::size_t i = 0; i < tpurt::op_count(); ++i)
        CHECK(names.insert(std::string(tpurt::op_info(i).name)).second);
    const tpurt::OpInfo *dense = tpurt::find_op("dense");
    REQUIRE(dense != nullptr);
    CHECK(dense->signature() == "dense(a, w, out, bias?; activation, scale)");
    CHECK(tpurt::find_op("transpose")->signature() == "transpose(a, out)");
    CHECK(tpurt::find_op("conv2d_weight_grad")->composite);
    CHECK(!tpurt::find_op("conv2d")->composite);
    CHECK(tpurt::find_op("no such op") == nullptr);
    CHECK_THROWS_WITH(tpurt::op_info(tpurt::op_count()), Catch::Contains("beyond the"));
}

TEST_CASE("an op compiled by name is the typed API's executable", "[registry]") {
    const TensorLayout a = TensorLayout::contiguous(DType::Bf16, {37, 300});
    const TensorLayout row = TensorLayout::contiguous(DType::Bf16, {300});
    const std::array<const TensorLayout *, 3> operands{&a, &row, &a};
    const std::array<tpurt::OpAttribute, 1> mul{{{"op", "mul"}}};
    const tpurt::Executable by_name = tpurt::compile_op(card_info(), "elementwise", operands, mul);
    const tpurt::ElementwiseProblem problem{.type = DType::Bf16,
                                            .op = tpurt::VectorOp::Mul,
                                            .rows = 37,
                                            .cols = 300,
                                            .broadcast_b = true,
                                            .a_stride = 600,
                                            .dst_stride = 600};
    CHECK(same_executable(by_name, tpurt::compile_executable(problem, card)));
    CHECK(by_name.name() == "mul bf16 37x300 row-broadcast");
}

TEST_CASE("the registry refuses unknown ops, operand counts and attributes", "[registry]") {
    const tpurt::DeviceInfo info = card_info();
    const TensorLayout a = TensorLayout::contiguous(DType::Fp32, {4, 8});
    const std::array<const TensorLayout *, 2> two{&a, &a};
    const std::array<const TensorLayout *, 3> three{&a, &a, &a};
    const std::array<const TensorLayout *, 3> missing{&a, nullptr, &a};
    CHECK_THROWS_WITH(tpurt::compile_op(info, "softmaxx", two), Catch::Contains("no op named"));
    CHECK_THROWS_WITH(tpurt::compile_op(info, "elementwise", two),
                      Catch::Contains("takes 3 tensors (a, b, out), got 2"));
    CHECK_THROWS_WITH(tpurt::compile_op(info, "elementwise", missing),
                      Catch::Contains("operand 1 (b) is missing"));
    const std::array<tpurt::OpAttribute, 1> bad_op{{{"op", "plus"}}};
    CHECK_THROWS_WITH(tpurt::compile_op(info, "elementwise", three, bad_op),
                      Catch::Contains("attribute op = 'plus' is not one of add sub"));
    const std::array<tpurt::OpAttribute, 1> unknown{{{"alpha", "1"}}};
    CHECK_THROWS_WITH(tpurt::compile_op(info, "elementwise", three, unknown),
                      Catch::Contains("no attribute 'alpha' (its attributes: op)"));
    const std::array<tpurt::OpAttribute, 2> twice{{{"op", "add"}, {"op", "sub"}}};
    CHECK_THROWS_WITH(tpurt::compile_op(info, "elementwise", three, twice),
                      Catch::Contains("given twice"));
    const std::array<tpurt::OpAttribute, 1> scale{{{"scale", "half"}}};
    CHECK_THROWS_WITH(tpurt::compile_op(info, "unary", two, scale),
                      Catch::Contains("attribute scale = 'half' is not a number"));
    CHECK_THROWS_WITH(tpurt::compile_op(info, "transpose", two, scale),
                      Catch::Contains("no attribute 'scale' (it has none)"));
    CHECK_THROWS_WITH(tpurt::compile_op(info, "matmul_tn", three),
                      Catch::Contains("matmul_tn is a composite op"));
}
