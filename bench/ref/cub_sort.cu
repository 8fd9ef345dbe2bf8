// Reference points for the radix sort (issue 10): CUB's
// DeviceRadixSort::SortKeys (int32 keys, 2^28), SortPairs of int32 keys
// with int64 indices (argsort's output), SortKeys of 2^27 int64 keys, and
// a cudaMemcpy device-to-device copy of the int32 keys, timed the way
// bench_sort times kiln (cudaEvents, median of 11 after 2 warm-ups, the
// input restored before each run, outside the timing). Not part of the
// build: compiled by hand on a GPU machine. Prints `CUB <case> <ms>`.
//   nvcc -O3 -arch=native -o cub_sort bench/ref/cub_sort.cu && ./cub_sort [n]
#include <cub/device/device_radix_sort.cuh>
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
            return 1;                                                     \
        }                                                                 \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t next() {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

template <class F>
static float time_it(F f, cudaEvent_t a, cudaEvent_t b) {
    std::vector<float> t;
    for (int k = 0; k < 13; k++) {
        f(0); // restore the input (untimed)
        cudaEventRecord(a);
        f(1);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        if (k >= 2)
            t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (size_t)1 << 28;
    size_t n64 = n / 2;
    std::vector<int32_t> h(n);
    std::vector<int64_t> h64(n64);
    for (size_t i = 0; i < n; i++)
        h[i] = (int32_t)next();
    for (size_t i = 0; i < n64; i++)
        h64[i] = (int64_t)next();
    int32_t *k0, *k1, *k2;
    int64_t *v0, *v1, *q0, *q1, *q2;
    CK(cudaMalloc(&k0, n * 4));
    CK(cudaMalloc(&k1, n * 4));
    CK(cudaMalloc(&k2, n * 4));
    CK(cudaMalloc(&v0, n * 8));
    CK(cudaMalloc(&v1, n * 8));
    CK(cudaMalloc(&q0, n64 * 8));
    CK(cudaMalloc(&q1, n64 * 8));
    CK(cudaMalloc(&q2, n64 * 8));
    CK(cudaMemcpy(k0, h.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(q0, h64.data(), n64 * 8, cudaMemcpyHostToDevice));
    std::vector<int64_t> iota(n);
    for (size_t i = 0; i < n; i++)
        iota[i] = (int64_t)i;
    int64_t *vi;
    CK(cudaMalloc(&vi, n * 8));
    CK(cudaMemcpy(vi, iota.data(), n * 8, cudaMemcpyHostToDevice));
    size_t t1 = 0, t2 = 0, t3 = 0;
    CK(cub::DeviceRadixSort::SortKeys(nullptr, t1, k1, k2, (int)n));
    CK(cub::DeviceRadixSort::SortPairs(nullptr, t2, k1, k2, v0, v1, (int)n));
    CK(cub::DeviceRadixSort::SortKeys(nullptr, t3, q1, q2, (int)n64));
    size_t tb = std::max(t1, std::max(t2, t3));
    void *tmp;
    CK(cudaMalloc(&tmp, tb));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    float tc = time_it(
        [&](int run) {
            if (run)
                cudaMemcpyAsync(k2, k0, n * 4, cudaMemcpyDeviceToDevice);
            else
                cudaMemset(k2, 0, n * 4);
        },
        a, b);
    float tk = time_it(
        [&](int run) {
            if (run)
                cub::DeviceRadixSort::SortKeys(tmp, t1, k1, k2, (int)n);
            else
                cudaMemcpyAsync(k1, k0, n * 4, cudaMemcpyDeviceToDevice);
        },
        a, b);
    std::vector<int32_t> r(n);
    CK(cudaMemcpy(r.data(), k2, n * 4, cudaMemcpyDeviceToHost));
    std::vector<int32_t> s = h;
    std::sort(s.begin(), s.end());
    int ok = s == r;
    // argsort: the indices ride as int64 values (cupy/torch's output);
    // the iota is part of the work, as it is for them
    float ta = time_it(
        [&](int run) {
            if (run) {
                cudaMemcpyAsync(v0, vi, n * 8, cudaMemcpyDeviceToDevice);
                cub::DeviceRadixSort::SortPairs(tmp, t2, k1, k2, v0, v1, (int)n);
            } else {
                cudaMemcpyAsync(k1, k0, n * 4, cudaMemcpyDeviceToDevice);
            }
        },
        a, b);
    float t64 = time_it(
        [&](int run) {
            if (run)
                cub::DeviceRadixSort::SortKeys(tmp, t3, q1, q2, (int)n64);
            else
                cudaMemcpyAsync(q1, q0, n64 * 8, cudaMemcpyDeviceToDevice);
        },
        a, b);
    std::printf("CUB copy_int32 %zu %.3f ms\n", n, tc);
    std::printf("CUB sort_keys_int32 %zu %.3f ms %s\n", n, tk, ok ? "ok" : "WRONG");
    std::printf("CUB argsort_int32_idx64 %zu %.3f ms (SortPairs + iota copy)\n", n, ta);
    std::printf("CUB sort_keys_int64 %zu %.3f ms\n", n64, t64);
    return ok ? 0 : 1;
}
