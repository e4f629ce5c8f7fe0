// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The Work object of the mroce process group: completed once by the worker
// thread, with the error that ended the operation if any. wait(), the
// future (DDP's communication hook waits on it) and isCompleted() all see
// that one completion; wait(timeout) is c10d::Work's.
#include "pg_mroce.hpp"

namespace mroce_torch {

WorkMroce::WorkMroce(int rank, c10d::OpType op, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, op),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()))) {}

std::vector<at::Tensor> WorkMroce::result() { return outputs_; }

c10::intrusive_ptr<c10::ivalue::Future> WorkMroce::getFuture() { return future_; }

void WorkMroce::complete(std::exception_ptr err) {
  finish(err);
  if (err)
    future_->setError(err);
  else
    future_->markCompleted(c10::IValue(outputs_));
}

}  // namespace mroce_torch
