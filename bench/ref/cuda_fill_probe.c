/* cuda_fill_probe: device fills of 256 MiB on the CUDA driver alone, timed
 * with CUDA events (median of 13 after 2 warm-ups): cuMemsetD32Async against
 * kernels of 16-byte stores (grid-stride loops of 4..32 blocks per SM, a
 * grid covering the range with one or four stores per thread). ptxA is
 * src/backend/cuda/fill.c's kernel, copied; the winner there is the grid
 * that covers the range.
 *   gcc -O2 -I/usr/local/cuda/include bench/ref/cuda_fill_probe.c \
 *       -L/usr/local/cuda/lib64/stubs -lcuda -o cuda_fill_probe && ./cuda_fill_probe [bytes] */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const char ptxA[] = ".version 7.0\n"
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
static const char ptxB[] =
    ".version 7.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry fill4(.param .u64 dst, .param .u64 count, .param .u32 w0, .param .u32 w1, "
    ".param .u32 w2, .param .u32 w3)\n"
    "{\n .reg .pred p; .reg .b32 r<9>; .reg .b64 rd<12>;\n"
    " ld.param.u64 rd1, [dst]; ld.param.u64 rd2, [count];\n"
    " ld.param.u32 r1, [w0]; ld.param.u32 r2, [w1]; ld.param.u32 r3, [w2]; ld.param.u32 r4, [w3];\n"
    " cvta.to.global.u64 rd1, rd1;\n"
    " mov.u32 r5, %ctaid.x; mov.u32 r6, %ntid.x; mov.u32 r7, %tid.x;\n"
    " mul.wide.u32 rd3, r5, r6; shl.b64 rd3, rd3, 2; cvt.u64.u32 rd4, r7; add.s64 rd3, rd3, rd4;\n"
    " cvt.u64.u32 rd5, r6;\n"
    " setp.ge.u64 p, rd3, rd2; @p bra DONE; shl.b64 rd6, rd3, 4; add.s64 rd7, rd1, rd6; "
    "st.global.v4.u32 [rd7], {r1,r2,r3,r4};\n"
    " add.s64 rd3, rd3, rd5; setp.ge.u64 p, rd3, rd2; @p bra DONE; shl.b64 rd6, rd3, 4; add.s64 "
    "rd7, rd1, rd6; st.global.v4.u32 [rd7], {r1,r2,r3,r4};\n"
    " add.s64 rd3, rd3, rd5; setp.ge.u64 p, rd3, rd2; @p bra DONE; shl.b64 rd6, rd3, 4; add.s64 "
    "rd7, rd1, rd6; st.global.v4.u32 [rd7], {r1,r2,r3,r4};\n"
    " add.s64 rd3, rd3, rd5; setp.ge.u64 p, rd3, rd2; @p bra DONE; shl.b64 rd6, rd3, 4; add.s64 "
    "rd7, rd1, rd6; st.global.v4.u32 [rd7], {r1,r2,r3,r4};\n"
    "DONE:\n ret;\n}\n";
#define CK(x)                          \
    do {                               \
        CUresult r_ = (x);             \
        if (r_) {                      \
            const char *s;             \
            cuGetErrorString(r_, &s);  \
            printf("%s: %s\n", #x, s); \
            exit(1);                   \
        }                              \
    } while (0)
static int cmpf(const void *a, const void *b) {
    float x = *(float *)a, y = *(float *)b;
    return x < y ? -1 : x > y;
}
int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? strtoull(argv[1], 0, 0) : (size_t)1 << 28;
    CUdevice d;
    CUcontext c;
    CUmodule ma, mb;
    CUfunction fa, fb;
    CUstream s;
    CK(cuInit(0));
    CK(cuDeviceGet(&d, 0));
    CK(cuDevicePrimaryCtxRetain(&c, d));
    CK(cuCtxSetCurrent(c));
    CK(cuModuleLoadData(&ma, ptxA));
    CK(cuModuleGetFunction(&fa, ma, "kiln_fill16"));
    CK(cuModuleLoadData(&mb, ptxB));
    CK(cuModuleGetFunction(&fb, mb, "fill4"));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr p;
    CK(cuMemAlloc(&p, bytes));
    int sms;
    cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
    CUevent e0, e1;
    cuEventCreate(&e0, 0);
    cuEventCreate(&e1, 0);
    unsigned long long cnt = bytes / 16;
    unsigned w[4] = { 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000 };
    void *par[] = { &p, &cnt, &w[0], &w[1], &w[2], &w[3] };
    const char *names[] = { "memsetD32",         "gridstride sm*8 x256",  "gridstride sm*16",
                            "gridstride sm*32",  "gridstride sm*4 x512",  "4 vec/thread x256",
                            "4 vec/thread x128", "1 vec/thread full grid" };
    for (int v = 0; v < 8; v++) {
        float t[15];
        for (int k = 0; k < 15; k++) {
            cuEventRecord(e0, s);
            unsigned blk = 256, grid;
            switch (v) {
            case 0:
                CK(cuMemsetD32Async(p, w[0], bytes / 4, s));
                break;
            case 1:
                grid = sms * 8;
                CK(cuLaunchKernel(fa, grid, 1, 1, blk, 1, 1, 0, s, par, 0));
                break;
            case 2:
                grid = sms * 16;
                CK(cuLaunchKernel(fa, grid, 1, 1, blk, 1, 1, 0, s, par, 0));
                break;
            case 3:
                grid = sms * 32;
                CK(cuLaunchKernel(fa, grid, 1, 1, blk, 1, 1, 0, s, par, 0));
                break;
            case 4:
                blk = 512;
                grid = sms * 4;
                CK(cuLaunchKernel(fa, grid, 1, 1, blk, 1, 1, 0, s, par, 0));
                break;
            case 5:
                grid = (unsigned)((cnt + 1023) / 1024);
                CK(cuLaunchKernel(fb, grid, 1, 1, blk, 1, 1, 0, s, par, 0));
                break;
            case 6:
                blk = 128;
                grid = (unsigned)((cnt + 511) / 512);
                CK(cuLaunchKernel(fb, grid, 1, 1, blk, 1, 1, 0, s, par, 0));
                break;
            case 7:
                grid = (unsigned)((cnt + 255) / 256);
                CK(cuLaunchKernel(fa, grid, 1, 1, blk, 1, 1, 0, s, par, 0));
                break;
            }
            cuEventRecord(e1, s);
            cuEventSynchronize(e1);
            cuEventElapsedTime(&t[k], e0, e1);
        }
        qsort(t + 2, 13, sizeof(float), cmpf);
        printf("%-30s %8.4f ms  %7.1f GB/s\n", names[v], t[8], bytes / (t[8] * 1e6));
    }
    float *h = malloc(bytes);
    CK(cuMemcpyDtoH(h, p, bytes));
    size_t bad = 0;
    for (size_t i = 0; i < bytes / 4; i++)
        bad += h[i] != 1.0f;
    printf("bad %zu\n", bad);
    return 0;
}
