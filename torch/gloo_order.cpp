// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Adding floats in gloo's order (docs/pytorch.md, "Bit for bit with gloo").
//
// gloo's ring all-reduce (gloo/allreduce.cc, ring(), as PyTorch 1.13's
// ProcessGroupGloo calls it) cuts the vector into S = roundUp(max(ceil(bytes /
// M), 2 N), N) segments of ceil(count / S) elements, M the largest segment
// (1 MiB in that build: measured, see below), and gives rank c the chunk of
// S / N consecutive segments c * S / N ...; the last chunks may be short or
// empty. Chunk c starts at rank c - 1 and travels down the ring, so it is
// ((x[c-1] + x[c-2]) + x[c-3]) + ... + x[c].
// libmroce's ring (coll/algo_ring.c) has rank r send segment r - 1 first
// and finish with segment r, so segment k is ((y[k+1] + y[k+2]) + ...) + y[k]
// (docs/collectives.md says "starting at rank k"; the code and the
// measurements here say k + 1). With communicator rank m = (N - r) mod N for
// torch rank r, y[m] = x[-m], so segment k is the chain down from torch
// rank -(k + 1): gloo's chunk c = -k (mod N). The staging vector holds N
// segments of exactly C elements (so the library's segments are exactly
// them), segment k a copy of chunk (N - k) mod N, zero-padded. The
// selftest checks the result against gloo's, bit for bit, on 3 and 4 ranks.
#include "pg_mroce.hpp"

#include <algorithm>
#include <cstring>

namespace mroce_torch {

GlooLayout glooLayout(size_t count, size_t esize, int size) {
  size_t n = (size_t)size, maxseg = kGlooMaxSegmentBytes / esize * esize;
  if (maxseg == 0)
    maxseg = esize;
  size_t bytes = count * esize;
  size_t segs = std::max((bytes + maxseg - 1) / maxseg, 2 * n);
  segs = (segs + n - 1) / n * n;
  size_t chunk = segs / n * ((count + segs - 1) / segs);
  return GlooLayout{chunk, chunk * n};
}

void glooPermute(void* user, void* staging, size_t count, size_t esize, int size, bool to) {
  GlooLayout l = glooLayout(count, esize, size);
  char* u = static_cast<char*>(user);
  char* s = static_cast<char*>(staging);
  for (int k = 0; k < size; k++) {
    size_t c = (size_t)((size - k) % size);
    size_t begin = c * l.chunk, end = begin + l.chunk;
    if (begin > count)
      begin = count;
    if (end > count)
      end = count;
    size_t n = end - begin;
    char* seg = s + (size_t)k * l.chunk * esize;
    if (to) {
      memcpy(seg, u + begin * esize, n * esize);
      memset(seg + n * esize, 0, (l.chunk - n) * esize);
    } else {
      memcpy(u + begin * esize, seg, n * esize);
    }
  }
}

}  // namespace mroce_torch
