// Reference for copy_if (issue 48): CUB's DeviceSelect::If of float32
// x > 0.5 (uniform x in [0, 1): half kept, as bench_select's copy_if_f32)
// and DeviceSelect::Flagged over the same x with a precomputed uint8 flag
// array (x > 0.5; the flags are an input, not timed), the count left on
// the device, beside a cudaMemcpy of x's bytes. Timing: bench/ref/
// cub_common.cuh. Both results are verified on the host (count and items).
// Prints `CUB copy_if_f32 <n> <ms> ms ok|WRONG`,
// `CUB select_flagged_f32 ...` and `CUB copy_f32 ...` per size.
//   nvcc -O3 -arch=native -o cub_select bench/ref/cub_select.cu && ./cub_select [n ...]
#include <cub/device/device_select.cuh>

#include "cub_common.cuh"

struct Above {
    __host__ __device__ bool operator()(const float &x) const {
        return x > 0.5f;
    }
};

static int one(size_t n) {
    std::vector<float> h(n), r(n);
    std::vector<unsigned char> hf(n);
    std::vector<float> want;
    want.reserve(n / 2 + 1);
    for (size_t i = 0; i < n; i++) {
        h[i] = ref_uniform();
        hf[i] = h[i] > 0.5f;
        if (hf[i])
            want.push_back(h[i]);
    }
    float *x, *y;
    unsigned char *f;
    int *cnt;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&y, n * 4));
    CK(cudaMalloc(&f, n));
    CK(cudaMalloc(&cnt, sizeof(int)));
    CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(f, hf.data(), n, cudaMemcpyHostToDevice));
    size_t t1 = 0, t2 = 0;
    CK(cub::DeviceSelect::If(nullptr, t1, x, y, cnt, (int)n, Above()));
    CK(cub::DeviceSelect::Flagged(nullptr, t2, x, f, y, cnt, (int)n));
    size_t tb = std::max(t1, t2);
    void *tmp;
    CK(cudaMalloc(&tmp, tb));
    auto prep = [&] {
        cudaMemset(y, 0xff, n * 4);
        cudaMemset(cnt, 0xff, sizeof(int));
    };
    auto check = [&](const char *what) {
        int c = -1;
        CK(cudaMemcpy(&c, cnt, sizeof c, cudaMemcpyDeviceToHost));
        if ((size_t)c != want.size()) {
            std::fprintf(stderr, "CUB %s: count %d, not %zu\n", what, c, want.size());
            return 0;
        }
        CK(cudaMemcpy(r.data(), y, want.size() * 4, cudaMemcpyDeviceToHost));
        return (int)std::equal(want.begin(), want.end(), r.begin());
    };
    float tc = ref_time([&] { cudaMemset(y, 0, n * 4); },
                        [&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); });
    float ti = ref_time(prep, [&] { cub::DeviceSelect::If(tmp, t1, x, y, cnt, (int)n, Above()); });
    int ok_i = check("DeviceSelect::If");
    float tf = ref_time(prep, [&] { cub::DeviceSelect::Flagged(tmp, t2, x, f, y, cnt, (int)n); });
    int ok_f = check("DeviceSelect::Flagged");
    std::printf("CUB copy_f32 %zu %.4f ms\n", n, tc);
    std::printf("CUB copy_if_f32 %zu %.4f ms %s\n", n, ti, ok_i ? "ok" : "WRONG");
    std::printf("CUB select_flagged_f32 %zu %.4f ms %s\n", n, tf, ok_f ? "ok" : "WRONG");
    std::fflush(stdout);
    cudaFree(x);
    cudaFree(y);
    cudaFree(f);
    cudaFree(cnt);
    cudaFree(tmp);
    return ok_i && ok_f;
}

int main(int argc, char **argv) {
    ref_device_line();
    int ok = 1;
    for (size_t n : ref_sizes(argc, argv))
        ok &= one(n);
    return ok ? 0 : 1;
}
