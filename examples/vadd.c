/* vadd — kiln's hello world: c = a + b over a million floats, on the device
 * named by argv[1] or $KILN_DEVICE (else the best one: GPU, accelerator,
 * CPU), checked on the host. Build: cc vadd.c $(pkg-config --cflags --libs kiln) */
#include <kiln.h>
#include <stdio.h>

#define N (1 << 20)
/* Stops at the first failing call and says why. */
#define TRY(call)                                                     \
    do {                                                              \
        if ((call) != KILN_OK) {                                      \
            fprintf(stderr, "vadd: %s\n", kiln_last_error_message()); \
            return 1;                                                 \
        }                                                             \
    } while (0)

/* kiln's portable dialect: the same source runs on OpenCL and CUDA. */
static const char *source = "KILN_KERNEL void vadd(KILN_GLOBAL const float *a, KILN_GLOBAL const "
                            "float *b, KILN_GLOBAL float *c) {\n"
                            "    size_t i = kiln_global_id(0);\n"
                            "    c[i] = a[i] + b[i];\n"
                            "}\n";

static float a[N], b[N], c[N];

int main(int argc, char **argv) {
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
    }
    kiln_queue *q;
    kiln_buffer *da, *db, *dc;
    kiln_program *prog;
    kiln_kernel *k;
    TRY(kiln_queue_create_default(argc > 1 ? argv[1] : NULL, KILN_QUEUE_IN_ORDER, &q));
    kiln_context *ctx = kiln_queue_context(q);
    TRY(kiln_buffer_create(ctx, sizeof a, KILN_BUFFER_READ_ONLY, a, &da));
    TRY(kiln_buffer_create(ctx, sizeof b, KILN_BUFFER_READ_ONLY, b, &db));
    TRY(kiln_buffer_create(ctx, sizeof c, KILN_BUFFER_WRITE_ONLY, NULL, &dc));
    TRY(kiln_program_create(ctx, source, NULL, &prog));
    TRY(kiln_kernel_create(prog, "vadd", &k));
    kiln_arg args[] = { KILN_ARG_BUF(da), KILN_ARG_BUF(db), KILN_ARG_BUF(dc) };
    size_t global = N;
    TRY(kiln_kernel_launch(q, k, 1, &global, NULL, 3, args, 0, NULL, NULL));
    TRY(kiln_buffer_read(q, dc, 0, sizeof c, c)); /* blocks; runs after the kernel */
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += c[i] != a[i] + b[i];
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    printf("vadd: %d elements on %s: %s\n", N, info.name, bad ? "MISMATCH" : "OK");
    kiln_kernel_release(k);
    kiln_program_release(prog);
    kiln_queue_release(q);
    kiln_buffer_release(da);
    kiln_buffer_release(db);
    kiln_buffer_release(dc);
    return bad ? 1 : 0;
}
