/* Internals of the host backend: kernels in kiln's dialect compiled by the
 * system C compiler (with OpenMP) into shared objects that are dlopen'd, and
 * queues, events and buffers of its own (host memory, worker threads). */
#ifndef KILN_BACKEND_HOST_HOST_H
#define KILN_BACKEND_HOST_HOST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "backend/backend.h"
#include "base/error.h"
#include "base/lock.h"

/* The version of program.c's compiler flags and source rewrite, in the
 * device identity (the disk cache's key): bump it when either changes. */
#define KILN__HOST_FLAGS 4

#define KILN__HOST_MAX_CPUS 1024

/* probe.c: the compiler found by load */
typedef struct kiln__host_cc {
    char path[512];                        /* the compiler's executable */
    char version[256];                     /* first line of `cc --version` */
    char cpu[256];                         /* CPU model name */
    uint64_t features;                     /* hash of the CPU's feature flags */
    unsigned threads;                      /* KILN_HOST_THREADS, OMP_NUM_THREADS, else the CPUs */
    unsigned cpus;                         /* CPUs this process may run on */
    long long serial_ns;                   /* KILN_HOST_SERIAL_NS, else 40000 (prelude_host_rt.h) */
    unsigned cpu_ids[KILN__HOST_MAX_CPUS]; /* their numbers, ascending */
} kiln__host_cc;

/* A sub-device's part of the host device (its kiln__bdevice's handle; NULL
 * for host:0 itself): units [first, first + count) of host:0's threads,
 * unit u pinned to CPU cpu_ids[u % cpus], so parts are disjoint groups of
 * cores when the threads are no more than the CPUs. Lives as long as the
 * process, like the sub-device. */
typedef struct kiln__hpart {
    unsigned first, count;
} kiln__hpart;
kiln_status kiln__host_partition(const kiln__bdevice *device, unsigned units_each,
                                 kiln__bdevice *subdevices, size_t capacity, size_t *count);
kiln_status kiln__host_partition_counts(const kiln__bdevice *device, const unsigned *counts,
                                        size_t num_counts, kiln__bdevice *subdevices,
                                        size_t capacity, size_t *count);
extern kiln__host_cc kiln__hcc;
uint64_t kiln__host_now_ns(void);
/* Runs argv (argv[0] looked up in PATH), stdout and stderr into *output
 * (malloc'd); returns the exit status, -1 if it could not run. */
int kiln__host_run(char *const argv[], char **output);
/* Runs argv (NULL-terminated) in dir (NULL: here), stdout and stderr into
 * fd and stdin from /dev/null, and waits: the exit status (128: ended by a
 * signal), -1 when it could not start. kiln__host_run's and the compiler's. */
int kiln__host_spawn(char *const argv[], int fd, const char *dir);

/* One lock and one condition for every queue and event of the backend:
 * any state change broadcasts. */
extern kiln__lock kiln__host_lock;
extern pthread_cond_t kiln__host_cond;

typedef struct kiln__hnotify {
    kiln__notify_fn fn;
    void *arg;
    struct kiln__hnotify *next;
} kiln__hnotify;

typedef struct kiln__hevent {
    atomic_int refs;
    int state; /* kiln_event_state, under kiln__host_lock */
    int user;
    int profiling;
    uint64_t t[4]; /* queued, submitted, started, ended (ns) */
    kiln__hnotify *notify;
} kiln__hevent;

typedef struct kiln__hbuf {
    atomic_int refs;
    char *base;
    size_t size;
    struct kiln__hbuf *parent; /* a sub-buffer's (held) */
} kiln__hbuf;

typedef struct kiln__hprog {
    atomic_int refs;
    void *dl;
    void *binary;
    size_t binary_size;
} kiln__hprog;

/* The layout prelude_host_rt.h reads (kiln__launch_t there). */
typedef struct kiln__hlaunch {
    unsigned dims;
    int threads;
    size_t local[3], groups[3];
    size_t num_args;
    void **args;
    const size_t *local_bytes;
    int status;
    int has_barrier;
    long long serial_ns; /* groups shorter than this in all run on one thread */
    /* the queue's pool (pool.c): runs fn(arg, 0 .. n-1) on its threads and
     * the caller's */
    void (*pfor)(void *pool, size_t n, void (*fn)(void *arg, size_t chunk), void *arg);
    void *pool;
} kiln__hlaunch;
typedef int (*kiln__hentry)(kiln__hlaunch *launch);

typedef struct kiln__hkernel {
    kiln__hprog *prog; /* held */
    kiln__hentry entry;
    int has_barrier;
    char name[128];
} kiln__hkernel;

typedef enum {
    KILN__HOP_KERNEL,
    KILN__HOP_WRITE,
    KILN__HOP_READ,
    KILN__HOP_COPY,
    KILN__HOP_FILL,
    KILN__HOP_NOP, /* marker, barrier, unmap */
} kiln__hop;

typedef struct kiln__hcmd {
    struct kiln__hcmd *next;
    kiln__hop op;
    kiln__hevent *ev; /* held */
    size_t num_wait;
    kiln__hevent **wait;    /* held */
    kiln__hbuf *buf, *buf2; /* held */
    size_t off, off2, size;
    void *host;
    const void *src;
    unsigned char pattern[128];
    size_t pattern_size;
    /* kernel launches */
    kiln__hprog *prog; /* held */
    kiln__hentry entry;
    kiln__hlaunch launch;
    kiln__hbuf **bufs; /* held, one per buffer argument (NULL else); in storage */
    unsigned char *storage;
    int storage_inline; /* storage is in the command's own block */
} kiln__hcmd;

