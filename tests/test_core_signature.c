/* The kernel signature parser, tested directly on many spellings. */
#include <string.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"

static kiln__sig_list parse(const char *src) {
    kiln__sig_list l;
    CHECK_OK(kiln__sig_parse(src, &l));
    return l;
}

static void expect_param(const kiln__sig *s, size_t i, kiln_arg_kind kind, kiln_dtype dtype,
                         const char *name) {
    if (!s || i >= s->num_params) {
        CHECK_MSG(0, "parameter %zu missing", i);
        return;
    }
    const kiln__param *p = &s->params[i];
    CHECK_MSG(p->kind == kind, "%s param %zu kind %d want %d (type '%s')", s->name, i, p->kind,
              kind, p->type);
    if (kind == KILN_ARG_SCALAR)
        CHECK_MSG(p->dtype == dtype, "%s param %zu dtype %d want %d (type '%s')", s->name, i,
                  p->dtype, dtype, p->type);
    CHECK_MSG(strcmp(p->name, name) == 0, "%s param %zu name '%s' want '%s'", s->name, i, p->name,
              name);
}

static void test_opencl(void) {
    kiln__sig_list l =
        parse("// a comment with __kernel void fake(int x)\n"
              "/* __kernel void fake2(float y) */\n"
              "#define N 4\n"
              "#define K(x) __kernel void macro_made(int x) \\\n   { }\n"
              "__kernel void vadd(__global const float *a, __global const float *b,\n"
              "                   __global float *restrict c, const int n) {\n"
              "    int i = get_global_id(0); if (i < n) c[i] = a[i] + b[i];\n"
              "    const char *s = \"__kernel void in_string(int z)\";\n"
              "}\n"
              "kernel void scal(global double* x, double alpha, uint n, ulong m, long k, uchar u,\n"
              "                 char c, short s, ushort us, half h, local float *tmp) {}\n"
              "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
              "void attr(__constant int *lut, unsigned int n, unsigned long m) {}\n"
              "__kernel void noargs(void) {}\n"
              "__kernel void empty() {}\n"
              "__kernel void proto(__global int *p);\n"
              "__kernel void proto(__global int *p) { p[0] = 1; }\n"
              "inline float helper(float x) { return x; }\n"
              "__kernel void vec(__global float4 *v, float4 s, __read_only image2d_t img) {}\n");
    CHECK_MSG(l.count == 7, "found %zu kernels", l.count);
    CHECK(kiln__sig_find(&l, "fake") == NULL);
    CHECK(kiln__sig_find(&l, "fake2") == NULL);
    CHECK(kiln__sig_find(&l, "in_string") == NULL);
    CHECK(kiln__sig_find(&l, "macro_made") == NULL);
    CHECK(kiln__sig_find(&l, "helper") == NULL);

    const kiln__sig *s = kiln__sig_find(&l, "vadd");
    CHECK(s && s->num_params == 4);
    expect_param(s, 0, KILN_ARG_BUFFER, 0, "a");
    expect_param(s, 1, KILN_ARG_BUFFER, 0, "b");
    expect_param(s, 2, KILN_ARG_BUFFER, 0, "c");
    expect_param(s, 3, KILN_ARG_SCALAR, KILN_INT32, "n");

    s = kiln__sig_find(&l, "scal");
    CHECK(s && s->num_params == 11);
    expect_param(s, 0, KILN_ARG_BUFFER, 0, "x");
    expect_param(s, 1, KILN_ARG_SCALAR, KILN_FLOAT64, "alpha");
    expect_param(s, 2, KILN_ARG_SCALAR, KILN_UINT32, "n");
    expect_param(s, 3, KILN_ARG_SCALAR, KILN_UINT64, "m");
    expect_param(s, 4, KILN_ARG_SCALAR, KILN_INT64, "k");
    expect_param(s, 5, KILN_ARG_SCALAR, KILN_UINT8, "u");
    expect_param(s, 6, KILN_ARG_SCALAR, KILN_INT8, "c");
    expect_param(s, 7, KILN_ARG_SCALAR, KILN_INT16, "s");
    expect_param(s, 8, KILN_ARG_SCALAR, KILN_UINT16, "us");
    expect_param(s, 9, KILN_ARG_SCALAR, KILN_FLOAT16, "h");
    expect_param(s, 10, KILN_ARG_LOCAL, 0, "tmp");

    s = kiln__sig_find(&l, "attr");
    CHECK(s && s->num_params == 3);
    expect_param(s, 0, KILN_ARG_BUFFER, 0, "lut");
    expect_param(s, 1, KILN_ARG_SCALAR, KILN_UINT32, "n");
    expect_param(s, 2, KILN_ARG_SCALAR, KILN_UINT64, "m");

    s = kiln__sig_find(&l, "noargs");
    CHECK(s && s->num_params == 0);
    s = kiln__sig_find(&l, "empty");
    CHECK(s && s->num_params == 0);
    s = kiln__sig_find(&l, "proto");
    CHECK(s && s->num_params == 1);
    expect_param(s, 0, KILN_ARG_BUFFER, 0, "p");

    s = kiln__sig_find(&l, "vec");
    CHECK(s && s->num_params == 3);
    expect_param(s, 0, KILN_ARG_BUFFER, 0, "v");
    expect_param(s, 1, KILN_ARG_SCALAR, 0, "s"); /* not a kiln dtype: any scalar */
    expect_param(s, 2, KILN_ARG_SCALAR, 0, "img");
    kiln__sig_list_free(&l);
}

