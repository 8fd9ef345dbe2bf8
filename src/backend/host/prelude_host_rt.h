/* The host backend's kernel runtime, appended by src/backend/host/program.c
 * after the preprocessed and rewritten source (before the generated entry
 * points), compiled into every program's shared object.
 *
 * A launch (kiln__rt_launch) runs the work-groups on the queue's pool (pool.c). A
 * group's work-items run as a loop (kiln__items_<kernel>) unless the kernel
 * reaches a barrier: work-item 0 runs first on a fiber; if it ends without
 * reaching kiln_barrier() no work-item of the group can (a barrier is
 * reached by all of a group's work-items or none), and the others run as a
 * plain loop. If it reaches one, every work-item gets a fiber and the group
 * runs in rounds, each fiber up to its next barrier. Local memory
 * (KILN_LOCAL arrays) is per thread, hence per group: a thread runs one
 * group at a time. Fibers switch with a few instructions on x86-64 and
 * with ucontext elsewhere. */
/* No headers here: the source before it is preprocessed already (its
 * headers' guards are gone), so the few declarations needed are spelled
 * out (Linux values). */
void *mmap(void *addr, size_t length, int prot, int flags, int fd, long offset);
int munmap(void *addr, size_t length);
#define KILN__PROT_RW 3       /* PROT_READ | PROT_WRITE */
#define KILN__MAP_ANON 0x4022 /* MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE */
#define KILN__MAP_FAILED ((void *)-1)

typedef void (*kiln__items_fn)(void **args, const kiln__wi_t *wi, size_t x0, size_t x1, size_t y0,
                               size_t y1, size_t z0, size_t z1);

/* What the backend passes (src/backend/host/host.h has the same layout). */
typedef struct kiln__launch {
    unsigned dims;
    int threads;
    size_t local[3], groups[3];
    size_t num_args;
    void **args;               /* per parameter: the address of its value */
    const size_t *local_bytes; /* per parameter: bytes of a local argument, else 0 */
    int status;                /* out: 0, or 1 when a barrier was not reached by all */
    int has_barrier;           /* the program calls kiln_barrier somewhere */
    long long serial_ns;       /* below: kiln__rt_launch */
    /* the queue's pool: runs fn(arg, 0 .. n-1) on its threads and this one */
    void (*pfor)(void *pool, size_t n, void (*fn)(void *arg, size_t chunk), void *arg);
    void *pool;
} kiln__launch_t;

enum { KILN__F_RUN = 0, KILN__F_BARRIER = 1, KILN__F_DONE = 2 };

typedef struct kiln__fiber {
#if defined(__x86_64__)
    void *sp;
#else
    ucontext_t uc;
#endif
    int state;
    const kiln__wi_t *tls;
    size_t x, y, z;
} kiln__fiber;

typedef struct kiln__sched {
    int mode; /* 0 outside a launch, 1 probing item 0, 2 fibers, 3 loop, 4 one item */
    int bad;
    size_t cur, n;
#if defined(__x86_64__)
    void *main_sp;
#else
    ucontext_t main_uc;
#endif
    kiln__fiber *fibers;
    char *stacks;
    size_t stacks_n, stack_size;
    char *arena;
    size_t arena_size;
    void **args;
    kiln__items_fn fn;
    kiln__wi_t wi;
    unsigned dims;
} kiln__sched;

static __thread kiln__sched kiln__s;

unsigned kiln__work_dim(void) {
    return kiln__s.dims ? kiln__s.dims : 1;
}

/* Every mapping made for fibers and local memory, unmapped when the
 * program is unloaded. */
#define KILN__MAPS 1024
static struct {
    void *p;
    size_t n;
} kiln__maps[KILN__MAPS];
static int kiln__maps_lock;
static void kiln__lock(void) {
    while (__atomic_exchange_n(&kiln__maps_lock, 1, __ATOMIC_ACQUIRE))
        ;
}
static void kiln__unlock(void) {
    __atomic_store_n(&kiln__maps_lock, 0, __ATOMIC_RELEASE);
}

