// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// torch dtypes and reduce ops as libmroce-coll knows them. Types the library
// has no reduction for are reduced in a wider one: float16 and bfloat16 in
// float32 (rounded back once, to nearest even, as Tensor.copy_ rounds),
// int8 and int16 in int32 (sums and products wrap the same way modulo 2^8
// and 2^16, min and max are exact). Ops that only move bytes take any dtype.
#include "pg_mroce.hpp"

namespace mroce_torch {

bool reduceDtype(at::ScalarType st, at::ScalarType* via, mroce_coll_dtype* dt) {
  *via = st;
  switch (st) {
    case at::kFloat: *dt = MROCE_COLL_FLOAT32; return true;
    case at::kDouble: *dt = MROCE_COLL_FLOAT64; return true;
    case at::kInt: *dt = MROCE_COLL_INT32; return true;
    case at::kLong: *dt = MROCE_COLL_INT64; return true;
    case at::kByte: *dt = MROCE_COLL_UINT8; return true;
    case at::kHalf:
    case at::kBFloat16: *via = at::kFloat; *dt = MROCE_COLL_FLOAT32; return true;
    case at::kChar:
    case at::kShort: *via = at::kInt; *dt = MROCE_COLL_INT32; return true;
    default: return false;
  }
}

bool isFloat(at::ScalarType st) {
  return st == at::kFloat || st == at::kDouble || st == at::kHalf || st == at::kBFloat16;
}

bool redop(const c10d::ReduceOp& op, mroce_coll_redop* out) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: *out = MROCE_COLL_SUM; return true;
    case c10d::ReduceOp::PRODUCT: *out = MROCE_COLL_PROD; return true;
    case c10d::ReduceOp::MIN: *out = MROCE_COLL_MIN; return true;
    case c10d::ReduceOp::MAX: *out = MROCE_COLL_MAX; return true;
    default: return false;
  }
}

}  // namespace mroce_torch
