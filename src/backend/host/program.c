/* Programs: the source (prelude included) is preprocessed by the system C
 * compiler, rewritten (rewrite.c), completed with the runtime
 * (prelude_host_rt.h) and the kernels' entry points, and compiled into a
 * shared object with -O3 -march=native -fopenmp, which is dlopen'd. The
 * binary (for kiln's disk cache) is the shared object's bytes. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/refcount.h"
#include "backend/host/host.h"
#include "backend/host/rewrite.h"
#include "base/embedded.h"
#include "base/fault.h"
#include "base/strbuf.h"

void kiln__host_prog_put(kiln__hprog *p) {
    if (p && kiln__ref_release(&p->refs)) {
        if (p->dl)
            dlclose(p->dl);
        free(p->binary);
        free(p);
    }
}

static int debug_build(void) {
    const char *d = getenv("KILN_HOST_DEBUG");
    return d && *d && strcmp(d, "0") != 0;
}

/* Whether this process runs under AddressSanitizer (its runtime's entry is
 * there): KILN_HOST_DEBUG builds then instrument the kernels too, so an
 * out-of-bounds access in one is reported like one in the caller's code. */
int kiln__host_process_asan(void) {
    return dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
}

static int make_dir(char *dir, size_t cap) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/kiln-host-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir))
        return 1;
    snprintf(dir, cap, "/tmp/kiln-host-XXXXXX");
    return mkdtemp(dir) != NULL;
}

static void remove_dir(const char *dir) {
    static const char *files[] = { "kernel.c", "kernel.i", "kernel_host.c", "kernel.so" };
    char p[600];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

static int write_file(const char *path, const void *data, size_t n) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return 0;
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return 0;
        }
        p += w;
        n -= (size_t)w;
    }
    return close(fd) == 0;
}

static char *read_file(const char *path, size_t *size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && st.st_size >= 0 && (buf = kiln__malloc((size_t)st.st_size + 1))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        buf[got] = 0;
        *size = got;
    }
    close(fd);
    return buf;
}

/* Runs the compiler in dir with argv (NULL-terminated); its output into
 * *log. Returns the exit status (-1: it could not start). */
static int run_in(const char *dir, char *const argv[], char **log) {
    char out[600];
    snprintf(out, sizeof out, "%s/log.txt", dir);
    int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    *log = NULL;
    if (fd < 0)
        return -1;
    int status = kiln__host_spawn(argv, fd, dir);
    close(fd);
    size_t n = 0;
    *log = read_file(out, &n);
    if (*log && n == 0) {
        free(*log);
        *log = NULL;
    }
    unlink(out);
    return status;
}

typedef struct {
    char *v[96];
    size_t n;
    char *owned[48];
    size_t nowned;
} argvec;

static void av_add(argvec *a, const char *s) {
    if (a->n + 1 < sizeof a->v / sizeof a->v[0])
        a->v[a->n++] = (char *)s;
    a->v[a->n] = NULL;
}

static void av_own(argvec *a, const char *s, size_t len) {
    if (a->nowned >= sizeof a->owned / sizeof a->owned[0])
        return;
    char *c = kiln__malloc(len + 1);
    if (!c)
        return;
    memcpy(c, s, len);
    c[len] = 0;
    a->owned[a->nowned++] = c;
    av_add(a, c);
}

static void av_free(argvec *a) {
    for (size_t i = 0; i < a->nowned; i++)
        free(a->owned[i]);
}

/* The compiler's flags for kiln's options: -D, -U and -I kept, OpenCL's
 * math options mapped, the rest (other -cl-*, -O<n>) dropped. */
static void user_options(argvec *a, const char *options, int *fast) {
    const char *p = options ? options : "";
    *fast = 0;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        const char *s = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n')
            p++;
        size_t len = (size_t)(p - s);
        if (len == 2 && (s[1] == 'D' || s[1] == 'U' || s[1] == 'I') && s[0] == '-') {
            av_own(a, s, len);
            while (*p == ' ' || *p == '\t')
                p++;
            const char *v = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '\n')
                p++;
            if (p > v)
                av_own(a, v, (size_t)(p - v));
        } else if (len > 2 && s[0] == '-' && (s[1] == 'D' || s[1] == 'U' || s[1] == 'I')) {
            av_own(a, s, len);
        } else if ((len == 21 && memcmp(s, "-cl-fast-relaxed-math", 21) == 0) ||
                   (len == 29 && memcmp(s, "-cl-unsafe-math-optimizations", 29) == 0)) {
            *fast = 1;
        } else if (len == 14 && memcmp(s, "-cl-mad-enable", 14) == 0) {
            av_add(a, "-ffp-contract=fast");
        } else if (!(len > 4 && memcmp(s, "-cl-", 4) == 0) &&
                   !(len >= 2 && memcmp(s, "-O", 2) == 0)) {
            av_own(a, s, len); /* anything else goes to the compiler, which may refuse it */
        }
    }
}

