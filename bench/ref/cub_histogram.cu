// Reference for the histogram (issue 48): CUB's DeviceHistogram::
// HistogramEven of n float32 into 256 even bins over [0, 1) (levels 0 ..
// 1 in 257 steps), uniform input and skewed input (90% of the values in
// bin 128, as bench_toolkit_b's hist_skewed), the counts left on the device,
// beside a cudaMemcpy of the samples' bytes. Timing: bench/ref/
// cub_common.cuh. The counts are verified against a host histogram.
// Prints `CUB hist_uniform <n> <ms> ms ok|WRONG` and `CUB hist_skewed ...`.
//   nvcc -O3 -arch=native -o cub_histogram bench/ref/cub_histogram.cu && ./cub_histogram [n ...]
#include <cub/device/device_histogram.cuh>

#include "cub_common.cuh"

#define BINS 256

static int one(size_t n) {
    std::vector<float> hu(n), hs(n);
    std::vector<int> want_u(BINS, 0), want_s(BINS, 0), got(BINS);
    for (size_t i = 0; i < n; i++) {
        hu[i] = ref_uniform();
        hs[i] = i % 10 ? 0.5009765625f : hu[i];
        // bin of x in [0, 1): floor(x * 256), exact for 24-bit fractions
        want_u[(int)(hu[i] * BINS)]++;
        want_s[(int)(hs[i] * BINS)]++;
    }
    float *u, *s, *y;
    int *hist;
    CK(cudaMalloc(&u, n * 4));
    CK(cudaMalloc(&s, n * 4));
    CK(cudaMalloc(&y, n * 4));
    CK(cudaMalloc(&hist, BINS * sizeof(int)));
    CK(cudaMemcpy(u, hu.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(s, hs.data(), n * 4, cudaMemcpyHostToDevice));
    size_t tb = 0;
    CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, u, hist, BINS + 1, 0.0f, 1.0f, (int)n));
    void *tmp;
    CK(cudaMalloc(&tmp, tb));
    float tc = ref_time([&] { cudaMemset(y, 0, n * 4); },
                        [&] { cudaMemcpyAsync(y, u, n * 4, cudaMemcpyDeviceToDevice); });
    int ok = 1;
    const char *names[2] = { "hist_uniform", "hist_skewed" };
    float *in[2] = { u, s };
    std::vector<int> *want[2] = { &want_u, &want_s };
    float t[2];
    for (int k = 0; k < 2; k++) {
        t[k] = ref_time(
            [&] {
                cudaMemset(y, 0, n * 4);
                cudaMemset(hist, 0xff, BINS * sizeof(int));
            },
            [&] {
                cub::DeviceHistogram::HistogramEven(tmp, tb, in[k], hist, BINS + 1, 0.0f, 1.0f,
                                                    (int)n);
            });
        CK(cudaMemcpy(got.data(), hist, BINS * sizeof(int), cudaMemcpyDeviceToHost));
        int good = got == *want[k];
        if (!good)
            std::fprintf(stderr, "CUB %s: counts differ from the host's\n", names[k]);
        ok &= good;
        if (k == 0)
            std::printf("CUB copy_f32 %zu %.4f ms\n", n, tc);
        std::printf("CUB %s %zu %.4f ms %s\n", names[k], n, t[k], good ? "ok" : "WRONG");
    }
    std::fflush(stdout);
    cudaFree(u);
    cudaFree(s);
    cudaFree(y);
    cudaFree(hist);
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