/* pool.c: a queue's threads for its launches' work-groups */
typedef struct kiln__hpool kiln__hpool;
kiln__hpool *kiln__host_pool_new(unsigned threads, const kiln__hpart *part);
void kiln__host_pool_free(kiln__hpool *p);
void kiln__host_pool_run(void *pool, size_t n, void (*fn)(void *arg, size_t chunk), void *arg);
/* queue.c: pins the calling thread to the part's CPUs */
void kiln__host_pin(const kiln__hpart *p);

typedef struct kiln__hqueue {
    pthread_t thread;
    int threads;             /* OpenMP threads of its launches */
    const kiln__hpart *part; /* a sub-device's: its worker is pinned */
    kiln__hpool *pool;       /* made with the queue when threads > 1 */
    int started;
    int out_of_order;
    int profiling;
    int closing;
    int inline_busy;          /* a command runs on an enqueuing thread */
    int idle;                 /* the worker waits on idle_cond: its list is empty */
    pthread_cond_t idle_cond; /* signalled when a command is added or on release */
    kiln__hcmd *head, *tail;
    size_t active;         /* commands being run */
    kiln__hcmd *current;   /* the worker's command */
    kiln__hevent *barrier; /* out-of-order: the last barrier's event (held) */
    kiln__hevent *last;    /* the last command's event (held) */
} kiln__hqueue;

/* event.c */
kiln__hevent *kiln__host_event_new(int user, int profiling);
/* Ends ev (failed or not) and calls its notifications; takes the lock. */
void kiln__host_event_end(kiln__hevent *ev, int failed);
void kiln__host_event_put(kiln__hevent *ev);
/* queue.c */
kiln_status kiln__host_enqueue(kiln__hqueue *q, kiln__hcmd *cmd, size_t num_wait, void *const *wait,
                               void **out_event, int blocking);
void kiln__host_cmd_free(kiln__hcmd *cmd);
/* memory.c */
void kiln__host_buf_put(kiln__hbuf *b);
/* program.c */
void kiln__host_prog_put(kiln__hprog *p);
int kiln__host_run_kernel(kiln__hcmd *cmd);
int kiln__host_process_asan(void);

kiln_status kiln__host_load(void);
kiln_status kiln__host_enumerate(kiln__bdevice **devices, size_t *count);
kiln_status kiln__host_context_create(const kiln__bdevice *const *devices, size_t num_devices,
                                      void **context);
void kiln__host_context_release(void *context);
kiln_status kiln__host_queue_create(void *context, const kiln__bdevice *device, unsigned flags,
                                    void **queue);
void kiln__host_queue_release(void *queue);
kiln_status kiln__host_queue_finish(void *queue);
kiln_status kiln__host_queue_flush(void *queue);
kiln_status kiln__host_queue_marker(void *queue, int barrier, size_t num_wait, void *const *wait,
                                    void **out_event);
kiln_status kiln__host_buffer_create(void *context, size_t size, unsigned flags,
                                     const void *host_data, void **buffer);
kiln_status kiln__host_buffer_create_sub(void *parent, size_t offset, size_t size, void **buffer);
void kiln__host_buffer_release(void *buffer);
kiln_status kiln__host_buffer_write(void *queue, void *buffer, size_t offset, size_t size,
                                    const void *src, int blocking, size_t num_wait,
                                    void *const *wait, void **out_event);
kiln_status kiln__host_buffer_read(void *queue, void *buffer, size_t offset, size_t size, void *dst,
                                   int blocking, size_t num_wait, void *const *wait,
                                   void **out_event);
kiln_status kiln__host_buffer_copy(void *queue, void *src, size_t src_offset, void *dst,
                                   size_t dst_offset, size_t size, size_t num_wait,
                                   void *const *wait, void **out_event);
kiln_status kiln__host_buffer_fill(void *queue, void *buffer, const void *pattern,
                                   size_t pattern_size, size_t offset, size_t size, size_t num_wait,
                                   void *const *wait, void **out_event);
kiln_status kiln__host_buffer_map(void *queue, void *buffer, unsigned map_flags, size_t offset,
                                  size_t size, void **host_ptr);
kiln_status kiln__host_buffer_unmap(void *queue, void *buffer, void *host_ptr, size_t num_wait,
                                    void *const *wait, void **out_event);
kiln_status kiln__host_program_build(void *context, const kiln__bdevice *device, const char *source,
                                     const char *options, void **program, char **log);
kiln_status kiln__host_program_binary(void *program, void **binary, size_t *size);
kiln_status kiln__host_program_load(void *context, const kiln__bdevice *device, const void *binary,
                                    size_t size, const char *options, void **program);
void kiln__host_program_release(void *program);
kiln_status kiln__host_kernel_create(void *program, const char *name, void **kernel);
void kiln__host_kernel_release(void *kernel);
kiln_status kiln__host_kernel_launch(void *queue, void *kernel, unsigned dims, const size_t *global,
                                     const size_t *local, size_t num_args, const kiln__barg *args,
                                     size_t num_wait, void *const *wait, void **out_event);
kiln_status kiln__host_event_wait(size_t num, void *const *events);
kiln_status kiln__host_event_state(void *event, kiln_event_state *state);
kiln_status kiln__host_event_times(void *event, kiln_event_times *times);
kiln_status kiln__host_event_notify(void *event, kiln__notify_fn fn, void *arg);
kiln_status kiln__host_user_event_create(void *context, void **event);
kiln_status kiln__host_user_event_set(void *event, int failed);
void kiln__host_event_retain(void *event);
void kiln__host_event_release(void *event);

#endif
