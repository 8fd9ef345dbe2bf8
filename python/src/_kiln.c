/* kiln._kiln: the CPython extension under the Python package kiln.
 *
 * Hand-written C on the limited API (abi3, CPython >= 3.11): one binary
 * serves every CPython from 3.11 on. It binds libkiln's C API thinly; the Pythonic
 * layer (the .py files of kiln/) adds NumPy conventions on top. Hot paths
 * (operators on arrays, kernel launches) are whole in C: one call from
 * Python, one kiln call, no Python frame in between.
 *
 * Rules kept throughout:
 *  - every kiln call that may block (allocations, builds, reads, waits,
 *    enqueues) runs with the GIL released (KILN_NOGIL);
 *  - a kiln status other than KILN_OK becomes the exception of its family
 *    (kiln/_errors.py makes it; set by _set_error_factory), carrying the
 *    status, kiln_last_error_message() and kiln_last_build_log();
 *  - objects own one kiln reference each and release it in dealloc; an
 *    array also keeps its Queue object (and so its context) alive.
 *
 * Operators are table-driven: KILN_PY_BINARY_OPS / KILN_PY_UNARY_OPS list
 * each C op once (name, enum, kind); a new op in kiln's enums is one line
 * here and appears in _kiln.BINARY_OPS / UNARY_OPS, which kiln/_array.py
 * turns into module functions. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <kiln.h>
#include <kiln/dlpack.h>

#include <stdint.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <time.h>
#endif

#define KILN_NOGIL(stmt)                          \
    do {                                          \
        PyThreadState *_ts = PyEval_SaveThread(); \
        stmt;                                     \
        PyEval_RestoreThread(_ts);                \
    } while (0)

/* ------------------------------------------------------------ op tables */

enum { OPK_ARITH = 0, OPK_COMPARE = 1, OPK_DIV = 2, OPK_LOGIC = 3 };

/* X(python name, kiln op, kind, commutative) */
#define KILN_PY_BINARY_OPS(X)                             \
    X("add", KILN_OP_ADD, OPK_ARITH, 1)                   \
    X("subtract", KILN_OP_SUB, OPK_ARITH, 0)              \
    X("multiply", KILN_OP_MUL, OPK_ARITH, 1)              \
    X("true_divide", KILN_OP_DIV, OPK_DIV, 0)             \
    X("minimum", KILN_OP_MIN, OPK_ARITH, 1)               \
    X("maximum", KILN_OP_MAX, OPK_ARITH, 1)               \
    X("equal", KILN_OP_EQ, OPK_COMPARE, 1)                \
    X("not_equal", KILN_OP_NE, OPK_COMPARE, 1)            \
    X("less", KILN_OP_LT, OPK_COMPARE, 0)                 \
    X("less_equal", KILN_OP_LE, OPK_COMPARE, 0)           \
    X("greater", KILN_OP_GT, OPK_COMPARE, 0)              \
    X("greater_equal", KILN_OP_GE, OPK_COMPARE, 0)        \
    X("power", KILN_OP_POW, OPK_ARITH, 0)                 \
    X("floor_divide", KILN_OP_FLOOR_DIVIDE, OPK_ARITH, 0) \
    X("remainder", KILN_OP_REMAINDER, OPK_ARITH, 0)       \
    X("bitwise_and", KILN_OP_BITWISE_AND, OPK_ARITH, 1)   \
    X("bitwise_or", KILN_OP_BITWISE_OR, OPK_ARITH, 1)     \
    X("bitwise_xor", KILN_OP_BITWISE_XOR, OPK_ARITH, 1)   \
    X("left_shift", KILN_OP_LEFT_SHIFT, OPK_ARITH, 0)     \
    X("right_shift", KILN_OP_RIGHT_SHIFT, OPK_ARITH, 0)   \
    X("logical_and", KILN_OP_LOGICAL_AND, OPK_LOGIC, 1)   \
    X("logical_or", KILN_OP_LOGICAL_OR, OPK_LOGIC, 1)     \
    X("logical_xor", KILN_OP_LOGICAL_XOR, OPK_LOGIC, 1)   \
    X("arctan2", KILN_OP_ATAN2, OPK_DIV, 0)               \
    X("hypot", KILN_OP_HYPOT, OPK_DIV, 1)                 \
    X("copysign", KILN_OP_COPYSIGN, OPK_DIV, 0)           \
    X("logaddexp", KILN_OP_LOGADDEXP, OPK_DIV, 1)

/* X(python name, kiln op, float only) */
#define KILN_PY_UNARY_OPS(X)                 \
    X("negative", KILN_OP_NEG, 0)            \
    X("absolute", KILN_OP_ABS, 0)            \
    X("sqrt", KILN_OP_SQRT, 1)               \
    X("exp", KILN_OP_EXP, 1)                 \
    X("log", KILN_OP_LOG, 1)                 \
    X("sin", KILN_OP_SIN, 1)                 \
    X("cos", KILN_OP_COS, 1)                 \
    X("tan", KILN_OP_TAN, 1)                 \
    X("arcsin", KILN_OP_ASIN, 1)             \
    X("arccos", KILN_OP_ACOS, 1)             \
    X("arctan", KILN_OP_ATAN, 1)             \
    X("sinh", KILN_OP_SINH, 1)               \
    X("cosh", KILN_OP_COSH, 1)               \
    X("tanh", KILN_OP_TANH, 1)               \
    X("arcsinh", KILN_OP_ASINH, 1)           \
    X("arccosh", KILN_OP_ACOSH, 1)           \
    X("arctanh", KILN_OP_ATANH, 1)           \
    X("log1p", KILN_OP_LOG1P, 1)             \
    X("expm1", KILN_OP_EXPM1, 1)             \
    X("log2", KILN_OP_LOG2, 1)               \
    X("log10", KILN_OP_LOG10, 1)             \
    X("floor", KILN_OP_FLOOR, 0)             \
    X("ceil", KILN_OP_CEIL, 0)               \
    X("trunc", KILN_OP_TRUNC, 0)             \
    X("rint", KILN_OP_ROUND, 0)              \
    X("sign", KILN_OP_SIGN, 0)               \
    X("square", KILN_OP_SQUARE, 0)           \
    X("positive", KILN_OP_POSITIVE, 0)       \
    X("invert", KILN_OP_BITWISE_INVERT, 0)   \
    X("logical_not", KILN_OP_LOGICAL_NOT, 0) \
    X("isnan", KILN_OP_ISNAN, 0)             \
    X("isinf", KILN_OP_ISINF, 0)             \
    X("isfinite", KILN_OP_ISFINITE, 0)       \
    X("signbit", KILN_OP_SIGNBIT, 1)

static int binop_kind(int op) {
#define K(name, o, kind, comm) \
    if (op == (int)(o))        \
        return kind;
    KILN_PY_BINARY_OPS(K)
#undef K
    return -1;
}

static int binop_commutative(int op) {
#define K(name, o, kind, comm) \
    if (op == (int)(o))        \
        return comm;
    KILN_PY_BINARY_OPS(K)
#undef K
    return 0;
}

/* ------------------------------------------------------------- globals */

static PyObject *g_error_factory;  /* callable(status, name, message, log, native) */
static PyObject *g_binop_fallback; /* callable(op, a, b) for what C does not do */
static PyTypeObject *DeviceType, *ContextType, *QueueType, *ArrayType, *EventType, *ProgramType,
    *KernelType, *ElementwiseType, *ReductionType, *ScanType, *RngType;

static PyObject *raise_status(kiln_status st) {
    const char *msg = kiln_last_error_message();
    const char *log = st == KILN_ERROR_BUILD ? kiln_last_build_log() : "";
    if (!g_error_factory) {
        PyErr_Format(PyExc_RuntimeError, "%s: %s", kiln_status_name(st), msg);
        return NULL;
    }
    PyObject *exc = PyObject_CallFunction(g_error_factory, "issslk", (int)st, kiln_status_name(st),
                                          msg, log ? log : "", kiln_status_string(st),
                                          (long)kiln_last_error_native());
    if (!exc)
        return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

#define CHECK_ST(st)                 \
    do {                             \
        if ((st) != KILN_OK)         \
            return raise_status(st); \
    } while (0)

static void generic_dealloc_tail(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyObject *alloc_obj(PyTypeObject *tp) {
    allocfunc a = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    return a(tp, 0);
}

/* --------------------------------------------------------------- Device */

typedef struct {
    PyObject_HEAD kiln_device *d;
} DeviceObject;

static PyObject *device_wrap(kiln_device *d) {
    DeviceObject *o = (DeviceObject *)alloc_obj(DeviceType);
    if (o)
        o->d = d;
    return (PyObject *)o;
}

static void device_dealloc(PyObject *self) {
    generic_dealloc_tail(self);
}

static PyObject *device_info(PyObject *self, PyObject *unused) {
    kiln_device_info info;
    kiln_status st = kiln_device_get_info(((DeviceObject *)self)->d, &info);
    CHECK_ST(st);
    return Py_BuildValue(
        "{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:K,s:K,s:K,s:n,s:I,s:I,s:O,s:O,s:s,s:i,s:i}", "id",
        info.id, "name", info.name, "vendor", info.vendor, "platform", info.platform, "version",
        info.version, "driver_version", info.driver_version, "type",
        info.type == KILN_DEVICE_CPU           ? "cpu"
        : info.type == KILN_DEVICE_GPU         ? "gpu"
        : info.type == KILN_DEVICE_ACCELERATOR ? "accelerator"
                                               : "other",
        "compute_units", info.compute_units, "clock_mhz", info.clock_mhz, "global_mem_bytes",
        (unsigned long long)info.global_mem_bytes, "local_mem_bytes",
        (unsigned long long)info.local_mem_bytes, "max_alloc_bytes",
        (unsigned long long)info.max_alloc_bytes, "max_work_group_size",
        (Py_ssize_t)info.max_work_group_size, "compute_capability", info.compute_capability,
        "subgroup_size", info.subgroup_size, "fp64", info.fp64 ? Py_True : Py_False, "fp16",
        info.fp16 ? Py_True : Py_False, "backend", info.backend_name, "is_subdevice",
        info.is_subdevice, "backend_kind", (int)info.backend);
}

static PyObject *device_richcompare(PyObject *a, PyObject *b, int op) {
    if (!PyObject_TypeCheck(b, DeviceType) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    int eq = ((DeviceObject *)a)->d == ((DeviceObject *)b)->d;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t device_hash(PyObject *self) {
    Py_hash_t h = (Py_hash_t)(uintptr_t)((DeviceObject *)self)->d;
    return h == -1 ? -2 : h;
}

static PyMethodDef device_methods[] = {
    { "info", device_info, METH_NOARGS, "The device's kiln_device_info as a dict." },
    { NULL, NULL, 0, NULL },
};

static PyType_Slot device_slots[] = {
    { Py_tp_dealloc, device_dealloc },
    { Py_tp_methods, device_methods },
    { Py_tp_richcompare, device_richcompare },
    { Py_tp_hash, device_hash },
    { 0, NULL },
};
static PyType_Spec device_spec = { "kiln._kiln.DeviceBase", sizeof(DeviceObject), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, device_slots };

static PyObject *mod_device_count(PyObject *m, PyObject *unused) {
    size_t n = 0;
    kiln_status st;
    KILN_NOGIL(st = kiln_device_count(&n));
    CHECK_ST(st);
    return PyLong_FromSize_t(n);
}

static PyObject *mod_device_get(PyObject *m, PyObject *arg) {
    size_t i = PyLong_AsSize_t(arg);
    if (i == (size_t)-1 && PyErr_Occurred())
        return NULL;
    kiln_device *d = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_device_at(i, &d));
    CHECK_ST(st);
    return device_wrap(d);
}

static PyObject *mod_device_select(PyObject *m, PyObject *arg) {
    const char *sel = NULL;
    if (arg != Py_None) {
        sel = PyUnicode_AsUTF8AndSize(arg, NULL);
        if (!sel)
            return NULL;
    }
    kiln_device *d = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_device_select(sel, &d));
    CHECK_ST(st);
    return device_wrap(d);
}

/* -------------------------------------------------------------- Context */

typedef struct {
    PyObject_HEAD kiln_context *c;
} ContextObject;

static void context_dealloc(PyObject *self) {
    kiln_context *c = ((ContextObject *)self)->c;
    KILN_NOGIL(kiln_context_release(c)); /* the last one may wait for the driver */
    generic_dealloc_tail(self);
}

/* ContextBase(devices: sequence of Device) */
static PyObject *context_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    PyObject *devs;
    if (!PyArg_ParseTuple(args, "O", &devs))
        return NULL;
    PyObject *seq = PySequence_Fast(devs, "devices must be a sequence of kiln devices");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Size(seq);
    if (n <= 0 || n > 64) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "Context: give 1 to 64 devices");
        return NULL;
    }
    kiln_device *list[64];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PySequence_GetItem(seq, i);
        if (!d || !PyObject_TypeCheck(d, DeviceType)) {
            Py_XDECREF(d);
            Py_DECREF(seq);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "Context: devices must be kiln devices");
            return NULL;
        }
        list[i] = ((DeviceObject *)d)->d;
        Py_DECREF(d);
    }
    Py_DECREF(seq);
    kiln_context *c = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_context_create(list, (size_t)n, &c));
    CHECK_ST(st);
    ContextObject *o = (ContextObject *)alloc_obj(tp);
    if (!o) {
        kiln_context_release(c);
        return NULL;
    }
    o->c = c;
    return (PyObject *)o;
}

static PyObject *context_devices(PyObject *self, PyObject *unused) {
    kiln_context *c = ((ContextObject *)self)->c;
    size_t n = kiln_context_num_devices(c);
    PyObject *l = PyList_New((Py_ssize_t)n);
    if (!l)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *d = device_wrap(kiln_context_device(c, i));
        if (!d) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SetItem(l, (Py_ssize_t)i, d);
    }
    return l;
}

static PyObject *context_pool_stats(PyObject *self, PyObject *unused) {
    kiln_pool_stats s;
    kiln_status st = kiln_pool_get_stats(((ContextObject *)self)->c, &s);
    CHECK_ST(st);
    return Py_BuildValue(
        "{s:n,s:n,s:n,s:n,s:n,s:n,s:K,s:K,s:K,s:K}", "bytes_in_use", (Py_ssize_t)s.bytes_in_use,
        "bytes_cached", (Py_ssize_t)s.bytes_cached, "bytes_waiting", (Py_ssize_t)s.bytes_waiting,
        "peak_in_use", (Py_ssize_t)s.peak_in_use, "pinned_bytes_in_use",
        (Py_ssize_t)s.pinned_bytes_in_use, "pinned_bytes_cached", (Py_ssize_t)s.pinned_bytes_cached,
        "allocations", (unsigned long long)s.allocations, "hits", (unsigned long long)s.hits,
        "blocks_freed", (unsigned long long)s.blocks_freed, "oom_retries",
        (unsigned long long)s.oom_retries);
}

static PyObject *context_pool_trim(PyObject *self, PyObject *args) {
    Py_ssize_t keep = 0;
    if (!PyArg_ParseTuple(args, "|n", &keep))
        return NULL;
    if (keep < 0) {
        PyErr_SetString(PyExc_ValueError, "pool trim: keep_bytes must be >= 0");
        return NULL;
    }
    size_t freed = 0;
    kiln_status st;
    KILN_NOGIL(st = kiln_pool_trim(((ContextObject *)self)->c, (size_t)keep, &freed));
    CHECK_ST(st);
    return PyLong_FromSize_t(freed);
}

static PyObject *context_richcompare(PyObject *a, PyObject *b, int op) {
    if (!PyObject_TypeCheck(b, ContextType) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    int eq = ((ContextObject *)a)->c == ((ContextObject *)b)->c;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t context_hash(PyObject *self) {
    Py_hash_t h = (Py_hash_t)(uintptr_t)((ContextObject *)self)->c;
    return h == -1 ? -2 : h;
}

static PyObject *context_int_ptr(PyObject *self, PyObject *unused) {
    return PyLong_FromVoidPtr(((ContextObject *)self)->c);
}

static PyMethodDef context_methods[] = {
    { "_int_ptr", context_int_ptr, METH_NOARGS, "the kiln_context *" },
    { "devices", context_devices, METH_NOARGS, "The context's devices." },
    { "pool_stats", context_pool_stats, METH_NOARGS, "kiln_pool_get_stats as a dict." },
    { "pool_trim", context_pool_trim, METH_VARARGS,
      "pool_trim(keep_bytes=0) -> bytes freed (kiln_pool_trim)." },
    { NULL, NULL, 0, NULL },
};
static PyType_Slot context_slots[] = {
    { Py_tp_new, context_new },         { Py_tp_dealloc, context_dealloc },
    { Py_tp_methods, context_methods }, { Py_tp_richcompare, context_richcompare },
    { Py_tp_hash, context_hash },       { 0, NULL },
};
static PyType_Spec context_spec = { "kiln._kiln.ContextBase", sizeof(ContextObject), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, context_slots };

/* ---------------------------------------------------------------- Queue */

/* q stays valid until dealloc, closed or not: another thread may be in a
 * kiln call on it with the GIL released (close only marks it and
 * finishes it; every later call raises ValueError). */
typedef struct {
    PyObject_HEAD kiln_queue *q;
    PyObject *context; /* the ContextBase object */
    int closed;
} QueueObject;

static int queue_ok(QueueObject *q) {
    if (q->closed) {
        PyErr_SetString(PyExc_ValueError, "the kiln queue is closed");
        return 0;
    }
    return 1;
}

/* QueueBase(context, device, flags) */
static PyObject *queue_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    PyObject *ctx, *dev;
    unsigned flags = 0;
    if (!PyArg_ParseTuple(args, "O!O!|I", ContextType, &ctx, DeviceType, &dev, &flags))
        return NULL;
    kiln_queue *q = NULL;
    kiln_status st;
    KILN_NOGIL(
        st = kiln_queue_create(((ContextObject *)ctx)->c, ((DeviceObject *)dev)->d, flags, &q));
    CHECK_ST(st);
    QueueObject *o = (QueueObject *)alloc_obj(tp);
    if (!o) {
        kiln_queue_release(q);
        return NULL;
    }
    o->q = q;
    o->context = Py_NewRef(ctx);
    return (PyObject *)o;
}

static void queue_dealloc(PyObject *self) {
    QueueObject *o = (QueueObject *)self;
    kiln_queue *q = o->q;
    KILN_NOGIL(kiln_queue_release(q)); /* the last one may wait for the driver */
    Py_XDECREF(o->context);
    generic_dealloc_tail(self);
}

static PyObject *queue_finish(PyObject *self, PyObject *unused) {
    QueueObject *o = (QueueObject *)self;
    if (!queue_ok(o))
        return NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_queue_finish(o->q));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

static PyObject *queue_flush(PyObject *self, PyObject *unused) {
    QueueObject *o = (QueueObject *)self;
    if (!queue_ok(o))
        return NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_queue_flush(o->q));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* Finishes the queue and closes it: later use raises ValueError. The kiln
 * queue is released in dealloc (arrays keep the object): a call another
 * thread started before the close runs on to its end on a live queue, and
 * two threads closing at once finish it twice but release it once. */
static PyObject *queue_close(PyObject *self, PyObject *unused) {
    QueueObject *o = (QueueObject *)self;
    if (!o->closed) {
        o->closed = 1; /* under the GIL, before it is released below */
        kiln_status st;
        KILN_NOGIL(st = kiln_queue_finish(o->q));
        CHECK_ST(st);
    }
    Py_RETURN_NONE;
}

static PyObject *queue_get_context(PyObject *self, void *c) {
    return Py_NewRef(((QueueObject *)self)->context);
}

static PyObject *queue_get_device(PyObject *self, void *c) {
    QueueObject *o = (QueueObject *)self;
    if (!queue_ok(o))
        return NULL;
    return device_wrap(kiln_queue_device(o->q));
}

static PyObject *queue_get_flags(PyObject *self, void *c) {
    return PyLong_FromUnsignedLong(kiln_queue_get_flags(((QueueObject *)self)->q));
}

static PyObject *queue_get_closed(PyObject *self, void *c) {
    return PyBool_FromLong(((QueueObject *)self)->closed);
}

static PyObject *event_wrap(kiln_event *e);

static PyObject *queue_marker(PyObject *self, PyObject *unused) {
    QueueObject *o = (QueueObject *)self;
    if (!queue_ok(o))
        return NULL;
    kiln_event *e = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_queue_marker(o->q, 0, NULL, &e));
    CHECK_ST(st);
    return event_wrap(e);
}

static PyMethodDef queue_methods[] = {
    { "finish", queue_finish, METH_NOARGS, "Blocks until every command so far has ended." },
    { "flush", queue_flush, METH_NOARGS, "Submits enqueued commands." },
    { "close", queue_close, METH_NOARGS, "Finishes and releases the queue." },
    { "marker", queue_marker, METH_NOARGS, "An event after everything enqueued so far." },
    { NULL, NULL, 0, NULL },
};
static PyObject *queue_int_ptr(PyObject *self, void *c) {
    return PyLong_FromVoidPtr(((QueueObject *)self)->q);
}

