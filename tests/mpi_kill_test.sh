#!/usr/bin/env bash
# A rank killed (SIGKILL) while the other waits in a kiln_mpi collective:
# the job must end within 60 s with a message naming the rank (Open MPI's
# mpirun aborts the job when a process dies; kiln's deadline is the second
# line of defence). Usage: mpi_kill_test.sh MPIRUN TEST_MPI
set -u
mpirun="$1" prog="$2"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
start=$(date +%s)
timeout 90 "$mpirun" -np 2 "$prog" kill >"$out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
cat "$out"
echo "mpi_kill_test: mpirun exited $rc after ${took} s"
if [ "$rc" -eq 124 ]; then echo "FAIL: the job did not end within 90 s"; exit 1; fi
if [ "$rc" -eq 0 ]; then echo "FAIL: mpirun reported success for a killed rank"; exit 1; fi
if [ "$took" -gt 60 ]; then echo "FAIL: the job took ${took} s to end (more than 60)"; exit 1; fi
if ! grep -q "rank 1" "$out"; then echo "FAIL: no message names rank 1"; exit 1; fi
echo "1 passed, 0 failed"
