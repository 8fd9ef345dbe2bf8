// What bounds the onesweep sort's histogram (issue 10): the same loop of
// loads and shared-memory adds as algo_sort_onesweep.cu's os_hist, alone,
// on 2^28 uint32 keys (4 byte digits), in variants: loads only, 1 / 2 / 4
// digits a key in one row of 256 counters a digit (random banks), 16 lane
// columns of 16-bit halves (kiln's CUDA layout), 16 keys a thread, CUB's
// shape (128 threads x 16 keys), uint4 loads, warp-private rows, larger
// blocks; each on a grid of 1 and of 4 waves (the occupancy query).
// Timed with cudaEvents, median of 11 after a warm-up; each checks its
// digit-0 total. Not part of the build: compiled by hand on a GPU machine.
//   nvcc -O3 -arch=native -o sort_hist_loop bench/ref/sort_hist_loop.cu
//   ./sort_hist_loop [n]
// H200, 2026-11-29: loads only 0.246 ms, 1 digit 0.252, 2 digits 0.279,
// 4 digits 0.458-0.464 (every shape within 0.455-0.481 ms), columns 0.439
// / 0.416 (4 waves); CUB's own histogram kernel 0.456 (ncu).
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
typedef unsigned int uint;

template <int T, int IT, int MODE, int PASSES>
__global__ void __launch_bounds__(T) hist(const uint *keys, long n, uint *out) {
    // MODE 0: loads only; 1: one row of 256 a pass (random banks); 2: 16 columns of 16-bit halves;
    // 3: uint4 loads + row layout; 4: row layout, warp-private rows (T/32 copies)
    __shared__ uint sh[MODE == 2   ? PASSES * 128 * 16
                       : MODE == 4 ? (T / 32) * PASSES * 256
                                   : PASSES * 256];
    const int words = MODE == 2   ? PASSES * 128 * 16
                      : MODE == 4 ? (T / 32) * PASSES * 256
                                  : PASSES * 256;
    for (int i = threadIdx.x; i < words; i += T)
        sh[i] = 0;
    __syncthreads();
    const int col = threadIdx.x & 15, warp = threadIdx.x >> 5;
    uint acc = 0;
    if (MODE == 3) {
        const long step = (long)T * IT;
        for (long b = (long)blockIdx.x * step; b + step <= n; b += (long)gridDim.x * step) {
            uint4 v[IT / 4];
#pragma unroll
            for (int k = 0; k < IT / 4; k++)
                v[k] = ((const uint4 *)(keys + b))[k * T + threadIdx.x];
#pragma unroll
            for (int k = 0; k < IT / 4; k++) {
                uint u[4] = { v[k].x, v[k].y, v[k].z, v[k].w };
#pragma unroll
                for (int j = 0; j < 4; j++)
#pragma unroll
                    for (int p = 0; p < PASSES; p++)
                        atomicAdd(&sh[p * 256 + ((u[j] >> (8 * p)) & 255u)], 1u);
            }
        }
    } else {
        const long step = (long)T * IT;
        for (long b = (long)blockIdx.x * step; b + step <= n; b += (long)gridDim.x * step) {
            uint u[IT];
#pragma unroll
            for (int k = 0; k < IT; k++)
                u[k] = keys[b + k * T + threadIdx.x];
#pragma unroll
            for (int k = 0; k < IT; k++)
#pragma unroll
                for (int p = 0; p < PASSES; p++) {
                    uint d = (u[k] >> (8 * p)) & 255u;
                    if (MODE == 0)
                        acc += d;
                    else if (MODE == 1)
                        atomicAdd(&sh[p * 256 + d], 1u);
                    else if (MODE == 2)
                        atomicAdd(&sh[p * 2048 + (d >> 1) * 16 + col], 1u << (16 * (d & 1)));
                    else
                        atomicAdd(&sh[(warp * PASSES + p) * 256 + d], 1u);
                }
        }
    }
    __syncthreads();
    if (MODE == 0 && acc == 0x12345678)
        out[0] = acc; /* keeps the loads */
    for (int i = threadIdx.x; MODE != 0 && i < PASSES * 256; i += T) {
        uint s = 0;
        if (MODE == 2) {
            for (int c = 0; c < 16; c++)
                s += (sh[(i >> 8) * 2048 + ((i & 255) >> 1) * 16 + c] >> (16 * (i & 1))) & 0xffff;
        } else if (MODE == 4) {
            for (int w = 0; w < T / 32; w++)
                s += sh[(w * PASSES + (i >> 8)) * 256 + (i & 255)];
        } else
            s = sh[i];
        if (s)
            atomicAdd(&out[i], s);
    }
}

template <int T, int IT, int MODE, int PASSES>
void run(const char *name, const uint *d, long n, uint *out, int sms) {
    int occ = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, hist<T, IT, MODE, PASSES>, T, 0);
    for (int mult = 1; mult <= 4; mult *= 4) {
        int grid = occ * sms * mult;
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        std::vector<float> ts;
        for (int r = 0; r < 12; r++) {
            cudaMemsetAsync(out, 0, 8 * 256 * 4);
            cudaEventRecord(a);
            hist<T, IT, MODE, PASSES><<<grid, T>>>(d, n, out);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            if (r)
                ts.push_back(ms);
        }
        std::sort(ts.begin(), ts.end());
        std::vector<uint> h(8 * 256);
        cudaMemcpy(h.data(), out, h.size() * 4, cudaMemcpyDeviceToHost);
        unsigned long long tot = 0;
        for (int i = 0; i < 256; i++)
            tot += h[i];
        printf("%-34s T=%4d IT=%2d passes=%d occ=%2d grid=%5d  %.3f ms  %s\n", name, T, IT, PASSES,
               occ, grid, ts[ts.size() / 2],
               MODE == 0                      ? ""
               : tot == (unsigned long long)n ? "ok"
                                              : "WRONG");
    }
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : (1L << 28);
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    std::vector<uint> h(n);
    uint x = 12345;
    for (long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        h[i] = x;
    }
    uint *d, *out;
    cudaMalloc(&d, n * 4);
    cudaMalloc(&out, 8 * 256 * 4);
    cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice);
    run<256, 8, 0, 4>("loads only", d, n, out, sms);
    run<256, 8, 1, 1>("row, 1 pass", d, n, out, sms);
    run<256, 8, 1, 2>("row, 2 passes", d, n, out, sms);
    run<256, 8, 1, 4>("row (kiln before)", d, n, out, sms);
    run<256, 8, 2, 4>("16 cols 16-bit (kiln now)", d, n, out, sms);
    run<256, 16, 1, 4>("row IT16", d, n, out, sms);
    run<128, 16, 1, 4>("row T128 IT16 (CUB-like)", d, n, out, sms);
    run<256, 16, 3, 4>("row uint4 IT16", d, n, out, sms);
    run<256, 8, 4, 4>("warp-private rows", d, n, out, sms);
    run<512, 8, 1, 4>("row T512", d, n, out, sms);
    run<1024, 8, 1, 4>("row T1024", d, n, out, sms);
    return 0;
}