static void common_flags(argvec *a, int debug) {
    av_add(a, "-std=gnu11");
    av_add(a, "-fopenmp");
    if (debug) {
        av_add(a, "-g");
        av_add(a, "-O0");
        if (kiln__host_process_asan()) {
            av_add(a, "-fsanitize=address");
            av_add(a, "-fno-omit-frame-pointer");
        }
    } else if (getenv("KILN_HOST_CFLAGS") && *getenv("KILN_HOST_CFLAGS")) {
        /* instead of -O3 -march=native (words split at spaces) */
        const char *p = getenv("KILN_HOST_CFLAGS");
        while (*p) {
            while (*p == ' ')
                p++;
            const char *e = p;
            while (*e && *e != ' ')
                e++;
            if (e > p)
                av_own(a, p, (size_t)(e - p));
            p = e;
        }
    } else {
        av_add(a, "-O3");
        av_add(a, "-march=native");
    }
    av_add(a, "-fPIC");
    av_add(a, "-fno-strict-aliasing");
    av_add(a, "-ffp-contract=off");
    av_add(a, "-fno-math-errno");
    /* integers wrap as on GPUs (and NumPy); without it GCC 12's -O3
     * vectoriser gave wrong int8 and int16 sums (test_reduce) */
    av_add(a, "-fwrapv");
    av_add(a, "-Werror=implicit-function-declaration");
    /* no quoted lines: the compiler would quote kernel.c's prelude lines
     * (the #line markers renumber one file); core appends the user's */
    av_add(a, strstr(kiln__hcc.version, "clang") ? "-fno-caret-diagnostics"
                                                 : "-fno-diagnostics-show-caret");
}

static kiln__hprog *prog_open(const char *so_path, void *binary, size_t size, char *err,
                              size_t err_cap) {
    kiln__hprog *p = kiln__calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, err_cap, "out of memory");
        return NULL;
    }
    p->dl = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl) {
        const char *e = dlerror();
        snprintf(err, err_cap, "dlopen: %s", e ? e : "failed");
        free(p);
        return NULL;
    }
    /* The OpenMP runtime the object pulled in stays loaded when the
     * program is unloaded (its thread pools and their memory live on). */
    static const char *omp[] = { "libgomp.so.1", "libomp.so", "libomp.so.5" };
    for (size_t i = 0; i < sizeof omp / sizeof omp[0]; i++) {
        void *h = dlopen(omp[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        if (h)
            dlclose(h);
    }
    atomic_init(&p->refs, 1);
    p->binary = binary;
    p->binary_size = size;
    return p;
}

/* Writes source to dir/kernel.c; on failure removes dir. */
static kiln_status write_kernel_c(const char *dir, const char *source) {
    char path[600];
    snprintf(path, sizeof path, "%s/kernel.c", dir);
    /* A bare carriage return ends a line for OpenCL's and NVIDIA's
     * compilers and for core's line map (buildlog.c), not for GCC: make it
     * a newline (same length, same line numbers as core counts them). */
    size_t slen = strlen(source);
    char *text0 = kiln__malloc(slen + 1);
    if (!text0) {
        remove_dir(dir);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host build: out of memory");
    }
    for (size_t i = 0; i <= slen; i++)
        text0[i] = source[i] == '\r' && source[i + 1] != '\n' ? '\n' : source[i];
    int wrote0 = write_file(path, text0, slen);
    free(text0);
    if (!wrote0) {
        remove_dir(dir);
        return kiln__error_set(KILN_ERROR_BUILD, errno, "host build: cannot write %s", path);
    }
    return KILN_OK;
}

/* Runs the C compiler in dir: preprocess, kernel.c into kernel.i; else
 * kernel_host.c into kernel.so. *out gets its output (on a failure, the
 * log to report); a failure removes dir, unless KILN_HOST_DEBUG keeps it. */
static kiln_status run_cc(const char *dir, int debug, const char *options, int preprocess,
                          char **out) {
    argvec a = { 0 };
    int fast = 0;
    av_add(&a, kiln__hcc.path);
    if (preprocess)
        av_add(&a, "-E");
    common_flags(&a, debug);
    user_options(&a, options, &fast);
    if (fast)
        av_add(&a, "-ffast-math");
    if (preprocess) {
        av_add(&a, "kernel.c");
        av_add(&a, "-o");
        av_add(&a, "kernel.i");
    } else {
        av_add(&a, "-shared");
        av_add(&a, "-fvisibility=hidden");
        av_add(&a, "kernel_host.c");
        av_add(&a, "-o");
        av_add(&a, "kernel.so");
        av_add(&a, "-lm");
    }
    int rc = run_in(dir, a.v, out);
    av_free(&a);
    if (rc == 0)
        return KILN_OK;
    if (!debug)
        remove_dir(dir);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        return kiln__error_set(KILN_ERROR_BUILD, 0, "host build: cannot run %s", kiln__hcc.path);
    }
    if (preprocess) {
        *out = *out ? *out : kiln__strdup("the C preprocessor failed");
        return kiln__error_set(KILN_ERROR_BUILD, rc, "host build: the C preprocessor failed");
    }
    *out = *out ? *out : kiln__strdup("the C compiler failed");
    return kiln__error_set(KILN_ERROR_BUILD, rc, "host build: %s failed", kiln__hcc.path);
}

