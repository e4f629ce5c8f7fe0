// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// ProcessGroupMroce: argument checks in the caller's thread (a RuntimeError
// at once, nothing sent), then the operation queued to the worker thread,
// which runs it as blocking libmroce-coll calls in call order. Failures of
// the library (-ETIMEDOUT, -ECONNABORTED, -EIO: a rank is gone) complete the
// Work with an exception that wait() and the future raise; the
// communicator then stays broken and every later operation fails at once.
#include "pg_mroce.hpp"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace mroce_torch {

namespace {

void checkCpu(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.device().is_cpu(), "mroce ", op, ": only CPU tensors are supported, got ",
              t.device());
  TORCH_CHECK(t.layout() == at::kStrided, "mroce ", op, ": only dense tensors are supported");
}

void checkOne(const std::vector<at::Tensor>& v, const char* op) {
  TORCH_CHECK(v.size() == 1, "mroce ", op, ": expects one tensor per call, got ", v.size());
  checkCpu(v[0], op);
}

void checkReduce(const at::Tensor& t, const c10d::ReduceOp& op, const char* what) {
  at::ScalarType via;
  mroce_coll_dtype dt;
  mroce_coll_redop ro;
  TORCH_CHECK(reduceDtype(t.scalar_type(), &via, &dt), "mroce ", what, ": no reduction for dtype ",
              t.scalar_type(), " (float16/32/64, bfloat16, int8/16/32/64, uint8 have one)");
  TORCH_CHECK(redop(op, &ro), "mroce ", what, ": reduce op ", (int)op.op_,
              " is not supported (SUM, PRODUCT, MIN, MAX are)");
}

// A contiguous tensor of type st with t's values (t itself when it already is one).
at::Tensor dense(const at::Tensor& t, at::ScalarType st) {
  if (t.scalar_type() == st && t.is_contiguous())
    return t;
  return t.to(st).contiguous();
}

bool envFlag(const char* name, bool dflt) {
  const char* v = getenv(name);
  if (!v || !*v)
    return dflt;
  return strcmp(v, "0") != 0;
}

}  // namespace

ProcessGroupMroce::ProcessGroupMroce(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                     int size, std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size),
      gloo_order_(envFlag("MROCE_TORCH_GLOO_ORDER", true)),
      timeout_(timeout) {
  comm_ = joinComm(store, rank, size, commRank(rank), timeout, gloo_order_ && size >= 3);
  worker_ = std::thread(&ProcessGroupMroce::workerLoop, this);
}

ProcessGroupMroce::~ProcessGroupMroce() {
  // destroy_process_group() drops the group with the GIL held. The worker
  // may need the GIL meanwhile (the last reference to a tensor a finished
  // Work held: its PyObject goes with it), and the communicator's teardown
  // waits for the peers' (a barrier): both run without it, or a rank
  // deadlocks here and its peers wait out the timeout.
  std::unique_ptr<pybind11::gil_scoped_release> nogil;
  if (Py_IsInitialized() && PyGILState_Check())
    nogil = std::make_unique<pybind11::gil_scoped_release>();
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable())
    worker_.join();  // runs what is queued first
  mroce_coll_comm_destroy(comm_);
}

