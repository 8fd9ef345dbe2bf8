#!/bin/bash
# one-off probe: lead's session
echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd; export LD_LIBRARY_PATH=/usr/lib
B=/tmp/bp; mkdir -p $OUT/p
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1 && cmake --build $B -j16 >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
cd $B
for d in cuda:0 nvidia; do for t in test_future test_trace test_core_event test_cross_context test_random test_backend_cuda; do
  [ $t = test_backend_cuda ] && [ $d = nvidia ] && continue
  KILN_TEST_DEVICES=$d timeout 120 ./tests/$t > /tmp/t.log 2>&1; rc=$?; cat /tmp/t.log >> $OUT/p/tests.log; echo "$d $t rc=$rc $(tail -1 /tmp/t.log)"; done; done
KILN_TEST_DEVICES=cuda:0 KILN_TEST_PEER=nvidia timeout 120 ./tests/test_cross_context > /tmp/t.log 2>&1; rc=$?; cat /tmp/t.log >> $OUT/p/tests.log; echo "cross cuda->nvidia rc=$rc $(tail -1 /tmp/t.log)"
which ncu || ls /usr/local/cuda/bin | grep -i ncu
NCU=$(which ncu || echo /usr/local/cuda/bin/ncu)
KILN_DEVICE=cuda:0 timeout 120 $NCU --kernel-name regex:kiln_rng --launch-count 2 --section SpeedOfLight --section Occupancy --section LaunchStats ./bench/bench_random 16777216 > $OUT/p/ncu.txt 2>&1; grep -E "Registers Per|Achieved Occ|Theoretical Occ|Memory Throughput|Compute \(SM\)|Duration|Block Size|Grid Size|Block Limit" $OUT/p/ncu.txt | head -40
for v in 1 0; do echo "== KILN_RNG_VEC=$v"; KILN_RNG_VEC=$v KILN_DEVICE=cuda:0 ./bench/bench_random 268435456 | grep RESULT; done
KILN_DEVICE=cuda:0 ./examples/pipeline 32768 64 1024 3 --trace $OUT/p/pipe-cuda.json | tail -8
./kiln timeline $OUT/p/pipe-cuda.json $OUT/p/pipe-cuda.png | head -6
rm -f $OUT/p/*.log.x
ls $OUT/p | wc -l
