// Reference point for the int32 inclusive scan (issue 4): CUB's
// DeviceScan::InclusiveSum and a cudaMemcpy device-to-device copy of the
// same bytes, timed the way bench_algo times kiln (cudaEvents, median of 11
// after 2 warm-ups). Not part of the build: compiled by hand on a GPU
// machine (scripts/gpu-scan-sweep.sh does it) to see what the hardware
// allows. Prints `CUB scan_int32 <ms> <percent of copy>`.
//   nvcc -O3 -arch=native -o cub_scan bench/ref/cub_scan.cu && ./cub_scan [n]
#include <cub/device/device_scan.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                             \
    do {                                                                  \
        cudaError_t e_ = (x);                                             \
        if (e_ != cudaSuccess) {                                          \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
            return 1;                                                     \
        }                                                                 \
    } while (0)

int main(int argc, char **argv) {
    size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (size_t)1 << 28;
    std::vector<int> h(n), r(n);
    for (size_t i = 0; i < n; i++)
        h[i] = (int)(i % 7);
    int *x, *y;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&y, n * 4));
    CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    size_t tb = 0;
    CK(cub::DeviceScan::InclusiveSum(nullptr, tb, x, y, (int)n));
    void *tmp;
    CK(cudaMalloc(&tmp, tb));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    auto time = [&](auto f) {
        std::vector<float> t;
        for (int k = 0; k < 13; k++) {
            cudaMemset(y, 0xff, n * 4); // also evicts x from L2
            cudaEventRecord(a);
            f();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            if (k >= 2)
                t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };
    float tc = time([&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); });
    float ts = time([&] { cub::DeviceScan::InclusiveSum(tmp, tb, x, y, (int)n); });
    CK(cudaMemcpy(r.data(), y, n * 4, cudaMemcpyDeviceToHost));
    unsigned acc = 0;
    for (size_t i = 0; i < n; i++) {
        acc += (unsigned)h[i];
        if (r[i] != (int)acc) {
            std::fprintf(stderr, "CUB result wrong at %zu\n", i);
            return 1;
        }
    }
    std::printf("CUB copy %.4f ms (%.0f GB/s)\n", tc, 8.0 * n / tc * 1e-6);
    std::printf("CUB scan_int32 %.4f ms %.1f%% of copy (verified)\n", ts, 100.0 * tc / ts);
    return 0;
}
