// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mpi_coll_perf: Open MPI's MPI_Allreduce / MPI_Alltoall timed over a size
 * sweep, nccl-tests style, printing the same table (or JSON) as mroce's
 * mroce-coll-perf so the two can be put side by side.
 *
 *   mpi_coll_perf [-c allreduce|alltoall] [-b MINBYTES] [-e MAXBYTES] [-f FACTOR]
 *                 [-n ITERS] [-w WARMUP] [-d float|double|int32|int64|uint8]
 *                 [-o sum|prod|min|max] [--json]
 *
 * Per size: WARMUP untimed calls, ITERS timed ones (time = the largest
 * per-rank average), then one untimed call on a known pattern whose result
 * every rank checks against what it computes itself (#wrong = mismatching
 * elements summed over ranks). Exit 0, 1 if any element was wrong, 2 on a bad
 * option. Run it with selftests/bench/mpirun_ns.sh, one rank per namespace.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum coll { COLL_ALLREDUCE, COLL_ALLTOALL };
enum dtype { DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT8 };
enum redop { OP_SUM, OP_PROD, OP_MIN, OP_MAX };

static const char *const coll_names[] = { "allreduce", "alltoall" };
static const char *const dtype_names[] = { "float", "double", "int32", "int64", "uint8" };
static const size_t dtype_sizes[] = { sizeof(float), sizeof(double), sizeof(int32_t),
				      sizeof(int64_t), sizeof(uint8_t) };
static const char *const op_names[] = { "sum", "prod", "min", "max" };

struct opts {
	enum coll coll;
	uint64_t minbytes, maxbytes;
	double factor;
	long iters, warmup;
	enum dtype dtype;
	enum redop op;
	bool json;
};

static int rank, nranks;

/* The one line for a bad command line: from rank 0, then every rank exits 2. */
static void usage_error(const char *fmt, const char *arg)
{
	if (rank == 0) {
		fprintf(stderr, "mpi_coll_perf: ");
		fprintf(stderr, fmt, arg);
		fprintf(stderr, " (usage: mpi_coll_perf [-c allreduce|alltoall] [-b MINBYTES]"
				" [-e MAXBYTES] [-f FACTOR] [-n ITERS] [-w WARMUP]"
				" [-d float|double|int32|int64|uint8] [-o sum|prod|min|max] [--json])\n");
		fflush(stderr);
	}
	MPI_Finalize();
	exit(2);
}

/* A byte count: decimal digits, then optionally K, M or G (powers of 1024). */
static bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (*end) {
	case '\0':
		break;
	case 'K': case 'k':
		mult = 1ULL << 10; end++;
		break;
	case 'M': case 'm':
		mult = 1ULL << 20; end++;
		break;
	case 'G': case 'g':
		mult = 1ULL << 30; end++;
		break;
	default:
		return false;
	}
	if (*end != '\0' || v > UINT64_MAX / mult)
		return false;
	*out = v * mult;
	return true;
}

static bool parse_long(const char *s, long min, long *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end != '\0' || v < min)
		return false;
	*out = v;
	return true;
}

