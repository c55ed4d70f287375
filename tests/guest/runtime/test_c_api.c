/* SPDX-License-Identifier: MIT */
/*
 * test_c_api.c - guest test of the C API (tpurt.h), compiled as C: devices (list, open, info,
 * counters), versioned structs (struct_size checked), buffers and tensors, ops blocking and on
 * streams, events, a stream waiting for another's event, a compiled executable launched both
 * ways, errors with their per-thread message, four threads sharing one device, each with its
 * own stream, and the registry: every op listed, ops launched by name with attributes (square,
 * softmax, elementwise, dense), blocking and on a stream, and its refusals. Results are checked
 * exactly against loops on the host. Exits non-zero on a failure, printing each failed check.
 */
#include <tpurt/tpurt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__,       \
                    #cond, tpurt_last_error());                                                    \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static tpurt_tensor *tensor_1d(tpurt_device *dev, uint32_t dtype, uint64_t n) {
    struct tpurt_tensor_desc desc;
    tpurt_tensor *t = NULL;
    memset(&desc, 0, sizeof(desc));
    desc.struct_size = sizeof(desc);
    desc.dtype = dtype;
    desc.rank = 1;
    desc.shape[0] = n;
    CHECK(tpurt_tensor_create(dev, &desc, &t) == TPURT_OK);
    return t;
}

static tpurt_tensor *matrix(tpurt_device *dev, uint32_t dtype, uint64_t rows, uint64_t cols) {
    struct tpurt_tensor_desc desc;
    tpurt_tensor *t = NULL;
    memset(&desc, 0, sizeof(desc));
    desc.struct_size = sizeof(desc);
    desc.dtype = dtype;
    desc.rank = 2;
    desc.shape[0] = rows;
    desc.shape[1] = cols;
    CHECK(tpurt_tensor_create(dev, &desc, &t) == TPURT_OK);
    return t;
}

static void test_devices(tpurt_device *dev) {
    struct tpurt_device_info info, listed;
    struct tpurt_counters before, after;
    CHECK(tpurt_api_version() == TPURT_API_VERSION);
    CHECK(tpurt_device_count() >= 1);
    memset(&info, 0, sizeof(info));
    memset(&listed, 0, sizeof(listed));
    info.struct_size = sizeof(info);
    listed.struct_size = sizeof(listed);
    CHECK(tpurt_get_info(dev, &info) == TPURT_OK);
    CHECK(tpurt_device_list_info(0, &listed) == TPURT_OK);
    CHECK(strcmp(info.path, listed.path) == 0);
    CHECK(info.mxu_rows > 0 && info.mxu_cols > 0 && info.struct_size == sizeof(info));
    CHECK(tpurt_device_list_info(1000, &listed) == TPURT_E_NO_DEVICE);

    /* struct_size is checked: 0 (not set) is refused with a message that says so. */
    info.struct_size = 0;
    CHECK(tpurt_get_info(dev, &info) == TPURT_E_INVALID);
    CHECK(strstr(tpurt_last_error(), "struct_size") != NULL);

    memset(&before, 0, sizeof(before));
    before.struct_size = sizeof(before);
    after = before;
    CHECK(tpurt_get_counters(dev, &before) == TPURT_OK);
    {
        int8_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
        int32_t c[4];
        CHECK(tpurt_matmul_int8(dev, a, b, c, 2, 2, 2) == TPURT_OK);
        CHECK(c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50);
    }
    CHECK(tpurt_get_counters(dev, &after) == TPURT_OK);
    CHECK(after.jobs_done > before.jobs_done);
    CHECK(after.macs >= before.macs + 8);
}

static void test_buffers(tpurt_device *dev) {
    tpurt_buffer *buffer = NULL;
    CHECK(tpurt_buffer_create(dev, 5000, &buffer) == TPURT_OK);
    CHECK(tpurt_buffer_size(buffer) >= 5000);
    CHECK(tpurt_buffer_device_addr(buffer) != 0);
    CHECK(((unsigned char *)tpurt_buffer_data(buffer))[4999] == 0);
    tpurt_buffer_destroy(buffer);
    CHECK(tpurt_buffer_create(dev, 0, &buffer) == TPURT_E_INVALID);
    tpurt_buffer_destroy(NULL);
}