static PyGetSetDef queue_getset[] = {
    { "int_ptr", queue_int_ptr, NULL, "the kiln_queue * (for C and ctypes code)", NULL },
    { "context", queue_get_context, NULL, "the context", NULL },
    { "device", queue_get_device, NULL, "the device", NULL },
    { "flags", queue_get_flags, NULL, "kiln_queue_flags", NULL },
    { "closed", queue_get_closed, NULL, "True once closed", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};
static PyType_Slot queue_slots[] = {
    { Py_tp_new, queue_new },
    { Py_tp_dealloc, queue_dealloc },
    { Py_tp_methods, queue_methods },
    { Py_tp_getset, queue_getset },
    { 0, NULL },
};
static PyType_Spec queue_spec = { "kiln._kiln.QueueBase", sizeof(QueueObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, queue_slots };

/* ---------------------------------------------------------------- Event */

typedef struct {
    PyObject_HEAD kiln_event *e;
} EventObject;

static PyTypeObject *g_event_class; /* kiln.Event (a Python subclass), else EventBase */

static PyObject *event_wrap(kiln_event *e) {
    EventObject *o = (EventObject *)alloc_obj(g_event_class ? g_event_class : EventType);
    if (!o) {
        kiln_event_release(e);
        return NULL;
    }
    o->e = e;
    return (PyObject *)o;
}

static void event_dealloc(PyObject *self) {
    kiln_event_release(((EventObject *)self)->e);
    generic_dealloc_tail(self);
}

static PyObject *event_wait(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = { "timeout", NULL };
    PyObject *to = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &to))
        return NULL;
    double timeout = -1;
    if (to != Py_None) {
        timeout = PyFloat_AsDouble(to);
        if (timeout == -1.0 && PyErr_Occurred())
            return NULL;
        if (timeout < 0)
            timeout = 0;
    }
    kiln_event *e = ((EventObject *)self)->e;
    kiln_status st;
    if (timeout < 0) {
        KILN_NOGIL(st = kiln_event_wait(e));
    } else {
        uint64_t ms = (uint64_t)(timeout * 1000.0);
        KILN_NOGIL(st = kiln_event_wait_timeout(e, ms));
        if (st == KILN_ERROR_TIMEOUT)
            Py_RETURN_FALSE;
    }
    CHECK_ST(st);
    Py_RETURN_TRUE;
}

static PyObject *event_state(PyObject *self, void *c) {
    kiln_event_state s;
    kiln_status st = kiln_event_get_state(((EventObject *)self)->e, &s);
    CHECK_ST(st);
    return PyLong_FromLong((long)s);
}

static PyObject *event_times(PyObject *self, void *c) {
    kiln_event_times t;
    kiln_status st = kiln_event_get_times(((EventObject *)self)->e, &t);
    CHECK_ST(st);
    return Py_BuildValue("{s:K,s:K,s:K,s:K}", "queued", (unsigned long long)t.queued, "submitted",
                         (unsigned long long)t.submitted, "start", (unsigned long long)t.started,
                         "end", (unsigned long long)t.ended);
}

/* Completion callbacks into Python. kiln calls them on its kiln-callback
 * thread; the callback takes the GIL (PyGILState_Ensure), and every kiln
 * call that may block releases it, so a thread waiting on an event never
 * holds the GIL the callback needs. An exception raised by the Python
 * callable is reported (sys.unraisablehook), never lost. After the
 * interpreter starts finalising (_shutdown, called at exit) callbacks are
 * dropped. */
static volatile int g_finalizing;

static void event_py_callback(kiln_event *event, kiln_event_state state, void *user_data) {
    if (g_finalizing)
        return; /* leaks the callable: the interpreter is going away */
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *fn = user_data;
    PyObject *r = PyObject_CallFunction(fn, "i", (int)state);
    if (!r)
        PyErr_WriteUnraisable(fn);
    Py_XDECREF(r);
    Py_DECREF(fn);
    PyGILState_Release(g);
}

/* on_complete(fn): fn(state) runs once on kiln's callback thread when the
 * event completes (state 0) or fails (-1). */
static PyObject *event_on_complete(PyObject *self, PyObject *fn) {
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "on_complete: expected a callable");
        return NULL;
    }
    Py_INCREF(fn);
    kiln_status st;
    kiln_event *e = ((EventObject *)self)->e;
    KILN_NOGIL(st = kiln_event_on_complete(e, event_py_callback, fn));
    if (st != KILN_OK) {
        Py_DECREF(fn);
        return raise_status(st);
    }
    Py_RETURN_NONE;
}

/* A continuation into Python (kiln_event_then): fn(state) with the GIL;
 * the next event completes when fn returns normally and fails when it
 * raises (the exception is reported, as a callback's) or returns False.
 * While the interpreter finalises fn is not called and the next event
 * fails. */
static kiln_status event_py_continuation(kiln_event_state state, void *user_data) {
    if (g_finalizing)
        return KILN_ERROR_WRONG_STATE; /* leaks the callable, as above */
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *fn = user_data;
    PyObject *r = PyObject_CallFunction(fn, "i", (int)state);
    kiln_status st = KILN_OK;
    if (!r) {
        PyErr_WriteUnraisable(fn);
        st = KILN_ERROR_EVENT_FAILED;
    } else if (r == Py_False) {
        st = KILN_ERROR_EVENT_FAILED;
    }
    Py_XDECREF(r);
    Py_DECREF(fn);
    PyGILState_Release(g);
    return st;
}

/* then(fn) -> Event: fn(state) runs on kiln's callback thread once this
 * event has completed or failed; the returned event completes after fn
 * (device commands may wait on it). */
static PyObject *event_then(PyObject *self, PyObject *fn) {
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "then: expected a callable");
        return NULL;
    }
    Py_INCREF(fn);
    kiln_status st;
    kiln_event *e = ((EventObject *)self)->e, *next = NULL;
    KILN_NOGIL(st = kiln_event_then(e, event_py_continuation, fn, &next));
    if (st != KILN_OK) {
        Py_DECREF(fn); /* not called: kiln_event_then failed */
        return raise_status(st);
    }
    return event_wrap(next);
}

static PyMethodDef event_methods[] = {
    { "on_complete", event_on_complete, METH_O,
      "on_complete(fn): fn(state) once the event has completed (0) or failed (-1)" },
    { "then", event_then, METH_O,
      "then(fn) -> Event: fn(state) on kiln's callback thread after this event; the new "
      "event completes when fn returns (fails when fn raises or returns False)" },
    { "wait", (PyCFunction)(void (*)(void))event_wait, METH_VARARGS | METH_KEYWORDS,
      "wait(timeout=None): blocks until complete; False on timeout. Raises if it failed." },
    { NULL, NULL, 0, NULL },
};
static PyObject *event_int_ptr(PyObject *self, void *c) {
    return PyLong_FromVoidPtr(((EventObject *)self)->e);
}

static PyGetSetDef event_getset[] = {
    { "int_ptr", event_int_ptr, NULL, "the kiln_event * (for C and ctypes code)", NULL },
    { "state", event_state, NULL, "kiln_event_state (0 complete, -1 error)", NULL },
    { "times", event_times, NULL, "profiling times (ns): queued, submitted, start, end", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};
static PyType_Slot event_slots[] = {
    { Py_tp_dealloc, event_dealloc },
    { Py_tp_methods, event_methods },
    { Py_tp_getset, event_getset },
    { 0, NULL },
};
static PyType_Spec event_spec = { "kiln._kiln.EventBase", sizeof(EventObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, event_slots };

/* ---------------------------------------------------------------- Array */

typedef struct {
    PyObject_HEAD kiln_array *a;
    PyObject *queue; /* QueueBase: the queue the array's operations run on */
    kiln_array_info info;
    int isbool; /* a uint8 array that holds NumPy bools (comparisons) */
    int zerod;  /* a 0-d array, held as shape (1,) */
} ArrayObject;

#define ARR(o) ((ArrayObject *)(o))
#define AQ(o) (((QueueObject *)ARR(o)->queue)->q)

static int is_array(PyObject *o) {
    return PyObject_TypeCheck(o, ArrayType);
}

/* Wraps a (takes the reference) with queue; NULL (a released) on failure. */
static PyObject *array_wrap(kiln_array *a, PyObject *queue, int isbool, int zerod) {
    ArrayObject *o = (ArrayObject *)alloc_obj(ArrayType);
    if (!o) {
        kiln_array_release(a);
        return NULL;
    }
    o->a = a;
    o->queue = Py_NewRef(queue);
    o->isbool = isbool;
    o->zerod = zerod;
    kiln_status st = kiln_array_get_info(a, &o->info);
    if (st != KILN_OK) {
        Py_DECREF(o);
        return raise_status(st);
    }
    return (PyObject *)o;
}

static void array_dealloc(PyObject *self) {
    kiln_array_release(ARR(self)->a);
    Py_XDECREF(ARR(self)->queue);
    generic_dealloc_tail(self);
}

static int array_queue_ok(PyObject *a) {
    QueueObject *q = (QueueObject *)ARR(a)->queue;
    if (q->closed) {
        PyErr_SetString(PyExc_ValueError, "the array's kiln queue is closed");
        return 0;
    }
    return 1;
}

static PyObject *array_get_shape(PyObject *self, void *c) {
    ArrayObject *o = ARR(self);
    if (o->zerod)
        return PyTuple_New(0);
    PyObject *t = PyTuple_New(o->info.ndim);
    if (!t)
        return NULL;
    for (unsigned i = 0; i < o->info.ndim; i++)
        PyTuple_SetItem(t, i, PyLong_FromSize_t(o->info.shape[i]));
    return t;
}

static PyObject *array_get_estrides(PyObject *self, void *c) {
    ArrayObject *o = ARR(self);
    if (o->zerod)
        return PyTuple_New(0);
    PyObject *t = PyTuple_New(o->info.ndim);
    if (!t)
        return NULL;
    for (unsigned i = 0; i < o->info.ndim; i++)
        PyTuple_SetItem(t, i, PyLong_FromSsize_t(o->info.strides[i]));
    return t;
}

static PyObject *array_get_ndim(PyObject *self, void *c) {
    return PyLong_FromLong(ARR(self)->zerod ? 0 : (long)ARR(self)->info.ndim);
}
static PyObject *array_get_size(PyObject *self, void *c) {
    return PyLong_FromSize_t(ARR(self)->info.size);
}
static PyObject *array_get_dtcode(PyObject *self, void *c) {
    return PyLong_FromLong((long)ARR(self)->info.dtype);
}
static PyObject *array_get_offset(PyObject *self, void *c) {
    return PyLong_FromSize_t(ARR(self)->info.offset);
}
static PyObject *array_get_contig(PyObject *self, void *c) {
    return PyBool_FromLong(ARR(self)->info.contiguous);
}
static PyObject *array_get_itemsize(PyObject *self, void *c) {
    return PyLong_FromSize_t(kiln_dtype_size(ARR(self)->info.dtype));
}
static PyObject *array_get_queue(PyObject *self, void *c) {
    return Py_NewRef(ARR(self)->queue);
}
static PyObject *array_get_isbool(PyObject *self, void *c) {
    return PyBool_FromLong(ARR(self)->isbool);
}
static int array_set_isbool(PyObject *self, PyObject *v, void *c) {
    int b = v ? PyObject_IsTrue(v) : 0;
    if (b < 0)
        return -1;
    ARR(self)->isbool = b && ARR(self)->info.dtype == KILN_UINT8;
    return 0;
}
static PyObject *array_get_zerod(PyObject *self, void *c) {
    return PyBool_FromLong(ARR(self)->zerod);
}
static int array_set_zerod(PyObject *self, PyObject *v, void *c) {
    int b = v ? PyObject_IsTrue(v) : 0;
    if (b < 0)
        return -1;
    if (b && ARR(self)->info.size != 1) {
        PyErr_SetString(PyExc_ValueError, "a 0-d array has one element");
        return -1;
    }
    ARR(self)->zerod = b;
    return 0;
}
static PyObject *array_get_nbytes(PyObject *self, void *c) {
    return PyLong_FromSize_t(ARR(self)->info.size * kiln_dtype_size(ARR(self)->info.dtype));
}

static PyObject *array_int_ptr(PyObject *self, void *c) {
    return PyLong_FromVoidPtr(ARR(self)->a);
}

static PyGetSetDef array_getset[] = {
    { "int_ptr", array_int_ptr, NULL, "the kiln_array * (for C and ctypes code)", NULL },
    { "shape", array_get_shape, NULL, "the shape (a tuple)", NULL },
    { "_estrides", array_get_estrides, NULL, "strides in elements", NULL },
    { "ndim", array_get_ndim, NULL, "number of dimensions", NULL },
    { "size", array_get_size, NULL, "number of elements", NULL },
    { "nbytes", array_get_nbytes, NULL, "size * itemsize", NULL },
    { "itemsize", array_get_itemsize, NULL, "bytes per element", NULL },
    { "_dtcode", array_get_dtcode, NULL, "the kiln_dtype", NULL },
    { "_offset", array_get_offset, NULL, "offset of element 0, in elements", NULL },
    { "_contiguous", array_get_contig, NULL, "dense C order", NULL },
    { "queue", array_get_queue, NULL, "the queue operations on the array use", NULL },
    { "_isbool", array_get_isbool, array_set_isbool, "holds bools", NULL },
    { "_zerod", array_get_zerod, array_set_zerod, "0-d", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

/* ----------------------------------------------- shapes and conversions */

static int parse_shape(PyObject *obj, unsigned *ndim, size_t *shape) {
    PyObject *seq = PySequence_Fast(obj, "shape must be a sequence of ints");
    if (!seq)
        return 0;
    Py_ssize_t n = PySequence_Size(seq);
    if (n > KILN_ARRAY_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "kiln arrays have at most %d dimensions, got %zd",
                     KILN_ARRAY_MAX_DIMS, n);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PySequence_GetItem(seq, i);
        Py_ssize_t v = it ? PyNumber_AsSsize_t(it, PyExc_OverflowError) : -1;
        Py_XDECREF(it);
        if (v < 0) {
            Py_DECREF(seq);
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "negative dimension in shape (dimension %zd)", i);
            return 0;
        }
        shape[i] = (size_t)v;
    }
    Py_DECREF(seq);
    *ndim = (unsigned)n;
    return 1;
}

static int parse_strides(PyObject *obj, unsigned ndim, ptrdiff_t *strides) {
    PyObject *seq = PySequence_Fast(obj, "strides must be a sequence of ints");
    if (!seq)
        return 0;
    if (PySequence_Size(seq) != (Py_ssize_t)ndim) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "strides and shape differ in length");
        return 0;
    }
    for (unsigned i = 0; i < ndim; i++) {
        PyObject *it = PySequence_GetItem(seq, i);
        Py_ssize_t v = it ? PyNumber_AsSsize_t(it, PyExc_OverflowError) : -1;
        Py_XDECREF(it);
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return 0;
        }
        strides[i] = v;
    }
    Py_DECREF(seq);
    return 1;
}

static int check_dtype(long code) {
    if (kiln_dtype_size((kiln_dtype)code) == 0) {
        PyErr_Format(PyExc_TypeError, "unknown kiln dtype code %ld", code);
        return 0;
    }
    return 1;
}

static int is_float_dtype(kiln_dtype d) {
    return d == KILN_FLOAT16 || d == KILN_FLOAT32 || d == KILN_FLOAT64 || d == KILN_COMPLEX64 ||
           d == KILN_COMPLEX128;
}

/* A host value of dtype from a Python number (for scalar arguments). */
static int scalar_to_arg(PyObject *o, kiln_dtype dt, kiln_arg *arg) {
    memset(arg, 0, sizeof *arg);
    arg->kind = KILN_ARG_SCALAR;
    arg->dtype = dt;
    switch (dt) {
    case KILN_FLOAT32:
    case KILN_FLOAT64:
    case KILN_FLOAT16: {
        double d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred())
            return 0;
        if (dt == KILN_FLOAT32)
            arg->value.f32 = (float)d;
        else if (dt == KILN_FLOAT64)
            arg->value.f64 = d;
        else {
            _Float16 h = (_Float16)d;
            memcpy(&arg->value.f16_bits, &h, 2);
        }
        return 1;
    }
    case KILN_UINT64: {
        PyObject *i = PyNumber_Index(o);
        if (!i)
            return 0;
        unsigned long long v = PyLong_AsUnsignedLongLong(i);
        Py_DECREF(i);
        if (v == (unsigned long long)-1 && PyErr_Occurred())
            return 0;
        arg->value.u64 = v;
        return 1;
    }
    case KILN_INT8:
    case KILN_UINT8:
    case KILN_INT16:
    case KILN_UINT16:
    case KILN_INT32:
    case KILN_UINT32:
    case KILN_INT64: {
        PyObject *i = PyNumber_Index(o);
        if (!i)
            return 0;
        long long v = PyLong_AsLongLong(i);
        Py_DECREF(i);
        if (v == -1 && PyErr_Occurred())
            return 0;
        /* indexed by kiln_dtype: INT8 = 1 .. UINT32 = 6 */
        static const long long lo[] = { 0, -128, 0, -32768, 0, -2147483648LL, 0 };
        static const long long hi[] = { 0, 127, 255, 32767, 65535, 2147483647LL, 4294967295LL };
        if (dt <= KILN_UINT32 && (v < lo[dt] || v > hi[dt])) {
            PyErr_Format(PyExc_OverflowError, "Python integer %lld out of bounds for %s", v,
                         kiln_dtype_name(dt));
            return 0;
        }
        switch (dt) {
        case KILN_INT8:
            arg->value.i8 = (int8_t)v;
            break;
        case KILN_UINT8:
            arg->value.u8 = (uint8_t)v;
            break;
        case KILN_INT16:
            arg->value.i16 = (int16_t)v;
            break;
        case KILN_UINT16:
            arg->value.u16 = (uint16_t)v;
            break;
        case KILN_INT32:
            arg->value.i32 = (int32_t)v;
            break;
        case KILN_UINT32:
            arg->value.u32 = (uint32_t)v;
            break;
        default:
            arg->value.i64 = v;
            break;
        }
        return 1;
    }
    default:
        PyErr_Format(PyExc_TypeError, "a scalar argument of dtype %s is not supported",
                     kiln_dtype_name(dt));
        return 0;
    }
}

/* ----------------------------------------------------- array functions */

static PyObject *check_queue_arg(PyObject *q) {
    if (!PyObject_TypeCheck(q, QueueType)) {
        PyErr_SetString(PyExc_TypeError, "expected a kiln Queue");
        return NULL;
    }
    if (!queue_ok((QueueObject *)q))
        return NULL;
    return q;
}

/* empty(queue, dtype, shape) */
static PyObject *mod_empty(PyObject *m, PyObject *args) {
    PyObject *q, *shp;
    long dt;
    unsigned ndim;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    if (!PyArg_ParseTuple(args, "OlO", &q, &dt, &shp) || !check_queue_arg(q) || !check_dtype(dt) ||
        !parse_shape(shp, &ndim, shape))
        return NULL;
    int zerod = ndim == 0;
    if (zerod) {
        ndim = 1;
        shape[0] = 1;
    }
    kiln_array *a = NULL;
    kiln_status st;
    kiln_context *ctx = kiln_queue_context(((QueueObject *)q)->q);
    KILN_NOGIL(st = kiln_array_empty(ctx, (kiln_dtype)dt, ndim, shape, &a));
    CHECK_ST(st);
    return array_wrap(a, q, 0, zerod);
}

/* The scalar kiln_arg of dtype d holding the element at p: the package
 * converts Python scalars to the array's dtype itself (NEP 50), so kiln's
 * own conversion is the identity. */
static kiln_arg element_arg(kiln_dtype d, const void *p) {
    kiln_arg v = { .kind = KILN_ARG_SCALAR, .dtype = d };
    memcpy(&v.value, p, kiln_dtype_size(d));
    return v;
}

/* full(queue, dtype, shape, value: bytes of one element) */
static PyObject *mod_full(PyObject *m, PyObject *args) {
    PyObject *q, *shp;
    long dt;
    Py_buffer val;
    unsigned ndim;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    if (!PyArg_ParseTuple(args, "OlOy*", &q, &dt, &shp, &val))
        return NULL;
    if (!check_queue_arg(q) || !check_dtype(dt) || !parse_shape(shp, &ndim, shape)) {
        PyBuffer_Release(&val);
        return NULL;
    }
    if ((size_t)val.len != kiln_dtype_size((kiln_dtype)dt)) {
        PyBuffer_Release(&val);
        PyErr_SetString(PyExc_ValueError, "full: value has the wrong size for the dtype");
        return NULL;
    }
    int zerod = ndim == 0;
    if (zerod) {
        ndim = 1;
        shape[0] = 1;
    }
    kiln_array *a = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_full(((QueueObject *)q)->q, (kiln_dtype)dt, ndim, shape,
                                    element_arg((kiln_dtype)dt, val.buf), 0, NULL, NULL, &a));
    PyBuffer_Release(&val);
    CHECK_ST(st);
    return array_wrap(a, q, 0, zerod);
}

/* arange(queue, dtype, n, start, step) */
static PyObject *mod_arange(PyObject *m, PyObject *args) {
    PyObject *q;
    long dt;
    Py_ssize_t n;
    double start, step;
    if (!PyArg_ParseTuple(args, "Olndd", &q, &dt, &n, &start, &step) || !check_queue_arg(q) ||
        !check_dtype(dt))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "arange: negative length");
        return NULL;
    }
    kiln_array *a = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_arange(((QueueObject *)q)->q, (kiln_dtype)dt, (size_t)n, start, step,
                                      0, NULL, NULL, &a));
    CHECK_ST(st);
    return array_wrap(a, q, 0, 0);
}

