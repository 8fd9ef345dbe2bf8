/* The one door from the tests to kiln's internals. Tests that check a layer
 * below the public API (a backend's table, the cache's file format, the
 * signature parser, generator hooks) include this header and nothing else
 * of src/; scripts/check-layers.py refuses any other internal include in
 * tests/, and every other program (tools, bench, examples) may use the
 * public headers only. The symbols it names are linked from the static
 * library (kiln_static), which keeps them visible. */
#ifndef KILN_TEST_INTERNAL_H
#define KILN_TEST_INTERNAL_H

#include "algo/array/array.h"      /* the array object (tests/test_invariants.c) */
#include "algo/ops/ops_internal.h" /* op texts (tests/test_array_dtype.c) */
#include "algo/prim/prim.h"        /* generated sources (tests/test_array_nvrtc.c) */
#include "algo/gen/chain.h"        /* the chain of commands (tests/test_chain.c) */
#include "algo/gen/generator.h"    /* declaration parser (fuzz/) */
#include "algo/offload/offload_hook.h"
#include "algo/offload/offload_internal.h" /* map checks, code generation (fuzz/) */
#include "algo/prim/select.h"              /* the selection engine (tests/test_array_nvrtc.c) */
#include "backend/backend.h"
#include "backend/registry.h"    /* the tables built in, whatever they are */
#include "base/check.h"          /* the sticky checker (tests/test_chain.c) */
#include "base/buildlog_quote.h" /* compiler log quoting (fuzz/) */
#include "base/embedded.h"       /* a backend's prelude: its prelude_file */
#include "base/error.h"
#include "base/fault.h" /* fault injection (tests/test_fault_injection.c) */
#include "base/lock.h"  /* owned locks (tests/test_invariants.c) */
#include "base/strbuf.h"
#include "cache/cache.h"
#include "cache/sha256.h"
#include "cache/trust.h"   /* the test hook (tests/test_cache_trust.c) */
#include "core/internal.h" /* kiln__build_log_map (tests/test_core_buildlog.c) */
#include "core/signature.h"

/* The CUDA backend's GPU-free helpers (NVRTC compile, cubin check, block
 * choice); linked only where the CUDA backend is built. */
#include "backend/cuda/nvrtc_tools.h"

/* The OpenCL backend's private header, for the test that drives it
 * directly: it needs the OpenCL headers on the include path. */
#if defined(KILN_TEST_OPENCL_BACKEND)
#include "backend/opencl/ocl.h"
#endif

/* The backend tables, to drive a backend directly (tests/test_backend_*.c). */
extern const kiln__backend kiln__backend_opencl;
extern const kiln__backend kiln__backend_cuda;

#endif