static void *kiln__map(size_t n) {
    void *p = mmap(((void *)0), n, KILN__PROT_RW, KILN__MAP_ANON, -1, 0);
    if (p == KILN__MAP_FAILED)
        return ((void *)0);
    kiln__lock();
    for (int i = 0; i < KILN__MAPS; i++)
        if (!kiln__maps[i].p) {
            kiln__maps[i].p = p;
            kiln__maps[i].n = n;
            break;
        }
    kiln__unlock();
    return p;
}

static void kiln__unmap(void *p) {
    if (!p)
        return;
    kiln__lock();
    for (int i = 0; i < KILN__MAPS; i++)
        if (kiln__maps[i].p == p) {
            munmap(p, kiln__maps[i].n);
            kiln__maps[i].p = ((void *)0);
            break;
        }
    kiln__unlock();
}

__attribute__((destructor)) static void kiln__unmap_all(void) {
    for (int i = 0; i < KILN__MAPS; i++)
        if (kiln__maps[i].p)
            munmap(kiln__maps[i].p, kiln__maps[i].n);
}

#if defined(__x86_64__)
/* kiln__swap(save, to): saves the callee-saved registers and the FP control
 * words on this stack, stores its pointer in *save, switches to `to`. */
void kiln__swap(void **save, void *to);
__asm__(".text\n"
        ".globl kiln__swap\n"
        ".hidden kiln__swap\n"
        ".type kiln__swap,@function\n"
        "kiln__swap:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size kiln__swap, .-kiln__swap\n");
#endif

static void kiln__fiber_main(void) {
    kiln__sched *s = &kiln__s;
    kiln__fiber *f = &s->fibers[s->cur];
    s->fn(s->args, &s->wi, f->x, f->x + 1, f->y, f->y + 1, f->z, f->z + 1);
    f->state = KILN__F_DONE;
#if defined(__x86_64__)
    kiln__swap(&f->sp, s->main_sp);
#else
    swapcontext(&f->uc, &s->main_uc);
#endif
    __builtin_unreachable();
}

static void kiln__fiber_init(kiln__sched *s, size_t i) {
    kiln__fiber *f = &s->fibers[i];
    char *base = s->stacks + i * s->stack_size;
    f->state = KILN__F_RUN;
    f->tls = ((void *)0);
    f->x = i % s->wi.lsz[0];
    f->y = (i / s->wi.lsz[0]) % s->wi.lsz[1];
    f->z = i / (s->wi.lsz[0] * s->wi.lsz[1]);
#if defined(__x86_64__)
    uintptr_t top = ((uintptr_t)(base + s->stack_size)) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(top - 72);
    uint32_t mxcsr;
    uint16_t fcw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fcw));
    sp[0] = (uint64_t)mxcsr | ((uint64_t)fcw << 32);
    for (int r = 1; r <= 6; r++)
        sp[r] = 0;
    sp[7] = (uint64_t)(uintptr_t)kiln__fiber_main;
    sp[8] = 0;
    f->sp = sp;
#else
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = base;
    f->uc.uc_stack.ss_size = s->stack_size;
    f->uc.uc_link = ((void *)0);
    makecontext(&f->uc, kiln__fiber_main, 0);
#endif
}

static void kiln__fiber_enter(kiln__sched *s, size_t i) {
    s->cur = i;
    s->fibers[i].state = KILN__F_RUN;
#if defined(__x86_64__)
    kiln__swap(&s->main_sp, s->fibers[i].sp);
#else
    swapcontext(&s->main_uc, &s->fibers[i].uc);
#endif
}

void kiln__barrier_impl(void) {
    kiln__sched *s = &kiln__s;
    if (s->mode == 1 || s->mode == 2) {
        kiln__fiber *f = &s->fibers[s->cur];
        f->state = KILN__F_BARRIER;
        f->tls = kiln__w;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
#if defined(__x86_64__)
        kiln__swap(&f->sp, s->main_sp);
#else
        swapcontext(&f->uc, &s->main_uc);
#endif
        kiln__w = f->tls;
    } else if (s->mode == 3) {
        s->bad = 1; /* only some work-items of the group reached it */
    }
}