/* int8 a[m x k] x b[k x n] on the host. */
static void reference_int8(const int8_t *a, const int8_t *b, int32_t *c, int m, int k, int n) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            int32_t sum = 0;
            for (int p = 0; p < k; p++)
                sum += (int32_t)a[i * k + p] * b[p * n + j];
            c[i * n + j] = sum;
        }
}

static void test_ops_and_streams(tpurt_device *dev) {
    enum { M = 33, K = 70, N = 45 };
    static int8_t a[M * K], b[K * N];
    static int32_t ref[M * N], out[M * N], out2[M * N], doubled[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (int8_t)((i * 37) % 255 - 127);
    for (int i = 0; i < K * N; i++)
        b[i] = (int8_t)((i * 91) % 251 - 125);
    reference_int8(a, b, ref, M, K, N);

    tpurt_tensor *ta = matrix(dev, TPURT_INT8, M, K), *tb = matrix(dev, TPURT_INT8, K, N);
    tpurt_tensor *tc = matrix(dev, TPURT_INT32, M, N), *tc2 = matrix(dev, TPURT_INT32, M, N);
    tpurt_tensor *td = matrix(dev, TPURT_INT32, M, N);
    struct tpurt_tensor_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.struct_size = sizeof(desc);
    CHECK(tpurt_tensor_describe(tc, &desc) == TPURT_OK);
    CHECK(desc.dtype == TPURT_INT32 && desc.rank == 2 && desc.shape[0] == M && desc.shape[1] == N);

    /* Blocking: write, matmul, read. */
    CHECK(tpurt_tensor_write(NULL, ta, a, sizeof(a)) == TPURT_OK);
    CHECK(tpurt_tensor_write(NULL, tb, b, sizeof(b)) == TPURT_OK);
    CHECK(tpurt_op_matmul(dev, NULL, ta, tb, tc) == TPURT_OK);
    CHECK(tpurt_tensor_read(NULL, tc, out, sizeof(out)) == TPURT_OK);
    CHECK(memcmp(out, ref, sizeof(ref)) == 0);

    /* Streams: s1 multiplies through a compiled executable, s2 waits for s1's event on the
     * card and doubles the product; both results are read in stream order. */
    struct tpurt_stream_options options = {sizeof(options), 0};
    tpurt_stream *s1 = NULL, *s2 = NULL;
    tpurt_event *e1 = NULL, *e2 = NULL;
    CHECK(tpurt_stream_create(dev, &options, &s1) == TPURT_OK);
    CHECK(tpurt_stream_create(dev, NULL, &s2) == TPURT_OK);
    struct tpurt_dense_desc dd;
    memset(&dd, 0, sizeof(dd));
    dd.struct_size = sizeof(dd);
    dd.dtype = TPURT_INT8;
    dd.out_dtype = TPURT_INT32;
    dd.activation = TPURT_ACT_NONE;
    dd.m = M;
    dd.k = K;
    dd.n = N;
    dd.scale = 1.0f;
    tpurt_executable *exe = NULL;
    CHECK(tpurt_executable_compile_dense(dev, &dd, &exe) == TPURT_OK);
    CHECK(tpurt_executable_arg_count(exe) == 3);
    CHECK(tpurt_executable_job_count(exe) >= 1);
    tpurt_tensor *args[3] = {ta, tb, tc2};
    CHECK(tpurt_executable_launch(dev, s1, exe, args, 3) == TPURT_OK);
    CHECK(tpurt_event_record(s1, &e1) == TPURT_OK);
    CHECK(tpurt_stream_wait_event(s2, e1) == TPURT_OK);
    CHECK(tpurt_op_elementwise(NULL, s2, TPURT_ADD, tc2, tc2, td) == TPURT_OK);
    CHECK(tpurt_tensor_read(s2, td, doubled, sizeof(doubled)) == TPURT_OK);
    CHECK(tpurt_tensor_read(s2, tc2, out2, sizeof(out2)) == TPURT_OK);
    CHECK(tpurt_event_record(s2, &e2) == TPURT_OK);
    CHECK(tpurt_event_wait(e2, TPURT_WAIT_DEFAULT) == TPURT_OK);
    CHECK(tpurt_event_query(e1) == 1);
    CHECK(tpurt_event_query(e2) == 1);
    CHECK(memcmp(out2, ref, sizeof(ref)) == 0);
    for (int i = 0; i < M * N; i++)
        if (doubled[i] != 2 * ref[i]) {
            CHECK(doubled[i] == 2 * ref[i]);
            break;
        }
    /* The executable blocking, wrong argument count refused. */
    CHECK(tpurt_executable_launch(dev, NULL, exe, args, 3) == TPURT_OK);
    CHECK(tpurt_executable_launch(dev, NULL, exe, args, 2) == TPURT_E_INVALID);

    /* A shape mismatch is refused when the op is queued, with a message. */
    tpurt_tensor *small = tensor_1d(dev, TPURT_INT32, 7);
    CHECK(tpurt_op_elementwise(NULL, s2, TPURT_ADD, tc2, small, td) == TPURT_E_INVALID);
    CHECK(strlen(tpurt_last_error()) > 0);
    CHECK(tpurt_op_elementwise(NULL, s2, 99, tc2, tc2, td) == TPURT_E_INVALID);
    CHECK(tpurt_op_matmul(NULL, NULL, ta, tb, tc) == TPURT_E_INVALID); /* no device, no stream */
    CHECK(tpurt_stream_synchronize(s2, TPURT_WAIT_DEFAULT) == TPURT_OK);
    CHECK(strcmp(tpurt_last_error(), "") == 0);

    /* Reductions, unary, transpose on a stream. */
    tpurt_tensor *rows = tensor_1d(dev, TPURT_INT32, M), *tt = matrix(dev, TPURT_INT32, N, M);
    tpurt_tensor *f = matrix(dev, TPURT_FP32, 1, 4), *g = matrix(dev, TPURT_FP32, 1, 4);
    const float fin[4] = {-2.0f, -0.5f, 0.0f, 3.25f};
    float fout[4];
    static int32_t sums[M], transposed[N * M];
    CHECK(tpurt_op_reduce_rows(NULL, s1, TPURT_REDUCE_SUM, tc2, rows) == TPURT_OK);
    CHECK(tpurt_op_transpose(NULL, s1, tc2, tt) == TPURT_OK);
    CHECK(tpurt_tensor_write(s1, f, fin, sizeof(fin)) == TPURT_OK);
    CHECK(tpurt_op_unary(NULL, s1, TPURT_ACT_RELU, f, g, 2.0f) == TPURT_OK);
    CHECK(tpurt_tensor_read(s1, rows, sums, sizeof(sums)) == TPURT_OK);
    CHECK(tpurt_tensor_read(s1, tt, transposed, sizeof(transposed)) == TPURT_OK);
    CHECK(tpurt_tensor_read(s1, g, fout, sizeof(fout)) == TPURT_OK);
    CHECK(tpurt_stream_synchronize(s1, TPURT_WAIT_DEFAULT) == TPURT_OK);
    for (int i = 0; i < M; i++) {
        int32_t sum = 0;
        for (int j = 0; j < N; j++) {
            sum += ref[i * N + j];
            if (transposed[j * M + i] != ref[i * N + j])
                failures += transposed[j * M + i] != ref[i * N + j];
        }
        CHECK(sums[i] == sum);
    }
    CHECK(fout[0] == 0.0f && fout[1] == 0.0f && fout[2] == 0.0f && fout[3] == 6.5f);

    tpurt_event_destroy(e1);
    tpurt_event_destroy(e2);
    tpurt_stream_destroy(s1);
    tpurt_stream_destroy(s2);
    tpurt_executable_destroy(exe);
    tpurt_tensor_destroy(ta);
    tpurt_tensor_destroy(tb);
    tpurt_tensor_destroy(tc);
    tpurt_tensor_destroy(tc2);
    tpurt_tensor_destroy(td);
    tpurt_tensor_destroy(small);
    tpurt_tensor_destroy(rows);
    tpurt_tensor_destroy(tt);
    tpurt_tensor_destroy(f);
    tpurt_tensor_destroy(g);
}

/* Every registered op by name: listed with its signature, launched with attributes. */
static void test_registry(tpurt_device *dev) {
    /* Every op of tpurt.hpp's API is registered; composites (several launches) too. */
    const int count = tpurt_op_count();
    int seen = 0;
    CHECK(count >= 30);
    for (int i = 0; i < count; i++) {
        CHECK(tpurt_op_name(i) != NULL && tpurt_op_signature(i) != NULL);
        if (strcmp(tpurt_op_name(i), "dense") == 0) {
            CHECK(strcmp(tpurt_op_signature(i), "dense(a, w, out, bias?; activation, scale)") == 0);
            seen++;
        }
        seen += strcmp(tpurt_op_name(i), "square") == 0;
        seen += strcmp(tpurt_op_name(i), "softmax") == 0;
        seen += strcmp(tpurt_op_name(i), "conv2d_weight_grad") == 0;
    }
    CHECK(seen == 4);
    CHECK(tpurt_op_name(count) == NULL && tpurt_op_name(-1) == NULL);

    /* square (int32, wrapping) and elementwise sub with an attribute, blocking. */
    enum { R = 5, C = 7 };
    int32_t x[R * C], sq[R * C], diff[R * C];
    for (int i = 0; i < R * C; i++)
        x[i] = i * 1000 - 17000 + (i == 3 ? 70000 : 0);
    tpurt_tensor *tx = matrix(dev, TPURT_INT32, R, C), *tsq = matrix(dev, TPURT_INT32, R, C);
    tpurt_tensor *tdiff = matrix(dev, TPURT_INT32, R, C);
    CHECK(tpurt_tensor_write(NULL, tx, x, sizeof(x)) == TPURT_OK);
    tpurt_tensor *square_args[2] = {tx, tsq};
    CHECK(tpurt_op_launch(dev, NULL, "square", square_args, 2, NULL, 0) == TPURT_OK);
    tpurt_tensor *sub_args[3] = {tsq, tx, tdiff};
    const struct tpurt_op_attr sub[1] = {{"op", "sub"}};
    CHECK(tpurt_op_launch(dev, NULL, "elementwise", sub_args, 3, sub, 1) == TPURT_OK);
    CHECK(tpurt_tensor_read(NULL, tsq, sq, sizeof(sq)) == TPURT_OK);
    CHECK(tpurt_tensor_read(NULL, tdiff, diff, sizeof(diff)) == TPURT_OK);
    for (int i = 0; i < R * C; i++) {
        const int32_t want = (int32_t)((uint32_t)x[i] * (uint32_t)x[i]);
        if (sq[i] != want || diff[i] != (int32_t)((uint32_t)want - (uint32_t)x[i])) {
            CHECK(sq[i] == want);
            break;
        }
    }

    /* softmax and a dense layer with a bias, ReLU and a scale given by name, on a stream. */
    const float logits[2 * 3] = {1.0f, 2.0f, 3.0f, 0.0f, 0.0f, 0.0f};
    const float w[3 * 2] = {1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f}, bias[2] = {0.25f, 4.0f};
    float probs[2 * 3], dense_out[2 * 2];
    tpurt_tensor *tl = matrix(dev, TPURT_FP32, 2, 3), *tp = matrix(dev, TPURT_FP32, 2, 3);
    tpurt_tensor *tw = matrix(dev, TPURT_FP32, 3, 2), *tb = tensor_1d(dev, TPURT_FP32, 2);
    tpurt_tensor *td = matrix(dev, TPURT_FP32, 2, 2);
    tpurt_stream *s = NULL;
    CHECK(tpurt_stream_create(dev, NULL, &s) == TPURT_OK);
    CHECK(tpurt_tensor_write(s, tl, logits, sizeof(logits)) == TPURT_OK);
    CHECK(tpurt_tensor_write(s, tw, w, sizeof(w)) == TPURT_OK);
    CHECK(tpurt_tensor_write(s, tb, bias, sizeof(bias)) == TPURT_OK);
    tpurt_tensor *softmax_args[2] = {tl, tp};
    CHECK(tpurt_op_launch(NULL, s, "softmax", softmax_args, 2, NULL, 0) == TPURT_OK);
    tpurt_tensor *dense_args[4] = {tl, tw, td, tb};
    const struct tpurt_op_attr dense[2] = {{"activation", "relu"}, {"scale", "0.5"}};
    CHECK(tpurt_op_launch(NULL, s, "dense", dense_args, 4, dense, 2) == TPURT_OK);
    CHECK(tpurt_tensor_read(s, tp, probs, sizeof(probs)) == TPURT_OK);
    CHECK(tpurt_tensor_read(s, td, dense_out, sizeof(dense_out)) == TPURT_OK);
    CHECK(tpurt_stream_synchronize(s, TPURT_WAIT_DEFAULT) == TPURT_OK);
    for (int r = 0; r < 2; r++) {
        float sum = 0.0f;
        for (int c = 0; c < 3; c++)
            sum += probs[r * 3 + c];
        CHECK(sum > 0.999f && sum < 1.001f);
        CHECK(probs[r * 3] <= probs[r * 3 + 2]);
    }
    CHECK(probs[3] > 0.333f && probs[3] < 0.334f);
    /* Row 0: (1 + 4 + 1.5 + 0.25) x 0.5 = 3.375, relu(-6.5 + 4) x 0.5 = 0; row 1: 0.125, 2. */
    CHECK(dense_out[0] == 3.375f && dense_out[1] == 0.0f);
    CHECK(dense_out[2] == 0.125f && dense_out[3] == 2.0f);

    /* A composite op by name: column sums (a TRANSPOSE into scratch, then REDUCE). */
    int32_t col[C];
    tpurt_tensor *tcol = tensor_1d(dev, TPURT_INT32, C);
    tpurt_tensor *column_args[2] = {tx, tcol};
    CHECK(tpurt_op_launch(dev, NULL, "column_sums", column_args, 2, NULL, 0) == TPURT_OK);
    CHECK(tpurt_tensor_read(NULL, tcol, col, sizeof(col)) == TPURT_OK);
    for (int c = 0; c < C; c++) {
        int32_t sum = 0;
        for (int r = 0; r < R; r++)
            sum += x[r * C + c];
        CHECK(col[c] == sum);
    }
    tpurt_tensor_destroy(tcol);

    /* The bias is optional: NULL in its place. */
    dense_args[3] = NULL;
    CHECK(tpurt_op_launch(dev, NULL, "dense", dense_args, 4, dense, 2) == TPURT_OK);

    /* Refusals, each with a message naming the problem. */
    CHECK(tpurt_op_launch(dev, NULL, "sqaure", square_args, 2, NULL, 0) == TPURT_E_INVALID);
    CHECK(strstr(tpurt_last_error(), "no op named 'sqaure'") != NULL);
    CHECK(tpurt_op_launch(dev, NULL, "square", square_args, 1, NULL, 0) == TPURT_E_INVALID);
    CHECK(strstr(tpurt_last_error(), "takes 2 tensors (a, out), got 1") != NULL);
    square_args[1] = NULL;
    CHECK(tpurt_op_launch(dev, NULL, "square", square_args, 2, NULL, 0) == TPURT_E_INVALID);
    CHECK(strstr(tpurt_last_error(), "operand 1 (out) is missing") != NULL);
    const struct tpurt_op_attr bad[1] = {{"op", "plus"}};
    CHECK(tpurt_op_launch(dev, NULL, "elementwise", sub_args, 3, bad, 1) == TPURT_E_INVALID);
    CHECK(strstr(tpurt_last_error(), "attribute op = 'plus' is not one of") != NULL);
    const struct tpurt_op_attr unknown[1] = {{"alpha", "2"}};
    CHECK(tpurt_op_launch(dev, NULL, "elementwise", sub_args, 3, unknown, 1) == TPURT_E_INVALID);
    CHECK(strstr(tpurt_last_error(), "no attribute 'alpha'") != NULL);
    CHECK(tpurt_op_launch(dev, NULL, NULL, sub_args, 3, NULL, 0) == TPURT_E_INVALID);

    tpurt_stream_destroy(s);
    tpurt_tensor_destroy(tx);
    tpurt_tensor_destroy(tsq);
    tpurt_tensor_destroy(tdiff);
    tpurt_tensor_destroy(tl);
    tpurt_tensor_destroy(tp);
    tpurt_tensor_destroy(tw);
    tpurt_tensor_destroy(tb);
    tpurt_tensor_destroy(td);
}

struct worker {
    tpurt_device *dev;
    int index;
    int bad;
};

/* x <- x + step, 20 times on the thread's own stream; then a refused call whose message must
 * stay this thread's. */
static void *work(void *arg) {
    struct worker *w = arg;
    enum { n = 3000, steps = 20 };
    static int32_t x0[4][n], step[4][n], result[4][n];
    tpurt_stream *s = NULL;
    tpurt_tensor *x[2], *ts;
    for (int i = 0; i < n; i++) {
        x0[w->index][i] = i * (w->index + 1) - 500;
        step[w->index][i] = i % 17 + w->index;
    }
    if (tpurt_stream_create(w->dev, NULL, &s) != TPURT_OK) {
        w->bad++;
        return NULL;
    }
    x[0] = tensor_1d(w->dev, TPURT_INT32, n);
    x[1] = tensor_1d(w->dev, TPURT_INT32, n);
    ts = tensor_1d(w->dev, TPURT_INT32, n);
    w->bad += tpurt_tensor_write(s, x[0], x0[w->index], sizeof(x0[0])) != TPURT_OK;
    w->bad += tpurt_tensor_write(s, ts, step[w->index], sizeof(step[0])) != TPURT_OK;
    for (int i = 0; i < steps; i++)
        w->bad += tpurt_op_elementwise(NULL, s, TPURT_ADD, x[i % 2], ts, x[(i + 1) % 2]) != 0;
    w->bad += tpurt_tensor_read(s, x[steps % 2], result[w->index], sizeof(result[0])) != 0;
    w->bad += tpurt_stream_synchronize(s, TPURT_WAIT_DEFAULT) != TPURT_OK;
    for (int i = 0; i < n; i++)
        w->bad += result[w->index][i] != x0[w->index][i] + steps * step[w->index][i];
    w->bad += tpurt_buffer_create(w->dev, 0, NULL) != TPURT_E_INVALID;
    w->bad += strstr(tpurt_last_error(), "tpurt_buffer_create") == NULL;
    tpurt_tensor_destroy(x[0]);
    tpurt_tensor_destroy(x[1]);
    tpurt_tensor_destroy(ts);
    tpurt_stream_destroy(s);
    return NULL;
}

static void test_threads(tpurt_device *dev) {
    pthread_t threads[4];
    struct worker workers[4];
    for (int t = 0; t < 4; t++) {
        workers[t].dev = dev;
        workers[t].index = t;
        workers[t].bad = 0;
        CHECK(pthread_create(&threads[t], NULL, work, &workers[t]) == 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(threads[t], NULL);
        CHECK(workers[t].bad == 0);
    }
}

int main(void) {
    tpurt_device *dev = NULL;
    if (tpurt_open(0, &dev) != TPURT_OK) {
        fprintf(stderr, "tpurt_open: %s\n", tpurt_last_error());
        return 1;
    }
    test_devices(dev);
    test_buffers(dev);
    test_ops_and_streams(dev);
    test_threads(dev);
    test_registry(dev);
    tpurt_close(dev);
    printf("test_c_api: %s (%d failed checks)\n", failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