/* from_host(queue, dtype, shape, buffer): a copy of dense C-order bytes. */
static PyObject *mod_from_host(PyObject *m, PyObject *args) {
    PyObject *q, *shp, *src;
    long dt;
    unsigned ndim;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    if (!PyArg_ParseTuple(args, "OlOO", &q, &dt, &shp, &src) || !check_queue_arg(q) ||
        !check_dtype(dt) || !parse_shape(shp, &ndim, shape))
        return NULL;
    int zerod = ndim == 0;
    if (zerod) {
        ndim = 1;
        shape[0] = 1;
    }
    size_t n = 1;
    for (unsigned i = 0; i < ndim; i++)
        n *= shape[i];
    Py_buffer b;
    if (PyObject_GetBuffer(src, &b, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if ((size_t)b.len != n * kiln_dtype_size((kiln_dtype)dt)) {
        PyBuffer_Release(&b);
        PyErr_Format(PyExc_ValueError, "from_host: %zd bytes given, the shape needs %zu", b.len,
                     n * kiln_dtype_size((kiln_dtype)dt));
        return NULL;
    }
    kiln_array *a = NULL;
    kiln_status st;
    kiln_context *ctx = kiln_queue_context(((QueueObject *)q)->q);
    KILN_NOGIL(st = kiln_array_from_host(ctx, (kiln_dtype)dt, ndim, shape, b.buf, &a));
    PyBuffer_Release(&b);
    CHECK_ST(st);
    return array_wrap(a, q, 0, zerod);
}

static int get_array(PyObject *o, const char *what) {
    if (!is_array(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be a kiln Array, not %R", what,
                     (PyObject *)Py_TYPE(o));
        return 0;
    }
    return array_queue_ok(o);
}

/* read(array, out: writable buffer of nbytes). Blocks. */
static PyObject *mod_read(PyObject *m, PyObject *args) {
    PyObject *a, *dst;
    if (!PyArg_ParseTuple(args, "OO", &a, &dst) || !get_array(a, "read: array"))
        return NULL;
    Py_buffer b;
    if (PyObject_GetBuffer(dst, &b, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0)
        return NULL;
    size_t need = ARR(a)->info.size * kiln_dtype_size(ARR(a)->info.dtype);
    if ((size_t)b.len != need) {
        PyBuffer_Release(&b);
        PyErr_Format(PyExc_ValueError, "read: the host buffer has %zd bytes, the array %zu", b.len,
                     need);
        return NULL;
    }
    kiln_status st = KILN_OK;
    if (need)
        KILN_NOGIL(st = kiln_array_read(AQ(a), ARR(a)->a, b.buf));
    PyBuffer_Release(&b);
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* write(array, src: buffer of nbytes, C order). Blocks. */
static PyObject *mod_write(PyObject *m, PyObject *args) {
    PyObject *a, *src;
    if (!PyArg_ParseTuple(args, "OO", &a, &src) || !get_array(a, "write: array"))
        return NULL;
    Py_buffer b;
    if (PyObject_GetBuffer(src, &b, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    size_t need = ARR(a)->info.size * kiln_dtype_size(ARR(a)->info.dtype);
    if ((size_t)b.len != need) {
        PyBuffer_Release(&b);
        PyErr_Format(PyExc_ValueError, "write: the host buffer has %zd bytes, the array %zu", b.len,
                     need);
        return NULL;
    }
    kiln_status st = KILN_OK;
    if (need)
        KILN_NOGIL(st = kiln_array_write(AQ(a), ARR(a)->a, b.buf));
    PyBuffer_Release(&b);
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* fill(array, value bytes) */
static PyObject *mod_fill(PyObject *m, PyObject *args) {
    PyObject *a;
    Py_buffer val;
    if (!PyArg_ParseTuple(args, "Oy*", &a, &val))
        return NULL;
    if (!get_array(a, "fill: array") ||
        ((size_t)val.len != kiln_dtype_size(ARR(a)->info.dtype) &&
         (PyErr_SetString(PyExc_ValueError, "fill: value of the wrong size"), 1))) {
        PyBuffer_Release(&val);
        return NULL;
    }
    kiln_status st;
    KILN_NOGIL(st = kiln_array_fill(AQ(a), ARR(a)->a, element_arg(ARR(a)->info.dtype, val.buf), 0,
                                    NULL, NULL));
    PyBuffer_Release(&val);
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* copy(dst, src) */
static PyObject *mod_copy(PyObject *m, PyObject *args) {
    PyObject *d, *s;
    if (!PyArg_ParseTuple(args, "OO", &d, &s) || !get_array(d, "copy: dst") ||
        !get_array(s, "copy: src"))
        return NULL;
    kiln_status st;
    if (kiln_array_context(ARR(d)->a) == kiln_array_context(ARR(s)->a))
        KILN_NOGIL(st = kiln_array_copy_out(AQ(d), ARR(d)->a, ARR(s)->a, 0, NULL, NULL));
    else
        KILN_NOGIL(st = kiln_array_copy_between(AQ(d), ARR(d)->a, AQ(s), ARR(s)->a));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* strided(array, offset_elements, shape, strides_elements, zerod): a view of
 * the same buffer (any basic index, transpose, broadcast). */
static PyObject *mod_strided(PyObject *m, PyObject *args) {
    PyObject *a, *shp, *str;
    Py_ssize_t off;
    int zerod = 0;
    unsigned ndim;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    ptrdiff_t strides[KILN_ARRAY_MAX_DIMS];
    if (!PyArg_ParseTuple(args, "OnOO|p", &a, &off, &shp, &str, &zerod) ||
        !get_array(a, "strided: array") || !parse_shape(shp, &ndim, shape) ||
        !parse_strides(str, ndim, strides))
        return NULL;
    if (off < 0) {
        PyErr_SetString(PyExc_IndexError, "view offset before the buffer's start");
        return NULL;
    }
    if (ndim == 0) {
        ndim = 1;
        shape[0] = 1;
        strides[0] = 1;
        zerod = 1;
    }
    size_t es = kiln_dtype_size(ARR(a)->info.dtype);
    kiln_array *v = NULL;
    kiln_status st = kiln_array_from_buffer(kiln_array_buffer(ARR(a)->a), (size_t)off * es,
                                            ARR(a)->info.dtype, ndim, shape, strides, &v);
    CHECK_ST(st);
    return array_wrap(v, ARR(a)->queue, ARR(a)->isbool, zerod);
}

/* reshape(array, shape) (contiguous arrays) */
static PyObject *mod_reshape(PyObject *m, PyObject *args) {
    PyObject *a, *shp;
    unsigned ndim;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    if (!PyArg_ParseTuple(args, "OO", &a, &shp) || !get_array(a, "reshape: array") ||
        !parse_shape(shp, &ndim, shape))
        return NULL;
    int zerod = ndim == 0;
    if (zerod) {
        ndim = 1;
        shape[0] = 1;
    }
    kiln_array *v = NULL;
    kiln_status st = kiln_array_reshape(ARR(a)->a, ndim, shape, &v);
    CHECK_ST(st);
    return array_wrap(v, ARR(a)->queue, ARR(a)->isbool, zerod);
}

static PyObject *new_like_shape(PyObject *ref, kiln_dtype dt, unsigned ndim, const size_t *shape,
                                int isbool, int zerod) {
    kiln_array *o = NULL;
    kiln_status st;
    kiln_context *ctx = kiln_array_context(ARR(ref)->a);
    KILN_NOGIL(st = kiln_array_empty(ctx, dt, ndim, shape, &o));
    CHECK_ST(st);
    return array_wrap(o, ARR(ref)->queue, isbool, zerod);
}

/* The result of a OP b for two arrays: promoted dtype (uint8 bools for
 * comparisons), broadcast shape. div of integers is not done here. */
static PyObject *binary_arrays(int op, PyObject *a, PyObject *b, PyObject *out) {
    ArrayObject *x = ARR(a), *y = ARR(b);
    int kind = binop_kind(op);
    if (kind < 0) {
        PyErr_Format(PyExc_ValueError, "unknown binary op %d", op);
        return NULL;
    }
    if (!array_queue_ok(a))
        return NULL;
    if (out == NULL || out == Py_None) {
        kiln_dtype dt = kiln_dtype_binary_result((kiln_binary_op)op, x->info.dtype, y->info.dtype);
        if (!dt)
            dt = kiln_dtype_promote(x->info.dtype, y->info.dtype);
        unsigned ndim;
        size_t shape[KILN_ARRAY_MAX_DIMS];
        kiln_status st = kiln_shape_broadcast(x->info.ndim, x->info.shape, y->info.ndim,
                                              y->info.shape, &ndim, shape);
        CHECK_ST(st);
        int cmp = kind == OPK_COMPARE;
        out = new_like_shape(a, cmp ? KILN_BOOL : dt, ndim, shape, 0, x->zerod && y->zerod);
        if (!out)
            return NULL;
    } else {
        if (!get_array(out, "out"))
            return NULL;
        Py_INCREF(out);
    }
    kiln_status st;
    KILN_NOGIL(st = kiln_array_binary_out(AQ(a), (kiln_binary_op)op, ARR(out)->a, x->a, y->a, 0,
                                          NULL, NULL));
    if (st != KILN_OK) {
        Py_DECREF(out);
        return raise_status(st);
    }
    return out;
}

/* s as a weak scalar of dtype d's kind (never above it: kiln converts it to
 * d, truncating a float for an integer d, as the package's callers mean). */
static kiln_arg weak_scalar(kiln_dtype d, double s) {
    if (d == KILN_BOOL)
        return KILN_ARG_BOOL(s != 0);
    if (d == KILN_UINT64)
        return KILN_ARG_U64(s <= 0 ? 0 : (uint64_t)s);
    if (is_float_dtype(d) || d == KILN_COMPLEX64 || d == KILN_COMPLEX128)
        return KILN_ARG_F64(s);
    return KILN_ARG_I64((int64_t)s);
}

static PyObject *binary_scalar(int op, PyObject *a, kiln_arg s) {
    ArrayObject *x = ARR(a);
    int cmp = binop_kind(op) == OPK_COMPARE;
    if (!array_queue_ok(a))
        return NULL;
    PyObject *out = new_like_shape(a, cmp ? KILN_BOOL : x->info.dtype, x->info.ndim, x->info.shape,
                                   0, x->zerod);
    if (!out)
        return NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_binary_scalar_out(AQ(a), (kiln_binary_op)op, ARR(out)->a, x->a, s, 0,
                                                 NULL, NULL));
    if (st != KILN_OK) {
        Py_DECREF(out);
        return raise_status(st);
    }
    return out;
}

static int swap_compare(int op) {
    switch (op) {
    case KILN_OP_LT:
        return KILN_OP_GT;
    case KILN_OP_LE:
        return KILN_OP_GE;
    case KILN_OP_GT:
        return KILN_OP_LT;
    case KILN_OP_GE:
        return KILN_OP_LE;
    default:
        return op;
    }
}

/* The operator fast path: array OP array, array OP Python float/int (weak
 * scalars of the array's kind). Everything else goes to Python's
 * kiln._array._binop_fallback(op, a, b). */
static PyObject *binop_dispatch(int op, PyObject *a, PyObject *b) {
    int kind = binop_kind(op);
    int aa = is_array(a), ba = is_array(b);
    if (aa && ba) {
        if (ARR(a)->isbool || ARR(b)->isbool || ARR(a)->info.dtype == KILN_BOOL ||
            ARR(b)->info.dtype == KILN_BOOL || kind == OPK_LOGIC)
            goto fallback;
        kiln_dtype dt = kiln_dtype_promote(ARR(a)->info.dtype, ARR(b)->info.dtype);
        if (kind == OPK_DIV && !is_float_dtype(dt))
            goto fallback;
        if ((dt == KILN_COMPLEX64 || dt == KILN_COMPLEX128) &&
            (ARR(a)->info.dtype != ARR(b)->info.dtype || ARR(a)->info.ndim != ARR(b)->info.ndim ||
             memcmp(ARR(a)->info.shape, ARR(b)->info.shape, ARR(a)->info.ndim * sizeof(size_t))))
            goto fallback; /* complex ops take one dtype and shape: Python broadcasts */
        return binary_arrays(op, a, b, NULL);
    }
    PyObject *arr = aa ? a : b, *sc = aa ? b : a;
    if (ARR(arr)->isbool || ARR(arr)->info.dtype == KILN_BOOL || kind == OPK_LOGIC)
        goto fallback;
    kiln_dtype dt = ARR(arr)->info.dtype;
    int isf = PyFloat_CheckExact(sc), isi = PyLong_CheckExact(sc);
    if (!isf && !isi)
        goto fallback;
    if (dt == KILN_COMPLEX64 || dt == KILN_COMPLEX128)
        goto fallback;
    if ((isf || kind == OPK_DIV) && !is_float_dtype(dt))
        goto fallback;
    double s = PyFloat_AsDouble(sc);
    if (s == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        goto fallback;
    }
    kiln_arg arg = KILN_ARG_F64(s);
    if (isi && !is_float_dtype(dt)) {
        /* NumPy 2: an out-of-range Python int for the dtype raises; large
         * values lose precision in double: leave those to Python. */
        if (s > 9007199254740992.0 || s < -9007199254740992.0)
            goto fallback;
        if (!scalar_to_arg(sc, dt, &arg))
            return NULL;
    }
    if (aa)
        return binary_scalar(op, a, arg);
    if (binop_commutative(op))
        return binary_scalar(op, b, arg);
    if (kind == OPK_COMPARE)
        return binary_scalar(swap_compare(op), b, arg);
fallback:
    if (!g_binop_fallback)
        Py_RETURN_NOTIMPLEMENTED;
    return PyObject_CallFunction(g_binop_fallback, "iOO", op, a, b);
}

/* binary(op, a, b, out=None): both arrays, promotion and broadcasting as
 * kiln_array_binary_out gives. */
static PyObject *mod_binary(PyObject *m, PyObject *args) {
    int op;
    PyObject *a, *b, *out = Py_None;
    if (!PyArg_ParseTuple(args, "iOO|O", &op, &a, &b, &out) || !get_array(a, "binary: a") ||
        !get_array(b, "binary: b"))
        return NULL;
    return binary_arrays(op, a, b, out);
}

/* result_dtype(binary, op, a[, b]) -> kiln_binary/unary_result_dtype (0: refused) */
static PyObject *mod_result_dtype(PyObject *m, PyObject *args) {
    int binary, op, a, b = 0;
    if (!PyArg_ParseTuple(args, "iii|i", &binary, &op, &a, &b))
        return NULL;
    kiln_dtype r = binary
                       ? kiln_dtype_binary_result((kiln_binary_op)op, (kiln_dtype)a, (kiln_dtype)b)
                       : kiln_dtype_unary_result((kiln_unary_op)op, (kiln_dtype)a);
    return PyLong_FromLong((long)r);
}

/* part(a, which): which 0 a view of the real parts, 1 of the imaginary
 * parts (kiln_array_real/imag), 2 the conjugate (a new array). */
static PyObject *mod_part(PyObject *m, PyObject *args) {
    PyObject *a;
    int which;
    if (!PyArg_ParseTuple(args, "Oi", &a, &which) || !get_array(a, "real/imag/conj: x"))
        return NULL;
    ArrayObject *x = ARR(a);
    kiln_status st;
    if (which == 2) {
        if (!array_queue_ok(a))
            return NULL;
        PyObject *out =
            new_like_shape(a, x->info.dtype, x->info.ndim, x->info.shape, x->isbool, x->zerod);
        if (!out)
            return NULL;
        KILN_NOGIL(st = kiln_array_conj_out(AQ(a), ARR(out)->a, x->a, 0, NULL, NULL));
        if (st != KILN_OK) {
            Py_DECREF(out);
            return raise_status(st);
        }
        return out;
    }
    kiln_array *v = NULL;
    st = which ? kiln_array_imag(x->a, &v) : kiln_array_real(x->a, &v);
    CHECK_ST(st);
    return array_wrap(v, x->queue, x->isbool, x->zerod);
}

/* binary_scalar(op, a, scalar): a OP scalar in a's dtype. */
static PyObject *mod_binary_scalar(PyObject *m, PyObject *args) {
    int op;
    PyObject *a;
    double s;
    if (!PyArg_ParseTuple(args, "iOd", &op, &a, &s) || !get_array(a, "binary_scalar: a"))
        return NULL;
    if (binop_kind(op) < 0) {
        PyErr_Format(PyExc_ValueError, "unknown binary op %d", op);
        return NULL;
    }
    return binary_scalar(op, a, weak_scalar(ARR(a)->info.dtype, s));
}

/* unary(op, a, out=None) */
static PyObject *mod_unary(PyObject *m, PyObject *args) {
    int op;
    PyObject *a, *out = Py_None;
    if (!PyArg_ParseTuple(args, "iO|O", &op, &a, &out) || !get_array(a, "unary: a"))
        return NULL;
    ArrayObject *x = ARR(a);
    if (out == Py_None) {
        kiln_dtype rd = kiln_dtype_unary_result((kiln_unary_op)op, x->info.dtype);
        out = new_like_shape(a, rd ? rd : x->info.dtype, x->info.ndim, x->info.shape, 0, x->zerod);
        if (!out)
            return NULL;
    } else {
        if (!get_array(out, "out"))
            return NULL;
        Py_INCREF(out);
    }
    kiln_status st;
    KILN_NOGIL(
        st = kiln_array_unary_out(AQ(a), (kiln_unary_op)op, ARR(out)->a, x->a, 0, NULL, NULL));
    if (st != KILN_OK) {
        Py_DECREF(out);
        return raise_status(st);
    }
    return out;
}

/* astype(a, dtype) -> new dense array */
static PyObject *mod_astype(PyObject *m, PyObject *args) {
    PyObject *a;
    long dt;
    if (!PyArg_ParseTuple(args, "Ol", &a, &dt) || !get_array(a, "astype: a") || !check_dtype(dt))
        return NULL;
    ArrayObject *x = ARR(a);
    PyObject *out = new_like_shape(a, (kiln_dtype)dt, x->info.ndim, x->info.shape, 0, x->zerod);
    if (!out)
        return NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_astype_out(AQ(a), ARR(out)->a, x->a, 0, NULL, NULL));
    if (st != KILN_OK) {
        Py_DECREF(out);
        return raise_status(st);
    }
    return out;
}

/* where(out, cond, a, b) */
static PyObject *mod_where(PyObject *m, PyObject *args) {
    PyObject *o, *c, *a, *b;
    if (!PyArg_ParseTuple(args, "OOOO", &o, &c, &a, &b) || !get_array(o, "where: out") ||
        !get_array(c, "where: condition") || !get_array(a, "where: x") || !get_array(b, "where: y"))
        return NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_where_out(AQ(o), ARR(o)->a, ARR(c)->a, ARR(a)->a, ARR(b)->a, 0, NULL,
                                         NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* clip(out, a, lo, hi) */
static PyObject *mod_clip(PyObject *m, PyObject *args) {
    PyObject *o, *a;
    double lo, hi;
    if (!PyArg_ParseTuple(args, "OOdd", &o, &a, &lo, &hi) || !get_array(o, "clip: out") ||
        !get_array(a, "clip: a"))
        return NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_clip_out(AQ(o), ARR(o)->a, ARR(a)->a, KILN_ARG_F64(lo),
                                        KILN_ARG_F64(hi), 0, NULL, NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* take(out, a, indices, mode): blocks for mode 'raise' to report bad
 * indices (IndexError). */
static PyObject *mod_take(PyObject *m, PyObject *args) {
    PyObject *o, *a, *idx;
    int mode;
    if (!PyArg_ParseTuple(args, "OOOi", &o, &a, &idx, &mode) || !get_array(o, "take: out") ||
        !get_array(a, "take: a") || !get_array(idx, "take: indices"))
        return NULL;
    kiln_event *e = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_take_out(AQ(o), ARR(o)->a, ARR(a)->a, ARR(idx)->a,
                                        (kiln_index_mode)mode, 0, NULL, mode == 0 ? &e : NULL);
               if (st == KILN_OK && e) st = kiln_event_wait(e));
    kiln_event_release(e);
    if (st == KILN_ERROR_EVENT_FAILED) {
        PyErr_SetString(PyExc_IndexError, "take: an index is out of bounds");
        return NULL;
    }
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* keys (a tuple of slices, ints and kiln arrays, one per leading axis) as
 * kiln_index_key; 0 with an exception set where one is of another type. */
static int index_keys(PyObject *keys, kiln_index_key *out, size_t *n) {
    Py_ssize_t k = PyTuple_Size(keys);
    if (k < 0 || k > KILN_ARRAY_MAX_DIMS) {
        PyErr_Format(PyExc_IndexError, "index_key: %zd keys (at most %d)", k, KILN_ARRAY_MAX_DIMS);
        return 0;
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *o = PyTuple_GetItem(keys, j);
        Py_ssize_t b, e, st;
        if (PySlice_Check(o)) {
            if (PySlice_Unpack(o, &b, &e, &st) < 0)
                return 0;
            out[j] = KILN_KEY_SLICE(b, e, st);
        } else if (PyLong_Check(o)) {
            long long v = PyLong_AsLongLong(o);
            if (v == -1 && PyErr_Occurred())
                return 0;
            out[j] = KILN_KEY_INT(v);
        } else if (get_array(o, "index_key: a key")) {
            out[j] = KILN_KEY_ARRAY(ARR(o)->a);
        } else {
            return 0;
        }
    }
    *n = (size_t)k;
    return 1;
}

/* kiln's refusals of a key as NumPy's IndexError; NULL */
static PyObject *index_error(kiln_status st) {
    if (st == KILN_ERROR_EVENT_FAILED)
        PyErr_SetString(PyExc_IndexError, "an index is out of bounds for its axis");
    else if (st == KILN_ERROR_MISMATCH || st == KILN_ERROR_OUT_OF_RANGE)
        PyErr_SetString(PyExc_IndexError, kiln_last_error_message());
    else
        return raise_status(st);
    return NULL;
}

/* index_many(a, (i0, ..., ik-1)) -> a[i0, ..., ik-1]: one integer index
 * array per leading axis (kiln_array_index_many). Blocks. */
static PyObject *mod_index_many(PyObject *m, PyObject *args) {
    PyObject *a, *idx;
    if (!PyArg_ParseTuple(args, "OO!", &a, &PyTuple_Type, &idx) || !get_array(a, "index_many: a"))
        return NULL;
    Py_ssize_t k = PyTuple_Size(idx);
    if (k < 1 || k > KILN_ARRAY_MAX_DIMS) {
        PyErr_Format(PyExc_IndexError, "index_many: %zd index arrays (1 to %d)", k,
                     KILN_ARRAY_MAX_DIMS);
        return NULL;
    }
    kiln_array *ix[KILN_ARRAY_MAX_DIMS];
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *o = PyTuple_GetItem(idx, j);
        if (!o || !get_array(o, "index_many: an index"))
            return NULL;
        ix[j] = ARR(o)->a;
    }
    kiln_event *e = NULL;
    kiln_array *r = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_index_many(AQ(a), ARR(a)->a, (size_t)k, ix, 0, NULL, &e, &r);
               if (st == KILN_OK) st = kiln_event_wait(e));
    kiln_event_release(e);
    if (st != KILN_OK) {
        kiln_array_release(r);
        return index_error(st);
    }
    return array_wrap(r, ARR(a)->queue, ARR(a)->isbool, 0);
}

/* index_key(a, keys) -> a[keys] (kiln_array_index_key); blocks. */
static PyObject *mod_index_key(PyObject *m, PyObject *args) {
    PyObject *a, *keys;
    kiln_index_key key[KILN_ARRAY_MAX_DIMS];
    size_t n = 0;
    if (!PyArg_ParseTuple(args, "OO!", &a, &PyTuple_Type, &keys) || !get_array(a, "index_key: a") ||
        !index_keys(keys, key, &n))
        return NULL;
    kiln_event *e = NULL;
    kiln_array *r = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_index_key(AQ(a), ARR(a)->a, n, key, 0, NULL, &e, &r);
               if (st == KILN_OK) st = kiln_event_wait(e));
    kiln_event_release(e);
    if (st != KILN_OK) {
        kiln_array_release(r);
        return index_error(st);
    }
    return array_wrap(r, ARR(a)->queue, ARR(a)->isbool, 0);
}

/* index_key_put(a, keys, values): a[keys] = values (one, or one per
 * element of a[keys]; kiln_array_index_key_put); blocks. */
static PyObject *mod_index_key_put(PyObject *m, PyObject *args) {
    PyObject *a, *keys, *v;
    kiln_index_key key[KILN_ARRAY_MAX_DIMS];
    size_t n = 0;
    if (!PyArg_ParseTuple(args, "OO!O", &a, &PyTuple_Type, &keys, &v) ||
        !get_array(a, "index_key_put: a") || !get_array(v, "index_key_put: values") ||
        !index_keys(keys, key, &n))
        return NULL;
    kiln_event *e = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_index_key_put(AQ(a), ARR(a)->a, n, key, ARR(v)->a, 0, NULL, &e);
               if (st == KILN_OK) st = kiln_event_wait(e));
    kiln_event_release(e);
    if (st != KILN_OK)
        return index_error(st);
    Py_RETURN_NONE;
}

/* mask_fill(a, mask, value bytes) / mask_assign(a, mask, values) */
static PyObject *mod_mask_fill(PyObject *m, PyObject *args) {
    PyObject *a, *mask;
    Py_buffer val;
    if (!PyArg_ParseTuple(args, "OOy*", &a, &mask, &val))
        return NULL;
    if (!get_array(a, "mask_fill: a") || !get_array(mask, "mask_fill: mask")) {
        PyBuffer_Release(&val);
        return NULL;
    }
    if ((size_t)val.len != kiln_dtype_size(ARR(a)->info.dtype)) {
        PyBuffer_Release(&val);
        PyErr_SetString(PyExc_ValueError, "mask_fill: value of the wrong size");
        return NULL;
    }
    kiln_status st;
    KILN_NOGIL(st = kiln_array_mask_fill(AQ(a), ARR(a)->a, ARR(mask)->a,
                                         element_arg(ARR(a)->info.dtype, val.buf), 0, NULL, NULL));
    PyBuffer_Release(&val);
    CHECK_ST(st);
    Py_RETURN_NONE;
}

static PyObject *mod_mask_assign(PyObject *m, PyObject *args) {
    PyObject *a, *mask, *v;
    if (!PyArg_ParseTuple(args, "OOO", &a, &mask, &v) || !get_array(a, "mask_assign: a") ||
        !get_array(mask, "mask_assign: mask") || !get_array(v, "mask_assign: values"))
        return NULL;
    kiln_event *e = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_mask_assign(AQ(a), ARR(a)->a, ARR(mask)->a, ARR(v)->a, 0, NULL, &e);
               if (st == KILN_OK) st = kiln_event_wait(e));
    kiln_event_release(e);
    if (st == KILN_ERROR_EVENT_FAILED) {
        PyErr_SetString(PyExc_ValueError,
                        "boolean assignment: the number of values does not match the mask");
        return NULL;
    }
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* reduce(op, a, initial bytes or None) -> 0-d array of the result dtype
 * (does not block). */
static PyObject *mod_reduce(PyObject *m, PyObject *args) {
    int op;
    PyObject *a, *init = Py_None;
    if (!PyArg_ParseTuple(args, "iO|O", &op, &a, &init) || !get_array(a, "reduce: a"))
        return NULL;
    kiln_dtype rd = kiln_dtype_reduce_result((kiln_reduce_op)op, ARR(a)->info.dtype);
    if (!rd) {
        PyErr_Format(PyExc_TypeError, "reduction %d is not defined for %s", op,
                     kiln_dtype_name(ARR(a)->info.dtype));
        return NULL;
    }
    size_t one = 1;
    int isbool = op == KILN_REDUCE_ANY || op == KILN_REDUCE_ALL;
    PyObject *out = new_like_shape(a, rd, 1, &one, isbool, 1);
    if (!out)
        return NULL;
    kiln_status st;
    if (init == Py_None) {
        KILN_NOGIL(st = kiln_array_reduce_async(AQ(a), (kiln_reduce_op)op, ARR(a)->a, ARR(out)->a,
                                                NULL, 0, NULL, NULL));
    } else {
        Py_buffer b;
        if (PyObject_GetBuffer(init, &b, PyBUF_SIMPLE) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        if ((size_t)b.len != kiln_dtype_size(rd)) {
            PyBuffer_Release(&b);
            Py_DECREF(out);
            PyErr_SetString(PyExc_ValueError, "reduce: initial of the wrong size");
            return NULL;
        }
        KILN_NOGIL(st = kiln_array_reduce_initial_async(AQ(a), (kiln_reduce_op)op, ARR(a)->a,
                                                        element_arg(rd, b.buf), ARR(out)->a, NULL,
                                                        0, NULL, NULL));
        PyBuffer_Release(&b);
    }
    if (st != KILN_OK) {
        Py_DECREF(out);
        return raise_status(st);
    }
    return out;
}

/* reduce_axis(op, a, axis, keepdims) -> array */
static PyObject *mod_reduce_axis(PyObject *m, PyObject *args) {
    int op, axis, keep;
    PyObject *a;
    if (!PyArg_ParseTuple(args, "iOip", &op, &a, &axis, &keep) || !get_array(a, "reduce: a"))
        return NULL;
    kiln_array *o = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_reduce_axis(AQ(a), (kiln_reduce_op)op, ARR(a)->a, axis, keep, 0,
                                           NULL, NULL, &o));
    CHECK_ST(st);
    int isbool = op == KILN_REDUCE_ANY || op == KILN_REDUCE_ALL;
    return array_wrap(o, ARR(a)->queue, isbool, ARR(a)->info.ndim == 1 && !keep);
}

/* var_axis(a, axis, ddof, std, keepdims) */
static PyObject *mod_var_axis(PyObject *m, PyObject *args) {
    int axis, sd, keep;
    double ddof;
    PyObject *a;
    if (!PyArg_ParseTuple(args, "Oidpp", &a, &axis, &ddof, &sd, &keep) || !get_array(a, "var: a"))
        return NULL;
    kiln_array *o = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_var_axis(AQ(a), ARR(a)->a, axis, ddof, sd, keep, 0, NULL, NULL, &o));
    CHECK_ST(st);
    return array_wrap(o, ARR(a)->queue, 0, ARR(a)->info.ndim == 1 && !keep);
}

/* sort(out, a, descending) ; argsort(out_indices, a, descending) */
static PyObject *mod_sort(PyObject *m, PyObject *args) {
    PyObject *o, *a;
    int desc;
    if (!PyArg_ParseTuple(args, "OOp", &o, &a, &desc) || !get_array(o, "sort: out") ||
        !get_array(a, "sort: a"))
        return NULL;
    kiln_sort_desc d = KILN_SORT_DESC(.descending = desc);
    kiln_status st;
    KILN_NOGIL(st =
                   kiln_array_sort_out(AQ(a), ARR(o)->a, NULL, ARR(a)->a, NULL, &d, 0, NULL, NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

static PyObject *mod_argsort(PyObject *m, PyObject *args) {
    PyObject *o, *a;
    int desc;
    if (!PyArg_ParseTuple(args, "OOp", &o, &a, &desc) || !get_array(o, "argsort: out") ||
        !get_array(a, "argsort: a"))
        return NULL;
    kiln_sort_desc d = KILN_SORT_DESC(.descending = desc);
    kiln_status st;
    KILN_NOGIL(st = kiln_array_argsort_out(AQ(a), ARR(o)->a, ARR(a)->a, &d, 0, NULL, NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* searchsorted(out, sorted, v, right) */
static PyObject *mod_searchsorted(PyObject *m, PyObject *args) {
    PyObject *o, *s, *v;
    int right;
    if (!PyArg_ParseTuple(args, "OOOp", &o, &s, &v, &right) || !get_array(o, "out") ||
        !get_array(s, "searchsorted: a") || !get_array(v, "searchsorted: v"))
        return NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_searchsorted_out(AQ(o), ARR(o)->a, ARR(s)->a, ARR(v)->a, right, 0,
                                                NULL, NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* cumulative(out, a, exclusive, prod) */
static PyObject *mod_cumulative(PyObject *m, PyObject *args) {
    PyObject *o, *a;
    int excl, prod;
    if (!PyArg_ParseTuple(args, "OOpp", &o, &a, &excl, &prod) || !get_array(o, "out") ||
        !get_array(a, "cumsum: a"))
        return NULL;
    kiln_status st;
    if (prod)
        KILN_NOGIL(st = kiln_array_cumprod_out(AQ(o), ARR(o)->a, ARR(a)->a, excl, 0, NULL, NULL));
    else
        KILN_NOGIL(st = kiln_array_cumsum_out(AQ(o), ARR(o)->a, ARR(a)->a, excl, 0, NULL, NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* join(list of arrays, axis, stack) */
static PyObject *mod_join(PyObject *m, PyObject *args) {
    PyObject *lst;
    int axis, stack;
    if (!PyArg_ParseTuple(args, "Oip", &lst, &axis, &stack))
        return NULL;
    PyObject *seq = PySequence_Fast(lst, "concatenate: expected a sequence of arrays");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Size(seq);
    if (n <= 0) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "need at least one array to concatenate");
        return NULL;
    }
    kiln_array **arrs = PyMem_Malloc(sizeof *arrs * (size_t)n);
    PyObject *first = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PySequence_GetItem(seq, i);
        if (!it || !get_array(it, "concatenate: item")) {
            Py_XDECREF(it);
            Py_XDECREF(first);
            PyMem_Free(arrs);
            Py_DECREF(seq);
            return NULL;
        }
        arrs[i] = ARR(it)->a;
        if (!first)
            first = it;
        else
            Py_DECREF(it);
    }
    kiln_array *o = NULL;
    kiln_status st;
    kiln_queue *q = AQ(first);
    if (stack)
        KILN_NOGIL(st = kiln_array_stack(q, (size_t)n, arrs, axis, 0, NULL, NULL, &o));
    else
        KILN_NOGIL(st = kiln_array_concatenate(q, (size_t)n, arrs, axis, 0, NULL, NULL, &o));
    PyMem_Free(arrs);
    Py_DECREF(seq);
    PyObject *qq = ARR(first)->queue;
    int isbool = ARR(first)->isbool;
    if (st != KILN_OK) {
        Py_DECREF(first);
        return raise_status(st);
    }
    PyObject *r = array_wrap(o, qq, isbool, 0);
    Py_DECREF(first);
    return r;
}

/* matmul(out, a, b) */
static PyObject *mod_matmul(PyObject *m, PyObject *args) {
    PyObject *o, *a, *b;
    if (!PyArg_ParseTuple(args, "OOO", &o, &a, &b) || !get_array(o, "matmul: out") ||
        !get_array(a, "matmul: a") || !get_array(b, "matmul: b"))
        return NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_linalg_matmul_out(AQ(o), ARR(o)->a, ARR(a)->a, ARR(b)->a, 0, NULL, NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* dot(a, b) -> 0-d array (sum a*b, same shape and dtype) */
static PyObject *mod_dot(PyObject *m, PyObject *args) {
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO", &a, &b) || !get_array(a, "dot: a") || !get_array(b, "dot: b"))
        return NULL;
    kiln_dtype rd = ARR(a)->info.dtype == KILN_FLOAT16 ? KILN_FLOAT32 : ARR(a)->info.dtype;
    size_t one = 1;
    PyObject *out = new_like_shape(a, rd, 1, &one, 0, 1);
    if (!out)
        return NULL;
    kiln_status st;
    KILN_NOGIL(
        st = kiln_array_dot_async(AQ(a), ARR(a)->a, ARR(b)->a, ARR(out)->a, NULL, 0, NULL, NULL));
    if (st != KILN_OK) {
        Py_DECREF(out);
        return raise_status(st);
    }
    return out;
}

/* unique(out, a) -> count (consecutive duplicates collapsed; Blocks) */
static PyObject *mod_unique(PyObject *m, PyObject *args) {
    PyObject *o, *a, *counts = Py_None;
    if (!PyArg_ParseTuple(args, "OO|O", &o, &a, &counts) || !get_array(o, "unique: out") ||
        !get_array(a, "unique: a") || (counts != Py_None && !get_array(counts, "unique: counts")))
        return NULL;
    int64_t c = 0;
    kiln_event *e = NULL;
    kiln_status st;
    kiln_array *ca = counts == Py_None ? NULL : ARR(counts)->a;
    KILN_NOGIL(st = kiln_array_unique_out(AQ(a), ARR(o)->a, ca, NULL, &c, ARR(a)->a, 0, NULL, &e);
               if (st == KILN_OK) st = kiln_event_wait(e));
    kiln_event_release(e);
    CHECK_ST(st);
    return PyLong_FromLongLong(c);
}

/* reduce_by_key(out_keys, out_values, keys, values, op) -> the number of
 * runs (each run of equal consecutive keys combined; Blocks) */
static PyObject *mod_reduce_by_key(PyObject *m, PyObject *args) {
    PyObject *ok, *ov, *k, *v;
    int op;
    if (!PyArg_ParseTuple(args, "OOOOi", &ok, &ov, &k, &v, &op) ||
        !get_array(ok, "reduce_by_key: out_keys") || !get_array(ov, "reduce_by_key: out_values") ||
        !get_array(k, "reduce_by_key: keys") || !get_array(v, "reduce_by_key: values"))
        return NULL;
    int64_t c = 0;
    kiln_event *e = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_reduce_by_key_out(AQ(k), ARR(ok)->a, ARR(ov)->a, NULL, &c, ARR(k)->a,
                                                 ARR(v)->a, (kiln_reduce_op)op, 0, NULL, &e);
               if (st == KILN_OK) st = kiln_event_wait(e));
    kiln_event_release(e);
    CHECK_ST(st);
    return PyLong_FromLongLong(c);
}

/* topk(values_out, indices_out, a, k, largest) */
static PyObject *mod_topk(PyObject *m, PyObject *args) {
    PyObject *v, *i, *a;
    Py_ssize_t k;
    int largest;
    if (!PyArg_ParseTuple(args, "OOOnp", &v, &i, &a, &k, &largest) ||
        !get_array(v, "topk: values") || !get_array(i, "topk: indices") || !get_array(a, "topk: a"))
        return NULL;
    if (k < 0) {
        PyErr_SetString(PyExc_ValueError, "topk: k must be >= 1");
        return NULL;
    }
    kiln_status st;
    KILN_NOGIL(st = kiln_array_topk_out(AQ(a), ARR(v)->a, ARR(i)->a, ARR(a)->a, (size_t)k, largest,
                                        0, NULL, NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* histogram(a, bins, lo, hi, weights|None) -> counts */
static PyObject *mod_histogram(PyObject *m, PyObject *args) {
    PyObject *a, *w = Py_None;
    Py_ssize_t bins;
    double lo, hi;
    if (!PyArg_ParseTuple(args, "Ondd|O", &a, &bins, &lo, &hi, &w) ||
        !get_array(a, "histogram: a") || (w != Py_None && !get_array(w, "histogram: weights")))
        return NULL;
    if (bins < 0) {
        PyErr_SetString(PyExc_ValueError, "histogram: bins must be >= 1");
        return NULL;
    }
    kiln_array *h = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_histogram(AQ(a), ARR(a)->a, (size_t)bins, lo, hi,
                                         w == Py_None ? NULL : ARR(w)->a, 0, NULL, NULL, &h));
    CHECK_ST(st);
    return array_wrap(h, ARR(a)->queue, 0, 0);
}

/* histogram_edges(a, edges (1-D float64), weights|None) -> counts */
static PyObject *mod_histogram_edges(PyObject *m, PyObject *args) {
    PyObject *a, *ed, *w = Py_None;
    if (!PyArg_ParseTuple(args, "OO|O", &a, &ed, &w) || !get_array(a, "histogram: a") ||
        !get_array(ed, "histogram: bins") || (w != Py_None && !get_array(w, "histogram: weights")))
        return NULL;
    kiln_array *h = NULL;
    kiln_status st;
    kiln_queue *q = AQ(a);
    KILN_NOGIL(st = kiln_array_histogram_edges(q, ARR(a)->a, ARR(ed)->a,
                                               w == Py_None ? NULL : ARR(w)->a, 0, NULL, NULL, &h));
    CHECK_ST(st);
    return array_wrap(h, ARR(a)->queue, 0, 0);
}

/* bincount(a, weights|None, minlength) -> counts (Blocks) */
static PyObject *mod_bincount(PyObject *m, PyObject *args) {
    PyObject *a, *w = Py_None;
    Py_ssize_t minlength = 0;
    if (!PyArg_ParseTuple(args, "OOn", &a, &w, &minlength) || !get_array(a, "bincount: x") ||
        (w != Py_None && !get_array(w, "bincount: weights")))
        return NULL;
    if (minlength < 0) {
        PyErr_SetString(PyExc_ValueError, "bincount: minlength must be non-negative");
        return NULL;
    }
    kiln_array *c = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_bincount(AQ(a), ARR(a)->a, w == Py_None ? NULL : ARR(w)->a,
                                        (size_t)minlength, &c));
    CHECK_ST(st);
    return array_wrap(c, ARR(a)->queue, 0, 0);
}

/* put(a, indices, values, mode, put_mode): blocks for mode 'raise'. */
static PyObject *mod_put(PyObject *m, PyObject *args) {
    PyObject *a, *idx, *v;
    int mode, pm;
    if (!PyArg_ParseTuple(args, "OOOii", &a, &idx, &v, &mode, &pm) || !get_array(a, "put: a") ||
        !get_array(idx, "put: indices") || !get_array(v, "put: values"))
        return NULL;
    kiln_event *e = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_array_put(AQ(a), ARR(a)->a, ARR(idx)->a, ARR(v)->a, (kiln_index_mode)mode,
                                   (kiln_put_mode)pm, 0, NULL, mode == 0 ? &e : NULL);
               if (st == KILN_OK && e) st = kiln_event_wait(e));
    kiln_event_release(e);
    if (st == KILN_ERROR_EVENT_FAILED) {
        PyErr_SetString(PyExc_IndexError, "put: an index is out of bounds");
        return NULL;
    }
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* fft(kind, out, in, axes, inverse, norm): kind 0 complex, 1 real to
 * complex, 2 complex to real */
static PyObject *mod_fft(PyObject *m, PyObject *args) {
    int kind, inverse, norm;
    unsigned axes;
    PyObject *o, *a;
    if (!PyArg_ParseTuple(args, "iOOIii", &kind, &o, &a, &axes, &inverse, &norm) ||
        !get_array(o, "fft: out") || !get_array(a, "fft: a"))
        return NULL;
    kiln_status st;
    kiln_queue *q = AQ(a);
    if (kind == 0)
        KILN_NOGIL(st = kiln_fft_c2c_out(q, ARR(o)->a, ARR(a)->a, axes, inverse,
                                         (kiln_fft_norm)norm, 0, NULL, NULL));
    else if (kind == 1)
        KILN_NOGIL(st = kiln_fft_r2c_out(q, ARR(o)->a, ARR(a)->a, axes, (kiln_fft_norm)norm, 0,
                                         NULL, NULL));
    else
        KILN_NOGIL(st = kiln_fft_c2r_out(q, ARR(o)->a, ARR(a)->a, axes, (kiln_fft_norm)norm, 0,
                                         NULL, NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------ operator slots */

#define NB_BINARY(fname, OP)                           \
    static PyObject *fname(PyObject *a, PyObject *b) { \
        return binop_dispatch(OP, a, b);               \
    }
NB_BINARY(nb_add, KILN_OP_ADD)
NB_BINARY(nb_sub, KILN_OP_SUB)
NB_BINARY(nb_mul, KILN_OP_MUL)
NB_BINARY(nb_div, KILN_OP_DIV)
#undef NB_BINARY

static PyObject *array_richcompare(PyObject *a, PyObject *b, int pyop) {
    static const int map[] = { KILN_OP_LT, KILN_OP_LE, KILN_OP_EQ,
                               KILN_OP_NE, KILN_OP_GT, KILN_OP_GE };
    return binop_dispatch(map[pyop], a, b);
}

static PyObject *unary_new(int op, PyObject *a) {
    ArrayObject *x = ARR(a);
    if (!array_queue_ok(a))
        return NULL;
    PyObject *out = new_like_shape(a, x->info.dtype, x->info.ndim, x->info.shape, 0, x->zerod);
    if (!out)
        return NULL;
    kiln_status st;
    KILN_NOGIL(
        st = kiln_array_unary_out(AQ(a), (kiln_unary_op)op, ARR(out)->a, x->a, 0, NULL, NULL));
    if (st != KILN_OK) {
        Py_DECREF(out);
        return raise_status(st);
    }
    return out;
}
static PyObject *nb_neg(PyObject *a) {
    return unary_new(KILN_OP_NEG, a);
}
static PyObject *nb_abs(PyObject *a) {
    return unary_new(KILN_OP_ABS, a);
}
static PyObject *nb_pos(PyObject *a) {
    return Py_NewRef(a);
}

static Py_ssize_t array_len(PyObject *a) {
    if (ARR(a)->zerod) {
        PyErr_SetString(PyExc_TypeError, "len() of unsized object");
        return -1;
    }
    return (Py_ssize_t)ARR(a)->info.shape[0];
}

/* ------------------------------------------------------ buffer protocol */

/* What a view holds until its release: the DLPack export that maps (or,
 * on host memory, simply points at) the array's memory, and the view's
 * shape and strides in bytes. */
typedef struct {
    DLManagedTensor *t;
    Py_ssize_t shape[KILN_ARRAY_MAX_DIMS], strides[KILN_ARRAY_MAX_DIMS];
} buffer_hold;

/* The struct module's code for a DLPack dtype; NULL if it has none. */
static const char *buffer_format(DLDataType d, int isbool) {
    if (isbool || d.code == kDLBool)
        return d.bits == 8 ? "?" : NULL;
    static const char *const ints[4] = { "b", "h", "i", "q" }, *const uints[4] = { "B", "H", "I",
                                                                                   "Q" };
    int log = d.bits == 8 ? 0 : d.bits == 16 ? 1 : d.bits == 32 ? 2 : d.bits == 64 ? 3 : -1;
    if (d.code == kDLComplex && d.lanes == 1)
        return d.bits == 64 ? "Zf" : d.bits == 128 ? "Zd" : NULL;
    if (d.lanes != 1 || log < 0)
        return NULL;
    switch (d.code) {
    case kDLInt:
        return ints[log];
    case kDLUInt:
        return uints[log];
    case kDLFloat:
        return log == 1 ? "e" : log == 2 ? "f" : log == 3 ? "d" : NULL;
    default:
        return NULL;
    }
}

/* The buffer protocol for arrays whose memory is the process's own: the
 * host backend's (memoryview(a), bytes(a), np.asarray(a) as a zero-copy
 * view, as NumPy's own arrays). The view points at the array's memory
 * after the queue's earlier work has ended (kiln_array_to_dlpack) and is
 * writable; later device work on the array is seen through it, as through
 * a NumPy view. Other devices raise BufferError: on OpenCL the memory is
 * host-visible only while mapped, and a mapping held for a view's
 * lifetime would race with the kernels (np.asarray(a) there falls back to
 * __array__, a copy); CUDA memory is not host memory. */
static int array_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    ArrayObject *o = ARR(self);
    view->obj = NULL;
    if (!array_queue_ok(self))
        return -1;
    kiln_device_info info;
    kiln_status st = kiln_device_get_info(kiln_queue_device(AQ(self)), &info);
    if (st != KILN_OK) {
        raise_status(st);
        return -1;
    }
    if (strcmp(info.backend_name, "host") != 0) {
        PyErr_Format(PyExc_BufferError,
                     "kiln.Array: no buffer for an array on %s: only the host backend's "
                     "arrays are host memory (use .get() for a copy, or DLPack)",
                     info.id);
        return -1;
    }
    buffer_hold *h = PyMem_Calloc(1, sizeof *h);
    if (!h) {
        PyErr_NoMemory();
        return -1;
    }
    KILN_NOGIL(st = kiln_array_to_dlpack(AQ(self), o->a, &h->t));
    if (st != KILN_OK) {
        PyMem_Free(h);
        if (st == KILN_ERROR_UNSUPPORTED) {
            PyErr_Format(PyExc_BufferError, "kiln.Array: no buffer for this array: %s",
                         kiln_last_error_message());
            return -1;
        }
        raise_status(st);
        return -1;
    }
    DLTensor *d = &h->t->dl_tensor;
    const char *why = NULL;
    const char *fmt = buffer_format(d->dtype, o->isbool);
    if (d->device.device_type != kDLCPU && d->device.device_type != kDLCUDAHost)
        why = "its memory is not host memory (use .get(), DLPack or __cuda_array_interface__)";
    else if (!fmt)
        why = "its dtype has no buffer format";
    int ndim = o->zerod ? 0 : d->ndim;
    Py_ssize_t item = (Py_ssize_t)((d->dtype.bits * d->dtype.lanes + 7) / 8), n = 1;
    int contiguous = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        h->shape[i] = (Py_ssize_t)d->shape[i];
        /* the exporter's strides; a dimension of 0 or 1 elements (any
         * stride is right) gets the C-contiguous one, as NumPy gives */
        Py_ssize_t c_stride =
            i == ndim - 1 ? item : h->strides[i + 1] * (h->shape[i + 1] > 1 ? h->shape[i + 1] : 1);
        h->strides[i] = d->strides && h->shape[i] > 1 ? (Py_ssize_t)d->strides[i] * item : c_stride;
        if (h->shape[i] != 1 && h->strides[i] != n * item)
            contiguous = 0;
        n *= h->shape[i];
    }
    if (!why && !contiguous && (flags & PyBUF_STRIDES) != PyBUF_STRIDES)
        why = "it is not C-contiguous and the consumer did not ask for strides";
    if (!why && !contiguous && (flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS)
        why = "it is not C-contiguous";
    if (why) {
        KILN_NOGIL(h->t->deleter(h->t));
        PyMem_Free(h);
        PyErr_Format(PyExc_BufferError, "kiln.Array: no buffer: %s", why);
        return -1;
    }
    view->buf = (char *)d->data + d->byte_offset;
    view->obj = Py_NewRef(self);
    view->len = n * item;
    view->itemsize = item;
    view->readonly = 0;
    view->ndim = ndim;
    view->format = (flags & PyBUF_FORMAT) ? (char *)fmt : NULL;
    view->shape = (flags & PyBUF_ND) == PyBUF_ND && ndim ? h->shape : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES && ndim ? h->strides : NULL;
    view->suboffsets = NULL;
    view->internal = h;
    return 0;
}

static void array_releasebuffer(PyObject *self, Py_buffer *view) {
    (void)self;
    buffer_hold *h = view->internal;
    if (!h)
        return;
    KILN_NOGIL(h->t->deleter(h->t)); /* unmaps: writes reach the array */
    PyMem_Free(h);
    view->internal = NULL;
}

static PyType_Slot array_slots[] = {
    { Py_bf_getbuffer, array_getbuffer },
    { Py_bf_releasebuffer, array_releasebuffer },
    { Py_tp_dealloc, array_dealloc },
    { Py_tp_getset, array_getset },
    { Py_nb_add, nb_add },
    { Py_nb_subtract, nb_sub },
    { Py_nb_multiply, nb_mul },
    { Py_nb_true_divide, nb_div },
    { Py_nb_negative, nb_neg },
    { Py_nb_absolute, nb_abs },
    { Py_nb_positive, nb_pos },
    { Py_tp_richcompare, array_richcompare },
    { Py_sq_length, array_len },
    { Py_tp_doc, "A typed, strided array on a kiln device (kiln_array)." },
    { 0, NULL },
};
static PyType_Spec array_spec = { "kiln.Array", sizeof(ArrayObject), 0, Py_TPFLAGS_DEFAULT,
                                  array_slots };

/* --------------------------------------------------------------- DLPack */

static void dlpack_capsule_destructor(PyObject *cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
        if (t && t->deleter)
            KILN_NOGIL(t->deleter(t)); /* unmaps: may wait */
    } else if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *t = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (t && t->deleter)
            KILN_NOGIL(t->deleter(t));
    }
    PyErr_Clear();
}

/* to_dlpack(a, versioned) -> capsule */
static PyObject *mod_to_dlpack(PyObject *m, PyObject *args) {
    PyObject *a;
    int versioned;
    if (!PyArg_ParseTuple(args, "Op", &a, &versioned) || !get_array(a, "__dlpack__: array"))
        return NULL;
    kiln_status st;
    if (versioned) {
        DLManagedTensorVersioned *t = NULL;
        KILN_NOGIL(st = kiln_array_to_dlpack_versioned(AQ(a), ARR(a)->a, &t));
        CHECK_ST(st);
        PyObject *c = PyCapsule_New(t, "dltensor_versioned", dlpack_capsule_destructor);
        if (!c)
            t->deleter(t);
        return c;
    }
    DLManagedTensor *t = NULL;
    KILN_NOGIL(st = kiln_array_to_dlpack(AQ(a), ARR(a)->a, &t));
    CHECK_ST(st);
    PyObject *c = PyCapsule_New(t, "dltensor", dlpack_capsule_destructor);
    if (!c)
        t->deleter(t);
    return c;
}

/* cuda_pointer(a) -> the CUDA device address of element 0 (for
 * __cuda_array_interface__); AttributeError for arrays not in CUDA memory.
 * Goes through the DLPack export (zero copy on CUDA: the deleter only drops
 * the reference; the array keeps the memory alive). Blocks until the
 * queue's earlier work has ended, as the export does. */
static PyObject *mod_cuda_pointer(PyObject *m, PyObject *args) {
    PyObject *a;
    if (!PyArg_ParseTuple(args, "O", &a) || !get_array(a, "__cuda_array_interface__: array"))
        return NULL;
    kiln_device_info info;
    kiln_status st = kiln_device_get_info(kiln_queue_device(AQ(a)), &info);
    CHECK_ST(st);
    if (info.backend != KILN_BACKEND_CUDA) {
        PyErr_SetString(PyExc_AttributeError,
                        "__cuda_array_interface__: the array is not in CUDA memory");
        return NULL;
    }
    DLManagedTensor *t = NULL;
    KILN_NOGIL(st = kiln_array_to_dlpack(AQ(a), ARR(a)->a, &t));
    CHECK_ST(st);
    uintptr_t p = (uintptr_t)t->dl_tensor.data + (uintptr_t)t->dl_tensor.byte_offset;
    int cuda = t->dl_tensor.device.device_type == kDLCUDA ||
               t->dl_tensor.device.device_type == kDLCUDAManaged;
    KILN_NOGIL(t->deleter(t));
    if (!cuda) {
        PyErr_SetString(PyExc_AttributeError,
                        "__cuda_array_interface__: the array is not in CUDA memory");
        return NULL;
    }
    return PyLong_FromSize_t((size_t)p);
}

/* from_dlpack(queue, capsule, zerod) -> Array (kiln owns the tensor) */
static PyObject *mod_from_dlpack(PyObject *m, PyObject *args) {
    PyObject *q, *cap;
    int zerod = 0;
    if (!PyArg_ParseTuple(args, "OO|p", &q, &cap, &zerod) || !check_queue_arg(q))
        return NULL;
    kiln_context *ctx = kiln_queue_context(((QueueObject *)q)->q);
    kiln_array *a = NULL;
    kiln_status st;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *t = PyCapsule_GetPointer(cap, "dltensor_versioned");
        KILN_NOGIL(st = kiln_array_from_dlpack_versioned(ctx, t, &a));
        CHECK_ST(st);
        PyCapsule_SetName(cap, "used_dltensor_versioned");
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
        KILN_NOGIL(st = kiln_array_from_dlpack(ctx, t, &a));
        CHECK_ST(st);
        PyCapsule_SetName(cap, "used_dltensor");
    } else {
        PyErr_SetString(PyExc_TypeError,
                        "from_dlpack: expected an unused DLPack capsule (\"dltensor\" or "
                        "\"dltensor_versioned\")");
        return NULL;
    }
    return array_wrap(a, q, 0, zerod);
}

/* ------------------------------------------- objects made by other C code */

/* wrap_queue(queue_type, context_type, int_ptr) -> a Queue of queue_type
 * (its Context of context_type) over an existing kiln_queue *, e.g.
 * kiln_mpi_queue's: both retained, so the Python objects and the C owner
 * each hold their own reference. The pointer must come from the package's
 * own libkiln (kiln.distributed loads the kiln_mpi built against it). */
static PyObject *mod_wrap_queue(PyObject *m, PyObject *args) {
    PyObject *qtype, *ctype;
    void *ptr;
    PyObject *iptr;
    if (!PyArg_ParseTuple(args, "OOO", &qtype, &ctype, &iptr))
        return NULL;
    if (!PyType_Check(qtype) || !PyType_IsSubtype((PyTypeObject *)qtype, QueueType) ||
        !PyType_Check(ctype) || !PyType_IsSubtype((PyTypeObject *)ctype, ContextType)) {
        PyErr_SetString(PyExc_TypeError, "wrap_queue: expected the Queue and Context types");
        return NULL;
    }
    ptr = PyLong_AsVoidPtr(iptr);
    if (!ptr) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "wrap_queue: a NULL kiln_queue *");
        return NULL;
    }
    kiln_queue *q = ptr;
    kiln_context *c = kiln_queue_context(q);
    kiln_status st = kiln_context_retain(c);
    CHECK_ST(st);
    ContextObject *co = (ContextObject *)alloc_obj((PyTypeObject *)ctype);
    if (!co) {
        kiln_context_release(c);
        return NULL;
    }
    co->c = c;
    st = kiln_queue_retain(q);
    if (st != KILN_OK) {
        Py_DECREF(co);
        return raise_status(st);
    }
    QueueObject *qo = (QueueObject *)alloc_obj((PyTypeObject *)qtype);
    if (!qo) {
        kiln_queue_release(q);
        Py_DECREF(co);
        return NULL;
    }
    qo->q = q;
    qo->context = (PyObject *)co;
    return (PyObject *)qo;
}

/* wrap_array(int_ptr, queue) -> an Array over an existing kiln_array *
 * (retained) whose operations run on queue (of the array's context). */
static PyObject *mod_wrap_array(PyObject *m, PyObject *args) {
    PyObject *iptr, *q;
    if (!PyArg_ParseTuple(args, "OO", &iptr, &q) || !check_queue_arg(q))
        return NULL;
    kiln_array *a = PyLong_AsVoidPtr(iptr);
    if (!a) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "wrap_array: a NULL kiln_array *");
        return NULL;
    }
    if (kiln_array_context(a) != kiln_queue_context(((QueueObject *)q)->q)) {
        PyErr_SetString(PyExc_ValueError,
                        "wrap_array: the array belongs to another context than the queue's");
        return NULL;
    }
    kiln_status st = kiln_array_retain(a);
    CHECK_ST(st);
    return array_wrap(a, q, kiln_array_dtype(a) == KILN_BOOL, 0);
}

/* wrap_event(Event, int_ptr) -> an Event over an existing kiln_event *
 * (retained: the caller keeps its reference). The type comes first, as in
 * wrap_queue, so that no stray value reaches the pointer. */
static PyObject *mod_wrap_event(PyObject *m, PyObject *args) {
    PyObject *etype, *iptr;
    if (!PyArg_ParseTuple(args, "OO", &etype, &iptr))
        return NULL;
    if (!PyType_Check(etype) || !PyType_IsSubtype((PyTypeObject *)etype, EventType)) {
        PyErr_SetString(PyExc_TypeError, "wrap_event: expected the Event type");
        return NULL;
    }
    kiln_event *e = PyLong_AsVoidPtr(iptr);
    if (!e) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "wrap_event: a NULL kiln_event *");
        return NULL;
    }
    kiln_status st = kiln_event_retain(e);
    CHECK_ST(st);
    return event_wrap(e);
}

/* ------------------------------------------------------------------ Rng */

typedef struct {
    PyObject_HEAD kiln_rng *r;
} RngObject;

static PyObject *rng_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    int alg = 0;
    unsigned long long seed = 0, sub = 0, off = 0;
    if (!PyArg_ParseTuple(args, "iKKK", &alg, &seed, &sub, &off))
        return NULL;
    kiln_rng_desc d = KILN_RNG_DESC(.algorithm = (kiln_rng_algorithm)alg, .seed = seed,
                                    .substream = sub, .offset = off);
    kiln_rng *r = NULL;
    kiln_status st = kiln_rng_create(&d, &r);
    CHECK_ST(st);
    RngObject *o = (RngObject *)alloc_obj(tp);
    if (!o) {
        kiln_rng_release(r);
        return NULL;
    }
    o->r = r;
    return (PyObject *)o;
}

static void rng_dealloc(PyObject *self) {
    kiln_rng_release(((RngObject *)self)->r);
    generic_dealloc_tail(self);
}

/* fill(kind, array, p1, p2): kind 0 uniform, 1 normal(mean p1, std p2),
 * 2 integers [p1, p2) */
static PyObject *rng_fill(PyObject *self, PyObject *args) {
    int kind;
    PyObject *a;
    PyObject *p1 = NULL, *p2 = NULL;
    if (!PyArg_ParseTuple(args, "iO|OO", &kind, &a, &p1, &p2) || !get_array(a, "random: out"))
        return NULL;
    kiln_rng *r = ((RngObject *)self)->r;
    kiln_status st;
    if (kind == 0) {
        KILN_NOGIL(st = kiln_rng_uniform(AQ(a), r, ARR(a)->a, 0, NULL, NULL));
    } else if (kind == 1) {
        double mean = PyFloat_AsDouble(p1), sd = PyFloat_AsDouble(p2);
        if (PyErr_Occurred())
            return NULL;
        KILN_NOGIL(st = kiln_rng_normal(AQ(a), r, ARR(a)->a, mean, sd, 0, NULL, NULL));
    } else {
        long long lo = PyLong_AsLongLong(p1), hi = PyLong_AsLongLong(p2);
        if (PyErr_Occurred())
            return NULL;
        KILN_NOGIL(st = kiln_rng_integers(AQ(a), r, ARR(a)->a, lo, hi, 0, NULL, NULL));
    }
    CHECK_ST(st);
    Py_RETURN_NONE;
}

static PyObject *rng_get_offset(PyObject *self, void *c) {
    uint64_t off = 0;
    kiln_status st = kiln_rng_get_offset(((RngObject *)self)->r, &off);
    CHECK_ST(st);
    return PyLong_FromUnsignedLongLong(off);
}

static int rng_set_offset(PyObject *self, PyObject *v, void *c) {
    unsigned long long off = v ? PyLong_AsUnsignedLongLong(v) : 0;
    if (PyErr_Occurred())
        return -1;
    kiln_status st = kiln_rng_set_offset(((RngObject *)self)->r, off);
    if (st != KILN_OK) {
        raise_status(st);
        return -1;
    }
    return 0;
}

static PyMethodDef rng_methods[] = {
    { "fill", rng_fill, METH_VARARGS, "fill(kind, array, p1, p2)" },
    { NULL, NULL, 0, NULL },
};
static PyObject *rng_int_ptr(PyObject *self, void *c) {
    return PyLong_FromVoidPtr(((RngObject *)self)->r);
}

static PyGetSetDef rng_getset[] = {
    { "offset", rng_get_offset, rng_set_offset, "the next fill's offset in 32-bit words", NULL },
    { "int_ptr", rng_int_ptr, NULL, "the kiln_rng * (for C and ctypes code)", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};
static PyType_Slot rng_slots[] = {
    { Py_tp_new, rng_new },
    { Py_tp_dealloc, rng_dealloc },
    { Py_tp_methods, rng_methods },
    { Py_tp_getset, rng_getset },
    { 0, NULL },
};
static PyType_Spec rng_spec = { "kiln._kiln.RngBase", sizeof(RngObject), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, rng_slots };

/* ------------------------------------------------------------ arguments */

#define MAX_ARGS 128

static kiln_dtype format_dtype(const char *f, Py_ssize_t itemsize) {
    if (!f)
        return KILN_UINT8;
    while (*f == '<' || *f == '=' || *f == '@' || *f == '!')
        f++;
    switch (*f) {
    case 'b':
        return KILN_INT8;
    case 'B':
    case '?':
        return KILN_UINT8;
    case 'h':
        return KILN_INT16;
    case 'H':
        return KILN_UINT16;
    case 'i':
    case 'l':
    case 'q':
        return itemsize == 8 ? KILN_INT64 : itemsize == 4 ? KILN_INT32 : 0;
    case 'I':
    case 'L':
    case 'Q':
        return itemsize == 8 ? KILN_UINT64 : itemsize == 4 ? KILN_UINT32 : 0;
    case 'e':
        return KILN_FLOAT16;
    case 'f':
        return KILN_FLOAT32;
    case 'd':
        return KILN_FLOAT64;
    case 'Z':
        return f[1] == 'f' ? KILN_COMPLEX64 : f[1] == 'd' ? KILN_COMPLEX128 : 0;
    }
    return 0;
}

/* One Python argument as a kiln_arg: arrays (as buffers for raw kernels,
 * as arrays for generators), Python and NumPy scalars (converted to the
 * parameter's dtype when it is known), kiln.LocalMemory. */
static int convert_arg(PyObject *o, kiln_dtype hint, int generator, size_t index, kiln_arg *arg) {
    memset(arg, 0, sizeof *arg);
    if (is_array(o)) {
        if (generator) {
            arg->kind = KILN_ARG_ARRAY;
            arg->value.array = ARR(o)->a;
        } else {
            if (ARR(o)->info.offset != 0) {
                PyErr_Format(PyExc_ValueError,
                             "kernel argument %zu: a view that does not start at its buffer's "
                             "start cannot be passed to a raw kernel (copy it first)",
                             index);
                return 0;
            }
            arg->kind = KILN_ARG_BUFFER;
            arg->value.buffer = kiln_array_buffer(ARR(o)->a);
        }
        return 1;
    }
    if (hint)
        return scalar_to_arg(o, hint, arg);
    if (PyFloat_Check(o))
        return scalar_to_arg(o, KILN_FLOAT64, arg);
    if (PyLong_Check(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred())
            return 0;
        return scalar_to_arg(o, v >= INT32_MIN && v <= INT32_MAX ? KILN_INT32 : KILN_INT64, arg);
    }
    if (PyObject_HasAttrString(o, "_kiln_local_bytes")) {
        PyObject *n = PyObject_GetAttrString(o, "_kiln_local_bytes");
        size_t bytes = n ? PyLong_AsSize_t(n) : (size_t)-1;
        Py_XDECREF(n);
        if (bytes == (size_t)-1)
            return 0;
        arg->kind = KILN_ARG_LOCAL;
        arg->bytes = bytes;
        return 1;
    }
    if (PyObject_CheckBuffer(o)) {
        Py_buffer b;
        if (PyObject_GetBuffer(o, &b, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
            return 0;
        kiln_dtype dt = format_dtype(b.format, b.itemsize);
        if (!dt || b.len != b.itemsize || (size_t)b.itemsize > sizeof arg->value) {
            PyBuffer_Release(&b);
            PyErr_Format(PyExc_TypeError, "kernel argument %zu: not a scalar kiln knows", index);
            return 0;
        }
        arg->kind = KILN_ARG_SCALAR;
        arg->dtype = dt;
        memcpy(&arg->value, b.buf, (size_t)b.itemsize);
        PyBuffer_Release(&b);
        return 1;
    }
    PyErr_Format(PyExc_TypeError,
                 "kernel argument %zu: expected a kiln Array, a number or kiln.LocalMemory, got %R",
                 index, (PyObject *)Py_TYPE(o));
    return 0;
}

static int convert_args(PyObject *tuple, Py_ssize_t start, PyObject *hints, int generator,
                        kiln_arg *out, size_t *count) {
    Py_ssize_t n = PyTuple_Size(tuple) - start;
    if (n > MAX_ARGS) {
        PyErr_Format(PyExc_ValueError, "at most %d kernel arguments", MAX_ARGS);
        return 0;
    }
    const char *h = NULL;
    Py_ssize_t nh = 0;
    if (hints && hints != Py_None) {
        char *hb;
        if (PyBytes_AsStringAndSize(hints, &hb, &nh) < 0)
            return 0;
        h = hb;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        kiln_dtype hint = h && i < nh ? (kiln_dtype)(unsigned char)h[i] : 0;
        if (!convert_arg(PyTuple_GetItem(tuple, start + i), hint, generator, (size_t)i, &out[i]))
            return 0;
    }
    *count = (size_t)n;
    return 1;
}

/* wait_for: None or a sequence of events. *keep (a new reference, or
 * NULL) holds the events until the caller's launch is done. */
static int parse_wait(PyObject *w, kiln_event **out, size_t *n, PyObject **keep) {
    *n = 0;
    *keep = NULL;
    if (!w || w == Py_None)
        return 1;
    PyObject *seq = PySequence_Fast(w, "wait_for must be a sequence of events");
    if (!seq)
        return 0;
    Py_ssize_t k = PySequence_Size(seq);
    if (k > MAX_ARGS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "wait_for: too many events");
        return 0;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *e = PySequence_GetItem(seq, i);
        if (!e || !PyObject_TypeCheck(e, EventType)) {
            Py_XDECREF(e);
            Py_DECREF(seq);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "wait_for: expected kiln events");
            return 0;
        }
        out[i] = ((EventObject *)e)->e; /* borrowed: seq keeps it */
        Py_DECREF(e);
    }
    *n = (size_t)k;
    *keep = seq;
    return 1;
}

static int parse_sizes(PyObject *o, unsigned *dims, size_t *v, const char *what) {
    if (PyLong_Check(o)) {
        v[0] = PyLong_AsSize_t(o);
        if (v[0] == (size_t)-1 && PyErr_Occurred())
            return 0;
        *dims = 1;
        return 1;
    }
    PyObject *seq = PySequence_Fast(o, "sizes must be an int or a tuple of ints");
    if (!seq)
        return 0;
    Py_ssize_t n = PySequence_Size(seq);
    if (n < 1 || n > 3) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: 1 to 3 dimensions", what);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PySequence_GetItem(seq, i);
        v[i] = it ? PyLong_AsSize_t(it) : (size_t)-1;
        Py_XDECREF(it);
        if (v[i] == (size_t)-1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return 0;
        }
    }
    Py_DECREF(seq);
    *dims = (unsigned)n;
    return 1;
}

/* -------------------------------------------------------------- Program */

typedef struct {
    PyObject_HEAD kiln_program *p;
    PyObject *context;
} ProgramObject;

/* ProgramBase(context, source, options, language, no_cache) builds. */
static PyObject *program_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    PyObject *ctx;
    const char *src, *opts = NULL;
    int lang = 0, nocache = 0;
    if (!PyArg_ParseTuple(args, "O!s|zip", ContextType, &ctx, &src, &opts, &lang, &nocache))
        return NULL;
    kiln_program_opts o = KILN_PROGRAM_OPTS(.language = (kiln_language)lang, .build_options = opts,
                                            .no_cache = nocache);
    kiln_program *p = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_program_create(((ContextObject *)ctx)->c, src, &o, &p));
    CHECK_ST(st);
    ProgramObject *r = (ProgramObject *)alloc_obj(tp);
    if (!r) {
        kiln_program_release(p);
        return NULL;
    }
    r->p = p;
    r->context = Py_NewRef(ctx);
    return (PyObject *)r;
}

static void program_dealloc(PyObject *self) {
    kiln_program_release(((ProgramObject *)self)->p);
    Py_XDECREF(((ProgramObject *)self)->context);
    generic_dealloc_tail(self);
}

static PyObject *program_build_log(PyObject *self, PyObject *dev) {
    if (!PyObject_TypeCheck(dev, DeviceType)) {
        PyErr_SetString(PyExc_TypeError, "build_log(device)");
        return NULL;
    }
    const char *l = kiln_program_build_log(((ProgramObject *)self)->p, ((DeviceObject *)dev)->d);
    return PyUnicode_FromString(l ? l : "");
}

static PyMethodDef program_methods[] = {
    { "build_log", program_build_log, METH_O, "the build log on a device" },
    { NULL, NULL, 0, NULL },
};
static PyType_Slot program_slots[] = {
    { Py_tp_new, program_new },
    { Py_tp_dealloc, program_dealloc },
    { Py_tp_methods, program_methods },
    { 0, NULL },
};
static PyType_Spec program_spec = { "kiln._kiln.ProgramBase", sizeof(ProgramObject), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, program_slots };

/* --------------------------------------------------------------- Kernel */

typedef struct {
    PyObject_HEAD kiln_kernel *k;
    PyObject *program;
    PyObject *hints; /* bytes: one kiln_dtype per parameter, 0 = not a scalar / unknown */
} KernelObject;

static PyObject *kernel_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    PyObject *prog;
    const char *name;
    if (!PyArg_ParseTuple(args, "O!s", ProgramType, &prog, &name))
        return NULL;
    kiln_kernel *k = NULL;
    kiln_status st = kiln_kernel_create(((ProgramObject *)prog)->p, name, &k);
    CHECK_ST(st);
    KernelObject *o = (KernelObject *)alloc_obj(tp);
    if (!o) {
        kiln_kernel_release(k);
        return NULL;
    }
    o->k = k;
    o->program = Py_NewRef(prog);
    o->hints = Py_NewRef(Py_None);
    return (PyObject *)o;
}

static void kernel_dealloc(PyObject *self) {
    KernelObject *o = (KernelObject *)self;
    kiln_kernel_release(o->k);
    Py_XDECREF(o->program);
    Py_XDECREF(o->hints);
    generic_dealloc_tail(self);
}

/* kernel(queue, global_size, local_size, *args, wait_for=None) -> Event */
static PyObject *kernel_call(PyObject *self, PyObject *args, PyObject *kw) {
    KernelObject *k = (KernelObject *)self;
    Py_ssize_t n = PyTuple_Size(args);
    if (n < 3) {
        PyErr_SetString(PyExc_TypeError, "kernel(queue, global_size, local_size, *args)");
        return NULL;
    }
    PyObject *q = PyTuple_GetItem(args, 0);
    if (!check_queue_arg(q))
        return NULL;
    unsigned dims, ldims = 0;
    size_t global[3], local[3];
    if (!parse_sizes(PyTuple_GetItem(args, 1), &dims, global, "global_size"))
        return NULL;
    PyObject *lo = PyTuple_GetItem(args, 2);
    if (lo != Py_None) {
        if (!parse_sizes(lo, &ldims, local, "local_size"))
            return NULL;
        if (ldims != dims) {
            PyErr_SetString(PyExc_ValueError, "global_size and local_size differ in dimensions");
            return NULL;
        }
    }
    kiln_arg kargs[MAX_ARGS];
    size_t na;
    if (!convert_args(args, 3, k->hints, 0, kargs, &na))
        return NULL;
    kiln_event *wait[MAX_ARGS];
    size_t nw = 0;
    PyObject *keep = NULL;
    if (kw) {
        PyObject *w = PyDict_GetItemString(kw, "wait_for");
        if (PyDict_Size(kw) > (w ? 1 : 0)) {
            PyErr_SetString(PyExc_TypeError, "kernel(): the only keyword is wait_for");
            return NULL;
        }
        if (!parse_wait(w, wait, &nw, &keep))
            return NULL;
    }
    kiln_event *e = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_kernel_launch(((QueueObject *)q)->q, k->k, dims, global,
                                       ldims ? local : NULL, na, kargs, nw, wait, &e));
    Py_XDECREF(keep);
    CHECK_ST(st);
    return event_wrap(e);
}

static PyObject *kernel_set_hints(PyObject *self, PyObject *h) {
    if (h != Py_None && !PyBytes_Check(h)) {
        PyErr_SetString(PyExc_TypeError, "hints must be bytes or None");
        return NULL;
    }
    PyObject *old = ((KernelObject *)self)->hints;
    ((KernelObject *)self)->hints = Py_NewRef(h);
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

static PyObject *kernel_num_args(PyObject *self, void *c) {
    return PyLong_FromSize_t(kiln_kernel_num_args(((KernelObject *)self)->k));
}

static PyMethodDef kernel_methods[] = {
    { "_set_hints", kernel_set_hints, METH_O, "scalar dtypes per parameter (bytes)" },
    { NULL, NULL, 0, NULL },
};
static PyObject *kernel_int_ptr(PyObject *self, void *c) {
    return PyLong_FromVoidPtr(((KernelObject *)self)->k);
}

static PyGetSetDef kernel_getset[] = {
    { "int_ptr", kernel_int_ptr, NULL, "the kiln_kernel * (for C and ctypes code)", NULL },
    { "num_args", kernel_num_args, NULL, "number of parameters", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};
static PyType_Slot kernel_slots[] = {
    { Py_tp_new, kernel_new },       { Py_tp_dealloc, kernel_dealloc },
    { Py_tp_call, kernel_call },     { Py_tp_methods, kernel_methods },
    { Py_tp_getset, kernel_getset }, { 0, NULL },
};
static PyType_Spec kernel_spec = { "kiln._kiln.KernelBase", sizeof(KernelObject), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, kernel_slots };

/* ----------------------------------------------------------- generators */

enum {
    GEN_ELEMENTWISE = 1,
    GEN_REDUCTION = 2,
    GEN_SCAN = 3,
    GEN_SELECT = 4,
    GEN_OFFLOAD = 5,
    GEN_ALLOCATE = 6
};

typedef struct {
    PyObject_HEAD int kind;
    void *g;
    PyObject *context;
} GeneratorObject;

static void generator_dealloc(PyObject *self) {
    GeneratorObject *o = (GeneratorObject *)self;
    if (o->kind == GEN_ELEMENTWISE)
        kiln_elementwise_release(o->g);
    else if (o->kind == GEN_REDUCTION)
        kiln_reduction_release(o->g);
    else if (o->kind == GEN_SCAN)
        kiln_scan_release(o->g);
    else if (o->kind == GEN_SELECT)
        kiln_select_release(o->g);
    else if (o->kind == GEN_OFFLOAD)
        kiln_offload_release(o->g);
    else if (o->kind == GEN_ALLOCATE)
        kiln_allocate_release(o->g);
    Py_XDECREF(o->context);
    generic_dealloc_tail(self);
}

static PyObject *generator_wrap(int kind, void *g, PyObject *ctx) {
    GeneratorObject *o = (GeneratorObject *)alloc_obj(ElementwiseType);
    if (!o) {
        if (kind == GEN_ELEMENTWISE)
            kiln_elementwise_release(g);
        else if (kind == GEN_REDUCTION)
            kiln_reduction_release(g);
        else if (kind == GEN_SCAN)
            kiln_scan_release(g);
        else if (kind == GEN_SELECT)
            kiln_select_release(g);
        else if (kind == GEN_ALLOCATE)
            kiln_allocate_release(g);
        else
            kiln_offload_release(g);
        return NULL;
    }
    o->kind = kind;
    o->g = g;
    o->context = Py_NewRef(ctx);
    return (PyObject *)o;
}

/* elementwise_create(ctx, arguments, operation, name, preamble, options, flags) */
static PyObject *mod_elementwise_create(PyObject *m, PyObject *args) {
    PyObject *ctx;
    const char *arguments, *operation, *name = NULL, *preamble = NULL, *options = NULL;
    unsigned flags = 0;
    if (!PyArg_ParseTuple(args, "O!ss|zzzI", ContextType, &ctx, &arguments, &operation, &name,
                          &preamble, &options, &flags))
        return NULL;
    kiln_elementwise_desc d =
        KILN_ELEMENTWISE_DESC(.arguments = arguments, .operation = operation, .name = name,
                              .preamble = preamble, .flags = flags, .options = options);
    kiln_elementwise *g = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_elementwise_create(((ContextObject *)ctx)->c, &d, &g));
    CHECK_ST(st);
    return generator_wrap(GEN_ELEMENTWISE, g, ctx);
}

/* reduction_create(ctx, arguments, out_type, neutral, reduce, map, preamble,
 * name, options, initial) */
static PyObject *mod_reduction_create(PyObject *m, PyObject *args) {
    PyObject *ctx;
    const char *arguments, *out_type, *neutral, *reduce, *map, *preamble = NULL, *name = NULL,
                                                               *options = NULL, *initial = NULL;
    if (!PyArg_ParseTuple(args, "O!sssss|zzzz", ContextType, &ctx, &arguments, &out_type, &neutral,
                          &reduce, &map, &preamble, &name, &options, &initial))
        return NULL;
    kiln_reduction_desc d =
        KILN_REDUCTION_DESC(.arguments = arguments, .out_type = out_type, .neutral = neutral,
                            .reduce = reduce, .map = map, .preamble = preamble, .name = name,
                            .options = options, .initial = initial);
    kiln_reduction *g = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_reduction_create(((ContextObject *)ctx)->c, &d, &g));
    CHECK_ST(st);
    return generator_wrap(GEN_REDUCTION, g, ctx);
}

/* scan_create(ctx, arguments, scan_type, neutral, scan, input, output,
 * segment_start, preamble, name, options) */
static PyObject *mod_scan_create(PyObject *m, PyObject *args) {
    PyObject *ctx;
    const char *arguments, *scan_type, *neutral, *scan, *input, *output,
        *seg = NULL, *preamble = NULL, *name = NULL, *options = NULL;
    if (!PyArg_ParseTuple(args, "O!ssssss|zzzz", ContextType, &ctx, &arguments, &scan_type,
                          &neutral, &scan, &input, &output, &seg, &preamble, &name, &options))
        return NULL;
    kiln_scan_desc d =
        KILN_SCAN_DESC(.arguments = arguments, .scan_type = scan_type, .neutral = neutral,
                       .scan = scan, .input = input, .output = output, .segment_start = seg,
                       .preamble = preamble, .name = name, .options = options);
    kiln_scan *g = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_scan_create(((ContextObject *)ctx)->c, &d, &g));
    CHECK_ST(st);
    return generator_wrap(GEN_SCAN, g, ctx);
}

/* select_create(ctx, arguments, predicate, output, rejected_output, preamble, name) */
static PyObject *mod_select_create(PyObject *m, PyObject *args) {
    PyObject *ctx;
    const char *arguments, *predicate, *output, *rejected = NULL, *preamble = NULL, *name = NULL;
    if (!PyArg_ParseTuple(args, "O!sss|zzz", ContextType, &ctx, &arguments, &predicate, &output,
                          &rejected, &preamble, &name))
        return NULL;
    kiln_select_desc d =
        KILN_SELECT_DESC(.arguments = arguments, .predicate = predicate, .output = output,
                         .rejected_output = rejected, .preamble = preamble, .name = name);
    kiln_select *g = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_select_create(((ContextObject *)ctx)->c, &d, &g));
    CHECK_ST(st);
    return generator_wrap(GEN_SELECT, g, ctx);
}

/* allocate_create(ctx, arguments, item_type, operation, preamble, name) */
static PyObject *mod_allocate_create(PyObject *m, PyObject *args) {
    PyObject *ctx;
    const char *arguments, *item_type, *operation, *preamble = NULL, *name = NULL;
    if (!PyArg_ParseTuple(args, "O!sss|zz", ContextType, &ctx, &arguments, &item_type, &operation,
                          &preamble, &name))
        return NULL;
    kiln_allocate_desc d =
        KILN_ALLOCATE_DESC(.arguments = arguments, .item_type = item_type, .operation = operation,
                           .preamble = preamble, .name = name);
    kiln_allocate *g = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_allocate_create(((ContextObject *)ctx)->c, &d, &g));
    CHECK_ST(st);
    return generator_wrap(GEN_ALLOCATE, g, ctx);
}

/* A tuple of the k arrays, each wrapped on queue q (all released when one
 * cannot be). */
static PyObject *arrays_tuple(PyObject *q, size_t k, kiln_array **arrays) {
    PyObject *t = PyTuple_New((Py_ssize_t)k);
    for (size_t i = 0; i < k; i++) {
        PyObject *o = t ? array_wrap(arrays[i], q, 0, 0) : NULL;
        if (!o) {
            /* array_wrap released arrays[i] when it failed */
            for (size_t j = t ? i + 1 : i; j < k; j++)
                kiln_array_release(arrays[j]);
            Py_XDECREF(t);
            return NULL;
        }
        PyTuple_SetItem(t, (Py_ssize_t)i, o); /* steals o */
    }
    return t;
}

/* A list builder's run: (items, offsets) (Blocks), or with a capacity
 * (>= 0) (items, offsets, check) at once (kiln_allocate_run_async). */
static PyObject *allocate_run(GeneratorObject *g, PyObject *q, size_t n, size_t na,
                              const kiln_arg *kargs, Py_ssize_t capacity) {
    kiln_array *out[3] = { NULL, NULL, NULL };
    kiln_status st;
    kiln_queue *qq = ((QueueObject *)q)->q;
    if (capacity < 0) {
        KILN_NOGIL(st = kiln_allocate_run(qq, g->g, n, na, kargs, &out[0], &out[1]));
        CHECK_ST(st);
        return arrays_tuple(q, 2, out);
    }
    size_t one = 1;
    KILN_NOGIL(st = kiln_array_empty(kiln_queue_context(qq), KILN_INT64, 1, &one, &out[2]));
    CHECK_ST(st);
    KILN_NOGIL(st = kiln_allocate_run_async(qq, g->g, n, na, kargs, (size_t)capacity, out[2], 0,
                                            NULL, NULL, &out[0], &out[1]));
    if (st != KILN_OK)
        kiln_array_release(out[2]);
    CHECK_ST(st);
    return arrays_tuple(q, 3, out);
}

/* run(queue, n, args, hints[, capacity]) -> count (a selection; Blocks)
 * or (items, offsets) (a list builder; Blocks), (items, offsets, check)
 * with a capacity (at once) */
static PyObject *generator_run(PyObject *self, PyObject *args) {
    GeneratorObject *g = (GeneratorObject *)self;
    PyObject *q, *targs, *hints;
    Py_ssize_t n, capacity = -1;
    if (!PyArg_ParseTuple(args, "OnO!O|n", &q, &n, &PyTuple_Type, &targs, &hints, &capacity) ||
        !check_queue_arg(q))
        return NULL;
    if (g->kind != GEN_SELECT && g->kind != GEN_ALLOCATE) {
        PyErr_SetString(PyExc_TypeError, "run() is for selections and list builders");
        return NULL;
    }
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "range must be >= 0");
        return NULL;
    }
    kiln_arg kargs[MAX_ARGS];
    size_t na, count = 0;
    if (!convert_args(targs, 0, hints, 1, kargs, &na))
        return NULL;
    if (g->kind == GEN_ALLOCATE)
        return allocate_run(g, q, (size_t)n, na, kargs, capacity);
    kiln_status st;
    KILN_NOGIL(st = kiln_select_run(((QueueObject *)q)->q, g->g, (size_t)n, na, kargs, &count));
    CHECK_ST(st);
    return PyLong_FromSize_t(count);
}