static int lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void parse_args(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .coll = COLL_ALLREDUCE, .minbytes = 8, .maxbytes = 16ULL << 20,
			    .factor = 2.0, .iters = 20, .warmup = 5, .dtype = DT_FLOAT,
			    .op = OP_SUM, .json = false };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		long l;
		int k;

		if (strcmp(a, "--json") == 0) {
			o->json = true;
			continue;
		}
		if (a[0] != '-' || a[1] == '\0' || a[2] != '\0' || !strchr("cbefnwdo", a[1]))
			usage_error("unknown option '%s'", a);
		if (i + 1 >= argc)
			usage_error("option '%s' needs a value", a);
		v = argv[++i];
		switch (a[1]) {
		case 'c':
			if ((k = lookup(v, coll_names, NELEM(coll_names))) < 0)
				usage_error("-c: unknown collective '%s'", v);
			o->coll = (enum coll)k;
			break;
		case 'b':
			if (!parse_size(v, &o->minbytes))
				usage_error("-b: bad size '%s'", v);
			break;
		case 'e':
			if (!parse_size(v, &o->maxbytes))
				usage_error("-e: bad size '%s'", v);
			break;
		case 'f': {
			char *end;

			errno = 0;
			o->factor = strtod(v, &end);
			if (errno || end == v || *end != '\0' || !(o->factor > 1.0) ||
			    !isfinite(o->factor))
				usage_error("-f: bad factor '%s' (a number > 1)", v);
			break;
		}
		case 'n':
			if (!parse_long(v, 1, &l))
				usage_error("-n: bad iteration count '%s' (>= 1)", v);
			o->iters = l;
			break;
		case 'w':
			if (!parse_long(v, 0, &l))
				usage_error("-w: bad warmup count '%s' (>= 0)", v);
			o->warmup = l;
			break;
		case 'd':
			if ((k = lookup(v, dtype_names, NELEM(dtype_names))) < 0)
				usage_error("-d: unknown type '%s'", v);
			o->dtype = (enum dtype)k;
			break;
		case 'o':
			if ((k = lookup(v, op_names, NELEM(op_names))) < 0)
				usage_error("-o: unknown reduction '%s'", v);
			o->op = (enum redop)k;
			break;
		}
	}
	if (o->minbytes > o->maxbytes)
		usage_error("-b is larger than -e%s", "");
	if (o->maxbytes > (uint64_t)INT32_MAX)
		usage_error("-e: at most 2G-1 bytes%s", "");
}

/* The check pattern: rank r's send-buffer element i. */
static inline unsigned pattern(uint64_t r, uint64_t i)
{
	return (unsigned)((r * 7 + i * 3) % 11) + 1;
}

/*
 * Per type: fill a buffer with rank r's pattern, and count the elements of a
 * result that differ from what rank `me` expects. Integer sums and products
 * are computed in the unsigned type of the same width, so they wrap as the
 * library's do (uint8 mod 256) without signed overflow.
 */
#define DEFINE_TYPE(NAME, T, UT, EQ)                                                         \
	static void fill_##NAME(void *buf, size_t count, int r)                                \
	{                                                                                      \
		T *p = buf;                                                                    \
		for (size_t i = 0; i < count; i++)                                             \
			p[i] = (T)pattern((uint64_t)r, i);                                     \
	}                                                                                      \
	static T reduce_##NAME(size_t i, enum redop op)                                        \
	{                                                                                      \
		T acc = (T)pattern(0, i);                                                      \
		for (int r = 1; r < nranks; r++) {                                             \
			T v = (T)pattern((uint64_t)r, i);                                      \
			switch (op) {                                                          \
			case OP_SUM:                                                           \
				acc = (T)((UT)acc + (UT)v);                                    \
				break;                                                         \
			case OP_PROD:                                                          \
				acc = (T)((UT)acc * (UT)v);                                    \
				break;                                                         \
			case OP_MIN:                                                           \
				acc = v < acc ? v : acc;                                       \
				break;                                                         \
			case OP_MAX:                                                           \
				acc = v > acc ? v : acc;                                       \
				break;                                                         \
			}                                                                      \
		}                                                                              \
		return acc;                                                                    \
	}                                                                                      \
	static uint64_t check_##NAME(const void *buf, size_t count, enum coll coll,            \
				     enum redop op)                                            \
	{                                                                                      \
		const T *got = buf;                                                            \
		size_t block = count / (size_t)nranks;                                         \
		uint64_t wrong = 0;                                                            \
		for (size_t i = 0; i < count; i++) {                                           \
			T exp;                                                                 \
			if (coll == COLL_ALLREDUCE)                                            \
				exp = reduce_##NAME(i, op);                                    \
			else /* from peer i / block, its element (me * block + j) */           \
				exp = (T)pattern(i / block, (uint64_t)rank * block + i % block); \
			if (!(EQ))                                                             \
				wrong++;                                                       \
		}                                                                              \
		return wrong;                                                                  \
	}