void ProcessGroupMroce::check(int err, const char* what) const {
  if (err < 0)
    throw std::runtime_error("mroce " + std::string(what) + " failed on rank " +
                             std::to_string(rank_) + ": " + errString(err) + " (" +
                             std::to_string(err) + ")");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::enqueue(c10d::OpType op,
                                                          std::vector<at::Tensor> outputs,
                                                          Fn fn) {
  auto work = c10::make_intrusive<WorkMroce>(rank_, op, std::move(outputs));
  {
    std::lock_guard<std::mutex> g(mu_);
    queue_.emplace_back(work, std::move(fn));
  }
  cv_.notify_one();
  return work;
}

void ProcessGroupMroce::workerLoop() {
  for (;;) {
    std::pair<c10::intrusive_ptr<WorkMroce>, Fn> item;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr err;
    try {
      item.second();
    } catch (...) {
      err = std::current_exception();
    }
    item.first->complete(err);
  }
}

// ---- all-reduce ------------------------------------------------------------

void ProcessGroupMroce::allreduceRaw(void* buf, size_t count, mroce_coll_dtype dt,
                                     mroce_coll_redop op, bool order_matters) {
  if (count == 0)
    return;
  if (!(gloo_order_ && order_matters && size_ >= 3)) {
    check(mroce_coll_allreduce(comm_, buf, buf, count, dt, op), "allreduce");
    return;
  }
  size_t es = mroce_coll_dtype_size(dt);
  GlooLayout l = glooLayout(count, es, size_);
  // glooPermute writes every byte (padding zeroed): no clearing first
  std::unique_ptr<uint8_t[]> staging(new uint8_t[l.count * es]);
  glooPermute(buf, staging.get(), count, es, size_, true);
  check(mroce_coll_allreduce(comm_, staging.get(), staging.get(), l.count, dt, op),
        "allreduce");
  glooPermute(buf, staging.get(), count, es, size_, false);
}

void ProcessGroupMroce::runAllreduce(at::Tensor& t, c10d::ReduceOp op) {
  at::ScalarType via;
  mroce_coll_dtype dt;
  mroce_coll_redop ro;
  reduceDtype(t.scalar_type(), &via, &dt);
  redop(op, &ro);
  at::Tensor w = dense(t, via);
  bool order = isFloat(t.scalar_type()) && (ro == MROCE_COLL_SUM || ro == MROCE_COLL_PROD);
  allreduceRaw(w.data_ptr(), (size_t)w.numel(), dt, ro, order);
  if (!w.is_same(t))
    t.copy_(w);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::allreduce(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) {
  checkOne(tensors, "allreduce");
  checkReduce(tensors[0], opts.reduceOp, "allreduce");
  at::Tensor t = tensors[0];
  c10d::ReduceOp op = opts.reduceOp;
  return enqueue(c10d::OpType::ALLREDUCE, tensors, [this, t, op]() mutable {
    runAllreduce(t, op);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "mroce allreduce_coalesced: no tensors");
  for (auto& t : tensors) {
    checkCpu(t, "allreduce_coalesced");
    checkReduce(t, opts.reduceOp, "allreduce_coalesced");
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(),
                "mroce allreduce_coalesced: tensors must have one dtype");
  }
  std::vector<at::Tensor> ts = tensors;
  c10d::ReduceOp op = opts.reduceOp;
  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, tensors, [this, ts, op]() mutable {
    std::vector<at::Tensor> flat;
    for (auto& t : ts)
      flat.push_back(t.reshape({-1}));
    at::Tensor all = at::cat(flat);
    runAllreduce(all, op);
    int64_t off = 0;
    for (auto& t : ts) {
      t.copy_(all.narrow(0, off, t.numel()).view(t.sizes()));
      off += t.numel();
    }
  });
}

// ---- broadcast, all-gather, reduce-scatter -----------------------------------

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::broadcast(
    std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) {
  checkOne(tensors, "broadcast");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "mroce broadcast: bad root ",
              opts.rootRank);
  TORCH_CHECK(opts.rootTensor == 0, "mroce broadcast: rootTensor must be 0");
  at::Tensor t = tensors[0];
  int root = commRank((int)opts.rootRank);
  return enqueue(c10d::OpType::BROADCAST, tensors, [this, t, root]() mutable {
    at::Tensor w = t.contiguous();
    check(mroce_coll_broadcast(comm_, w.data_ptr(), w.nbytes(), MROCE_COLL_UINT8, root),
          "broadcast");
    if (!w.is_same(t))
      t.copy_(w);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  checkOne(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1 && (int)outputs[0].size() == size_,
              "mroce allgather: expects one list of ", size_, " output tensors");
  for (auto& o : outputs[0]) {
    checkCpu(o, "allgather");
    TORCH_CHECK(o.numel() == inputs[0].numel() && o.scalar_type() == inputs[0].scalar_type(),
                "mroce allgather: every output must match the input's size and dtype");
  }
  at::Tensor in = inputs[0];
  std::vector<at::Tensor> outs = outputs[0];
  return enqueue(c10d::OpType::ALLGATHER, outs, [this, in, outs]() mutable {
    at::Tensor src = in.contiguous();
    size_t nb = src.nbytes();
    std::unique_ptr<uint8_t[]> all(new uint8_t[nb * (size_t)size_]);  // all written
    check(mroce_coll_allgather(comm_, src.data_ptr(), all.get(), nb, MROCE_COLL_UINT8),
          "allgather");
    for (int j = 0; j < size_; j++)
      outs[j].copy_(at::from_blob(all.get() + (size_t)commRank(j) * nb, src.sizes(),
                                  src.options()));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions&) {
  checkCpu(output, "allgather");
  checkCpu(input, "allgather");
  TORCH_CHECK(output.numel() == input.numel() * size_ &&
                  output.scalar_type() == input.scalar_type(),
              "mroce allgather_into_tensor: output must hold world_size inputs of its dtype");
  at::Tensor in = input, out = output;
  return enqueue(c10d::OpType::_ALLGATHER_BASE, {output}, [this, in, out]() mutable {
    at::Tensor src = in.contiguous();
    size_t nb = src.nbytes();
    bool identity = true;
    for (int j = 0; j < size_; j++)
      identity &= commRank(j) == j;
    if (identity && out.is_contiguous()) {
      // the communicator's order is the group's: gather straight into the output
      check(mroce_coll_allgather(comm_, src.data_ptr(), out.data_ptr(), nb, MROCE_COLL_UINT8),
            "allgather");
      return;
    }
    std::unique_ptr<uint8_t[]> all(new uint8_t[nb * (size_t)size_]);  // all written
    check(mroce_coll_allgather(comm_, src.data_ptr(), all.get(), nb, MROCE_COLL_UINT8),
          "allgather");
    at::Tensor flat = out.view({size_, -1});
    for (int j = 0; j < size_; j++)
      flat[j].copy_(at::from_blob(all.get() + (size_t)commRank(j) * nb, {src.numel()},
                                  src.options()));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  checkOne(outputs, "reduce_scatter");
  checkReduce(outputs[0], opts.reduceOp, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && (int)inputs[0].size() == size_,
              "mroce reduce_scatter: expects one list of ", size_, " input tensors");
  for (auto& i : inputs[0]) {
    checkCpu(i, "reduce_scatter");
    TORCH_CHECK(i.numel() == outputs[0].numel() && i.scalar_type() == outputs[0].scalar_type(),
                "mroce reduce_scatter: every input must match the output's size and dtype");
  }
  at::Tensor out = outputs[0];
  std::vector<at::Tensor> ins = inputs[0];
  c10d::ReduceOp op = opts.reduceOp;
  return enqueue(c10d::OpType::REDUCE_SCATTER, outputs, [this, out, ins, op]() mutable {
    at::ScalarType via;
    mroce_coll_dtype dt;
    mroce_coll_redop ro;
    reduceDtype(out.scalar_type(), &via, &dt);
    redop(op, &ro);
    int64_t n = out.numel();
    at::Tensor send = at::empty({size_, n}, out.options().dtype(via));
    for (int j = 0; j < size_; j++)
      send[commRank(j)].copy_(ins[j].reshape({-1}));
    at::Tensor recv = at::empty({n}, send.options());
    check(mroce_coll_reduce_scatter(comm_, send.data_ptr(), recv.data_ptr(), (size_t)n, dt, ro),
          "reduce_scatter");
    out.copy_(recv.view(out.sizes()));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  checkCpu(output, "reduce_scatter");
  checkCpu(input, "reduce_scatter");
  checkReduce(output, opts.reduceOp, "reduce_scatter");
  TORCH_CHECK(input.numel() == output.numel() * size_ &&
                  output.scalar_type() == input.scalar_type(),
              "mroce reduce_scatter_tensor: input must hold world_size outputs of its dtype");
  std::vector<std::vector<at::Tensor>> lists(1);
  at::Tensor flat = input.reshape({size_, -1});
  for (int j = 0; j < size_; j++)
    lists[0].push_back(flat[j]);
  std::vector<at::Tensor> outs{output};
  return reduce_scatter(outs, lists, opts);
}

// ---- all-to-all --------------------------------------------------------------

// Rows of dim 0 per peer: the splits given, or an even split.
static std::vector<int64_t> splitsOf(const at::Tensor& t, const std::vector<int64_t>& s, int n,
                                     const char* which) {
  int64_t rows = t.dim() ? t.size(0) : 1;
  if (s.empty()) {
    TORCH_CHECK(rows % n == 0, "mroce all_to_all_single: ", which, " dim 0 (", rows,
                ") does not split evenly in ", n);
    return std::vector<int64_t>(n, rows / n);
  }
  TORCH_CHECK((int)s.size() == n, "mroce all_to_all_single: ", which, " splits need ", n,
              " entries, got ", s.size());
  int64_t sum = 0;
  for (int64_t v : s) {
    TORCH_CHECK(v >= 0, "mroce all_to_all_single: negative split");
    sum += v;
  }
  TORCH_CHECK(sum == rows, "mroce all_to_all_single: ", which, " splits add up to ", sum,
              ", dim 0 is ", rows);
  return s;
}

// One all-to-all-v in bytes, straight between the tensors' memory: block j
// (torch rank j) is sent from sp[j] and received at rp[j]. The library
// indexes by communicator rank, so torch rank j's entries go to commRank(j).
// Blocks may be separate allocations: each displacement is the block's byte
// offset from the lowest block address.
void ProcessGroupMroce::runAlltoallv(const std::vector<const uint8_t*>& sp,
                                     const std::vector<size_t>& sl,
                                     const std::vector<uint8_t*>& rp,
                                     const std::vector<size_t>& rl) {
  size_t n = (size_t)size_;
  std::vector<size_t> sc(n, 0), sd(n, 0), rc(n, 0), rd(n, 0);
  uintptr_t sbase = UINTPTR_MAX, rbase = UINTPTR_MAX;
  for (size_t j = 0; j < n; j++) {
    if (sl[j])
      sbase = std::min(sbase, (uintptr_t)sp[j]);
    if (rl[j])
      rbase = std::min(rbase, (uintptr_t)rp[j]);
  }
  for (size_t j = 0; j < n; j++) {
    size_t p = (size_t)commRank((int)j);
    sc[p] = sl[j];
    sd[p] = sl[j] ? (size_t)((uintptr_t)sp[j] - sbase) : 0;
    rc[p] = rl[j];
    rd[p] = rl[j] ? (size_t)((uintptr_t)rp[j] - rbase) : 0;
  }
  const void* s = sbase == UINTPTR_MAX ? nullptr : (const void*)sbase;
  void* r = rbase == UINTPTR_MAX ? nullptr : (void*)rbase;
  check(mroce_coll_alltoallv(comm_, s, sc.data(), sd.data(), r, rc.data(), rd.data(),
                             MROCE_COLL_UINT8),
        "alltoall");
}

// A contiguous tensor to receive into: out itself when it is one (else a
// temporary, copied into out afterwards: the layout forces that copy).
static at::Tensor recvTarget(const at::Tensor& out) {
  return out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
}

void ProcessGroupMroce::runAlltoall(at::Tensor& out, const at::Tensor& in,
                                    const std::vector<int64_t>& osplit,
                                    const std::vector<int64_t>& isplit) {
  // osplit/isplit are in bytes, one entry per torch rank, or empty for an
  // even split. Only a non-contiguous tensor is copied (in to a contiguous
  // one, the result back into out).
  at::Tensor src = in.contiguous();
  at::Tensor dst = recvTarget(out);
  const uint8_t* sb = static_cast<const uint8_t*>(src.data_ptr());
  uint8_t* db = static_cast<uint8_t*>(dst.data_ptr());
  size_t n = (size_t)size_, so = 0, ro = 0;
  std::vector<const uint8_t*> sp(n);
  std::vector<uint8_t*> rp(n);
  std::vector<size_t> sl(n), rl(n);
  for (size_t j = 0; j < n; j++) {
    sl[j] = isplit.empty() ? src.nbytes() / n : (size_t)isplit[j];
    rl[j] = osplit.empty() ? dst.nbytes() / n : (size_t)osplit[j];
    sp[j] = sb + so;
    rp[j] = db + ro;
    so += sl[j];
    ro += rl[j];
  }
  runAlltoallv(sp, sl, rp, rl);
  if (!dst.is_same(out))
    out.copy_(dst);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outputSplits,
    std::vector<int64_t>& inputSplits, const c10d::AllToAllOptions&) {
  checkCpu(output, "all_to_all_single");
  checkCpu(input, "all_to_all_single");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(),
              "mroce all_to_all_single: input and output dtypes differ");
  TORCH_CHECK(output.dim() >= 1 && input.dim() >= 1,
              "mroce all_to_all_single: input and output need at least one dimension");
  std::vector<int64_t> os = splitsOf(output, outputSplits, size_, "output");
  std::vector<int64_t> is = splitsOf(input, inputSplits, size_, "input");
  // Elements per row: the product of the sizes after dim 0 (well defined for empty tensors).
  int64_t orow = 1, irow = 1;
  for (int64_t d = 1; d < output.dim(); d++)
    orow *= output.size(d);
  for (int64_t d = 1; d < input.dim(); d++)
    irow *= input.size(d);
  TORCH_CHECK(orow == irow, "mroce all_to_all_single: input and output rows differ in size");
  TORCH_CHECK(!outputSplits.empty() || !inputSplits.empty() || output.numel() == input.numel(),
              "mroce all_to_all_single: without splits, input and output need the same size (",
              input.numel(), " and ", output.numel(), " elements)");
  int64_t es = (int64_t)input.element_size();
  std::vector<int64_t> ib, ob;
  for (int j = 0; j < size_; j++) {
    ib.push_back(is[j] * irow * es);
    ob.push_back(os[j] * orow * es);
  }
  at::Tensor in = input, out = output;
  return enqueue(c10d::OpType::ALLTOALL_BASE, {output}, [this, in, out, ib, ob]() mutable {
    runAlltoall(out, in, ob, ib);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::alltoall(std::vector<at::Tensor>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllToAllOptions&) {
  TORCH_CHECK((int)outputs.size() == size_ && (int)inputs.size() == size_,
              "mroce all_to_all: expects ", size_, " input and output tensors");
  for (int j = 0; j < size_; j++) {
    checkCpu(outputs[j], "all_to_all");
    checkCpu(inputs[j], "all_to_all");
    TORCH_CHECK(outputs[j].scalar_type() == inputs[0].scalar_type() &&
                    inputs[j].scalar_type() == inputs[0].scalar_type(),
                "mroce all_to_all: every tensor must have one dtype");
  }
  std::vector<at::Tensor> ins = inputs, outs = outputs;
  return enqueue(c10d::OpType::ALLTOALL, outputs, [this, ins, outs]() mutable {
    // Each tensor is a block of its own: sent and received in place, with
    // no concatenation. Only non-contiguous tensors are copied (inputs to a
    // contiguous copy, outputs received into one and copied back).
    size_t n = (size_t)size_;
    std::vector<at::Tensor> src(n), dst(n);
    std::vector<const uint8_t*> sp(n);
    std::vector<uint8_t*> rp(n);
    std::vector<size_t> sl(n), rl(n);
    for (size_t j = 0; j < n; j++) {
      src[j] = ins[j].contiguous();
      dst[j] = recvTarget(outs[j]);
      sp[j] = static_cast<const uint8_t*>(src[j].data_ptr());
      rp[j] = static_cast<uint8_t*>(dst[j].data_ptr());
      sl[j] = src[j].nbytes();
      rl[j] = dst[j].nbytes();
    }
    runAlltoallv(sp, sl, rp, rl);
    for (size_t j = 0; j < n; j++)
      if (!dst[j].is_same(outs[j]))
        outs[j].copy_(dst[j]);
  });
}

// ---- send / recv ---------------------------------------------------------------

// The communicator's rank of a send's or receive's peer, after the checks.
int ProcessGroupMroce::p2pPeer(const std::vector<at::Tensor>& tensors, int r, int tag,
                               const char* what) const {
  checkOne(tensors, what);
  TORCH_CHECK(r >= 0 && r < size_ && r != rank_, "mroce ", what, ": bad peer rank ", r);
  TORCH_CHECK(tag >= 0, "mroce ", what, ": the tag must not be negative");
  return commRank(r);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::send(std::vector<at::Tensor>& tensors,
                                                       int dstRank, int tag) {
  int peer = p2pPeer(tensors, dstRank, tag, "send");
  at::Tensor t = tensors[0].contiguous();
  return enqueue(c10d::OpType::SEND, tensors, [this, t, peer, tag]() mutable {
    check(mroce_coll_send(comm_, t.data_ptr(), t.nbytes(), MROCE_COLL_UINT8, peer, (__u32)tag),
          "send");
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::recv(std::vector<at::Tensor>& tensors,
                                                       int srcRank, int tag) {
  int peer = p2pPeer(tensors, srcRank, tag, "recv");
  at::Tensor t = tensors[0];
  return enqueue(c10d::OpType::RECV, tensors, [this, t, peer, tag]() mutable {
    at::Tensor w = t.contiguous();
    check(mroce_coll_recv(comm_, w.data_ptr(), w.nbytes(), MROCE_COLL_UINT8, peer, (__u32)tag),
          "recv");
    if (!w.is_same(t))
      t.copy_(w);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::recvAnysource(std::vector<at::Tensor>&, int) {
  TORCH_CHECK(false, "mroce recv: a source rank is required (messages are matched per pair, "
                     "in call order)");
}

// ---- barrier -----------------------------------------------------------------

c10::intrusive_ptr<c10d::Work> ProcessGroupMroce::barrier(const c10d::BarrierOptions&) {
  return enqueue(c10d::OpType::BARRIER, {}, [this]() { check(mroce_coll_barrier(comm_), "barrier"); });
}

}  // namespace mroce_torch