/* launch(queue, n, args: tuple, hints: bytes|None, wait_for=None,
 *        result: Array|None) -> Event */
static PyObject *generator_launch(PyObject *self, PyObject *args) {
    GeneratorObject *g = (GeneratorObject *)self;
    PyObject *q, *targs, *hints, *wait = Py_None, *result = Py_None;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "OnO!O|OO", &q, &n, &PyTuple_Type, &targs, &hints, &wait,
                          &result) ||
        !check_queue_arg(q))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "range must be >= 0");
        return NULL;
    }
    kiln_arg kargs[MAX_ARGS];
    size_t na;
    if (!convert_args(targs, 0, hints, 1, kargs, &na))
        return NULL;
    if (g->kind == GEN_REDUCTION && !get_array(result, "reduction result"))
        return NULL;
    if (g->kind != GEN_ELEMENTWISE && g->kind != GEN_REDUCTION && g->kind != GEN_SCAN) {
        PyErr_SetString(PyExc_TypeError,
                        "a selection runs with run(), an offload with offload_run()");
        return NULL;
    }
    kiln_event *w[MAX_ARGS];
    size_t nw;
    PyObject *keep;
    if (!parse_wait(wait, w, &nw, &keep))
        return NULL;
    kiln_queue *qq = ((QueueObject *)q)->q;
    kiln_event *e = NULL;
    kiln_status st;
    if (g->kind == GEN_ELEMENTWISE)
        KILN_NOGIL(st = kiln_elementwise_launch(qq, g->g, (size_t)n, na, kargs, nw, w, &e));
    else if (g->kind == GEN_REDUCTION)
        KILN_NOGIL(st = kiln_reduction_run_async(qq, g->g, (size_t)n, na, kargs, ARR(result)->a,
                                                 NULL, nw, w, &e));
    else
        KILN_NOGIL(st = kiln_scan_launch(qq, g->g, (size_t)n, na, kargs, nw, w, &e));
    Py_XDECREF(keep);
    CHECK_ST(st);
    return event_wrap(e);
}