/* Stacks and fiber records for n work-items on this thread. */
static int kiln__fibers_reserve(kiln__sched *s, size_t n) {
    if (s->stacks_n >= n)
        return 0;
    size_t want = n < 64 ? 64 : n;
    if (!s->stack_size)
        s->stack_size = 64 * 1024;
    kiln__unmap(s->stacks);
    kiln__unmap(s->fibers);
    s->stacks = kiln__map(want * s->stack_size);
    s->fibers = kiln__map(want * sizeof(kiln__fiber));
    if (!s->stacks || !s->fibers) {
        kiln__unmap(s->stacks);
        kiln__unmap(s->fibers);
        s->stacks = ((void *)0);
        s->fibers = ((void *)0);
        s->stacks_n = 0;
        return -1;
    }
    s->stacks_n = want;
    return 0;
}

static void kiln__loop_rest(kiln__sched *s) {
    size_t l0 = s->wi.lsz[0], l1 = s->wi.lsz[1], l2 = s->wi.lsz[2];
    s->mode = 3;
    if (l0 > 1)
        s->fn(s->args, &s->wi, 1, l0, 0, 1, 0, 1);
    if (l1 > 1)
        s->fn(s->args, &s->wi, 0, l0, 1, l1, 0, 1);
    if (l2 > 1)
        s->fn(s->args, &s->wi, 0, l0, 0, l1, 1, l2);
}

/* Runs the group in s->wi.grp; returns 0, or nonzero on failure. */
static int kiln__group(kiln__sched *s, int has_barrier) {
    size_t n = s->wi.lsz[0] * s->wi.lsz[1] * s->wi.lsz[2];
    if (!has_barrier || n == 1) {
        s->mode = 4; /* a barrier of one work-item waits for nothing */
        s->fn(s->args, &s->wi, 0, s->wi.lsz[0], 0, s->wi.lsz[1], 0, s->wi.lsz[2]);
        s->mode = 0;
        return 0;
    }
    /* stacks for all of the group first: item 0 cannot be moved later */
    if (kiln__fibers_reserve(s, n))
        return 2;
    s->n = n;
    s->mode = 1;
    kiln__fiber_init(s, 0);
    kiln__fiber_enter(s, 0);
    if (s->fibers[0].state == KILN__F_DONE) {
        kiln__loop_rest(s);
        s->mode = 0;
        return 0;
    }
    s->mode = 2;
    for (size_t i = 1; i < n; i++)
        kiln__fiber_init(s, i);
    /* rounds: every fiber runs to its next barrier (item 0 waits at its
     * first one already) */
    for (size_t round = 0;; round++) {
        size_t done = 0, waiting = 0;
        for (size_t i = round == 0 ? 1 : 0; i < n; i++) {
            if (s->fibers[i].state == KILN__F_DONE) {
                done++;
                continue;
            }
            kiln__fiber_enter(s, i);
            if (s->fibers[i].state == KILN__F_DONE)
                done++;
            else
                waiting++;
        }
        if (round == 0 && s->fibers[0].state != KILN__F_DONE)
            waiting++;
        if (waiting == 0)
            break;
        if (done)
            s->bad = 1; /* some finished while others wait at a barrier */
    }
    s->mode = 0;
    return 0;
}

/* Local memory arguments: one block per thread, each argument 64-byte
 * aligned in it. */
static int kiln__arena(kiln__sched *s, const kiln__launch_t *L, void **vals, void **argv) {
    size_t total = 0;
    for (size_t i = 0; i < L->num_args; i++)
        if (L->local_bytes[i])
            total += (L->local_bytes[i] + 63) & ~(size_t)63;
    if (total > s->arena_size) {
        kiln__unmap(s->arena);
        s->arena = kiln__map(total);
        s->arena_size = s->arena ? total : 0;
        if (!s->arena)
            return -1;
    }
    size_t at = 0;
    for (size_t i = 0; i < L->num_args; i++) {
        argv[i] = L->args[i];
        if (L->local_bytes[i]) {
            vals[i] = s->arena + at;
            argv[i] = &vals[i];
            at += (L->local_bytes[i] + 63) & ~(size_t)63;
        }
    }
    return 0;
}

