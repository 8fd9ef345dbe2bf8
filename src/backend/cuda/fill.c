/* Large device fills by a kernel of kiln's own: cuMemsetD32Async writes
 * 256 MiB at 4.13 TB/s on an H200 where a kernel of 16-byte stores gets
 * 4.26 (bench/README.md, fill), so fills of at least FILL_KERNEL_MIN bytes
 * whose pattern repeats every 1, 2, 4, 8 or 16 bytes go here.
 *
 * The kernel is PTX written by hand rather than CUDA C: it loads with
 * cuModuleLoadData on the driver alone (no NVRTC, which a fill must not
 * need), once per device of a context. A driver that refuses it (PTX ISA
 * 7.0, sm_75 or later) leaves the memset path in charge. */
#include "backend/cuda/cuda_internal.h"

#include <string.h>

static const char fill_ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry kiln_fill16(.param .u64 dst, .param .u64 count,\n"
    "    .param .u32 w0, .param .u32 w1, .param .u32 w2, .param .u32 w3)\n"
    "{\n"
    "    .reg .pred p;\n"
    "    .reg .b32 r<9>;\n"
    "    .reg .b64 rd<8>;\n"
    "    ld.param.u64 rd1, [dst];\n"
    "    ld.param.u64 rd2, [count];\n"
    "    ld.param.u32 r1, [w0];\n"
    "    ld.param.u32 r2, [w1];\n"
    "    ld.param.u32 r3, [w2];\n"
    "    ld.param.u32 r4, [w3];\n"
    "    cvta.to.global.u64 rd1, rd1;\n"
    "    mov.u32 r5, %ctaid.x;\n"
    "    mov.u32 r6, %ntid.x;\n"
    "    mov.u32 r7, %tid.x;\n"
    "    mov.u32 r8, %nctaid.x;\n"
    "    cvt.u64.u32 rd4, r7;\n"
    "    mad.wide.u32 rd3, r5, r6, rd4;\n"
    "    mul.wide.u32 rd5, r8, r6;\n"
    "LOOP:\n"
    "    setp.ge.u64 p, rd3, rd2;\n"
    "    @p bra DONE;\n"
    "    shl.b64 rd6, rd3, 4;\n"
    "    add.s64 rd7, rd1, rd6;\n"
    "    st.global.v4.u32 [rd7], {r1, r2, r3, r4};\n"
    "    add.s64 rd3, rd3, rd5;\n"
    "    bra.uni LOOP;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

#define FILL_BLOCK 256u

/* The device's fill function, loaded on first use; NULL if the driver
 * refused the module (then it is not tried again). */
static CUfunction fill_function(kiln__cu_context *c, kiln__cu_dev *d) {
    pthread_mutex_lock(&c->fill_lock);
    if (d->fill_state == 0) {
        d->fill_state = -1;
        CUmodule mod = NULL;
        CUfunction fn = NULL;
        if (kiln__cu_ctx_use(d->ctx) == KILN_OK &&
            kiln__cu.cuModuleLoadData(&mod, fill_ptx) == CUDA_SUCCESS) {
            if (kiln__cu.cuModuleGetFunction(&fn, mod, "kiln_fill16") == CUDA_SUCCESS) {
                d->fill_module = mod;
                d->fill_fn = fn;
                d->fill_state = 1;
            } else {
                kiln__cu.cuModuleUnload(mod);
            }
        }
    }
    CUfunction fn = d->fill_state == 1 ? d->fill_fn : NULL;
    pthread_mutex_unlock(&c->fill_lock);
    return fn;
}

void kiln__cu_fill_unload(kiln__cu_dev *d) {
    if (d->fill_state == 1)
        kiln__cu.cuModuleUnload(d->fill_module);
    d->fill_state = 0;
}

kiln_status kiln__cu_fill_kernel(kiln__cu_context *c, kiln__cu_dev *d, CUstream stream,
                                 CUdeviceptr dst, const unsigned char *pattern, size_t ps,
                                 size_t size, int *done) {
    *done = 0;
    /* the buffer's own device only (buffers live on dev[0]) */
    if (size < KILN__CU_FILL_KERNEL_MIN || dst % 16 || size % 16 || 16 % ps || d != &c->dev[0])
        return KILN_OK;
    CUfunction fn = fill_function(c, d);
    if (!fn)
        return KILN_OK;
    uint32_t w[4];
    unsigned char v[16];
    for (size_t i = 0; i < 16; i++)
        v[i] = pattern[i % ps];
    memcpy(w, v, 16);
    unsigned long long count = size / 16;
    /* one 16-byte store per thread over a grid that covers the range (the
     * kernel loops only past the grid limit): at 256 MiB on an H200 that
     * wrote 4.26 TB/s against 4.13 for cuMemsetD32Async and 4.02 for a
     * grid-stride loop over 8 blocks per SM (bench/README.md, fill) */
    unsigned long long want = (count + FILL_BLOCK - 1) / FILL_BLOCK;
    unsigned grid = (unsigned)(want < 0x7fffffffull ? want : 0x7fffffffull);
    void *params[] = { &dst, &count, &w[0], &w[1], &w[2], &w[3] };
    CUresult r = kiln__cu.cuLaunchKernel(fn, grid, 1, 1, FILL_BLOCK, 1, 1, 0, stream, params, NULL);
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuLaunchKernel (fill)", r);
    *done = 1;
    return KILN_OK;
}