static PyMethodDef generator_methods[] = {
    { "launch", generator_launch, METH_VARARGS,
      "launch(queue, n, args, hints, wait_for=None, result=None) -> Event" },
    { "run", generator_run, METH_VARARGS,
      "run(queue, n, args, hints[, capacity]) -> count (selections) or (items, offsets) (list "
      "builders; with a capacity (items, offsets, check), non-blocking)" },
    { NULL, NULL, 0, NULL },
};
static PyType_Slot generator_slots[] = {
    { Py_tp_dealloc, generator_dealloc },
    { Py_tp_methods, generator_methods },
    { 0, NULL },
};
static PyType_Spec generator_spec = { "kiln._kiln.GeneratorBase", sizeof(GeneratorObject), 0,
                                      Py_TPFLAGS_DEFAULT, generator_slots };

/* -------------------------------------------------------------- futures */

typedef struct {
    PyObject_HEAD kiln_future *f;
    PyObject *context; /* the ContextBase (kiln_future_ready of a step's bytes) */
} FutureObject;

static PyTypeObject *FutureType;

static PyObject *future_wrap(kiln_future *f, PyObject *ctx) {
    FutureObject *o = (FutureObject *)alloc_obj(FutureType);
    if (!o) {
        kiln_future_release(f);
        return NULL;
    }
    o->f = f;
    o->context = Py_NewRef(ctx);
    return (PyObject *)o;
}