/* Makes dir/kernel_host.c of the preprocessed dir/kernel.i: rewritten
 * (rewrite.c), the runtime and the kernels' entry points appended. On
 * failure removes dir (a rewrite's refusal goes to *log). */
static kiln_status write_kernel_host_c(const char *dir, char **log) {
    char path[600];
    size_t ilen = 0;
    snprintf(path, sizeof path, "%s/kernel.i", dir);
    char *pre = read_file(path, &ilen);
    if (!pre) {
        remove_dir(dir);
        return kiln__error_set(KILN_ERROR_BUILD, 0, "host build: cannot read %s", path);
    }
    kiln__hrw rw;
    char why[256];
    kiln_status st = kiln__hrw_run(pre, &rw, why, sizeof why);
    free(pre);
    if (st != KILN_OK) {
        remove_dir(dir);
        if (st == KILN_ERROR_BUILD)
            *log = kiln__strdup(why);
        return kiln__error_set(st, 0, "host build: %s", why);
    }
    kiln__sb full = { 0 };
    kiln__sb_add(&full, rw.text);
    const char *rt = kiln__embedded_file("prelude_host_rt.h");
    kiln__sb_add(&full, "\n;\n#line 1 \"kiln-host-runtime.h\"\n");
    kiln__sb_add(&full, rt ? rt : "#error the host runtime is not embedded\n");
    kiln__hrw_entries(&rw, &full);
    kiln__hrw_free(&rw);
    if (full.oom) {
        kiln__sb_free(&full);
        remove_dir(dir);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host build: out of memory");
    }
    snprintf(path, sizeof path, "%s/kernel_host.c", dir);
    char *text = kiln__sb_take(&full);
    int wrote = text && write_file(path, text, strlen(text));
    free(text);
    if (!wrote) {
        remove_dir(dir);
        return kiln__error_set(KILN_ERROR_BUILD, errno, "host build: cannot write %s", path);
    }
    return KILN_OK;
}

/* Loads the built dir/kernel.so (its bytes kept as the binary); removes
 * dir, unless KILN_HOST_DEBUG keeps it. */
static kiln_status open_kernel_so(const char *dir, int debug, void **program) {
    char path[600];
    snprintf(path, sizeof path, "%s/kernel.so", dir);
    size_t size = 0;
    void *bin = read_file(path, &size);
    char err[1024];
    kiln__hprog *p = bin ? prog_open(path, bin, size, err, sizeof err) : NULL;
    if (!bin)
        snprintf(err, sizeof err, "cannot read %s", path);
    if (!debug)
        remove_dir(dir);
    if (!p) {
        free(bin);
        return kiln__error_set(KILN_ERROR_BUILD, 0, "host build: %s", err);
    }
    *program = p;
    return KILN_OK;
}

