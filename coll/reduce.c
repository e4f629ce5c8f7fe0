// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: element-wise reductions, out[i] = a[i] OP b[i] (a: the local
 * value, b: the one that arrived; out may be a).
 * Integer sums and products wrap (two's complement), as in MPI and NCCL;
 * they are computed in unsigned arithmetic so that wrapping is defined.
 */
#include <stdint.h>
#include <string.h>

#include "coll_internal.h"

#define SUM(a, b)	((a) + (b))
#define PROD(a, b)	((a) * (b))
#define MIN(a, b)	((b) < (a) ? (b) : (a))
#define MAX(a, b)	((b) > (a) ? (b) : (a))

/*
 * One loop per (type, op); T is the storage type, U the type to compute in.
 * The incoming operand never overlaps the output; the local one is the
 * output itself or apart from it. Each case gets its own loop with restrict
 * pointers, so that the compiler vectorizes it without alias checks: lane by
 * lane the same operation, so the same bits as one element at a time.
 */
#define REDUCE_LOOP(T, U, F)							\
	do {									\
		T *restrict o = out;						\
		const T *restrict x = b;					\
		if (out == a) {							\
			for (size_t i = 0; i < n; i++)				\
				o[i] = (T)F((U)o[i], (U)x[i]);			\
		} else {							\
			const T *restrict l = a;				\
			for (size_t i = 0; i < n; i++)				\
				o[i] = (T)F((U)l[i], (U)x[i]);			\
		}								\
	} while (0)

/* The op's loop (LOOP: REDUCE_LOOP or REDUCE_FIRST_LOOP) for storage type T. */
#define REDUCE_TYPE(T, U, LOOP)							\
	do {									\
		switch (op) {							\
		case MROCE_COLL_SUM:  LOOP(T, U, SUM);  break;			\
		case MROCE_COLL_PROD: LOOP(T, U, PROD); break;			\
		case MROCE_COLL_MIN:  LOOP(T, T, MIN);  break;			\
		case MROCE_COLL_MAX:  LOOP(T, T, MAX);  break;			\
		default: break;							\
		}								\
	} while (0)

/* Every dtype: its storage type and the type to compute in. */
#define REDUCE_DTYPES(LOOP)							\
	do {									\
		switch (t) {							\
		case MROCE_COLL_FLOAT32: REDUCE_TYPE(float, float, LOOP);	break;	\
		case MROCE_COLL_FLOAT64: REDUCE_TYPE(double, double, LOOP);	break;	\
		case MROCE_COLL_INT32:	 REDUCE_TYPE(int32_t, uint32_t, LOOP); break;	\
		case MROCE_COLL_INT64:	 REDUCE_TYPE(int64_t, uint64_t, LOOP); break;	\
		/* uint8 promotes to int: compute in unsigned int, store mod 256 */	\
		case MROCE_COLL_UINT8:	 REDUCE_TYPE(uint8_t, unsigned int, LOOP); break; \
		default: break;							\
		}								\
	} while (0)

/* GCC's -O2 vectorizes only loops whose trip count needs no scalar tail. */
#if defined(__GNUC__) && !defined(__clang__)
#define VECTORIZE __attribute__((optimize("tree-loop-vectorize", "vect-cost-model=dynamic")))
#else
#define VECTORIZE
#endif

VECTORIZE
void coll_reduce_to(enum mroce_coll_dtype t, enum mroce_coll_redop op, void *out,
		    const void *a, const void *b, size_t n)
{
	REDUCE_DTYPES(REDUCE_LOOP);
}

void coll_reduce(enum mroce_coll_dtype t, enum mroce_coll_redop op, void *inout,
		 const void *in, size_t n)
{
	coll_reduce_to(t, op, inout, inout, in, n);
}

/* inout = in OP inout: the incoming operand first (min and max pick the
 * first operand's value of two that compare equal, or where one is NaN). */
#define REDUCE_FIRST_LOOP(T, U, F)						\
	do {									\
		T *restrict o = inout;						\
		const T *restrict x = in;					\
		for (size_t i = 0; i < n; i++)					\
			o[i] = (T)F((U)x[i], (U)o[i]);				\
	} while (0)

VECTORIZE
void coll_reduce_first(enum mroce_coll_dtype t, enum mroce_coll_redop op, void *inout,
		       const void *in, size_t n)
{
	REDUCE_DTYPES(REDUCE_FIRST_LOOP);
}

size_t mroce_coll_dtype_size(enum mroce_coll_dtype t)
{
	static const size_t sizes[__MROCE_COLL_DTYPE_MAX] = { 4, 8, 4, 8, 1 };

	return (unsigned int)t < __MROCE_COLL_DTYPE_MAX ? sizes[t] : 0;
}

const char *mroce_coll_dtype_str(enum mroce_coll_dtype t)
{
	static const char *const names[__MROCE_COLL_DTYPE_MAX] = {
		"float", "double", "int32", "int64", "uint8",
	};

	return (unsigned int)t < __MROCE_COLL_DTYPE_MAX ? names[t] : "?";
}

const char *mroce_coll_redop_str(enum mroce_coll_redop op)
{
	static const char *const names[__MROCE_COLL_REDOP_MAX] = { "sum", "prod", "min", "max" };

	return (unsigned int)op < __MROCE_COLL_REDOP_MAX ? names[op] : "?";
}