static void future_dealloc(PyObject *self) {
    FutureObject *o = (FutureObject *)self;
    kiln_future *f = o->f;
    KILN_NOGIL(kiln_future_release(f));
    Py_XDECREF(o->context);
    generic_dealloc_tail(self);
}

static PyObject *future_wait(PyObject *self, PyObject *unused) {
    kiln_status st;
    kiln_future *f = ((FutureObject *)self)->f;
    KILN_NOGIL(st = kiln_future_wait(f));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* value() -> bytes, or None for a future without a value (Blocks) */
static PyObject *future_value(PyObject *self, PyObject *unused) {
    kiln_status st;
    kiln_future *f = ((FutureObject *)self)->f;
    KILN_NOGIL(st = kiln_future_wait(f));
    CHECK_ST(st);
    size_t size = 0;
    const void *v = kiln_future_value(f, &size);
    if (!v)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize(v, (Py_ssize_t)size);
}

static PyObject *future_state(PyObject *self, void *c) {
    kiln_event_state s;
    kiln_status st = kiln_future_get_state(((FutureObject *)self)->f, &s);
    CHECK_ST(st);
    return PyLong_FromLong((long)s);
}

static PyObject *future_event(PyObject *self, PyObject *unused) {
    kiln_event *e = kiln_future_event(((FutureObject *)self)->f);
    kiln_status st = kiln_event_retain(e);
    CHECK_ST(st);
    return event_wrap(e);
}

static PyObject *future_cancel(PyObject *self, PyObject *unused) {
    kiln_status st = kiln_future_cancel(((FutureObject *)self)->f);
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* A step's continuation on kiln's callback thread: user_data is (fn, ctx),
 * fn(value: bytes|None) returns None, a FutureBase or bytes. Any other
 * result, or an exception (reported to sys.unraisablehook unless fn is
 * the package's wrapper, which keeps it), fails the step with
 * KILN_ERROR_INVALID_ARGUMENT. */
static kiln_status future_py_step(const void *value, size_t size, void *user_data,
                                  kiln_future **next) {
    if (g_finalizing)
        return KILN_ERROR_CANCELED;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *fn = PyTuple_GetItem(user_data, 0), *ctx = PyTuple_GetItem(user_data, 1);
    PyObject *arg = value ? PyBytes_FromStringAndSize(value, (Py_ssize_t)size) : Py_NewRef(Py_None);
    PyObject *r = arg ? PyObject_CallFunctionObjArgs(fn, arg, NULL) : NULL;
    Py_XDECREF(arg);
    kiln_status st = KILN_OK;
    if (!r) {
        PyErr_WriteUnraisable(fn);
        st = KILN_ERROR_INVALID_ARGUMENT;
    } else if (PyObject_TypeCheck(r, FutureType)) {
        st = kiln_future_retain(((FutureObject *)r)->f);
        if (st == KILN_OK)
            *next = ((FutureObject *)r)->f;
    } else if (PyBytes_Check(r)) {
        st = kiln_future_ready(((ContextObject *)ctx)->c, PyBytes_AsString(r),
                               (size_t)PyBytes_Size(r), next);
    } else if (r != Py_None) {
        st = KILN_ERROR_INVALID_ARGUMENT;
    }
    Py_XDECREF(r);
    PyGILState_Release(g);
    return st;
}

/* Drops a step's (fn, ctx) once its future has settled, whichever way
 * (a step whose fn never runs too). */
static void future_py_drop(kiln_event *event, kiln_event_state state, void *user_data) {
    if (g_finalizing)
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)user_data);
    PyGILState_Release(g);
}

/* then(fn) -> the step's future */
static PyObject *future_then(PyObject *self, PyObject *fn) {
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "then: expected a callable");
        return NULL;
    }
    FutureObject *o = (FutureObject *)self;
    PyObject *ud = PyTuple_Pack(2, fn, o->context);
    if (!ud)
        return NULL;
    kiln_future *next = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_future_then(o->f, future_py_step, ud, &next));
    if (st != KILN_OK) {
        Py_DECREF(ud);
        return raise_status(st);
    }
    /* ud's reference goes to the drop callback (it runs after the step) */
    KILN_NOGIL(st = kiln_event_on_complete(kiln_future_event(next), future_py_drop, ud));
    if (st != KILN_OK) { /* keep ud alive (a leak, never a dangling fn) */
        kiln_future_release(next);
        return raise_status(st);
    }
    return future_wrap(next, o->context);
}

