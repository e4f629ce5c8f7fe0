# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""torch.distributed backend "mroce": collectives over libmroce-coll.

    import mroce_torch            # registers the backend
    torch.distributed.init_process_group("mroce")   # env:// (torchrun, mroce-launch)

The C++ extension _mroce_torch.so is found in $MROCE_TORCH_LIB (a directory),
else next to this package's build (build/torch/), else on sys.path.
docs/pytorch.md describes the operations, dtypes, timeouts and errors.
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
    root = os.path.dirname(os.path.dirname(_HERE))
    dirs.append(os.path.join(root, os.environ.get("BUILD", "build"), "torch"))
    for d in dirs:
        if os.path.exists(os.path.join(d, "_mroce_torch.so")) and d not in sys.path:
            sys.path.insert(0, d)
            break
    return importlib.import_module("_mroce_torch")


_ext = _load()
ProcessGroupMroce = _ext.ProcessGroupMroce


def _create(store, rank, world_size, timeout):
    if not isinstance(timeout, datetime.timedelta):
        timeout = datetime.timedelta(milliseconds=int(timeout))
    return ProcessGroupMroce(store, rank, world_size, timeout)


if "MROCE" not in dist.Backend._plugins:
    dist.Backend.register_backend("mroce", _create)
