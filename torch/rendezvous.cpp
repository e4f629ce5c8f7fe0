// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Joining the communicator through the torch store. libmroce-coll meets its
// ranks at a TCP master (rank 0 of the communicator): torch rank 0 (always
// communicator rank 0) binds a free port on its address, publishes
// "ADDR PORT" under the store key mroce/master, and every rank then calls
// mroce_coll_comm_create() with those. The store is torch's own (env://,
// torchrun, tcp://, file://), already prefixed per process group.
#include "pg_mroce.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace mroce_torch {

std::string errString(int err) {
  char buf[128];
  mroce_strerror(err, buf, sizeof(buf));
  return buf;
}

namespace {

const char* kMasterKey = "mroce/master";
constexpr long kJoinWaitMs = 120000;  // for every rank to create the group

// An IPv4 literal for a host name or literal; throws when there is none.
std::string resolveV4(const std::string& host) {
  struct addrinfo hints = {}, *res = nullptr;
  hints.ai_family = AF_INET;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res)
    throw std::runtime_error("mroce: cannot resolve master address '" + host +
                             "' to IPv4: " + gai_strerror(rc));
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &((struct sockaddr_in*)res->ai_addr)->sin_addr, buf, sizeof(buf));
  freeaddrinfo(res);
  return buf;
}

// A TCP port free on addr now (the library binds it a moment later).
uint16_t freePort(const std::string& addr) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    throw std::runtime_error(std::string("mroce: socket: ") + strerror(errno));
  struct sockaddr_in sa = {};
  sa.sin_family = AF_INET;
  inet_pton(AF_INET, addr.c_str(), &sa.sin_addr);
  socklen_t len = sizeof(sa);
  if (bind(fd, (struct sockaddr*)&sa, sizeof(sa)) || getsockname(fd, (struct sockaddr*)&sa, &len)) {
    int e = errno;
    close(fd);
    throw std::runtime_error("mroce: no free TCP port on " + addr + ": " + strerror(e) +
                             " (is MASTER_ADDR this host's address? set MROCE_TORCH_MASTER_ADDR)");
  }
  close(fd);
  return ntohs(sa.sin_port);
}

// Count this rank in under mroce/arrived and wait for all of them.
void storeBarrier(const c10::intrusive_ptr<c10d::Store>& store, int size,
                  std::chrono::milliseconds wait) {
  store->add("mroce/arrived", 1);
  auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    int64_t n = store->add("mroce/arrived", 0);
    if (n >= size)
      return;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("mroce: only " + std::to_string(n) + " of " +
                               std::to_string(size) + " ranks created the process group within " +
                               std::to_string(wait.count()) + " ms");
    usleep(5000);
  }
}

}  // namespace

struct mroce_coll_comm* joinComm(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                 int size, int comm_rank, std::chrono::milliseconds timeout,
                                 bool ring_only) {
  // Every rank reaches this point before the store's get and the library's
  // rendezvous start their clocks: ranks still importing torch must not eat
  // the timeout.
  storeBarrier(store, size, std::max(timeout, std::chrono::milliseconds(kJoinWaitMs)));

  std::string addr;
  uint16_t port = 0;
  if (rank == 0) {
    const char* a = getenv("MROCE_TORCH_MASTER_ADDR");
    if (!a || !*a)
      a = getenv("MASTER_ADDR");
    if (!a || !*a)
      throw std::runtime_error("mroce: rank 0 needs MASTER_ADDR (or MROCE_TORCH_MASTER_ADDR): "
                               "the IPv4 address of its interface the ranks reach it on");
    addr = resolveV4(a);
    port = freePort(addr);
    std::string rec = addr + " " + std::to_string(port);
    store->set(kMasterKey, std::vector<uint8_t>(rec.begin(), rec.end()));
  } else {
    std::vector<uint8_t> v = store->get(kMasterKey);  // waits up to the store's timeout
    std::istringstream in(std::string(v.begin(), v.end()));
    unsigned p = 0;
    if (!(in >> addr >> p) || p == 0 || p > 65535)
      throw std::runtime_error("mroce: bad master record in the store");
    port = (uint16_t)p;
  }

  long long ms = timeout.count();
  if (ms <= 0 || ms > 0xffffffffLL)
    ms = 0xffffffffLL;
  struct mroce_coll_opts o = {};  // MROCE_OPTS's designated initializers are C, not C++17
  o.sz = sizeof(o);
  o.rank = comm_rank;
  o.world_size = size;
  o.master_addr = addr.c_str();
  o.master_port = port;
  o.timeout_ms = (__u32)ms;
  o.ring_only = ring_only;
  struct mroce_coll_comm* comm = nullptr;
  int err = mroce_coll_comm_create(&o, &comm);
  if (err)
    throw std::runtime_error("mroce: joining the communicator (rank " + std::to_string(rank) +
                             " of " + std::to_string(size) + ", master " + addr + ":" +
                             std::to_string(port) + "): " + errString(err));
  return comm;
}

}  // namespace mroce_torch