static PyMethodDef future_methods[] = {
    { "wait", future_wait, METH_NOARGS, "blocks until settled; raises its failure" },
    { "value", future_value, METH_NOARGS, "waits; the value's bytes, or None" },
    { "event", future_event, METH_NOARGS, "an Event that settles with the future" },
    { "cancel", future_cancel, METH_NOARGS, "cancels a step or join not started" },
    { "then", future_then, METH_O, "then(fn): fn(bytes|None) -> None|FutureBase|bytes" },
    { NULL, NULL, 0, NULL },
};
static PyGetSetDef future_getset[] = {
    { "state", future_state, NULL, "0 complete, -1 failed, else pending", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};
static PyType_Slot future_slots[] = {
    { Py_tp_dealloc, future_dealloc },
    { Py_tp_methods, future_methods },
    { Py_tp_getset, future_getset },
    { 0, NULL },
};
static PyType_Spec future_spec = { "kiln._kiln.FutureBase", sizeof(FutureObject), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, future_slots };

/* array_read_future(array) -> a future of the array's dense bytes */
static PyObject *mod_array_read_future(PyObject *m, PyObject *args) {
    PyObject *a;
    if (!PyArg_ParseTuple(args, "O", &a) || !get_array(a, "read_future: array"))
        return NULL;
    kiln_future *f = NULL;
    kiln_status st;
    kiln_queue *q = AQ(a);
    KILN_NOGIL(st = kiln_array_read_future(q, ARR(a)->a, 0, NULL, &f));
    CHECK_ST(st);
    return future_wrap(f, ((QueueObject *)ARR(a)->queue)->context);
}

/* future_ready(context, bytes) */
static PyObject *mod_future_ready(PyObject *m, PyObject *args) {
    PyObject *ctx;
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "O!y*", ContextType, &ctx, &b))
        return NULL;
    kiln_future *f = NULL;
    kiln_status st = kiln_future_ready(((ContextObject *)ctx)->c, b.buf, (size_t)b.len, &f);
    PyBuffer_Release(&b);
    CHECK_ST(st);
    return future_wrap(f, ctx);
}

/* when_all(futures) / when_any(futures): any = 1 for when_any */
static PyObject *future_join(PyObject *seq_in, int any) {
    PyObject *seq = PySequence_Tuple(seq_in);
    if (!seq)
        return NULL;
    Py_ssize_t n = PyTuple_Size(seq);
    if (n < 1 || n > 4096) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "when_all/when_any: give 1 to 4096 futures");
        return NULL;
    }
    kiln_future **fs = PyMem_Malloc((size_t)n * sizeof *fs);
    if (!fs) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GetItem(seq, i); /* borrowed: seq holds it */
        if (!PyObject_TypeCheck(x, FutureType)) {
            PyMem_Free(fs);
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "when_all/when_any: expected kiln Futures");
            return NULL;
        }
        fs[i] = ((FutureObject *)x)->f;
    }
    PyObject *ctx = ((FutureObject *)PyTuple_GetItem(seq, 0))->context;
    kiln_future *r = NULL;
    kiln_status st;
    if (any)
        KILN_NOGIL(st = kiln_future_when_any((size_t)n, fs, &r));
    else
        KILN_NOGIL(st = kiln_future_when_all((size_t)n, fs, &r));
    PyMem_Free(fs);
    PyObject *res = st == KILN_OK ? future_wrap(r, ctx) : raise_status(st);
    Py_DECREF(seq);
    return res;
}

static PyObject *mod_when_all(PyObject *m, PyObject *seq) {
    return future_join(seq, 0);
}

static PyObject *mod_when_any(PyObject *m, PyObject *seq) {
    return future_join(seq, 1);
}

/* ----------------------------------------------------------- hash table */

typedef struct {
    PyObject_HEAD kiln_hash_table *t;
    PyObject *queue; /* the QueueBase its calls run on */
} HashTableObject;

static PyTypeObject *HashTableType;

/* HashTableBase(queue, capacity, key_dtype, value_dtype) */
static PyObject *hash_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    PyObject *q;
    Py_ssize_t cap;
    long kd, vd;
    if (!PyArg_ParseTuple(args, "Onll", &q, &cap, &kd, &vd) || !check_queue_arg(q) ||
        !check_dtype(kd) || !check_dtype(vd))
        return NULL;
    if (cap < 0) {
        PyErr_SetString(PyExc_ValueError, "HashTable: capacity must be >= 1");
        return NULL;
    }
    kiln_hash_table *t = NULL;
    kiln_status st;
    kiln_queue *qq = ((QueueObject *)q)->q;
    KILN_NOGIL(st = kiln_hash_table_create(qq, (size_t)cap, (kiln_dtype)kd, (kiln_dtype)vd, &t));
    CHECK_ST(st);
    HashTableObject *o = (HashTableObject *)alloc_obj(tp);
    if (!o) {
        kiln_hash_table_release(t);
        return NULL;
    }
    o->t = t;
    o->queue = Py_NewRef(q);
    return (PyObject *)o;
}

static void hash_dealloc(PyObject *self) {
    HashTableObject *o = (HashTableObject *)self;
    kiln_hash_table *t = o->t;
    KILN_NOGIL(kiln_hash_table_release(t));
    Py_XDECREF(o->queue);
    generic_dealloc_tail(self);
}

/* The table's queue, or NULL (ValueError) when it is closed. */
static kiln_queue *hash_queue(PyObject *self) {
    QueueObject *q = (QueueObject *)((HashTableObject *)self)->queue;
    return queue_ok(q) ? q->q : NULL;
}