static void test_cuda(void) {
    kiln__sig_list l = parse(
        "#include <cuda_fp16.h>\n"
        "extern \"C\" __global__ void saxpy(float a, const float* __restrict__ x,\n"
        "    float *__restrict__ y, int64_t n) {\n"
        "  size_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i];\n"
        "}\n"
        "extern \"C\" __global__ void __launch_bounds__(256) lb(unsigned long long n, uint32_t m,\n"
        "    int8_t a, uint8_t b, int16_t c, uint16_t d, __half h, double *out, long long q) {}\n"
        "__device__ float helper(float x) { return x; }\n"
        "static __global__ void st(int *p, const unsigned n) {}\n");
    CHECK_MSG(l.count == 3, "found %zu kernels", l.count);
    const kiln__sig *s = kiln__sig_find(&l, "saxpy");
    CHECK(s && s->num_params == 4);
    expect_param(s, 0, KILN_ARG_SCALAR, KILN_FLOAT32, "a");
    expect_param(s, 1, KILN_ARG_BUFFER, 0, "x");
    expect_param(s, 2, KILN_ARG_BUFFER, 0, "y");
    expect_param(s, 3, KILN_ARG_SCALAR, KILN_INT64, "n");
    s = kiln__sig_find(&l, "lb");
    CHECK(s && s->num_params == 9);
    expect_param(s, 0, KILN_ARG_SCALAR, KILN_UINT64, "n");
    expect_param(s, 1, KILN_ARG_SCALAR, KILN_UINT32, "m");
    expect_param(s, 2, KILN_ARG_SCALAR, KILN_INT8, "a");
    expect_param(s, 3, KILN_ARG_SCALAR, KILN_UINT8, "b");
    expect_param(s, 4, KILN_ARG_SCALAR, KILN_INT16, "c");
    expect_param(s, 5, KILN_ARG_SCALAR, KILN_UINT16, "d");
    expect_param(s, 6, KILN_ARG_SCALAR, KILN_FLOAT16, "h");
    expect_param(s, 7, KILN_ARG_BUFFER, 0, "out");
    expect_param(s, 8, KILN_ARG_SCALAR, KILN_INT64, "q");
    s = kiln__sig_find(&l, "st");
    CHECK(s && s->num_params == 2);
    expect_param(s, 0, KILN_ARG_BUFFER, 0, "p");
    expect_param(s, 1, KILN_ARG_SCALAR, KILN_UINT32, "n");
    CHECK(kiln__sig_find(&l, "helper") == NULL);
    kiln__sig_list_free(&l);
}

static void test_dialect(void) {
    kiln__sig_list l = parse("KILN_FUNC float sq(float x) { return x * x; }\n"
                             "KILN_KERNEL void\n"
                             "  map2d(\n"
                             "    KILN_GLOBAL const float * KILN_RESTRICT in,   // input\n"
                             "    KILN_GLOBAL float * KILN_RESTRICT out, /* output */\n"
                             "    const uint width,\n"
                             "    const uint height,\n"
                             "    KILN_CONSTANT float *coef,\n"
                             "    kiln_int64 big, kiln_uint64 ubig, size_t sz,\n"
                             "    KILN_LOCAL float *scratch)\n"
                             "{\n"
                             "  KILN_LOCAL float tile[256];\n"
                             "  size_t x = kiln_global_id(0), y = kiln_global_id(1);\n"
                             "}\n"
                             "KILN_KERNEL void arr(KILN_GLOBAL int a[], int b) {}\n"
                             "KILN_KERNEL void unnamed(KILN_GLOBAL int *, int) {}\n");
    CHECK_MSG(l.count == 3, "found %zu kernels", l.count);
    const kiln__sig *s = kiln__sig_find(&l, "map2d");
    CHECK(s && s->num_params == 9);
    expect_param(s, 0, KILN_ARG_BUFFER, 0, "in");
    expect_param(s, 1, KILN_ARG_BUFFER, 0, "out");
    expect_param(s, 2, KILN_ARG_SCALAR, KILN_UINT32, "width");
    expect_param(s, 3, KILN_ARG_SCALAR, KILN_UINT32, "height");
    expect_param(s, 4, KILN_ARG_BUFFER, 0, "coef");
    expect_param(s, 5, KILN_ARG_SCALAR, KILN_INT64, "big");
    expect_param(s, 6, KILN_ARG_SCALAR, KILN_UINT64, "ubig");
    expect_param(s, 7, KILN_ARG_SCALAR, KILN_UINT64, "sz");
    expect_param(s, 8, KILN_ARG_LOCAL, 0, "scratch");
    if (s && s->num_params > 2)
        CHECK_MSG(strcmp(s->params[2].type, "uint") == 0, "type '%s'", s->params[2].type);
    if (s)
        CHECK_MSG(strcmp(s->params[0].type, "float*") == 0, "type '%s'", s->params[0].type);
    s = kiln__sig_find(&l, "arr");
    CHECK(s && s->num_params == 2);
    expect_param(s, 0, KILN_ARG_BUFFER, 0, "a");
    expect_param(s, 1, KILN_ARG_SCALAR, KILN_INT32, "b");
    s = kiln__sig_find(&l, "unnamed");
    CHECK(s && s->num_params == 2);
    expect_param(s, 0, KILN_ARG_BUFFER, 0, "");
    expect_param(s, 1, KILN_ARG_SCALAR, KILN_INT32, "");
    kiln__sig_list_free(&l);
}

