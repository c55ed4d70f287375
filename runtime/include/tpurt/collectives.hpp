// SPDX-License-Identifier: MIT
// collectives.hpp - tpurt::Communicator: collectives across cards joined by the inter-chip
// interconnect (spec 2.0, docs/hardware.md section 10), shaped like NCCL's: a unique id, a
// communicator made for every card a process drives (init_all) or for one card of a process
// per card (init_rank), and all-reduce, reduce-scatter, all-gather, broadcast, all-to-all and
// send-recv queued on the ranks' streams, each compiled into one card program per rank of SEND
// and RECV over the links (a ring that follows the physical links), with a timeout, an
// async-error query and an abort.
//
// Ring. The ranks sit on a ring of links: the ring position of each card is found from its
// fabric coordinates (DeviceInfo::ici) by a search of the fabric's links from the lowest
// coordinate, neighbours tried in port order (a ring of n cards: x order; a 2 x 2 torus:
// (0,0) (1,0) (1,1) (0,1)). Each rank sends to the next card of the ring on the lowest port that
// leads there and receives from the previous one. Messages are cut into pieces of at most
// ICI_CREDITS x 4 KiB, each step alternating SEND and RECV, so neighbours never deadlock.
//
// Determinism (bit-identical run to run and in both engine modes). For the Ring algorithm: the
// element ranges of the
// ranks: rank k owns chunk k (all-reduce: elements [k n / p, (k + 1) n / p) of n; reduce-scatter
// and all-gather: the k-th block of the per-rank count). A ring reduce-scatter sums chunk k
// along the ring ending at rank k: with q the ring position of rank k and v_j the values of the
// card at ring position j (indices mod p), the result is
//     v_q op (v_{q-1} op ( ... op (v_{q+2} op v_{q+1})))
// each op one receive-reduce of the card: dst = dst op msg (SUM fp32 one binary32 addition,
// bf16 widened to binary32, added once, rounded to bf16 nearest even, int32 wrapping; MAX and
// MIN the VECTOR rule, NaN if either is NaN). All-reduce is that reduce-scatter then a ring
// all-gather of the chunks, so every rank holds the same bits. ring_positions() tells q.
// The other algorithms: each lane l of L holds elements [l n / L, (l + 1) n / L) of an
// all-reduce (of reduce-scatter and all-gather: elements [l c / L, (l + 1) c / L) of each rank's
// block of c), cut among the cards by the lane's first axis, then its second (CommShape: a
// ring's one axis, index the rank, position the ring position; a torus's x and y). A lane
// reduces one element owned by the card at positions (a, b) along its first and second axis,
// d = +1 (forward lanes) or -1 (reverse), P and Q the axes' sizes, as
//     u_b' = v_(a,b') op (v_(a-d,b') op ( ... op (v_(a+2d,b') op v_(a+d,b'))))   along the first,
//     u_b op (u_(b-d) op ( ... op (u_(b+2d) op u_(b+d))))                        then the second
// (golden/reference_collectives.hpp computes exactly this). So a bidirectional ring's first half
// reduces in the ring's order and its second half in the reverse order: the results differ
// from the Ring algorithm's in the last bits of fp32 and bf16 sums, not between runs or modes.
//
// Algorithms (CollectiveAlgorithm). All-reduce, reduce-scatter and all-gather run as one of:
//   Ring               the ring above, one direction: each step one link direction a rank.
//   BidirectionalRing  the data cut in two halves (lanes), the first on the ring above, the
//                      second on the same ring the other way round, side by side: both
//                      directions of every link busy, half the bytes a step. Needs two link
//                      directions between ring neighbours (a ring of two cards on one link only
//                      has one).
//   Torus2d            a communicator spanning a whole 2-D torus fabric: the data cut in four
//                      quarters (lanes 0..3; two, lanes 0 and 1, if dim_x != dim_y), lane 0
//                      reduce-scattered along the +x rings (each row of the torus), then along
//                      the +y rings (each column), all-gathered back along +y then +x; lane 1
//                      the same along -x then -y; lane 2 along +y then +x, lane 3 along -y then
//                      -x; every port's both sides busy at every step. Reduce-scatter stops after
//                      the reduce-scatters, all-gather runs only the all-gathers.
//   Hierarchical       a communicator spanning a whole 2-D torus whose y links are slower than
//                      its x links (spec 2.4: a pod, its servers along y): Torus2d's lanes 0
//                      and 1 only, the data in two halves reduce-scattered along the x rings
//                      inside each server first, so that only a 1 / dim_x share of it crosses
//                      the slow links between servers, and all-gathered back along y then x.
// The choice (CommOptions::algorithm, or the TPURT_COLLECTIVE_ALGORITHM environment variable:
// ring, bidir_ring, torus2d, when the options say Auto): Auto takes Ring for buffers under
// 4 KiB (one packet: more lanes buy nothing), else on a communicator spanning a whole torus
// fabric Hierarchical if its y links are slower (less bandwidth or more latency), Torus2d if
// not, else BidirectionalRing where the ring has two link directions, else Ring.
// algorithm() tells which one a size gets.
//
// Failure. A collective whose job fails (a link down: LINK_DOWN; a peer that never takes part:
// the job's RECV or SEND waits until the job timeout, tpu.ko's job_timeout_ms or in process
// InProcessConfig::job_timeout_ms, resets it) or that outlasts CommOptions::timeout throws on
// the rank's stream (at its synchronize()), and marks the communicator failed: async_error()
// says why, every later collective throws at once, and the communicator's other ranks in this
// process are aborted (in process at once; behind tpu.ko, which cannot stop a job on demand,
// they end at the driver's job timeout). Then make a new communicator (a new id). abort() does
// the same on demand.
#pragma once