static PyObject *hash_clear(PyObject *self, PyObject *unused) {
    kiln_queue *q = hash_queue(self);
    if (!q)
        return NULL;
    kiln_status st;
    kiln_hash_table *t = ((HashTableObject *)self)->t;
    KILN_NOGIL(st = kiln_hash_table_clear(q, t));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* insert(keys, values, add): add = 1: insert-or-add (values may be None) */
/* insert(keys, values, add=False, blocking=True): None, or (blocking
 * False) the Event of the non-blocking form, which fails when the table is
 * full or a key is reserved */
static PyObject *hash_insert(PyObject *self, PyObject *args) {
    PyObject *k, *v;
    int add = 0, blocking = 1;
    if (!PyArg_ParseTuple(args, "OO|pp", &k, &v, &add, &blocking) ||
        !get_array(k, "HashTable: keys") ||
        ((v != Py_None || !add) && !get_array(v, "HashTable: values")))
        return NULL;
    kiln_queue *q = hash_queue(self);
    if (!q)
        return NULL;
    kiln_status st;
    kiln_hash_table *t = ((HashTableObject *)self)->t;
    kiln_array *va = v == Py_None ? NULL : ARR(v)->a;
    kiln_event *e = NULL;
    if (blocking && add)
        KILN_NOGIL(st = kiln_hash_table_add(q, t, ARR(k)->a, va));
    else if (blocking)
        KILN_NOGIL(st = kiln_hash_table_insert(q, t, ARR(k)->a, va));
    else if (add)
        KILN_NOGIL(st = kiln_hash_table_add_async(q, t, ARR(k)->a, va, 0, NULL, &e));
    else
        KILN_NOGIL(st = kiln_hash_table_insert_async(q, t, ARR(k)->a, va, 0, NULL, &e));
    CHECK_ST(st);
    if (blocking)
        Py_RETURN_NONE;
    return event_wrap(e);
}

/* lookup(keys, values_out, missing: bytes of one value, found|None) */
static PyObject *hash_lookup(PyObject *self, PyObject *args) {
    PyObject *k, *v, *f = Py_None;
    Py_buffer miss;
    if (!PyArg_ParseTuple(args, "OOy*|O", &k, &v, &miss, &f))
        return NULL;
    if (!get_array(k, "HashTable: keys") || !get_array(v, "HashTable: values") ||
        (f != Py_None && !get_array(f, "HashTable: found"))) {
        PyBuffer_Release(&miss);
        return NULL;
    }
    kiln_queue *q = hash_queue(self);
    if (!q || miss.len < 4) {
        if (q)
            PyErr_SetString(PyExc_ValueError, "HashTable: missing must be 4 bytes");
        PyBuffer_Release(&miss);
        return NULL;
    }
    kiln_status st;
    kiln_hash_table *t = ((HashTableObject *)self)->t;
    kiln_array *fa = f == Py_None ? NULL : ARR(f)->a;
    KILN_NOGIL(st = kiln_hash_table_lookup(q, t, ARR(k)->a, ARR(v)->a,
                                           element_arg(ARR(v)->info.dtype, miss.buf), fa, 0, NULL,
                                           NULL));
    PyBuffer_Release(&miss);
    CHECK_ST(st);
    Py_RETURN_NONE;
}

static PyObject *hash_erase(PyObject *self, PyObject *k) {
    if (!get_array(k, "HashTable: keys"))
        return NULL;
    kiln_queue *q = hash_queue(self);
    if (!q)
        return NULL;
    kiln_status st;
    kiln_hash_table *t = ((HashTableObject *)self)->t;
    KILN_NOGIL(st = kiln_hash_table_erase(q, t, ARR(k)->a, 0, NULL, NULL));
    CHECK_ST(st);
    Py_RETURN_NONE;
}

static PyObject *hash_count(PyObject *self, PyObject *unused) {
    kiln_queue *q = hash_queue(self);
    if (!q)
        return NULL;
    size_t n = 0;
    kiln_status st;
    kiln_hash_table *t = ((HashTableObject *)self)->t;
    KILN_NOGIL(st = kiln_hash_table_count(q, t, &n));
    CHECK_ST(st);
    return PyLong_FromSize_t(n);
}

static PyObject *hash_get_queue(PyObject *self, void *c) {
    return Py_NewRef(((HashTableObject *)self)->queue);
}

static PyMethodDef hash_methods[] = {
    { "clear", hash_clear, METH_NOARGS, "empties the table (Blocks)" },
    { "insert", hash_insert, METH_VARARGS,
      "insert(keys, values, add=False, blocking=True): None, or an Event when not blocking" },
    { "lookup", hash_lookup, METH_VARARGS, "lookup(keys, values_out, missing, found=None)" },
    { "erase", hash_erase, METH_O, "erase(keys)" },
    { "count", hash_count, METH_NOARGS, "the number of keys (Blocks)" },
    { NULL, NULL, 0, NULL },
};
static PyGetSetDef hash_getset[] = {
    { "queue", hash_get_queue, NULL, "the queue the table's calls run on", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};
static PyType_Slot hash_slots[] = {
    { Py_tp_new, hash_new },
    { Py_tp_dealloc, hash_dealloc },
    { Py_tp_methods, hash_methods },
    { Py_tp_getset, hash_getset },
    { 0, NULL },
};
static PyType_Spec hash_spec = { "kiln._kiln.HashTableBase", sizeof(HashTableObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, hash_slots };

/* ----------------------------------------------------- offload, regions */

/* offload_create(ctx, params, body, dims, index_names, preamble, name, options) */
static PyObject *mod_offload_create(PyObject *m, PyObject *args) {
    PyObject *ctx;
    const char *params, *body, *idx = NULL, *pre = NULL, *name = NULL, *opts = NULL;
    unsigned dims;
    if (!PyArg_ParseTuple(args, "O!ssI|zzzz", ContextType, &ctx, &params, &body, &dims, &idx, &pre,
                          &name, &opts))
        return NULL;
    kiln_offload_opts o =
        KILN_OFFLOAD_OPTS(.index_names = idx, .preamble = pre, .name = name, .build_options = opts);
    kiln_offload *g = NULL;
    kiln_status st;
    KILN_NOGIL(st = kiln_offload_create(((ContextObject *)ctx)->c, params, body, dims, &o, &g));
    CHECK_ST(st);
    return generator_wrap(GEN_OFFLOAD, g, ctx);
}

/* Host maps: objects with _kiln_map_kind (a kiln_data_kind) and
 * _kiln_map_obj (a buffer-protocol object). Their buffers are held in
 * bufs[0..*nbufs) until the caller releases them. */
static int convert_maps(PyObject *tuple, PyObject *hints, kiln_arg *out, size_t *count,
                        Py_buffer *bufs, size_t *nbufs) {
    Py_ssize_t n = PyTuple_Size(tuple);
    *nbufs = 0;
    if (n > MAX_ARGS) {
        PyErr_SetString(PyExc_ValueError, "too many arguments");
        return 0;
    }
    const char *h = NULL;
    Py_ssize_t nh = 0;
    if (hints && hints != Py_None) {
        char *hb;
        if (PyBytes_AsStringAndSize(hints, &hb, &nh) < 0)
            return 0;
        h = hb;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GetItem(tuple, i);
        if (PyObject_HasAttrString(o, "_kiln_map_kind")) {
            PyObject *k = PyObject_GetAttrString(o, "_kiln_map_kind");
            PyObject *obj = PyObject_GetAttrString(o, "_kiln_map_obj");
            long kind = k ? PyLong_AsLong(k) : -1;
            Py_XDECREF(k);
            if (!obj || (kind == -1 && PyErr_Occurred())) {
                Py_XDECREF(obj);
                return 0;
            }
            int flags = PyBUF_C_CONTIGUOUS;
            if (kind == KILN_DATA_FROM || kind == KILN_DATA_TOFROM)
                flags |= PyBUF_WRITABLE;
            int r = PyObject_GetBuffer(obj, &bufs[*nbufs], flags);
            Py_DECREF(obj);
            if (r < 0)
                return 0;
            Py_buffer *b = &bufs[(*nbufs)++];
            memset(&out[i], 0, sizeof out[i]);
            out[i].kind = KILN_ARG_MAP;
            out[i].map = (kiln_data_kind)kind;
            out[i].bytes = kind == KILN_DATA_PRESENT ? 0 : (size_t)b->len;
            out[i].value.host = b->buf;
        } else {
            kiln_dtype hint = h && i < nh ? (kiln_dtype)(unsigned char)h[i] : 0;
            if (!convert_arg(o, hint, 1, (size_t)i, &out[i]))
                return 0;
        }
    }
    *count = (size_t)n;
    return 1;
}

static void release_bufs(Py_buffer *bufs, size_t n) {
    for (size_t i = 0; i < n; i++)
        PyBuffer_Release(&bufs[i]);
}

typedef struct {
    PyObject_HEAD kiln_data_region *r;
    PyObject *queue;
    PyObject *parent;
    Py_buffer bufs[MAX_ARGS];
    size_t nbufs;
    int busy; /* offloads running in it on other threads (GIL released) */
} RegionObject;

static PyTypeObject *RegionType;

static void nap_1ms(void) {
#ifdef _WIN32
    Sleep(1);
#else
    struct timespec ts = { 0, 1000000 };
    nanosleep(&ts, NULL);
#endif
}

/* Ends the region once the offloads running in it (on other threads)
 * are done: o->r is cleared first, so none starts meanwhile (they raise
 * "not open"); the wait gives the GIL up. */
static void region_end_now(RegionObject *o, kiln_status *st) {
    if (o->r) {
        kiln_data_region *r = o->r;
        o->r = NULL;
        while (o->busy)
            KILN_NOGIL(nap_1ms());
        KILN_NOGIL(*st = kiln_data_region_end(r));
        release_bufs(o->bufs, o->nbufs);
        o->nbufs = 0;
    }
}

static void region_dealloc(PyObject *self) {
    RegionObject *o = (RegionObject *)self;
    kiln_status st = KILN_OK;
    region_end_now(o, &st);
    Py_XDECREF(o->queue);
    Py_XDECREF(o->parent);
    generic_dealloc_tail(self);
}

static PyObject *region_end(PyObject *self, PyObject *unused) {
    kiln_status st = KILN_OK;
    region_end_now((RegionObject *)self, &st);
    CHECK_ST(st);
    Py_RETURN_NONE;
}

static PyMethodDef region_methods[] = {
    { "end", region_end, METH_NOARGS, "copies FROM/TOFROM maps back and frees (Blocks)" },
    { NULL, NULL, 0, NULL },
};
static PyType_Slot region_slots[] = {
    { Py_tp_dealloc, region_dealloc },
    { Py_tp_methods, region_methods },
    { 0, NULL },
};
static PyType_Spec region_spec = { "kiln._kiln.RegionBase", sizeof(RegionObject), 0,
                                   Py_TPFLAGS_DEFAULT, region_slots };

/* region_begin(queue, parent|None, maps tuple) -> region */
static PyObject *mod_region_begin(PyObject *m, PyObject *args) {
    PyObject *q, *parent, *maps;
    if (!PyArg_ParseTuple(args, "OOO!", &q, &parent, &PyTuple_Type, &maps) || !check_queue_arg(q))
        return NULL;
    if (parent != Py_None &&
        (!PyObject_TypeCheck(parent, RegionType) || !((RegionObject *)parent)->r)) {
        PyErr_SetString(PyExc_ValueError, "data region: the parent is not an open region");
        return NULL;
    }
    RegionObject *o = (RegionObject *)alloc_obj(RegionType);
    if (!o)
        return NULL;
    o->queue = Py_NewRef(q);
    o->parent = Py_NewRef(parent);
    kiln_arg a[MAX_ARGS];
    size_t n;
    if (!convert_maps(maps, NULL, a, &n, o->bufs, &o->nbufs)) {
        Py_DECREF(o);
        return NULL;
    }
    kiln_status st;
    kiln_data_region *pr = parent == Py_None ? NULL : ((RegionObject *)parent)->r;
    if (pr)
        ((RegionObject *)parent)->busy++; /* its end waits for this begin */
    kiln_data_region *nr = NULL;
    KILN_NOGIL(st = kiln_data_region_begin(((QueueObject *)q)->q, pr, n, a, &nr));
    if (pr)
        ((RegionObject *)parent)->busy--;
    o->r = nr;
    if (st != KILN_OK) {
        Py_DECREF(o);
        return raise_status(st);
    }
    return (PyObject *)o;
}

/* offload_run(offload, queue, region|None, range, args, hints) (Blocks) */
static PyObject *mod_offload_run(PyObject *m, PyObject *args) {
    PyObject *g, *q, *reg, *rng, *targs, *hints;
    if (!PyArg_ParseTuple(args, "OOOOO!O", &g, &q, &reg, &rng, &PyTuple_Type, &targs, &hints) ||
        !check_queue_arg(q))
        return NULL;
    if (!PyObject_TypeCheck(g, ElementwiseType) || ((GeneratorObject *)g)->kind != GEN_OFFLOAD) {
        PyErr_SetString(PyExc_TypeError, "offload_run: not an offload");
        return NULL;
    }
    if (reg != Py_None && (!PyObject_TypeCheck(reg, RegionType) || !((RegionObject *)reg)->r)) {
        PyErr_SetString(PyExc_ValueError, "offload: the data region is not open");
        return NULL;
    }
    unsigned dims;
    size_t range[3];
    if (!parse_sizes(rng, &dims, range, "offload range"))
        return NULL;
    kiln_arg a[MAX_ARGS];
    Py_buffer bufs[MAX_ARGS];
    size_t n, nb = 0;
    if (!convert_maps(targs, hints, a, &n, bufs, &nb)) {
        release_bufs(bufs, nb);
        return NULL;
    }
    kiln_status st;
    kiln_data_region *r = reg == Py_None ? NULL : ((RegionObject *)reg)->r;
    if (r)
        ((RegionObject *)reg)->busy++; /* region_end_now waits for it */
    KILN_NOGIL(
        st = kiln_offload_run(((QueueObject *)q)->q, ((GeneratorObject *)g)->g, r, range, n, a));
    if (r)
        ((RegionObject *)reg)->busy--;
    release_bufs(bufs, nb);
    CHECK_ST(st);
    Py_RETURN_NONE;
}

/* --------------------------------------------------------------- module */

static PyObject *mod_set_hooks(PyObject *m, PyObject *args) {
    PyObject *err, *fb;
    if (!PyArg_ParseTuple(args, "OO", &err, &fb))
        return NULL;
    Py_XDECREF(g_error_factory);
    Py_XDECREF(g_binop_fallback);
    g_error_factory = Py_NewRef(err);
    g_binop_fallback = Py_NewRef(fb);
    Py_RETURN_NONE;
}

static PyObject *mod_set_event_class(PyObject *m, PyObject *cls) {
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, EventType)) {
        PyErr_SetString(PyExc_TypeError, "expected a subclass of EventBase");
        return NULL;
    }
    Py_XDECREF((PyObject *)g_event_class);
    Py_INCREF(cls);
    g_event_class = (PyTypeObject *)cls;
    Py_RETURN_NONE;
}

static PyObject *mod_shutdown(PyObject *m, PyObject *unused) {
    g_finalizing = 1;
    Py_RETURN_NONE;
}

static PyObject *mod_version(PyObject *m, PyObject *unused) {
    return PyUnicode_FromString(kiln_version());
}

static PyObject *mod_promote_types(PyObject *m, PyObject *args) {
    int a, b;
    if (!PyArg_ParseTuple(args, "ii", &a, &b))
        return NULL;
    return PyLong_FromLong((long)kiln_dtype_promote((kiln_dtype)a, (kiln_dtype)b));
}

static PyObject *mod_reduce_result_dtype(PyObject *m, PyObject *args) {
    int op, dt, axis = 0;
    if (!PyArg_ParseTuple(args, "ii|p", &op, &dt, &axis))
        return NULL;
    return PyLong_FromLong(
        (long)(axis ? kiln_dtype_reduce_axis_result((kiln_reduce_op)op, (kiln_dtype)dt)
                    : kiln_dtype_reduce_result((kiln_reduce_op)op, (kiln_dtype)dt)));
}

static PyObject *mod_trace(PyObject *m, PyObject *arg) {
    kiln_status st;
    if (arg == Py_None) {
        KILN_NOGIL(st = kiln_trace_stop());
    } else {
        const char *p = PyUnicode_AsUTF8AndSize(arg, NULL);
        if (!p)
            return NULL;
        KILN_NOGIL(st = kiln_trace_start(p));
    }
    CHECK_ST(st);
    Py_RETURN_NONE;
}

static PyObject *mod_binop(PyObject *m, PyObject *args) {
    int op;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "iOO", &op, &a, &b))
        return NULL;
    if (!is_array(a) && !is_array(b)) {
        PyErr_SetString(PyExc_TypeError, "binop: one operand must be a kiln Array");
        return NULL;
    }
    return binop_dispatch(op, a, b);
}

static PyMethodDef module_methods[] = {
    { "_set_hooks", mod_set_hooks, METH_VARARGS, NULL },
    { "version", mod_version, METH_NOARGS, "kiln_version()" },
    { "_shutdown", mod_shutdown, METH_NOARGS, NULL },
    { "_set_event_class", mod_set_event_class, METH_O, NULL },
    { "device_count", mod_device_count, METH_NOARGS, NULL },
    { "device_get", mod_device_get, METH_O, NULL },
    { "device_select", mod_device_select, METH_O, NULL },
    { "promote_types", mod_promote_types, METH_VARARGS, NULL },
    { "reduce_result_dtype", mod_reduce_result_dtype, METH_VARARGS, NULL },
    { "trace", mod_trace, METH_O, "trace(path) starts, trace(None) stops the timeline" },
    { "empty", mod_empty, METH_VARARGS, NULL },
    { "full", mod_full, METH_VARARGS, NULL },
    { "arange", mod_arange, METH_VARARGS, NULL },
    { "from_host", mod_from_host, METH_VARARGS, NULL },
    { "read", mod_read, METH_VARARGS, NULL },
    { "write", mod_write, METH_VARARGS, NULL },
    { "fill", mod_fill, METH_VARARGS, NULL },
    { "copy", mod_copy, METH_VARARGS, NULL },
    { "strided", mod_strided, METH_VARARGS, NULL },
    { "reshape", mod_reshape, METH_VARARGS, NULL },
    { "binop", mod_binop, METH_VARARGS, NULL },
    { "binary", mod_binary, METH_VARARGS, NULL },
    { "result_dtype", mod_result_dtype, METH_VARARGS, NULL },
    { "part", mod_part, METH_VARARGS, NULL },
    { "binary_scalar", mod_binary_scalar, METH_VARARGS, NULL },
    { "unary", mod_unary, METH_VARARGS, NULL },
    { "astype", mod_astype, METH_VARARGS, NULL },
    { "where", mod_where, METH_VARARGS, NULL },
    { "clip", mod_clip, METH_VARARGS, NULL },
    { "take", mod_take, METH_VARARGS, NULL },
    { "index_many", mod_index_many, METH_VARARGS, NULL },
    { "index_key", mod_index_key, METH_VARARGS, NULL },
    { "index_key_put", mod_index_key_put, METH_VARARGS, NULL },
    { "mask_fill", mod_mask_fill, METH_VARARGS, NULL },
    { "mask_assign", mod_mask_assign, METH_VARARGS, NULL },
    { "reduce", mod_reduce, METH_VARARGS, NULL },
    { "reduce_axis", mod_reduce_axis, METH_VARARGS, NULL },
    { "var_axis", mod_var_axis, METH_VARARGS, NULL },
    { "sort", mod_sort, METH_VARARGS, NULL },
    { "argsort", mod_argsort, METH_VARARGS, NULL },
    { "searchsorted", mod_searchsorted, METH_VARARGS, NULL },
    { "cumulative", mod_cumulative, METH_VARARGS, NULL },
    { "join", mod_join, METH_VARARGS, NULL },
    { "matmul", mod_matmul, METH_VARARGS, NULL },
    { "dot", mod_dot, METH_VARARGS, NULL },
    { "to_dlpack", mod_to_dlpack, METH_VARARGS, NULL },
    { "from_dlpack", mod_from_dlpack, METH_VARARGS, NULL },
    { "wrap_queue", mod_wrap_queue, METH_VARARGS, NULL },
    { "wrap_array", mod_wrap_array, METH_VARARGS, NULL },
    { "wrap_event", mod_wrap_event, METH_VARARGS, NULL },
    { "cuda_pointer", mod_cuda_pointer, METH_VARARGS, NULL },
    { "elementwise_create", mod_elementwise_create, METH_VARARGS, NULL },
    { "reduction_create", mod_reduction_create, METH_VARARGS, NULL },
    { "scan_create", mod_scan_create, METH_VARARGS, NULL },
    { "select_create", mod_select_create, METH_VARARGS, NULL },
    { "allocate_create", mod_allocate_create, METH_VARARGS, NULL },
    { "array_read_future", mod_array_read_future, METH_VARARGS, NULL },
    { "future_ready", mod_future_ready, METH_VARARGS, NULL },
    { "when_all", mod_when_all, METH_O, NULL },
    { "when_any", mod_when_any, METH_O, NULL },
    { "offload_create", mod_offload_create, METH_VARARGS, NULL },
    { "offload_run", mod_offload_run, METH_VARARGS, NULL },
    { "region_begin", mod_region_begin, METH_VARARGS, NULL },
    { "unique", mod_unique, METH_VARARGS, NULL },
    { "reduce_by_key", mod_reduce_by_key, METH_VARARGS, NULL },
    { "topk", mod_topk, METH_VARARGS, NULL },
    { "histogram", mod_histogram, METH_VARARGS, NULL },
    { "histogram_edges", mod_histogram_edges, METH_VARARGS, NULL },
    { "bincount", mod_bincount, METH_VARARGS, NULL },
    { "put", mod_put, METH_VARARGS, NULL },
    { "fft", mod_fft, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = { PyModuleDef_HEAD_INIT, "kiln._kiln",
                                         "libkiln's C API, thinly (kiln/ wraps it)", -1,
                                         module_methods };

static int add_type(PyObject *m, PyType_Spec *spec, PyTypeObject **out, const char *name) {
    *out = (PyTypeObject *)PyType_FromSpec(spec);
    if (!*out)
        return -1;
    Py_INCREF((PyObject *)*out);
    if (PyModule_AddObject(m, name, (PyObject *)*out) < 0) {
        Py_DECREF(*out);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__kiln(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (add_type(m, &device_spec, &DeviceType, "DeviceBase") < 0 ||
        add_type(m, &context_spec, &ContextType, "ContextBase") < 0 ||
        add_type(m, &queue_spec, &QueueType, "QueueBase") < 0 ||
        add_type(m, &event_spec, &EventType, "EventBase") < 0 ||
        add_type(m, &array_spec, &ArrayType, "Array") < 0 ||
        add_type(m, &program_spec, &ProgramType, "ProgramBase") < 0 ||
        add_type(m, &kernel_spec, &KernelType, "KernelBase") < 0 ||
        add_type(m, &generator_spec, &ElementwiseType, "GeneratorBase") < 0 ||
        add_type(m, &rng_spec, &RngType, "RngBase") < 0 ||
        add_type(m, &region_spec, &RegionType, "RegionBase") < 0 ||
        add_type(m, &hash_spec, &HashTableType, "HashTableBase") < 0 ||
        add_type(m, &future_spec, &FutureType, "FutureBase") < 0)
        goto fail;
    ReductionType = ScanType = ElementwiseType;

    PyObject *bops = PyDict_New(), *bkinds = PyDict_New(), *uops = PyDict_New(),
             *ufl = PyDict_New();
    if (!bops || !bkinds || !uops || !ufl)
        goto fail;
#define ADD_B(name, o, kind, comm)                                \
    PyDict_SetItemString(bops, name, PyLong_FromLong((long)(o))); \
    PyDict_SetItemString(bkinds, name, PyLong_FromLong((long)(kind)));
    KILN_PY_BINARY_OPS(ADD_B)
#undef ADD_B
#define ADD_U(name, o, fl)                                        \
    PyDict_SetItemString(uops, name, PyLong_FromLong((long)(o))); \
    PyDict_SetItemString(ufl, name, PyBool_FromLong(fl));
    KILN_PY_UNARY_OPS(ADD_U)
#undef ADD_U
    PyModule_AddObject(m, "BINARY_OPS", bops);
    PyModule_AddObject(m, "BINARY_KINDS", bkinds);
    PyModule_AddObject(m, "UNARY_OPS", uops);
    PyModule_AddObject(m, "UNARY_FLOAT_ONLY", ufl);
    PyModule_AddIntConstant(m, "MAX_DIMS", KILN_ARRAY_MAX_DIMS);
#define ADD_ST(name, num, msg) PyModule_AddIntConstant(m, "STATUS_" #name, num);
    KILN_STATUS_LIST(ADD_ST)
#undef ADD_ST
    static const struct {
        const char *name;
        long value;
    } constants[] = {
        { "KILN_INT8", (long)KILN_INT8 },
        { "KILN_UINT8", (long)KILN_UINT8 },
        { "KILN_INT16", (long)KILN_INT16 },
        { "KILN_UINT16", (long)KILN_UINT16 },
        { "KILN_INT32", (long)KILN_INT32 },
        { "KILN_UINT32", (long)KILN_UINT32 },
        { "KILN_INT64", (long)KILN_INT64 },
        { "KILN_UINT64", (long)KILN_UINT64 },
        { "KILN_FLOAT16", (long)KILN_FLOAT16 },
        { "KILN_FLOAT32", (long)KILN_FLOAT32 },
        { "KILN_FLOAT64", (long)KILN_FLOAT64 },
        { "KILN_COMPLEX64", (long)KILN_COMPLEX64 },
        { "KILN_COMPLEX128", (long)KILN_COMPLEX128 },
        { "KILN_REDUCE_SUM", (long)KILN_REDUCE_SUM },
        { "KILN_REDUCE_PROD", (long)KILN_REDUCE_PROD },
        { "KILN_REDUCE_MIN", (long)KILN_REDUCE_MIN },
        { "KILN_REDUCE_MAX", (long)KILN_REDUCE_MAX },
        { "KILN_REDUCE_NORM1", (long)KILN_REDUCE_NORM1 },
        { "KILN_REDUCE_NORM2", (long)KILN_REDUCE_NORM2 },
        { "KILN_REDUCE_NORM_INF", (long)KILN_REDUCE_NORM_INF },
        { "KILN_REDUCE_ARGMIN", (long)KILN_REDUCE_ARGMIN },
        { "KILN_REDUCE_ARGMAX", (long)KILN_REDUCE_ARGMAX },
        { "KILN_REDUCE_ANY", (long)KILN_REDUCE_ANY },
        { "KILN_REDUCE_ALL", (long)KILN_REDUCE_ALL },
        { "KILN_REDUCE_MEAN", (long)KILN_REDUCE_MEAN },
        { "KILN_REDUCE_VAR", (long)KILN_REDUCE_VAR },
        { "KILN_REDUCE_STD", (long)KILN_REDUCE_STD },
        { "KILN_QUEUE_OUT_OF_ORDER", (long)KILN_QUEUE_OUT_OF_ORDER },
        { "KILN_QUEUE_PROFILING", (long)KILN_QUEUE_PROFILING },
        { "KILN_LANG_AUTO", (long)KILN_LANG_AUTO },
        { "KILN_LANG_OPENCL_C", (long)KILN_LANG_OPENCL_C },
        { "KILN_LANG_CUDA_C", (long)KILN_LANG_CUDA_C },
        { "KILN_ELEMENTWISE_ANY_SHAPE", (long)KILN_ELEMENTWISE_ANY_SHAPE },
        { "KILN_BACKEND_OPENCL", (long)KILN_BACKEND_OPENCL },
        { "KILN_BACKEND_CUDA", (long)KILN_BACKEND_CUDA },
    };
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        PyModule_AddIntConstant(m, constants[i].name, constants[i].value);
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