/* Compare operands are got[i] and exp; a NaN (never expected) is wrong. */
#define EQ_EXACT (got[i] == exp)
#define ABS(x) ((x) < 0 ? -(x) : (x)) /* no libm: the build line has no -lm */
#define EQ_FLOAT (ABS(got[i] - exp) <= 1e-5f * ABS(exp))
#define EQ_DOUBLE (ABS(got[i] - exp) <= 1e-12 * ABS(exp))

DEFINE_TYPE(float, float, float, EQ_FLOAT)
DEFINE_TYPE(double, double, double, EQ_DOUBLE)
DEFINE_TYPE(int32, int32_t, uint32_t, EQ_EXACT)
DEFINE_TYPE(int64, int64_t, uint64_t, EQ_EXACT)
DEFINE_TYPE(uint8, uint8_t, uint8_t, EQ_EXACT)

static void fill(enum dtype t, void *buf, size_t count, int r)
{
	switch (t) {
	case DT_FLOAT:  fill_float(buf, count, r); break;
	case DT_DOUBLE: fill_double(buf, count, r); break;
	case DT_INT32:  fill_int32(buf, count, r); break;
	case DT_INT64:  fill_int64(buf, count, r); break;
	case DT_UINT8:  fill_uint8(buf, count, r); break;
	}
}

static uint64_t check(enum dtype t, const void *buf, size_t count, enum coll coll, enum redop op)
{
	switch (t) {
	case DT_FLOAT:  return check_float(buf, count, coll, op);
	case DT_DOUBLE: return check_double(buf, count, coll, op);
	case DT_INT32:  return check_int32(buf, count, coll, op);
	case DT_INT64:  return check_int64(buf, count, coll, op);
	case DT_UINT8:  return check_uint8(buf, count, coll, op);
	}
	return count;
}

static MPI_Datatype mpi_type(enum dtype t)
{
	switch (t) {
	case DT_FLOAT:  return MPI_FLOAT;
	case DT_DOUBLE: return MPI_DOUBLE;
	case DT_INT32:  return MPI_INT32_T;
	case DT_INT64:  return MPI_INT64_T;
	case DT_UINT8:  return MPI_UINT8_T;
	}
	return MPI_DATATYPE_NULL;
}

static MPI_Op mpi_op(enum redop op)
{
	switch (op) {
	case OP_SUM:  return MPI_SUM;
	case OP_PROD: return MPI_PROD;
	case OP_MIN:  return MPI_MIN;
	case OP_MAX:  return MPI_MAX;
	}
	return MPI_OP_NULL;
}

/* Sizes grow by -f, and by at least a byte (0 is followed by 1). */
static uint64_t next_size(uint64_t s, const struct opts *o)
{
	double next = (double)s * o->factor;

	if (next > (double)o->maxbytes)
		return o->maxbytes + 1;
	return (uint64_t)next > s ? (uint64_t)next : s + 1;
}

