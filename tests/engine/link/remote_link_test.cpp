// SPDX-License-Identifier: MIT
// Links between cards in two processes (docs/hardware.md section 10, "Links to other
// processes"): two fabrics, one card on each, their ports bound to each other by RemoteLinks
// whose byte streams a pump thread carries (as two QEMU main loops and a socket would). The same
// programs give the same bytes and modelled times as on one fabric; credits stall a sender across
// the stream; a peer that goes away, malformed messages and a link taken down on demand end the
// jobs using the link LINK_DOWN, and a new connection brings it up again.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <random>
#include <thread>

#include "link/wire.hpp"
#include "link_rig.hpp"

using namespace tpu::test;
using Clock = std::chrono::steady_clock;
namespace wire = tpu::engine::wire;

namespace {

template <class Pred> bool eventually(Pred pred) {
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (!pred()) {
        if (Clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

tpu_link_port_info port_info(tpu_engine *eng, uint32_t port) {
    tpu_link_port_info info;
    REQUIRE(tpu_engine_port_info(eng, port, &info));
    return info;
}

// One card on a fabric of its own, at x on a ring of 2: one "process".
struct Side {
    Side(const tpu_fabric_config &cfg, uint32_t x, uint32_t mode, uint32_t clock_mhz = 700) {
        char err[256] = "";
        fabric = tpu_fabric_create(&cfg, err, sizeof(err));
        if (!fabric)
            throw std::runtime_error(err);
        tpu_engine_config ec = Card::default_config();
        ec.mxu_rows = 16;
        ec.mxu_cols = 16;
        ec.ub_bytes = LinkRig::kUb;
        ec.acc_bytes = 64 * 1024;
        ec.clock_mhz = clock_mhz;
        ec.threads = 1;
        ec.mode = mode;
        mem = std::make_unique<HostMemory>(68u << 20);
        card = std::make_unique<Card>(*mem, ec);
        space = std::make_unique<AddressSpace>(card->address_space(1));
        space->map(LinkRig::kHost, 4u << 20, kReadWrite);
        if (tpu_engine_attach(card->engine(), fabric, x, 0, err, sizeof(err)))
            throw std::runtime_error(err);
    }
    ~Side() {
        card.reset();
        tpu_fabric_destroy(fabric);
    }
    tpu_engine *engine() { return card->engine(); }
    tpu_job_result run(const Program &p) { return card->run(*space, p); }

    tpu_fabric *fabric;
    std::unique_ptr<HostMemory> mem;
    std::unique_ptr<Card> card;
    std::unique_ptr<AddressSpace> space;
};

// The main loops of both processes in one thread: it owns every RemoteLink call, carries the
// bytes of the connected pairs and closes both ends when either asks to.
class Pump {
  public:
    struct Pair {
        tpu_remote_link *a = nullptr, *b = nullptr;
        bool connected = false;
    };

    Pump() : thread_([this] { loop(); }) {}
    ~Pump() {
        {
            std::lock_guard lock(m_);
            stop_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }

    static void notify(void *opaque) { static_cast<Pump *>(opaque)->kick(); }

    // Runs fn on the pump's thread and waits for it.
    template <class Fn> auto run(Fn fn) {
        std::packaged_task<decltype(fn())()> task(fn);
        auto done = task.get_future();
        {
            std::lock_guard lock(m_);
            tasks_.push_back([&task] { task(); });
        }
        kick();
        return done.get();
    }

    Pair &add(tpu_remote_link *a, tpu_remote_link *b) {
        return *run([&] {
            pairs_.push_back(std::make_unique<Pair>(Pair{a, b, false}));
            return pairs_.back().get();
        });
    }
    void connect(Pair &p) {
        run([&] {
            p.connected = true;
            tpu_remote_link_open(p.a);
            tpu_remote_link_open(p.b);
        });
    }
    void disconnect(Pair &p) {
        run([&] { close(p); });
    }
    // Forgets every pair, on the pump's thread: their links may then be destroyed.
    void forget() { pairs_.clear(); }

  private:
    void kick() {
        {
            std::lock_guard lock(m_);
            kicked_ = true;
        }
        cv_.notify_all();
    }
    void close(Pair &p) {
        if (!p.connected)
            return;
        p.connected = false;
        tpu_remote_link_close(p.a);
        tpu_remote_link_close(p.b);
    }
    // Moves from's pending bytes to to; false if nothing moved.
    static bool carry(tpu_remote_link *from, tpu_remote_link *to) {
        const void *data;
        const size_t n = tpu_remote_link_output(from, &data);
        if (!n)
            return false;
        tpu_remote_link_input(to, data, n);
        tpu_remote_link_written(from, n);
        return true;
    }
    void loop() {
        for (;;) {
            std::vector<std::function<void()>> tasks;
            {
                std::unique_lock lock(m_);
                cv_.wait(lock, [&] { return kicked_ || stop_; });
                if (stop_)
                    return;
                kicked_ = false;
                tasks.swap(tasks_);
            }
            for (auto &task : tasks)
                task();
            for (bool moved = true; moved;) {
                moved = false;
                for (auto &p : pairs_) {
                    if (!p->connected)
                        continue;
                    moved |= carry(p->a, p->b);
                    moved |= carry(p->b, p->a);
                    if (tpu_remote_link_close_due(p->a) || tpu_remote_link_close_due(p->b))
                        close(*p);
                }
            }
        }
    }

    std::mutex m_;
    std::condition_variable cv_;
    bool kicked_ = false, stop_ = false;
    std::vector<std::function<void()>> tasks_;
    std::vector<std::unique_ptr<Pair>> pairs_;
    std::thread thread_;
};

struct RemoteLinkFree {
    void operator()(tpu_remote_link *l) const { tpu_remote_link_destroy(l); }
};
using RemoteLinkPtr = std::unique_ptr<tpu_remote_link, RemoteLinkFree>;

RemoteLinkPtr bind(Side &side, uint32_t port, Pump &pump) {
    char err[256] = "";
    RemoteLinkPtr l(
        tpu_remote_link_create(side.engine(), port, Pump::notify, &pump, err, sizeof(err)));
    if (!l)
        throw std::runtime_error(err);
    return l;
}

// Cards 0 and 1 of a ring of two in two "processes", both links bound across (0's port 0 to 1's
// port 1 and 0's port 1 to 1's port 0) and connected. The pump is destroyed first.
struct TwoProcesses {
    explicit TwoProcesses(uint32_t mode, uint32_t credits = 256)
        : a(LinkRig::ring(2, credits), 0, mode), b(LinkRig::ring(2, credits), 1, mode),
          a0(bind(a, 0, pump)), a1(bind(a, 1, pump)), b0(bind(b, 0, pump)), b1(bind(b, 1, pump)),
          plus(pump.add(a0.get(), b1.get())), minus(pump.add(a1.get(), b0.get())) {
        pump.connect(plus);
        pump.connect(minus);
    }
    ~TwoProcesses() {
        pump.run([&] {
            pump.forget();
            a0.reset();
            a1.reset();
            b0.reset();
            b1.reset();
        });
    }
    std::vector<tpu_job_result> run_both(const Program &pa, const Program &pb) {
        auto ra = std::async(std::launch::async, [&] { return a.run(pa); });
        const tpu_job_result rb = b.run(pb);
        return {ra.get(), rb};
    }

    Side a, b;
    Pump pump;
    RemoteLinkPtr a0, a1, b0, b1;
    Pump::Pair &plus, &minus;
};

bool link_up(TwoProcesses &t) {
    return port_info(t.a.engine(), 0).up && port_info(t.b.engine(), 1).up &&
           port_info(t.a.engine(), 1).up && port_info(t.b.engine(), 0).up;
}

std::vector<float> floats(uint32_t n, float base) {
    std::vector<float> v(n);
    for (uint32_t i = 0; i < n; i++)
        v[i] = base + 0.37f * float(i % 1000) - 1.5f * float(i % 7);
    return v;
}

} // namespace

TEST_CASE("link: cards in two processes exchange messages both ways and reduce, with the bytes "
          "and modelled times of one process",
          "[link][remote]") {
    const uint32_t mode = GENERATE(TPU_ENGINE_FAST, TPU_ENGINE_CYCLE_ACCURATE);
    constexpr uint32_t kBytes = 1u << 20;
    constexpr uint32_t kN = kBytes / 4;
    constexpr uint64_t kIn = LinkRig::kHost, kOut = LinkRig::kHost + kBytes,
                       kAcc = LinkRig::kHost + 2 * kBytes;
    // Each card sends its vector on +x and receives the other's on -x, then sends it on to the
    // other card's -x... every port carries traffic both ways, and the last RECV sums.
    const Program pa = {send(0, 1, kIn, kBytes, TPU_F_LINK_HOST),
                        recv(1, 2, kOut, kBytes, TPU_LINK_COPY, 0, TPU_F_LINK_HOST),
                        send(1, 3, kIn, 4097, TPU_F_LINK_HOST),
                        recv(0, 4, kAcc, kBytes, TPU_LINK_SUM, TPU_DT_FP32, TPU_F_LINK_HOST),
                        halt()};
    const Program pb = {send(0, 2, kIn, kBytes, TPU_F_LINK_HOST),
                        recv(1, 1, kOut, kBytes, TPU_LINK_COPY, 0, TPU_F_LINK_HOST),
                        recv(0, 3, kOut, 4097, TPU_LINK_COPY, 0, TPU_F_LINK_HOST),
                        send(1, 4, kIn, kBytes, TPU_F_LINK_HOST), halt()};
    const std::vector<float> va = floats(kN, 1.0f), vb = floats(kN, -2.25f);

    auto load = [&](AddressSpace &sa, AddressSpace &sb) {
        sa.write(kIn, va.data(), kBytes);
        sb.write(kIn, vb.data(), kBytes);
        sa.write(kAcc, va.data(), kBytes);
    };
    LinkRig one(LinkRig::ring(2), mode, 4u << 20);
    load(one.space(0), one.space(1));
    const std::vector<tpu_job_result> local = one.run_all({pa, pb});

    TwoProcesses two(mode);
    REQUIRE(eventually([&] { return link_up(two); }));
    load(*two.a.space, *two.b.space);
    const std::vector<tpu_job_result> remote = two.run_both(pa, pb);

    for (uint32_t i = 0; i < 2; i++) {
        INFO("card " << i);
        REQUIRE(local[i].status == TPU_ERR_NONE);
        REQUIRE(remote[i].status == TPU_ERR_NONE);
        CHECK(remote[i].cycles == local[i].cycles);
        CHECK(remote[i].link_cycles == local[i].link_cycles);
        CHECK(remote[i].link_tx_bytes == local[i].link_tx_bytes);
        CHECK(remote[i].link_rx_bytes == local[i].link_rx_bytes);
    }
    AddressSpace *spaces[2][2] = {{&one.space(0), &one.space(1)},
                                  {two.a.space.get(), two.b.space.get()}};
    std::vector<uint8_t> got[2][2];
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < 2; c++) {
            got[s][c].resize(3 * kBytes);
            spaces[s][c]->read(kIn, got[s][c].data(), 3 * kBytes);
        }
    CHECK(got[1][0] == got[0][0]);
    CHECK(got[1][1] == got[0][1]);
    // What arrived is what was sent, and the sum is dst + msg in float.
    CHECK(std::memcmp(got[1][0].data() + kBytes, vb.data(), kBytes) == 0);
    CHECK(std::memcmp(got[1][1].data() + kBytes, va.data(), 4097) == 0);
    std::vector<float> sum(kN);
    std::memcpy(sum.data(), got[1][0].data() + 2 * kBytes, kBytes);
    for (uint32_t i = 0; i < kN; i += 4099)
        CHECK(sum[i] == va[i] + vb[i]);

    const tpu_link_port_info tx = port_info(two.a.engine(), 0), rx = port_info(two.b.engine(), 1);
    CHECK(tx.tx_bytes == kBytes);
    CHECK(rx.rx_bytes == kBytes);
    CHECK(tx.rx_bytes == kBytes);
    CHECK(tx.errors == 0);
    CHECK(rx.rx_queued == 0);
}

TEST_CASE("link: a receiver in another process that is not ready stalls the sender at its credits",
          "[link][remote]") {
    constexpr uint32_t kCredits = 4;
    constexpr uint32_t kBytes = 256 * 1024;
    TwoProcesses two(TPU_ENGINE_FAST, kCredits);
    REQUIRE(eventually([&] { return link_up(two); }));
    std::vector<uint8_t> data(kBytes);
    for (uint32_t i = 0; i < kBytes; i++)
        data[i] = uint8_t(i * 7 + i / 4096);
    two.a.space->write(LinkRig::kHost, data.data(), kBytes);

    auto sender = std::async(std::launch::async, [&] {
        return two.a.run({send(0, 1, LinkRig::kHost, kBytes, TPU_F_LINK_HOST), halt()});
    });
    // The remote buffer fills and no packet more leaves the sender: its credits are the remote's.
    REQUIRE(eventually([&] { return port_info(two.b.engine(), 1).rx_queued == kCredits; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(sender.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
    CHECK(port_info(two.a.engine(), 0).tx_packets == kCredits);
    CHECK(port_info(two.b.engine(), 1).rx_queued == kCredits);

    const tpu_job_result r =
        two.b.run({recv(1, 1, LinkRig::kHost, kBytes, TPU_LINK_COPY, 0, TPU_F_LINK_HOST), halt()});
    CHECK(r.status == TPU_ERR_NONE);
    CHECK(sender.get().status == TPU_ERR_NONE);
    std::vector<uint8_t> got(kBytes);
    two.b.space->read(LinkRig::kHost, got.data(), kBytes);
    CHECK(got == data);
    CHECK(port_info(two.b.engine(), 1).rx_packets == kBytes / TPU_ICI_PACKET_BYTES);
}

TEST_CASE("link: a peer process that goes away ends a waiting RECV LINK_DOWN, and a reconnect "
          "brings the link back",
          "[link][remote]") {
    TwoProcesses two(TPU_ENGINE_FAST);
    REQUIRE(eventually([&] { return link_up(two); }));
    auto receiver = std::async(std::launch::async, [&] {
        return two.b.run({recv(1, 1, 0, 64 * 1024), halt()});
    });
    REQUIRE(eventually([&] { return tpu_engine_progress(two.b.engine()) >= 1; }));
    two.pump.disconnect(two.plus);
    REQUIRE(receiver.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    CHECK(receiver.get().status == TPU_ERR_LINK_DOWN);
    const tpu_link_port_info info = port_info(two.b.engine(), 1);
    CHECK_FALSE(info.up);
    CHECK(info.error);
    CHECK(info.errors == 2); // the link failure and the job's
    CHECK(two.a.run({send(0, 1, 0, 64), halt()}).status == TPU_ERR_LINK_DOWN);
    // The other link and the card's local work go on.
    CHECK(port_info(two.b.engine(), 0).up);

    two.pump.connect(two.plus);
    REQUIRE(eventually([&] { return link_up(two); }));
    const auto results = two.run_both({send(0, 2, 0, 8192), halt()}, {recv(1, 2, 0, 8192), halt()});
    CHECK(results[0].status == TPU_ERR_NONE);
    CHECK(results[1].status == TPU_ERR_NONE);
}

namespace {

// A ring's hello: its y links' figures are the x links'.
std::vector<uint8_t> hello_of(uint32_t x, uint32_t port, uint32_t dim_x = 2,
                              uint32_t clock_mhz = 700, uint32_t y_link_gbps = 400) {
    std::vector<uint8_t> out;
    wire::put_hello(out, 1,
                    wire::Hello{TPU_ICI_TOPO_RING, dim_x, 1, 400, 1000, 256, clock_mhz, x, 0, port,
                                y_link_gbps, 1000});
    return out;
}

} // namespace

TEST_CASE("link: malformed or mismatched messages from a peer take the link down, and a new "
          "connection brings it up",
          "[link][remote]") {
    struct Case {
        const char *what;
        std::vector<uint8_t> bytes;
        const char *error; // part of the reason given
    };
    std::vector<Case> cases;
    cases.push_back({"garbage", std::vector<uint8_t>(100, 0x5a), "bad magic"});
    {
        std::vector<uint8_t> v = hello_of(1, 1);
        wire::store(v.data() + 4, 3, 2);
        cases.push_back({"another version", v, "version 3"});
    }
    cases.push_back({"another fabric", hello_of(1, 1, 3), "fabric differs"});
    cases.push_back({"another clock", hello_of(1, 1, 2, 940), "fabric differs"});
    cases.push_back({"other y links", hello_of(1, 1, 2, 700, 100), "fabric differs"});
    cases.push_back({"the wrong coordinate", hello_of(1, 0), "leads to card 1:0 port 1"});
    {
        std::vector<uint8_t> v = hello_of(1, 1);
        wire::put_credit(v, 3, 1);
        cases.push_back({"out of sequence", v, "out of sequence"});
    }
    {
        std::vector<uint8_t> v = hello_of(1, 1);
        wire::put_credit(v, 2, 1);
        cases.push_back({"credits never owed", v, "never sent"});
    }
    {
        std::vector<uint8_t> v;
        wire::put_credit(v, 1, 1);
        cases.push_back({"no hello", v, "before the hello"});
    }
    {
        std::vector<uint8_t> v = hello_of(1, 1);
        const size_t at = v.size();
        wire::put_credit(v, 2, 1);
        wire::store(v.data() + at + 8, 1u << 30, 4);
        cases.push_back({"an oversized message", v, "wrong length"});
    }
    {
        std::vector<uint8_t> v = hello_of(1, 1);
        const uint8_t payload[8] = {};
        wire::put_data(v, 2, 1, 0, wire::DataBody{1, 8192, 0}, payload, 8);
        cases.push_back({"a short packet", v, "do not fit"});
    }
    {
        std::vector<uint8_t> v = hello_of(1, 1);
        std::vector<uint8_t> payload(TPU_ICI_PACKET_BYTES);
        for (uint64_t i = 0; i < 3; i++)
            wire::put_data(v, 2 + i, 1, 0, wire::DataBody{1, 3 * 4096, uint32_t(i * 4096)},
                           payload.data(), TPU_ICI_PACKET_BYTES);
        cases.push_back({"beyond its credits", v, "more packets than it had credits"});
    }

    Side side(LinkRig::ring(2), 0, TPU_ENGINE_FAST);
    Side side2(LinkRig::ring(2, 2), 0, TPU_ENGINE_FAST);
    Pump pump;
    for (const Case &c : cases) {
        INFO(c.what);
        const bool small = std::string(c.what) == "beyond its credits";
        Side &s = small ? side2 : side;
        RemoteLinkPtr l = bind(s, 0, pump);
        std::vector<uint8_t> bytes = c.bytes;
        if (small) // the hello of a fabric with 2 credits
            wire::store(bytes.data() + wire::kHeaderBytes + 20, 2, 4);
        const std::string error = pump.run([&] {
            tpu_remote_link_open(l.get());
            const char *why = tpu_remote_link_input(l.get(), bytes.data(), bytes.size());
            return std::string(why ? why : "");
        });
        CHECK_THAT(error, Catch::Contains(c.error));
        CHECK(pump.run([&] { return tpu_remote_link_close_due(l.get()); }));
        CHECK_FALSE(port_info(s.engine(), 0).up);
        CHECK(s.run({send(0, 1, 0, 64), halt()}).status == TPU_ERR_LINK_DOWN);
        // The card works on, and the next connection with a good hello is up.
        CHECK(s.run({halt()}).status == TPU_ERR_NONE);
        std::vector<uint8_t> good = hello_of(1, 1);
        if (small)
            wire::store(good.data() + wire::kHeaderBytes + 20, 2, 4);
        pump.run([&] {
            tpu_remote_link_close(l.get());
            tpu_remote_link_open(l.get());
            return tpu_remote_link_input(l.get(), good.data(), good.size()) == nullptr;
        });
        CHECK(port_info(s.engine(), 0).up);
        pump.run([&] {
            tpu_remote_link_close(l.get());
            l.reset();
            return 0;
        });
    }
}

TEST_CASE("link: a link taken down on demand ends the job using it LINK_DOWN until it is up again",
          "[link][remote]") {
    char err[256];
    SECTION("between cards of one process") {
        LinkRig rig(LinkRig::ring(2), TPU_ENGINE_FAST);
        auto receiver = std::async(std::launch::async, [&] {
            return rig.run(1, {recv(1, 1, 0, 4096), halt()});
        });
        REQUIRE(eventually([&] { return tpu_engine_progress(rig.engine(1)) >= 1; }));
        REQUIRE(tpu_fabric_set_link(rig.fabric.get(), 1, 0, 1, false, err, sizeof(err)) == 0);
        REQUIRE(receiver.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
        CHECK(receiver.get().status == TPU_ERR_LINK_DOWN);
        CHECK_FALSE(port_info(rig.engine(0), 0).up);
        CHECK(port_info(rig.engine(0), 1).up); // the other link between them
        CHECK(tpu_fabric_set_link(rig.fabric.get(), 1, 0, 4, false, err, sizeof(err)) == -1);
        REQUIRE(tpu_fabric_set_link(rig.fabric.get(), 0, 0, 0, true, err, sizeof(err)) == 0);
        const auto results =
            rig.run_all({{send(0, 2, 0, 64), halt()}, {recv(1, 2, 0, 64), halt()}});
        CHECK(results[1].status == TPU_ERR_NONE);
    }
    SECTION("to a card in another process") {
        TwoProcesses two(TPU_ENGINE_FAST);
        REQUIRE(eventually([&] { return link_up(two); }));
        auto receiver = std::async(std::launch::async, [&] {
            return two.b.run({recv(1, 1, 0, 4096), halt()});
        });
        REQUIRE(eventually([&] { return tpu_engine_progress(two.b.engine()) >= 1; }));
        REQUIRE(two.pump.run([&] {
            return tpu_fabric_set_link(two.a.fabric, 0, 0, 0, false, err, sizeof(err));
        }) == 0);
        REQUIRE(receiver.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
        CHECK(receiver.get().status == TPU_ERR_LINK_DOWN);
        // A new connection stays down while the link is taken down.
        two.pump.connect(two.plus);
        CHECK_FALSE(port_info(two.a.engine(), 0).up);
        REQUIRE(two.pump.run([&] {
            return tpu_fabric_set_link(two.a.fabric, 0, 0, 0, true, err, sizeof(err));
        }) == 0);
        two.pump.connect(two.plus);
        REQUIRE(eventually([&] { return link_up(two); }));
        const auto results = two.run_both({send(0, 2, 0, 64), halt()}, {recv(1, 2, 0, 64), halt()});
        CHECK(results[1].status == TPU_ERR_NONE);
    }
}

TEST_CASE("link: random corruptions of a peer's byte stream never crash, and a good peer then "
          "delivers",
          "[link][remote]") {
    Side side(LinkRig::ring(2), 0, TPU_ENGINE_FAST);
    RemoteLinkPtr l(tpu_remote_link_create(
        side.engine(), 0, [](void *) {}, nullptr, nullptr, 0));
    REQUIRE(l);
    // A good stream from card 1's port 1: the hello and an 8 KiB message of two packets.
    std::vector<uint8_t> payload(8192);
    for (uint32_t i = 0; i < payload.size(); i++)
        payload[i] = uint8_t(i * 13 + 5);
    std::vector<uint8_t> good = hello_of(1, 1);
    for (uint32_t off = 0; off < 8192; off += 4096)
        wire::put_data(good, 2 + off / 4096, 7, 0, wire::DataBody{1, 8192, off},
                       payload.data() + off, 4096);

    std::mt19937_64 rng(26);
    uint32_t failed = 0;
    for (int i = 0; i < 3000; i++) {
        std::vector<uint8_t> bytes = good;
        switch (rng() % 4) {
        case 0: // flip some bytes
            for (uint64_t k = 1 + rng() % 4; k > 0; k--)
                bytes[rng() % bytes.size()] ^= uint8_t(1 + rng() % 255);
            break;
        case 1: // a header's bytes anywhere
            for (uint64_t k = rng() % wire::kHeaderBytes; k > 0; k--)
                bytes[rng() % (2 * wire::kHeaderBytes)] = uint8_t(rng());
            break;
        case 2: // cut short
            bytes.resize(rng() % bytes.size());
            break;
        default: // a piece repeated
            const size_t at = rng() % bytes.size(), n = rng() % 200;
            bytes.insert(bytes.begin() + ptrdiff_t(at), bytes.begin() + ptrdiff_t(at),
                         bytes.begin() + ptrdiff_t(std::min(bytes.size(), at + n)));
            break;
        }
        tpu_remote_link_open(l.get());
        for (size_t at = 0; at < bytes.size();) {
            const size_t n = std::min<size_t>(bytes.size() - at, 1 + rng() % 5000);
            if (tpu_remote_link_input(l.get(), bytes.data() + at, n)) {
                failed++;
                CHECK(tpu_remote_link_close_due(l.get()));
                break;
            }
            at += n;
        }
        const void *out;
        tpu_remote_link_output(l.get(), &out);
        tpu_remote_link_close(l.get());
        REQUIRE_FALSE(port_info(side.engine(), 0).up);
    }
    CHECK(failed > 1000);
    CHECK(side.run({halt()}).status == TPU_ERR_NONE);

    tpu_remote_link_open(l.get());
    REQUIRE(tpu_remote_link_input(l.get(), good.data(), good.size()) == nullptr);
    CHECK(port_info(side.engine(), 0).up);
    const tpu_job_result r =
        side.run({recv(0, 7, LinkRig::kHost, 8192, TPU_LINK_COPY, 0, TPU_F_LINK_HOST), halt()});
    CHECK(r.status == TPU_ERR_NONE);
    std::vector<uint8_t> got(8192);
    side.space->read(LinkRig::kHost, got.data(), got.size());
    CHECK(got == payload);
    tpu_remote_link_close(l.get());
}
