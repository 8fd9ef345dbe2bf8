// Shared by bench/ref's CUB references: error check, a xorshift
// generator, and the timing every reference uses (cudaEvents around one
// call, median of 11 after 2 warm-ups, an untimed `prep` before each run
// that overwrites the output, which also evicts the inputs from L2, as
// bench_algo's scramble does). Not part of the CMake build: built with nvcc
// by scripts/gpu-bench-all.sh --build.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                             \
    do {                                                                  \
        cudaError_t e_ = (x);                                             \
        if (e_ != cudaSuccess) {                                          \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                 \
        }                                                                 \
    } while (0)

static uint64_t ref_rng = 0x9E3779B97F4A7C15ull;
static inline uint64_t ref_next() {
    ref_rng ^= ref_rng << 13, ref_rng ^= ref_rng >> 7, ref_rng ^= ref_rng << 17;
    return ref_rng;
}
// uniform float32 in [0, 1) from 24 random bits (exact in float32)
static inline float ref_uniform() {
    return (float)(ref_next() >> 40) / 16777216.0f;
}

template <class Prep, class Run>
static float ref_time(Prep prep, Run run) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int k = 0; k < 13; k++) {
        prep();
        CK(cudaEventRecord(a));
        run();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (k >= 2)
            t.push_back(ms);
    }
    CK(cudaGetLastError());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// sizes from the command line (default 2^28); each is one line per case
static std::vector<size_t> ref_sizes(int argc, char **argv) {
    std::vector<size_t> s;
    for (int i = 1; i < argc; i++)
        s.push_back((size_t)std::strtoull(argv[i], nullptr, 0));
    if (s.empty())
        s.push_back((size_t)1 << 28);
    return s;
}

static void ref_device_line() {
    cudaDeviceProp p;
    int d = 0;
    CK(cudaGetDevice(&d));
    CK(cudaGetDeviceProperties(&p, d));
    std::printf("device: %s (CUB %d.%d.%d)\n", p.name, CUB_VERSION / 100000,
                CUB_VERSION / 100 % 1000, CUB_VERSION % 100);
}
