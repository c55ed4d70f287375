/*
 * tpu-ici-peer: a TPU card's interconnect link to another QEMU process fed
 * arbitrary bytes from its peer.
 *
 * The card (coordinate 0 of a two-card ring, x-sync-worker) has port 0 on a
 * ring-buffer chardev standing for the socket to the other process: the
 * target reads what the card writes there and delivers the input as the
 * peer's bytes (qemu_chr_be_write(), as a socket chardev does), in chunks,
 * with the main loop run between them.  The link protocol is the wire format
 * of docs/hardware.md section 10.  Whatever the bytes, QEMU must run on and
 * the card stay usable: after each input a NOP job must complete, and a new
 * connection whose peer sends a good hello must bring the link up again.  A
 * crash, a sanitizer report or an unusable card is a finding.  Built into
 * qemu-fuzz-x86_64 by tools/build-qemu-fuzz.sh; seeds in
 * tests/fuzz/qemu/ici-peer-seeds/ (make-seeds.py).
 *
 * Input: byte 0 bit 0: the peer first answers the card's hello with a good
 * one (its own messages then number from 2); byte 1: the chunk size - 1; the
 * rest: the peer's bytes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-char.h"
#include "chardev/char.h"
#include "exec/address-spaces.h"
#include "tests/qtest/libqtest.h"
#include "fuzz.h"
#include "tpu_fuzz_card.h"

#define PEER_HEADER_BYTES   32      /* wire.hpp: kHeaderBytes */
#define PEER_HELLO_BYTES    48      /* kHelloBytes */
#define PEER_TYPE_HELLO     1
#define PEER_PORT           0       /* the card's port to the peer */
#define PEER_RINGBUF_BYTES  (1 << 20)

/* The guest memory of the NOP job (context 0 maps the program at VA 0). */
#define MEM_RING            (TPU_FUZZ_MEM + 0x0000)
#define MEM_COMPL           (TPU_FUZZ_MEM + 0x1000)
#define MEM_CTX             (TPU_FUZZ_MEM + 0x2000)
#define MEM_L0              (TPU_FUZZ_MEM + 0x3000)
#define MEM_L1              (TPU_FUZZ_MEM + 0x4000)
#define MEM_L2              (TPU_FUZZ_MEM + 0x5000)
#define MEM_PROGRAM         (TPU_FUZZ_MEM + 0x6000)

static Chardev *peer_chr;

static uint64_t reg_read(QTestState *qts, uint32_t reg, bool wide)
{
    return wide ? qtest_readq(qts, TPU_FUZZ_BAR0 + reg)
                : qtest_readl(qts, TPU_FUZZ_BAR0 + reg);
}

static void reg_write(QTestState *qts, uint32_t reg, uint64_t val, bool wide)
{
    if (wide) {
        qtest_writeq(qts, TPU_FUZZ_BAR0 + reg, val);
    } else {
        qtest_writel(qts, TPU_FUZZ_BAR0 + reg, val);
    }
}

static void mem_write_u64(hwaddr addr, uint64_t val)
{
    uint8_t buf[8];

    stq_le_p(buf, val);
    address_space_write(&address_space_memory, addr, MEMTXATTRS_UNSPECIFIED,
                        buf, sizeof(buf));
}

static void finding(const char *what)
{
    fprintf(stderr, "tpu-ici-peer: %s\n", what);
    abort();
}

/* Everything the card wrote to the peer since the last call. */
static GByteArray *peer_take_output(void)
{
    g_autofree char *b64 = qmp_ringbuf_read("peer", PEER_RINGBUF_BYTES, true,
                                            DATA_FORMAT_BASE64, &error_abort);
    gsize len = 0;
    guchar *bytes = g_base64_decode(b64, &len);

    return g_byte_array_new_take(bytes, len);
}

/*
 * A new connection: the card sends its hello, and the peer answers with the
 * hello of the card at the other end of port 0 (coordinate 1, port 1).
 * Returns whether the link is up.
 */
static bool peer_connect(QTestState *qts, bool answer)
{
    g_autoptr(GByteArray) out = NULL;
    uint8_t hello[PEER_HEADER_BYTES + PEER_HELLO_BYTES];
    uint8_t *body = hello + PEER_HEADER_BYTES;

    qemu_chr_be_event(peer_chr, CHR_EVENT_CLOSED);
    flush_events(qts);
    g_byte_array_unref(peer_take_output());
    qemu_chr_be_event(peer_chr, CHR_EVENT_OPENED);
    flush_events(qts);
    out = peer_take_output();
    if (out->len < sizeof(hello) || out->data[6] != PEER_TYPE_HELLO) {
        finding("the card sent no hello on a new connection");
    }
    if (!answer) {
        return false;
    }
    memcpy(hello, out->data, sizeof(hello));
    stl_le_p(body + 28, 1);   /* x */
    stl_le_p(body + 32, 0);   /* y */
    stl_le_p(body + 36, PEER_PORT ^ 1);
    qemu_chr_be_write(peer_chr, hello, sizeof(hello));
    flush_events(qts);
    return reg_read(qts, TPU_REG_PORT(PEER_PORT, TPU_PREG_STATUS), false) &
           TPU_PORT_UP;
}

