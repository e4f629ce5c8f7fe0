#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Create one RC QP through whatever libibverbs.so.1 the loader finds and say what errno it failed with.

    LD_LIBRARY_PATH=build/verbs selftests/verbs_qp_errno.py DEVICE

Prints "create_qp: ok" (exit 0) or "create_qp: errno N (NAME: text)" (exit 1); a step before
(open, PD, CQ) that fails prints its own name (exit 2). The Verbs rogue test (test_verbs_rogue.sh)
uses it to check the exact errno of a refused fabric key, which ibv_rc_pingpong does not print.
Only functions libibverbs exports are called (ibv_create_qp, not the inline wrappers).
"""
import ctypes, errno, os, sys


class QpCap(ctypes.Structure):
    _fields_ = [("max_send_wr", ctypes.c_uint32), ("max_recv_wr", ctypes.c_uint32),
                ("max_send_sge", ctypes.c_uint32), ("max_recv_sge", ctypes.c_uint32),
                ("max_inline_data", ctypes.c_uint32)]


class QpInitAttr(ctypes.Structure):	# struct ibv_qp_init_attr, rdma-core 44
    _fields_ = [("qp_context", ctypes.c_void_p), ("send_cq", ctypes.c_void_p),
                ("recv_cq", ctypes.c_void_p), ("srq", ctypes.c_void_p), ("cap", QpCap),
                ("qp_type", ctypes.c_int), ("sq_sig_all", ctypes.c_int)]


IBV_QPT_RC = 2


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[2].strip())
    want = sys.argv[1].encode()
    v = ctypes.CDLL("libibverbs.so.1", use_errno=True)
    missing = [n for n in ("ibv_get_device_list", "ibv_create_qp") if not hasattr(v, n)]
    if missing:
        print(f"libibverbs.so.1 does not export {', '.join(missing)}")
        sys.exit(2)
    for name, res in (("ibv_get_device_list", ctypes.POINTER(ctypes.c_void_p)),
                      ("ibv_get_device_name", ctypes.c_char_p), ("ibv_open_device", ctypes.c_void_p),
                      ("ibv_alloc_pd", ctypes.c_void_p), ("ibv_create_cq", ctypes.c_void_p),
                      ("ibv_create_qp", ctypes.c_void_p)):
        getattr(v, name).restype = res
    v.ibv_get_device_name.argtypes = [ctypes.c_void_p]
    v.ibv_open_device.argtypes = [ctypes.c_void_p]
    v.ibv_alloc_pd.argtypes = [ctypes.c_void_p]
    v.ibv_create_cq.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    v.ibv_create_qp.argtypes = [ctypes.c_void_p, ctypes.POINTER(QpInitAttr)]
    n = ctypes.c_int(0)
    lst = v.ibv_get_device_list(ctypes.byref(n))
    dev = next((lst[i] for i in range(n.value) if v.ibv_get_device_name(lst[i]) == want), None) if lst else None
    if not dev:
        print(f"no device {sys.argv[1]} among {n.value}")
        sys.exit(2)
    ctx = v.ibv_open_device(dev)
    pd = ctx and v.ibv_alloc_pd(ctx)
    cq = pd and v.ibv_create_cq(ctx, 16, None, None, 0)
    if not cq:
        e = ctypes.get_errno()
        print(f"{'ibv_open_device' if not ctx else 'ibv_alloc_pd' if not pd else 'ibv_create_cq'}: "
              f"errno {e} ({errno.errorcode.get(e, '?')}: {os.strerror(e)})")
        sys.exit(2)
    attr = QpInitAttr(send_cq=cq, recv_cq=cq, cap=QpCap(16, 16, 1, 1, 0), qp_type=IBV_QPT_RC)
    ctypes.set_errno(0)
    qp = v.ibv_create_qp(pd, ctypes.byref(attr))
    if qp:
        print("create_qp: ok")
        sys.exit(0)
    e = ctypes.get_errno()
    print(f"create_qp: errno {e} ({errno.errorcode.get(e, '?')}: {os.strerror(e)})")
    sys.exit(1)


if __name__ == "__main__":
    main()