#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tpurt {

// A communicator's name, made once (CommId::make()) and handed to every rank; the tags of its
// messages derive from it, so a message of another communicator is refused (LINK_MISMATCH).
struct CommId {
    std::array<std::uint8_t, 16> bytes{};
    static CommId make(); // random
};

enum class ReduceKind : std::uint8_t { Sum, Max, Min };

// How all-reduce, reduce-scatter and all-gather run over the links ("Algorithms" above).
enum class CollectiveAlgorithm : std::uint8_t {
    Auto,
    Ring,
    BidirectionalRing,
    Torus2d,
    Hierarchical
};

// "auto", "ring", "bidir_ring", "torus2d", "hierarchical".
const char *algorithm_name(CollectiveAlgorithm algorithm);
// The algorithm algorithm_name() calls `name`; none if it names none.
std::optional<CollectiveAlgorithm> algorithm_named(const std::string &name);

struct CommOptions {
    // A rank's collective that has not ended by then fails with Error(Timeout).
    std::chrono::milliseconds timeout{30000};
    // Auto: chosen by size and topology, unless TPURT_COLLECTIVE_ALGORITHM names one. A forced
    // algorithm the communicator's cards cannot run throws Error(InvalidArgument) at init.
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
};

// Where a communicator's ranks sit, for the reduction order ("Determinism" above): axis 0 is
// the ring (Ring, BidirectionalRing: size nranks, index the rank, position its ring position)
// or, on a torus, x; axis 1 is the torus's y (size 1, index and position 0 otherwise).
struct CommShape {
    bool torus = false; // the communicator spans a whole 2-D torus fabric (Torus2d can run)
    std::uint32_t size[2] = {1, 1};         // torus: dim_x, dim_y
    std::vector<std::uint32_t> index[2];    // per rank: its segment along each axis
    std::vector<std::uint32_t> position[2]; // per rank: its place on each axis's rings
};

namespace detail {
struct CommState;
}

class Communicator {
  public:
    // One process driving every card: rank i on devices[i] (2 or more cards of one fabric, or
    // one card alone). Throws Error(InvalidArgument) if the cards do not form a ring of links.
    static Communicator init_all(std::vector<Device> devices, const CommOptions &options = {});
    // Rank `rank` of `nranks` on `device`, the other ranks in other processes (each calls this
    // with the same id): the ring is the whole fabric's, nranks its card count, and the rank a
    // card's position on the ring (fabric_rank()); throws Error(InvalidArgument) otherwise.
    static Communicator init_rank(Device device, std::uint32_t nranks, const CommId &id,
                                  std::uint32_t rank, const CommOptions &options = {});
    // The rank the card of `info` takes in init_rank(): its position on its fabric's ring.
    static std::uint32_t fabric_rank(const DeviceInfo &info);