static void test_odd_inputs(void) {
    /* Nothing to find, or broken text: never a crash. */
    const char *srcs[] = { "",
                           "__kernel",
                           "__kernel void",
                           "__kernel void f(",
                           "__kernel void f(int",
                           "/* unterminated",
                           "\"unterminated",
                           "#define X \\",
                           "kernel = 3;",
                           "int kernel(int x) { return x; }",
                           "__kernel int notvoid(int x) {}",
                           "(((((",
                           ")))))",
                           "__kernel void g(int a,, int b) {}" };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        kiln__sig_list l;
        CHECK_OK(kiln__sig_parse(srcs[i], &l));
        CHECK_MSG(l.count <= 1, "source %zu: %zu kernels", i, l.count);
        kiln__sig_list_free(&l);
    }
    kiln__sig_list l;
    CHECK_OK(kiln__sig_parse(NULL, &l));
    CHECK(l.count == 0);
    kiln__sig_list_free(&l);
    kiln__sig_list_free(NULL);

    CHECK(kiln__sig_dtype("int") == KILN_INT32);
    CHECK(kiln__sig_dtype("unsigned int") == KILN_UINT32);
    CHECK(kiln__sig_dtype("unsigned") == KILN_UINT32);
    CHECK(kiln__sig_dtype("unsigned long long") == KILN_UINT64);
    CHECK(kiln__sig_dtype("float2") == 0);
    CHECK(kiln__sig_dtype("") == 0);

    /* Many kernels: the list grows. */
    char big[64 * 64];
    size_t len = 0;
    for (int i = 0; i < 40; i++)
        len +=
            (size_t)snprintf(big + len, sizeof big - len, "__kernel void k%d(int a%d) {}\n", i, i);
    l = parse(big);
    CHECK(l.count == 40);
    const kiln__sig *s = kiln__sig_find(&l, "k39");
    CHECK(s && s->num_params == 1);
    expect_param(s, 0, KILN_ARG_SCALAR, KILN_INT32, "a39");
    kiln__sig_list_free(&l);
}

static void test_dtypes(void) {
    static const struct {
        kiln_dtype d;
        size_t size;
        const char *name;
    } want[] = { { KILN_INT8, 1, "char" },     { KILN_UINT8, 1, "uchar" },
                 { KILN_INT16, 2, "short" },   { KILN_UINT16, 2, "ushort" },
                 { KILN_INT32, 4, "int" },     { KILN_UINT32, 4, "uint" },
                 { KILN_INT64, 8, "long" },    { KILN_UINT64, 8, "ulong" },
                 { KILN_FLOAT16, 2, "half" },  { KILN_FLOAT32, 4, "float" },
                 { KILN_FLOAT64, 8, "double" } };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK(kiln_dtype_size(want[i].d) == want[i].size);
        CHECK(strcmp(kiln_dtype_name(want[i].d), want[i].name) == 0);
        /* the name a kernel would use maps back to the dtype */
        CHECK(kiln__sig_dtype(kiln_dtype_name(want[i].d)) == want[i].d);
    }
    CHECK(kiln_dtype_size((kiln_dtype)0) == 0);
    CHECK(kiln_dtype_size((kiln_dtype)99) == 0);
    CHECK(strcmp(kiln_dtype_name((kiln_dtype)99), "?") == 0);
    CHECK(strcmp(kiln_version(), KILN_VERSION_STRING) == 0);
}

int main(void) {
    KT_RUN_HOST_STEPS(test_opencl, test_cuda, test_dialect, test_odd_inputs, test_dtypes);
    return kt_report();
}
