// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the XDP object (the one built into libmroce) tells tools through its
 * BTF, read without loading it: the stats map's value names every counter,
 * in enum order (what `bpftool map dump` prints), and the run config libxdp's
 * dispatcher reads (priority, chain call actions), and the placement switch
 * in its read-only data.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xdp_helpers.h>
#include <cmocka.h>

#include "mroce/mroce.h"
#include "mroce/dp_maps.h"
#include "mroce.skel.h"

static struct bpf_object *open_embedded(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, o, .object_name = "mroce");
	size_t sz;
	const void *elf = mroce_bpf__elf_bytes(&sz);
	struct bpf_object *obj = bpf_object__open_mem(elf, sz, &o);

	assert_non_null(obj);
	assert_non_null(bpf_object__btf(obj));
	return obj;
}

/* The stats map: one per-CPU entry whose BTF struct has one __u64 per counter, named as the CLI names it. */
static void test_stats_btf_names(void **state)
{
	struct bpf_object *obj = open_embedded();
	struct bpf_map *map = bpf_object__find_map_by_name(obj, MROCE_MAP_STATS);
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t;
	const struct btf_member *m;

	(void)state;
	assert_non_null(map);
	assert_int_equal(bpf_map__type(map), BPF_MAP_TYPE_PERCPU_ARRAY);
	assert_int_equal(bpf_map__max_entries(map), 1);
	assert_int_equal(bpf_map__value_size(map), sizeof(struct mroce_dp_counters));
	t = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
	assert_non_null(t);
	assert_true(btf_is_struct(t));
	assert_string_equal(btf__name_by_offset(btf, t->name_off), "mroce_dp_counters");
	assert_int_equal(btf_vlen(t), MROCE_STAT_MAX);
	m = btf_members(t);
	for (int s = 0; s < MROCE_STAT_MAX; s++, m++) {
		const struct btf_type *mt = btf__type_by_id(btf, m->type);

		assert_string_equal(btf__name_by_offset(btf, m->name_off), mroce_stat_name(s));
		assert_int_equal(btf_member_bit_offset(t, s), 64 * s);
		assert_int_equal(btf__resolve_size(btf, m->type), 8);
		assert_non_null(mt);
	}
	bpf_object__close(obj);
}

/* The value of a __uint(name, N) field of a BTF map-style struct: N, or -1. */
static long uint_field(const struct btf *btf, const struct btf_type *st, const char *name)
{
	const struct btf_member *m = btf_members(st);

	for (int i = 0; i < btf_vlen(st); i++, m++) {
		const struct btf_type *p = btf__type_by_id(btf, m->type), *a;

		if (strcmp(btf__name_by_offset(btf, m->name_off), name))
			continue;
		if (!p || !btf_is_ptr(p) || !(a = btf__type_by_id(btf, p->type)) || !btf_is_array(a))
			return -1;
		return btf_array(a)->nelems;
	}
	return -1;
}

/*
 * XDP_RUN_CONFIG(mroce_xdp): a variable _mroce_xdp in the .xdp_run_config
 * data section, with the priority and XDP_PASS as the only chain call action;
 * libxdp reads the same values from it.
 */
static void test_xdp_run_config(void **state)
{
	struct bpf_object *obj = open_embedded();
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *sec = NULL, *var = NULL, *st;
	const struct btf_var_secinfo *vi;
	struct xdp_program *xp;
	__s32 id;

	(void)state;
	id = btf__find_by_name_kind(btf, ".xdp_run_config", BTF_KIND_DATASEC);
	assert_true(id > 0);
	sec = btf__type_by_id(btf, (__u32)id);
	vi = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vi++) {
		const struct btf_type *v = btf__type_by_id(btf, vi->type);

		if (btf_is_var(v) && !strcmp(btf__name_by_offset(btf, v->name_off), "_mroce_xdp"))
			var = v;
	}
	assert_non_null(var);
	st = btf__type_by_id(btf, var->type);
	assert_true(btf_is_struct(st));
	assert_int_equal(uint_field(btf, st, "priority"), XDP_DEFAULT_RUN_PRIO);
	assert_int_equal(uint_field(btf, st, "XDP_PASS"), 1);
	assert_int_equal(btf_vlen(st), 2);	/* nothing but PASS goes on to the next program */

	xp = xdp_program__from_bpf_obj(obj, "xdp.frags");
	assert_int_equal(libxdp_get_error(xp), 0);
	assert_string_equal(xdp_program__name(xp), MROCE_PROG_NAME);
	assert_int_equal(xdp_program__run_prio(xp), XDP_DEFAULT_RUN_PRIO);
	assert_true(xdp_program__chain_call_enabled(xp, XDP_PASS));
	assert_false(xdp_program__chain_call_enabled(xp, XDP_DROP));
	assert_false(xdp_program__chain_call_enabled(xp, XDP_REDIRECT));
	xdp_program__close(xp);
	bpf_object__close(obj);
}

/*
 * The placement switch: a __u32 in .rodata (frozen at load, so the verifier
 * drops the code it guards), off in the object as built, so a loader that
 * knows nothing of it (`ip link ... obj mroce.bpf.o`) gets a program every
 * kernel accepts; the skeleton names it for the library and the tests.
 */
static void test_place_switch(void **state)
{
	struct bpf_object *obj = open_embedded();
	struct bpf_map *map = bpf_object__find_map_by_name(obj, ".rodata");
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *sec, *v;
	const struct btf_var_secinfo *vi;
	const __u8 *img;
	size_t len;
	int found = 0;

	(void)state;
	assert_non_null(map);
	assert_true(bpf_map__map_flags(map) & BPF_F_RDONLY_PROG);
	sec = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
	assert_non_null(sec);
	assert_true(btf_is_datasec(sec));
	img = bpf_map__initial_value(map, &len);
	assert_non_null(img);
	vi = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vi++) {
		__u32 val;

		v = btf__type_by_id(btf, vi->type);
		if (!btf_is_var(v) || strcmp(btf__name_by_offset(btf, v->name_off), MROCE_VAR_PLACE))
			continue;
		found++;
		assert_int_equal(vi->size, sizeof(__u32));
		assert_true(vi->offset + sizeof(__u32) <= len);
		memcpy(&val, img + vi->offset, sizeof(val));
		assert_int_equal(val, 0);
	}
	assert_int_equal(found, 1);
	bpf_object__close(obj);
}

/* The skeleton (what prog_test sets) names the same variable. */
_Static_assert(sizeof(((struct mroce_bpf__rodata *)0)->mroce_xdp_meta_ok) == sizeof(__u32),
	       "the placement switch is a __u32");

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_btf_names),
		cmocka_unit_test(test_xdp_run_config),
		cmocka_unit_test(test_place_switch),
	};

	/* libbpf's and libxdp's chatter stays out of the results */
	libbpf_set_print(NULL);
	libxdp_set_print(NULL);
	return cmocka_run_group_tests_name("dp_meta", tests, NULL, NULL);
}