kiln_status kiln__host_program_build(void *context, const kiln__bdevice *device, const char *source,
                                     const char *options, void **program, char **log) {
    (void)context;
    (void)device;
    char dir[512];
    int debug = debug_build();
    *program = NULL;
    *log = NULL;
    if (!make_dir(dir, sizeof dir))
        return kiln__error_set(KILN_ERROR_BUILD, errno,
                               "host build: cannot make a temporary directory (%s)",
                               strerror(errno));
    kiln_status st = write_kernel_c(dir, source);
    if (st != KILN_OK)
        return st;
    /* 1. preprocess */
    char *out = NULL;
    if ((st = run_cc(dir, debug, options, 1, &out)) != KILN_OK) {
        *log = out;
        return st;
    }
    free(out);
    /* 2. rewrite, runtime, entry points */
    if ((st = write_kernel_host_c(dir, log)) != KILN_OK)
        return st;
    /* 3. compile */
    st = run_cc(dir, debug, options, 0, &out);
    *log = out; /* on success, warnings or NULL */
    if (st != KILN_OK)
        return st;
    return open_kernel_so(dir, debug, program);
}

kiln_status kiln__host_program_binary(void *program, void **binary, size_t *size) {
    kiln__hprog *p = program;
    void *copy = kiln__malloc(p->binary_size ? p->binary_size : 1);
    if (!copy)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host binary: out of memory");
    memcpy(copy, p->binary, p->binary_size);
    *binary = copy;
    *size = p->binary_size;
    return KILN_OK;
}

kiln_status kiln__host_program_load(void *context, const kiln__bdevice *device, const void *binary,
                                    size_t size, const char *options, void **program) {
    (void)context;
    (void)device;
    (void)options;
    char dir[512], path[600], err[1024];
    *program = NULL;
    if (size < 4 || memcmp(binary, "\177ELF", 4) != 0)
        return kiln__error_set(KILN_ERROR_BUILD, 0, "host program: not a shared object");
    if (!make_dir(dir, sizeof dir))
        return kiln__error_set(KILN_ERROR_BUILD, errno, "host program: no temporary directory");
    snprintf(path, sizeof path, "%s/kernel.so", dir);
    void *copy = kiln__malloc(size);
    kiln__hprog *p = NULL;
    if (copy && write_file(path, binary, size)) {
        memcpy(copy, binary, size);
        p = prog_open(path, copy, size, err, sizeof err);
    } else {
        snprintf(err, sizeof err, "cannot write %s", path);
    }
    if (!debug_build() || !p)
        remove_dir(dir); /* KILN_HOST_DEBUG: kept for gdb and the sanitizer's symbolizer */
    if (!p) {
        free(copy);
        return kiln__error_set(KILN_ERROR_BUILD, 0, "host program: %s", err);
    }
    *program = p;
    return KILN_OK;
}

void kiln__host_program_release(void *program) {
    kiln__host_prog_put(program);
}

kiln_status kiln__host_kernel_create(void *program, const char *name, void **kernel) {
    kiln__hprog *p = program;
    char sym[200];
    *kernel = NULL;
    if (strlen(name) >= 128)
        return kiln__error_set(KILN_ERROR_KERNEL_NOT_FOUND, 0, "host: kernel name too long");
    snprintf(sym, sizeof sym, "kiln__launch_%s", name);
    void *fn = dlsym(p->dl, sym);
    if (!fn)
        return kiln__error_set(KILN_ERROR_KERNEL_NOT_FOUND, 0,
                               "host: the program has no kernel named %s", name);
    kiln__hkernel *k = kiln__calloc(1, sizeof *k);
    if (!k)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host kernel: out of memory");
    const int *hb = dlsym(p->dl, "kiln__has_barrier");
    k->has_barrier = hb ? *hb : 1;
    k->prog = p;
    kiln__ref_take(&p->refs);
    *(void **)&k->entry = fn;
    snprintf(k->name, sizeof k->name, "%s", name);
    *kernel = k;
    return KILN_OK;
}

void kiln__host_kernel_release(void *kernel) {
    kiln__hkernel *k = kernel;
    if (!k)
        return;
    kiln__host_prog_put(k->prog);
    free(k);
}