/* A global reset, then queue 0 on the NOP job's ring. */
static void card_reset(QTestState *qts)
{
    reg_write(qts, TPU_REG_RESET, TPU_RESET_MAGIC, false);
    if (!(reg_read(qts, TPU_REG_STATUS, false) & TPU_STATUS_READY)) {
        finding("the card is not ready after a reset");
    }
    reg_write(qts, TPU_REG_CTX_TABLE, MEM_CTX, true);
    reg_write(qts, TPU_REG_QUEUE(0, TPU_QREG_RING_BASE), MEM_RING, true);
    reg_write(qts, TPU_REG_QUEUE(0, TPU_QREG_RING_SIZE), 2, false);
    reg_write(qts, TPU_REG_QUEUE(0, TPU_QREG_COMPL_BASE), MEM_COMPL, true);
    reg_write(qts, TPU_REG_QUEUE(0, TPU_QREG_CONTROL), TPU_QCTRL_ENABLE,
              false);
    reg_write(qts, TPU_REG_CONTROL, TPU_CONTROL_ENABLE, false);
}

/* The card runs the NOP job of ring slot 0 to completion. */
static void card_check_usable(QTestState *qts)
{
    reg_write(qts, TPU_REG_QUEUE(0, TPU_QREG_RING_TAIL), 1, false);
    flush_events(qts);
    if (reg_read(qts, TPU_REG_QUEUE(0, TPU_QREG_DONE_SEQ), true) != 1 ||
        reg_read(qts, TPU_REG_CNT_JOBS_DONE, true) != 1) {
        finding("a NOP job did not complete after the peer's bytes");
    }
}

static void tpu_ici_peer_fuzz(QTestState *qts, const unsigned char *data,
                              size_t size)
{
    bool answer = size > 0 && (data[0] & 1);
    size_t chunk = size > 1 ? data[1] + 1 : 1;
    size_t pos;

    card_reset(qts);
    if (answer && !peer_connect(qts, true)) {
        finding("a good hello did not bring the link up");
    } else if (!answer) {
        peer_connect(qts, false);
    }
    for (pos = MIN(size, 2); pos < size; pos += chunk) {
        qemu_chr_be_write(peer_chr, data + pos, MIN(chunk, size - pos));
        flush_events(qts);
    }

    card_check_usable(qts);
    if (!peer_connect(qts, true)) {
        finding("a new connection with a good hello did not bring the link "
                "up again");
    }
}

static void tpu_ici_peer_pre_fuzz(QTestState *qts)
{
    Object *card = object_resolve_path("/machine/peripheral/card", NULL);
    struct tpu_ring_entry entry = {
        .opcode = cpu_to_le32(TPU_RING_OP_RUN),
        .seqno = cpu_to_le64(1),
        .program_size = cpu_to_le32(2 * TPU_INSN_SIZE),
    };
    uint8_t program[2 * TPU_INSN_SIZE] = { TPU_OP_NOP };

    peer_chr = qemu_chr_find("peer");
    if (!card || !peer_chr) {
        finding("no card or no chardev peer");
    }
    tpu_fuzz_enable(PCI_DEVICE(card));

    program[TPU_INSN_SIZE] = TPU_OP_HALT;
    address_space_write(&address_space_memory, MEM_RING,
                        MEMTXATTRS_UNSPECIFIED, &entry, sizeof(entry));
    address_space_write(&address_space_memory, MEM_PROGRAM,
                        MEMTXATTRS_UNSPECIFIED, program, sizeof(program));
    mem_write_u64(MEM_CTX, MEM_L0 | TPU_PTE_VALID);
    mem_write_u64(MEM_L0, MEM_L1 | TPU_PTE_VALID);
    mem_write_u64(MEM_L1, MEM_L2 | TPU_PTE_VALID);
    mem_write_u64(MEM_L2, MEM_PROGRAM | TPU_PTE_VALID | TPU_PTE_READ);
}

static GString *tpu_ici_peer_cmdline(FuzzTarget *t)
{
    return g_string_new(TARGET_NAME " -machine q35,accel=qtest -nodefaults "
                        "-m 64 -display none "
                        "-L /usr/share/seabios -L /usr/share/qemu "
                        "-object tpu-ici,id=ici0,topology=ring,dims=2,"
                        "preset=v5e,credits=4 "
                        "-chardev ringbuf,id=peer,size=1M "
                        "-device tpu,id=card,ici=ici0,ici-coord=0,"
                        "ici-port0=peer,x-sync-worker=on,threads=1,"
                        "mxu-rows=32,mxu-cols=32,ub-size=1M,acc-size=512K");
}

static void register_tpu_ici_peer_fuzz(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "tpu-ici-peer",
        .description = "TPU card's interconnect link fed arbitrary bytes by "
                       "its peer in another process",
        .get_init_cmdline = tpu_ici_peer_cmdline,
        .pre_fuzz = tpu_ici_peer_pre_fuzz,
        .fuzz = tpu_ici_peer_fuzz,
    });
}

fuzz_target_init(register_tpu_ici_peer_fuzz);
