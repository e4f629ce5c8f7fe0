# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""torch.distributed backend "mroce": collectives over libmroce-coll.

    import mroce_torch            # registers the backend
    mroce_torch.env_from_mpi()    # under mpirun: RANK, WORLD_SIZE from Open MPI's
    torch.distributed.init_process_group("mroce")   # env:// (torchrun, mroce-launch, mpirun)

The C++ extension _mroce_torch.so is found in $MROCE_TORCH_LIB (a directory),
else inside this package (installed: make install, or the python3-mroce-torch
Debian package), else in the source tree's build (build/torch/ beside torch/),
else on sys.path. mroce's PyTorch documentation (pytorch.md) describes the
operations, dtypes, timeouts and errors.
"""
import datetime
import importlib
import os
import sys

import torch.distributed as dist

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load():
    dirs = []
    if os.environ.get("MROCE_TORCH_LIB"):
        dirs.append(os.environ["MROCE_TORCH_LIB"])
    elif os.path.exists(os.path.join(_HERE, "_mroce_torch.so")):
        # installed: the extension is part of the package
        return importlib.import_module("._mroce_torch", __name__)
    root = os.path.dirname(os.path.dirname(_HERE))
    dirs.append(os.path.join(root, os.environ.get("BUILD", "build"), "torch"))
    for d in dirs:
        if os.path.exists(os.path.join(d, "_mroce_torch.so")) and d not in sys.path:
            sys.path.insert(0, d)
            break
    return importlib.import_module("_mroce_torch")


_ext = _load()
ProcessGroupMroce = _ext.ProcessGroupMroce


# What MPI launchers call a process's rank, size and rank on its node.
_MPI_ENV = (
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),  # Open MPI
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),                                     # MPICH, Hydra
)


def env_from_mpi(environ=None):
    """Fill env://'s RANK, WORLD_SIZE (and LOCAL_RANK) from an MPI launcher's.

    mpirun sets its own variables, not the ones torch.distributed's env://
    reads. Call this before init_process_group(): where RANK is unset and an
    MPI launcher's rank and size are set, it copies them (MASTER_ADDR and
    MASTER_PORT still come from the caller: export them to the ranks, as with
    mpirun -x). Returns True if it set them, False if RANK was already set or
    no launcher's variables were found. Works for any backend (gloo too).
    """
    env = os.environ if environ is None else environ
    if "RANK" in env:
        return False
    for rank, size, local in _MPI_ENV:
        if rank in env and size in env:
            env["RANK"], env["WORLD_SIZE"] = env[rank], env[size]
            env.setdefault("LOCAL_RANK", env.get(local, "0"))
            return True
    return False


def _create(store, rank, world_size, timeout):
    if not isinstance(timeout, datetime.timedelta):
        timeout = datetime.timedelta(milliseconds=int(timeout))
    return ProcessGroupMroce(store, rank, world_size, timeout)


if "MROCE" not in dist.Backend._plugins:
    dist.Backend.register_backend("mroce", _create)
