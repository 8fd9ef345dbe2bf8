"""torch.distributed's NCCL all-reduce, the peer of bench_mpi_allreduce with
KILN_MPI_TRANSPORT=nccl (issue 46: kiln >= 90% of its bus bandwidth).

    mpirun -np 2 python3 bench/peers_nccl_allreduce.py [log2 n] [reps]

One rank a GPU (rank r on cuda:r of its node); n float32 (default 2^26)
summed in place; the median of reps after one warm-up, each the slowest
rank's (a barrier before, a device synchronise after); the bus bandwidth
as NCCL's tests report it, 2 (P-1)/P bytes over the time. Rank and size
from mpi4py (the rendezvous: rank 0's host name broadcast over MPI). Not
yet run (written while no two-GPU machine was lent)."""
import os
import socket
import sys
import time


def main():
    from mpi4py import MPI
    import torch
    import torch.distributed as dist

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    local = comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    lg = int(sys.argv[1]) if len(sys.argv) > 1 else 26
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    os.environ["MASTER_ADDR"] = comm.bcast(socket.gethostname() if rank == 0 else None, root=0)
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", rank=rank, world_size=size)
    n = 1 << lg
    x = torch.ones(n, dtype=torch.float32, device="cuda")
    times = []
    for r in range(-1, reps):
        x.fill_(1.0)
        torch.cuda.synchronize()
        comm.Barrier()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        torch.cuda.synchronize()
        dt = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        if r >= 0:
            times.append(dt)
    ok = bool((x == float(size)).all().item())
    times.sort()
    med = times[len(times) // 2]
    bus = 2.0 * (size - 1) / size * n * 4 / med * 1e-9 if size > 1 else 0.0
    if rank == 0:
        print(f"torch {torch.__version__} NCCL all_reduce, {size} ranks, {n} float32: best "
              f"{times[0] * 1e3:.2f} ms median {med * 1e3:.2f} ms (bus {bus:.2f} GB/s at the "
              f"median){'' if ok else ' WRONG RESULT'}")
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