static void run_coll(const struct opts *o, const void *sbuf, void *rbuf, size_t count)
{
	int rc;

	if (o->coll == COLL_ALLREDUCE)
		rc = MPI_Allreduce(sbuf, rbuf, (int)count, mpi_type(o->dtype), mpi_op(o->op),
				   MPI_COMM_WORLD);
	else
		rc = MPI_Alltoall(sbuf, (int)(count / (size_t)nranks), mpi_type(o->dtype), rbuf,
				  (int)(count / (size_t)nranks), mpi_type(o->dtype), MPI_COMM_WORLD);
	if (rc != MPI_SUCCESS)
		MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv)
{
	struct opts o;
	size_t tsize, gran, maxcount;
	void *sbuf, *rbuf;
	uint64_t total_wrong = 0;
	size_t last_bytes = SIZE_MAX;
	bool first = true;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	parse_args(argc, argv, &o);

	tsize = dtype_sizes[o.dtype];
	/* Sizes round down to a whole number of elements (alltoall: of blocks). */
	gran = o.coll == COLL_ALLTOALL ? tsize * (size_t)nranks : tsize;
	maxcount = (size_t)(o.maxbytes / gran) * gran / tsize;
	/* One byte more so an empty run still has valid pointers. */
	sbuf = malloc(maxcount * tsize + 1);
	rbuf = malloc(maxcount * tsize + 1);
	if (!sbuf || !rbuf) {
		fprintf(stderr, "mpi_coll_perf: rank %d: out of memory for %zu bytes\n", rank,
			maxcount * tsize);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}

	if (rank == 0) {
		if (o.json) {
			printf("{\"impl\":\"openmpi\",\"coll\":\"%s\",\"ranks\":%d,\"type\":\"%s\","
			       "\"op\":\"%s\",\"iters\":%ld,\"results\":[",
			       coll_names[o.coll], nranks, dtype_names[o.dtype],
			       o.coll == COLL_ALLREDUCE ? op_names[o.op] : "-", o.iters);
		} else {
			if (o.coll == COLL_ALLREDUCE)
				printf("# mpi_coll_perf: %s, %d ranks, %s %s, %ld iters\n",
				       coll_names[o.coll], nranks, dtype_names[o.dtype],
				       op_names[o.op], o.iters);
			else
				printf("# mpi_coll_perf: %s, %d ranks, %s, %ld iters\n",
				       coll_names[o.coll], nranks, dtype_names[o.dtype], o.iters);
			printf("#%12s %11s %7s %7s %15s %11s %12s %12s %7s\n", "size", "count", "type",
			       "redop", "algo", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
		}
		fflush(stdout);
	}

	for (uint64_t s = o.minbytes; s <= o.maxbytes; s = next_size(s, &o)) {
		size_t count = (size_t)(s / gran) * gran / tsize;
		size_t bytes = count * tsize;
		double t0, avg, tmax, algbw, busbw;
		uint64_t wrong, wrong_all;

		/*
		 * A size that rounds to no element runs only when asked for (-b 0),
		 * one that rounds to the size before (-f below 2) not again.
		 */
		if ((count == 0 && s != 0) || bytes == last_bytes)
			continue;
		last_bytes = bytes;

		fill(o.dtype, sbuf, count, rank);
		for (long i = 0; i < o.warmup; i++)
			run_coll(&o, sbuf, rbuf, count);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (long i = 0; i < o.iters; i++)
			run_coll(&o, sbuf, rbuf, count);
		avg = (MPI_Wtime() - t0) / (double)o.iters * 1e6;
		MPI_Allreduce(&avg, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

		/* The check run: a known pattern in, a poisoned receive buffer. */
		fill(o.dtype, sbuf, count, rank);
		memset(rbuf, 0xff, bytes);
		run_coll(&o, sbuf, rbuf, count);
		wrong = check(o.dtype, rbuf, count, o.coll, o.op);
		MPI_Allreduce(&wrong, &wrong_all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
		total_wrong += wrong_all;

		algbw = tmax > 0 ? (double)bytes / (tmax * 1e-6) / 1e9 : 0.0;
		busbw = algbw * (o.coll == COLL_ALLREDUCE ? 2.0 * (nranks - 1) / nranks
							  : (double)(nranks - 1) / nranks);
		if (rank == 0) {
			const char *op = o.coll == COLL_ALLREDUCE ? op_names[o.op] : "-";

			if (o.json)
				printf("%s{\"size\":%zu,\"count\":%zu,\"algo\":\"mpi\",\"time_us\":%.2f,"
				       "\"algbw\":%.4f,\"busbw\":%.4f,\"wrong\":%" PRIu64 "}",
				       first ? "" : ",", bytes, count, tmax, algbw, busbw, wrong_all);
			else
				printf(" %12zu %11zu %7s %7s %15s %11.2f %12.3f %12.3f %7" PRIu64 "\n", bytes,
				       count, dtype_names[o.dtype], op, "mpi", tmax, algbw, busbw,
				       wrong_all);
			fflush(stdout);
		}
		first = false;
	}
	if (rank == 0 && o.json) {
		printf("]}\n");
		fflush(stdout);
	}

	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return total_wrong ? 1 : 0;
}