int kiln__host_run_kernel(kiln__hcmd *cmd) {
    return cmd->entry(&cmd->launch) != 0;
}

/* The largest divisor of n that is at most cap. */
static size_t divisor(size_t n, size_t cap) {
    for (size_t d = n < cap ? n : cap; d > 1; d--)
        if (n % d == 0)
            return d;
    return 1;
}

kiln_status kiln__host_kernel_launch(void *queue, void *kernel, unsigned dims, const size_t *global,
                                     const size_t *local, size_t num_args, const kiln__barg *args,
                                     size_t num_wait, void *const *wait, void **out_event) {
    kiln__hkernel *k = kernel;
    size_t g[3] = { 1, 1, 1 }, l[3] = { 1, 1, 1 };
    if (dims < 1 || dims > 3)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "host launch of %s: dims is %u (1 to 3)", k->name, dims);
    int empty = 0;
    for (unsigned d = 0; d < dims; d++) {
        g[d] = global[d];
        empty |= g[d] == 0;
        if (local) {
            l[d] = local[d];
            if (l[d] == 0 || (g[d] && g[d] % l[d] != 0))
                return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                       "host launch of %s: global size %zu is not a multiple "
                                       "of the local size %zu in dimension %u",
                                       k->name, g[d], l[d], d);
        }
    }
    if (local && l[0] * l[1] * l[2] > 1024)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "host launch of %s: work-groups of %zu x %zu x %zu work-items "
                               "(at most 1024)",
                               k->name, l[0], l[1], l[2]);
    if (!local)
        l[0] = divisor(g[0], 1024);
    size_t slot = 16, n = num_args ? num_args : 1;
    for (size_t i = 0; i < num_args; i++)
        if (args[i].kind == KILN_ARG_SCALAR && args[i].size > slot)
            slot = (args[i].size + 15) & ~(size_t)15;
    /* one allocation: the command, then (16-aligned) the values, their
     * addresses, local sizes and held buffers */
    size_t head = (sizeof(kiln__hcmd) + 15) & ~(size_t)15;
    kiln__hcmd *c = kiln__calloc(
        1,
        head + (empty ? 0 : n * (sizeof(void *) + sizeof(size_t) + slot + sizeof(kiln__hbuf *))));
    if (!c)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host launch: out of memory");
    if (empty) {
        c->op = KILN__HOP_NOP;
        return kiln__host_enqueue(queue, c, num_wait, wait, out_event, 0);
    }
    c->op = KILN__HOP_KERNEL;
    c->storage = (unsigned char *)c + head;
    c->storage_inline = 1;
    unsigned char *vals = c->storage; /* slot bytes each, 16-aligned */
    void **argv = (void **)(c->storage + n * slot);
    size_t *lb = (size_t *)(argv + n);
    c->bufs = (kiln__hbuf **)(lb + n);
    c->prog = k->prog;
    c->entry = k->entry;
    kiln__ref_take(&k->prog->refs);
    c->launch.num_args = num_args;
    for (size_t i = 0; i < num_args; i++) {
        unsigned char *v = vals + i * slot;
        argv[i] = v;
        lb[i] = 0;
        if (args[i].kind == KILN_ARG_BUFFER) {
            kiln__hbuf *b = args[i].mem;
            void *ptr = b ? b->base : NULL;
            memcpy(v, &ptr, sizeof ptr);
            if (b) {
                kiln__ref_take(&b->refs);
                c->bufs[i] = b;
            }
        } else if (args[i].kind == KILN_ARG_SCALAR) {
            memcpy(v, args[i].bytes, args[i].size);
        } else {
            lb[i] = args[i].size ? args[i].size : 1;
        }
    }
    c->launch.dims = dims;
    c->launch.threads = ((kiln__hqueue *)queue)->threads;
    c->launch.serial_ns = kiln__hcc.serial_ns;
    c->launch.pfor = kiln__host_pool_run;
    c->launch.pool = ((kiln__hqueue *)queue)->pool;
    for (int d = 0; d < 3; d++) {
        c->launch.local[d] = l[d];
        c->launch.groups[d] = g[d] / l[d];
    }
    c->launch.args = argv;
    c->launch.local_bytes = lb;
    c->launch.has_barrier = k->has_barrier;
    return kiln__host_enqueue(queue, c, num_wait, wait, out_event, 0);
}
