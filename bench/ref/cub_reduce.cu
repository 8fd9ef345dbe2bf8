// Reference for the float32 sum (issue 48): CUB's DeviceReduce::Sum of n
// float32 (bench_algo's data: (i % 1000) * 0.001), the result left on the
// device, beside a cudaMemcpy of the same bytes (the % of copy: a sum reads
// 4n bytes, the copy moves 8n). Timing: bench/ref/cub_common.cuh. The
// result is verified against a double host sum (relative 1e-4, as
// bench_algo). Prints `CUB sum_f32 <n> <ms> ms <pct>% of copy ok|WRONG`.
//   nvcc -O3 -arch=native -o cub_reduce bench/ref/cub_reduce.cu && ./cub_reduce [n ...]
#include <cub/device/device_reduce.cuh>
#include <cmath>

#include "cub_common.cuh"

static int one(size_t n) {
    std::vector<float> h(n);
    double ref = 0;
    for (size_t i = 0; i < n; i++) {
        h[i] = (float)(i % 1000) * 0.001f;
        ref += h[i];
    }
    float *x, *y, *r;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&y, n * 4));
    CK(cudaMalloc(&r, 4));
    CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    size_t tb = 0;
    CK(cub::DeviceReduce::Sum(nullptr, tb, x, r, (int)n));
    void *tmp;
    CK(cudaMalloc(&tmp, tb));
    // the memset of y (n floats) evicts x from L2 before each run
    float tc = ref_time([&] { cudaMemset(y, 0, n * 4); },
                        [&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); });
    float ts = ref_time(
        [&] {
            cudaMemset(y, 0, n * 4);
            cudaMemset(r, 0xff, 4);
        },
        [&] { cub::DeviceReduce::Sum(tmp, tb, x, r, (int)n); });
    float got = 0;
    CK(cudaMemcpy(&got, r, 4, cudaMemcpyDeviceToHost));
    int ok = std::fabs((double)got - ref) <= 1e-4 * std::fabs(ref) + 1e-3;
    if (!ok)
        std::fprintf(stderr, "CUB sum %g, host %g\n", (double)got, ref);
    std::printf("CUB copy_f32 %zu %.4f ms\n", n, tc);
    std::printf("CUB sum_f32 %zu %.4f ms %.1f%% of copy %s\n", n, ts, 100.0 * tc / 2 / ts,
                ok ? "ok" : "WRONG");
    std::fflush(stdout);
    cudaFree(x);
    cudaFree(y);
    cudaFree(r);
    cudaFree(tmp);
    return ok;
}

int main(int argc, char **argv) {
    ref_device_line();
    int ok = 1;
    for (size_t n : ref_sizes(argc, argv))
        ok &= one(n);
    return ok ? 0 : 1;
}
