// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The torch.distributed process group "mroce": c10d::ProcessGroup (PyTorch
// 1.13) over libmroce-coll. Every operation is queued to one worker thread
// and runs there, in call order, as blocking mroce_coll_* calls; the Work
// object completes (and its future with it) when the call returns.
// docs/pytorch.md explains the rank mapping, the gloo summation order and
// what each torch operation becomes.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <mroce/mroce.h>

namespace mroce_torch {

class WorkMroce : public c10d::Work {
 public:
  WorkMroce(int rank, c10d::OpType op, std::vector<at::Tensor> outputs);
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  // From the worker thread: the operation ended (nullptr: success).
  void complete(std::exception_ptr err);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// Options read once from the environment (docs/pytorch.md).
struct MroceEnv {
  bool gloo_order = true;    // MROCE_TORCH_GLOO_ORDER: float sums as gloo adds them
  std::string master_addr;   // MROCE_TORCH_MASTER_ADDR, else MASTER_ADDR (rank 0 only)
};

class ProcessGroupMroce : public c10d::ProcessGroup {
 public:
  ProcessGroupMroce(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                    std::chrono::milliseconds timeout);
  ~ProcessGroupMroce() override;

  const std::string getBackendName() const override { return "mroce"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  // Point to point: messages between two ranks are matched in call order;
  // the receiver checks the sender's size and tag (docs/pytorch.md).
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors,
                                               int tag) override;

  // The communicator's rank of torch rank r (an involution: also the inverse).
  int commRank(int r) const { return gloo_order_ ? (size_ - r) % size_ : r; }
  bool glooOrder() const { return gloo_order_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  using Fn = std::function<void()>;
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType op, std::vector<at::Tensor> outputs,
                                         Fn fn);
  void workerLoop();
  // send/recv: the communicator's rank of the peer, after checking the arguments.
  int p2pPeer(const std::vector<at::Tensor>& tensors, int r, int tag, const char* what) const;
  // Throws with the operation's name and the library's message on err < 0.
  void check(int err, const char* what) const;

  // Runs on the worker thread.
  void runAllreduce(at::Tensor& t, c10d::ReduceOp op);
  void allreduceRaw(void* buf, size_t count, mroce_coll_dtype dt, mroce_coll_redop op,
                    bool order_matters);
  void runAlltoall(at::Tensor& out, const at::Tensor& in, const std::vector<int64_t>& osplit,
                   const std::vector<int64_t>& isplit);
  void runAlltoallv(const std::vector<const uint8_t*>& sp, const std::vector<size_t>& sl,
                    const std::vector<uint8_t*>& rp, const std::vector<size_t>& rl);

  struct mroce_coll_comm* comm_ = nullptr;
  bool gloo_order_;
  std::chrono::milliseconds timeout_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<c10::intrusive_ptr<WorkMroce>, Fn>> queue_;
  bool stop_ = false;
  std::thread worker_;
};

// rendezvous.cpp: joins the communicator with the parameters exchanged
// through the torch store (rank 0 picks the TCP port and publishes it), after
// a store barrier that waits up to max(timeout, 120 s) for every rank.
struct mroce_coll_comm* joinComm(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                 int size, int comm_rank, std::chrono::milliseconds timeout,
                                 bool ring_only);

// gloo_order.cpp: the element layout that makes libmroce's ring add in gloo's order.
struct GlooLayout {
  size_t chunk;   // elements per gloo chunk (and per ring segment of the staging vector)
  size_t count;   // elements of the staging vector: size * chunk
};
// gloo's largest ring segment (AllreduceOptions::maxSegmentSize in 1.13's build).
constexpr size_t kGlooMaxSegmentBytes = 1 << 20;
GlooLayout glooLayout(size_t count, size_t esize, int size);
// Copy the user's vector into the staging vector (to = true) or back.
void glooPermute(void* user, void* staging, size_t count, size_t esize, int size, bool to);

// dtypes.cpp
bool reduceDtype(at::ScalarType st, at::ScalarType* via, mroce_coll_dtype* dt);
bool redop(const c10d::ReduceOp& op, mroce_coll_redop* out);
bool isFloat(at::ScalarType st);

std::string errString(int err);

}  // namespace mroce_torch
