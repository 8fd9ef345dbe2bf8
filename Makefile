# The README's two commands:
#   make run    builds kiln and runs the main job
#   make test   checks the layers, builds kiln with AddressSanitizer + UBSan,
#               checks the ABI, runs the test suite, then each libFuzzer
#               target for 3 s (scripts/fuzz.sh; clang)
# Both install missing Debian packages first (as root), else print the command.
BUILD      ?= build
TEST_BUILD ?= build-test
FUZZ_BUILD ?= $(TEST_BUILD)-fuzz
TSAN_BUILD ?= $(TEST_BUILD)-tsan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all setup build run test test-python test-tsan clean install

all: build

setup:
	@scripts/setup-debian.sh run

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@scripts/run-main.sh $(BUILD)

# No retries: a failing test fails the run. LeakSanitizer's tracer used to
# crash at exit beside PoCL ("Tracer caught signal 11: addr=0x40", about one
# run in a hundred): GCC 12's (and LLVM <= 16's) __tls_get_addr interceptor
# takes a dynamic TLS block that malloc placed 16 bytes into a page for a
# glibc-2.19 block with a header, reads the ASan chunk header before it as
# {size, start} and the tracer then scans from address `start` (the block's
# allocation stack id, 0x40). intercept_tls_get_addr=0 turns that guess off;
# the cost is that dynamic TLS of dlopen'ed drivers is not scanned as roots,
# and their leaks are suppressed anyway (tests/lsan.supp).
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
#
# Before the tests: scripts/check-format.sh (every C file as .clang-format
# gives it), scripts/check-layers.py (no file includes a header its
# layer may not use) and, on the built library, scripts/check-abi.sh (the
# exported symbols and the ABI are those recorded in abi/; the sanitized
# Debug library exports the same set and carries the debug info abidw
# reads), scripts/check-ladders.py (no function has more than three
# `if (st == KILN_OK` steps in a row: issue 43) and, on the built objects,
# scripts/check-circles.py (no new circle of files calling each other).
# Any one failing fails the run. The host backend is kiln's default CPU
# device; the suite's default-device tests run on PoCL (KILN_DEVICE=pocl,
# the OpenCL path) and the host backend's list (ctest label host) beside
# them, as does the Python suite (scripts/python-test.sh).
test:
	@scripts/setup-debian.sh test
	@python3 scripts/check-layers.py
	@scripts/check-format.sh
	@python3 scripts/check-duplicates.py
	@python3 scripts/check-ladders.py
	@python3 scripts/function-lengths.py --check >/dev/null || python3 scripts/function-lengths.py --check
	@cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DKILN_SANITIZE=ON -DKILN_BUILD_BENCH=OFF $(CMAKE_ARGS) >/dev/null
	@cmake --build $(TEST_BUILD) -j $(JOBS)
	@scripts/check-abi.sh $(TEST_BUILD)
	@python3 scripts/check-circles.py $(TEST_BUILD)
	@cd $(TEST_BUILD) && KILN_DEVICE=$${KILN_DEVICE:-pocl} $(SAN_ENV) ctest --output-on-failure -j $(JOBS)
	@JOBS=$(JOBS) scripts/fuzz.sh 3 $(FUZZ_BUILD)
	@$(MAKE) --no-print-directory test-python

# The Python package (python/, docs/python.md): built by pip in a venv
# (build-py/venv) with its own unsanitised CMake build, tested with pytest.
# Exit 77 from the script (no venv, or no tools and no network) is a skip.
test-python:
	@scripts/python-test.sh; rc=$$?; if [ $$rc -eq 77 ]; then echo "test-python: skipped"; \
	  elif [ $$rc -ne 0 ]; then exit $$rc; fi

# ThreadSanitizer over the tests that run kiln on several threads at once:
# host threads sharing objects, completion callbacks, user events, the
# cache (several processes too). PoCL and the ICD loader are not
# instrumented: tests/tsan.supp names the reports inside them (each
# justified there); kiln's own code has no suppression.
TSAN_TESTS = test_core_threads test_core_event test_backend_opencl test_cache test_graph \
  test_cache_trust test_cache_multiproc test_offload test_queue_failure test_host_fission
# The host backend's threaded tests (ctest names; the programs above): its
# queues, workers and work-group pool are kiln's code, instrumented; the
# kernels' shared objects are compiled at run time without TSan (their
# memory accesses are not seen) and launches no longer go through libgomp.
TSAN_HOST_TESTS = test_core_threads_host test_core_event_host test_queue_failure_host
test-tsan:
	@scripts/setup-debian.sh test
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DKILN_TSAN=ON \
	  -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_EXAMPLES=OFF $(CMAKE_ARGS) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TESTS)
	@cd $(TSAN_BUILD) && KILN_DEVICE=$${KILN_DEVICE:-pocl} TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp:halt_on_error=1:second_deadlock_stack=1 \
	  ctest --output-on-failure -j $(JOBS) -R '^($(subst $() ,|,$(TSAN_TESTS) $(TSAN_HOST_TESTS)))$$'

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(TEST_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD) build-py