static int kiln__run_range(const kiln__launch_t *L, kiln__items_fn fn, size_t g0, size_t g1) {
    kiln__sched *s = &kiln__s;
    void *vals[L->num_args ? L->num_args : 1], *argv[L->num_args ? L->num_args : 1];
    if (kiln__arena(s, L, vals, argv))
        return 2;
    s->args = argv;
    s->fn = fn;
    s->bad = 0;
    s->dims = L->dims;
    for (int d = 0; d < 3; d++) {
        s->wi.lsz[d] = L->local[d];
        s->wi.ngr[d] = L->groups[d];
        s->wi.lid[d] = 0;
    }
    int st = 0;
    size_t gx = L->groups[0], gy = L->groups[1];
    for (size_t g = g0; g < g1 && !st; g++) {
        s->wi.grp[0] = g % gx;
        s->wi.grp[1] = (g / gx) % gy;
        s->wi.grp[2] = g / (gx * gy);
        st = kiln__group(s, L->has_barrier);
    }
    s->dims = 0;
    return st ? st : s->bad;
}

/* clock_gettime under a name of its own (the user's source may have
 * declared the real one); Linux's struct timespec */
struct kiln__timespec {
    long sec, nsec;
};
extern int kiln__clock_gettime(int clk, struct kiln__timespec *ts) __asm__("clock_gettime");
static long long kiln__now_ns(void) {
    struct kiln__timespec t;
    kiln__clock_gettime(1 /* CLOCK_MONOTONIC */, &t);
    return (long long)t.sec * 1000000000LL + t.nsec;
}

/* Waking the other threads of a parallel region costs several microseconds
 * (tens on a loaded machine: the pool's threads sleep between launches):
 * the first group runs on the calling thread, timed, and when the rest
 * would take less than L->serial_ns at its rate (KILN_HOST_SERIAL_NS,
 * default 40000; 0: always wake them) they run there too. */

/* Chunks of groups for the pool: groups 1 + c*chunk ... (group 0 ran
 * first, timed); a failure ORed into status. */
typedef struct kiln__chunks {
    kiln__launch_t *L;
    kiln__items_fn fn;
    size_t chunk, G;
    int status;
} kiln__chunks_t;

static void kiln__chunk(void *arg, size_t c) {
    kiln__chunks_t *ch = arg;
    size_t g0 = 1 + c * ch->chunk, g1 = g0 + ch->chunk < ch->G ? g0 + ch->chunk : ch->G;
    int st = kiln__run_range(ch->L, ch->fn, g0, g1);
    if (st)
        __atomic_fetch_or(&ch->status, st, __ATOMIC_RELAXED);
}

/* The launch: groups spread over L->threads threads, the queue's pool's
 * and this one (on the calling
 * thread alone when there is one group or one thread, or when the groups
 * are too short to be worth waking the others: above). */
static int kiln__rt_launch(kiln__launch_t *L, kiln__items_fn fn) {
    size_t G = L->groups[0] * L->groups[1] * L->groups[2];
    int nt = L->threads > 0 ? L->threads : 1;
    if ((size_t)nt > G)
        nt = (int)G;
    if (nt <= 1)
        return L->status = kiln__run_range(L, fn, 0, G);
    long long t0 = kiln__now_ns();
    int st = kiln__run_range(L, fn, 0, 1);
    long long dt = kiln__now_ns() - t0;
    if (st || (long long)(G - 1) * dt < L->serial_ns)
        return L->status = st ? st : kiln__run_range(L, fn, 1, G);
    size_t rest = G - 1;
    if ((size_t)nt > rest)
        nt = (int)rest;
    kiln__chunks_t ch = { L, fn, rest / ((size_t)nt * 8), G, 0 };
    if (ch.chunk < 1)
        ch.chunk = 1;
    L->pfor(L->pool, (rest + ch.chunk - 1) / ch.chunk, kiln__chunk, &ch);
    st |= ch.status;
    return L->status = st;
}