    std::uint32_t nranks() const;
    // The ranks this communicator drives in this process, in the order the collectives take
    // their per-rank streams and tensors (init_all: 0 .. n - 1; init_rank: the one rank).
    const std::vector<std::uint32_t> &local_ranks() const;
    // The ring position of each rank (see the reduction order above).
    const std::vector<std::uint32_t> &ring_positions() const;
    // The ranks' places on the torus axes (Torus2d) or on the ring (the others).
    CommShape shape(CollectiveAlgorithm algorithm) const;
    // The algorithm all-reduce, reduce-scatter and all-gather run for a buffer of `bytes` (a
    // rank's larger one; broadcast, all-to-all and send-recv always run on the ring).
    CollectiveAlgorithm algorithm(std::uint64_t bytes) const;

    // Each queues every local rank's part on that rank's stream (streams[i], tensors[i] for
    // local_ranks()[i]; densely packed tensors of the same dtype, on the rank's device) and
    // returns once every part is queued. A part runs as host work when its stream reaches it
    // (at once on an idle stream: each local rank's part is queued from a thread of its own,
    // so with idle streams the call returns when the collective has ended): it copies its input
    // where the ring works, launches the rank's ring program (compiled once per collective,
    // op, dtype and count, and kept by the communicator) and waits for it.
    // recv[i] = the reduction over the ranks of send[i] (n elements each; fp32, bf16, int32;
    // send may be recv: in place).
    void all_reduce(std::span<Stream *const> streams, std::span<const Tensor> send,
                    std::span<const Tensor> recv, ReduceKind op);
    // recv[i] (n elements) = the reduction of block `rank` of every rank's send (n x nranks).
    void reduce_scatter(std::span<Stream *const> streams, std::span<const Tensor> send,
                        std::span<const Tensor> recv, ReduceKind op);
    // block k of recv[i] (n x nranks elements) = rank k's send (n elements). Any dtype.
    void all_gather(std::span<Stream *const> streams, std::span<const Tensor> send,
                    std::span<const Tensor> recv);
    // recv[i] = root's send (n elements; only root's send is read). Any dtype.
    void broadcast(std::span<Stream *const> streams, std::span<const Tensor> send,
                   std::span<const Tensor> recv, std::uint32_t root);
    // Block k of recv[i] (n x nranks elements, blocks of n) = block `rank` of rank k's send
    // (n x nranks). Any dtype. A relay along the ring: at step s = 1 .. p - 1 each rank passes
    // on the p - s blocks that still travel (its own at step 1), so a block to the rank d
    // positions further on crosses d links; copies only, the same bits as sent.
    void all_to_all(std::span<Stream *const> streams, std::span<const Tensor> send,
                    std::span<const Tensor> recv);

    // No peer, in send_recv().
    static constexpr std::uint32_t none = ~0u;
    // Point to point, NCCL's send and recv in a group: local rank i sends send[i] to rank
    // send_to[i] and receives recv[i] from rank recv_from[i] (none: not; its tensor is then
    // ignored). Peers are the rank's neighbours on the ring (the positions just before and
    // after it): messages are not routed through other cards. A receiver's tensor has the
    // bytes its sender sends, else both fail (LINK_MISMATCH). Any dtype. A rank's send and
    // receive go in alternating pieces, so two ranks may exchange tensors of any size.
    void send_recv(std::span<Stream *const> streams, std::span<const Tensor> send,
                   std::span<const Tensor> recv, std::span<const std::uint32_t> send_to,
                   std::span<const std::uint32_t> recv_from);

    // The first error a collective of this communicator ended with, or null (never blocks).
    std::exception_ptr async_error() const;
    // Fails the communicator: its running collectives in this process end (in process at
    // once, behind tpu.ko at the driver's job timeout), later ones throw.
    void abort();

  private:
    explicit Communicator(std::shared_ptr<detail::CommState> state) : state_(std::move(state)) {}
    std::shared_ptr<detail::CommState> state_;
};

} // namespace tpurt
