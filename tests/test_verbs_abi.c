// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce's libibverbs.so.1 as an application linked against Debian's sees it:
 * this binary links build/verbs/libibverbs.so.1 only (RUNPATH
 * $ORIGIN/../verbs), never libmroce. No root, no datapath: a context is
 * opened when the device list has one (opening touches no datapath), PDs
 * and QPs handed to the calls that refuse are stand-ins the calls must not
 * need.
 *   - every name@version of rdma-core 44 resolves, in this library, and the
 *     compat versions are other functions than the defaults;
 *   - nothing else leaks (libmroce's names, the stubs' internal names);
 *   - what mroce does not have fails as libibverbs documents, errno set;
 *   - the provider interface: registrations are accepted and ignored, and
 *     Debian's libmlx5 and libefa load against this library;
 *   - the pure helpers (rates, enum names, kernel-ABI copies) answer as
 *     Debian's own libibverbs does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include <infiniband/verbs.h>

#include "private.h"

#ifndef MRV_EXPORTS_FILE
#error "the Makefile passes MRV_EXPORTS_FILE (verbs/libibverbs-44.exports)"
#endif

/* Debian's own library, to compare the pure helpers with (skipped if absent) */
#define DEBIAN_LIBIBVERBS "/usr/lib/" MRV_MULTIARCH "/libibverbs.so.1.14.44.0"

/* The context of the first device, if the device list has one. */
static struct ibv_device **devs;
static struct ibv_context *ctx;

static int setup(void **state)
{
	int n = 0;

	(void)state;
	devs = ibv_get_device_list(&n);
	if (devs && n > 0)
		ctx = ibv_open_device(devs[0]);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (ctx)
		assert_int_equal(ibv_close_device(ctx), 0);
	if (devs)
		ibv_free_device_list(devs);
	return 0;
}

static int ndevices(void)
{
	struct ibv_device **l;
	int n = -1;

	l = ibv_get_device_list(&n);
	if (!l)
		return 0;
	ibv_free_device_list(l);
	return n;
}

/* The file that defines addr, resolved. */
static void object_of(const void *addr, char *out, size_t len)
{
	char real[PATH_MAX];
	Dl_info info;

	assert_true(dladdr(addr, &info) != 0);
	assert_non_null(info.dli_fname);
	assert_non_null(realpath(info.dli_fname, real));
	snprintf(out, len, "%s", real);
}

static void assert_is_ours(const void *addr)
{
	static const char tail[] = "/verbs/libibverbs.so.1";
	char path[PATH_MAX];
	size_t n;

	object_of(addr, path, sizeof(path));
	n = strlen(path);
	assert_true(n > sizeof(tail) - 1);
	if (strcmp(path + n - (sizeof(tail) - 1), tail) != 0)
		fail_msg("symbol from %s, not mroce's library", path);
}

/* Every line of libibverbs-44.exports: name@version resolves, in mroce's
 * library; a compat version is another function than the name's default. */
static void test_every_export_resolves(void **state)
{
	char line[256], name[128], ver[64], kind[16];
	unsigned int seen = 0, compat = 0;
	FILE *f;

	(void)state;
	f = fopen(MRV_EXPORTS_FILE, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		void *p;

		if (line[0] == '#' || sscanf(line, "%127s %63s %15s", name, ver, kind) != 3)
			continue;
		if (strcmp(name, ver) == 0)
			continue;	/* a version node's own symbol */
		seen++;
		p = dlvsym(RTLD_DEFAULT, name, ver);
		if (!p)
			fail_msg("%s@%s does not resolve", name, ver);
		assert_is_ours(p);
		if (strcmp(kind, "compat") == 0) {
			void *def = dlsym(RTLD_DEFAULT, name);	/* the default version */

			compat++;
			if (def == p)
				fail_msg("%s@%s is the default function", name, ver);
		}
	}
	fclose(f);
	assert_int_equal(seen, 180);	/* 193 lines less the 13 nodes */
	assert_int_equal(compat, 34);
}

static void test_versions_and_leaks(void **state)
{
	(void)state;
	/* a few by hand, one per node an application commonly binds to */
	assert_non_null(dlvsym(RTLD_DEFAULT, "ibv_get_device_list", "IBVERBS_1.1"));
	assert_non_null(dlvsym(RTLD_DEFAULT, "ibv_get_pkey_index", "IBVERBS_1.5"));
	assert_non_null(dlvsym(RTLD_DEFAULT, "ibv_qp_to_qp_ex", "IBVERBS_1.6"));
	assert_non_null(dlvsym(RTLD_DEFAULT, "ibv_query_qp_data_in_order", "IBVERBS_1.14"));
	assert_non_null(dlvsym(RTLD_DEFAULT, "verbs_register_driver_34", "IBVERBS_PRIVATE_34"));
	/* the wrong node: nothing */
	assert_null(dlvsym(RTLD_DEFAULT, "ibv_get_device_list", "IBVERBS_1.5"));
	assert_null(dlvsym(RTLD_DEFAULT, "ibv_qp_to_qp_ex", "IBVERBS_1.1"));
	/* no libmroce name, no internal name of the library */
	assert_null(dlsym(RTLD_DEFAULT, "mroce_dev_open"));
	assert_null(dlsym(RTLD_DEFAULT, "mroce_create_qp"));
	assert_null(dlsym(RTLD_DEFAULT, "mrv_compat_alloc_pd"));
	assert_null(dlsym(RTLD_DEFAULT, "mrv_dev_get"));
}

/* The IBVERBS_1.0 versions: ENOSYS, as each call reports failures. */
static void test_compat_versions_refuse(void **state)
{
	struct ibv_device **(*get_list)(int *);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *);
	int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
	int (*get_cq_event)(struct ibv_comp_channel *, struct ibv_cq **, void **);
	void (*register_driver)(const char *, void *);
	int n = 7;

	(void)state;
	get_list = (struct ibv_device **(*)(int *))dlvsym(RTLD_DEFAULT, "ibv_get_device_list",
							   "IBVERBS_1.0");
	alloc_pd = (struct ibv_pd *(*)(struct ibv_context *))dlvsym(RTLD_DEFAULT, "ibv_alloc_pd",
								    "IBVERBS_1.0");
	query_device = (int (*)(struct ibv_context *, struct ibv_device_attr *))
		dlvsym(RTLD_DEFAULT, "ibv_query_device", "IBVERBS_1.0");
	get_cq_event = (int (*)(struct ibv_comp_channel *, struct ibv_cq **, void **))
		dlvsym(RTLD_DEFAULT, "ibv_get_cq_event", "IBVERBS_1.0");
	register_driver = (void (*)(const char *, void *))dlvsym(RTLD_DEFAULT,
								 "ibv_register_driver",
								 "IBVERBS_1.1");
	assert_non_null(get_list);
	assert_non_null(alloc_pd);
	assert_non_null(query_device);
	assert_non_null(get_cq_event);
	assert_non_null(register_driver);

	errno = 0;
	assert_null(get_list(&n));
	assert_int_equal(n, 0);
	assert_int_equal(errno, ENOSYS);
	errno = 0;
	assert_null(alloc_pd(ctx));
	assert_int_equal(errno, ENOSYS);
	assert_int_equal(query_device(ctx, NULL), ENOSYS);
	errno = 0;
	assert_int_equal(get_cq_event(NULL, NULL, NULL), -1);
	assert_int_equal(errno, ENOSYS);
	register_driver("mlx4", NULL);		/* accepted, dropped */
	assert_null(dlsym(RTLD_DEFAULT, "ibv_register_driver"));	/* no default version */
}

/* Stand-ins for the objects the refusing calls are handed: zeroed, on the
 * context when there is one. None of these calls may need more. */
static struct ibv_pd fake_pd;
static struct ibv_qp fake_qp;

static void fakes(void)
{
	memset(&fake_pd, 0, sizeof(fake_pd));
	memset(&fake_qp, 0, sizeof(fake_qp));
	fake_pd.context = ctx;
	fake_qp.context = ctx;
	fake_qp.pd = &fake_pd;
	fake_qp.qp_type = IBV_QPT_RC;
	fake_qp.state = IBV_QPS_RESET;
}

#define ASSERT_NULL_EOPNOTSUPP(call)			\
	do {						\
		errno = 0;				\
		assert_null(call);			\
		assert_int_equal(errno, EOPNOTSUPP);	\
	} while (0)

/* SRQ, AH, multicast, imports, ECE, dmabuf: what mroce does not have. */
static void test_unsupported_exported_calls(void **state)
{
	struct ibv_srq_init_attr srq_attr = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };
	struct ibv_srq_attr sattr;
	union ibv_gid gid = { .raw = { 0xff, 0x02 } };
	struct ibv_ece ece = { 0 };
	struct ibv_wc wc = { 0 };
	struct ibv_grh grh = { 0 };
	uint8_t mac[ETHERNET_LL_SIZE];
	uint16_t vid;

	(void)state;
	fakes();
	ASSERT_NULL_EOPNOTSUPP(ibv_create_srq(&fake_pd, &srq_attr));
	assert_int_equal(ibv_modify_srq((struct ibv_srq *)&fake_qp, &sattr, IBV_SRQ_MAX_WR),
			 EOPNOTSUPP);
	ASSERT_NULL_EOPNOTSUPP(ibv_create_ah(&fake_pd, &ah_attr));
	ASSERT_NULL_EOPNOTSUPP(ibv_create_ah_from_wc(&fake_pd, &wc, &grh, 1));
	errno = 0;
	assert_int_equal(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &ah_attr), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(ibv_attach_mcast(&fake_qp, &gid, 0), EOPNOTSUPP);
	assert_int_equal(ibv_detach_mcast(&fake_qp, &gid, 0), EOPNOTSUPP);
	assert_int_equal(ibv_query_ece(&fake_qp, &ece), EOPNOTSUPP);
	assert_int_equal(ibv_set_ece(&fake_qp, &ece), EOPNOTSUPP);
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &ah_attr, mac, &vid), EOPNOTSUPP);
	ASSERT_NULL_EOPNOTSUPP(ibv_import_device(-1));
	ASSERT_NULL_EOPNOTSUPP(ibv_import_pd(ctx, 1));
	ASSERT_NULL_EOPNOTSUPP(ibv_import_mr(&fake_pd, 1));
	ASSERT_NULL_EOPNOTSUPP(ibv_import_dm(ctx, 1));
	ASSERT_NULL_EOPNOTSUPP(ibv_reg_dmabuf_mr(&fake_pd, 0, 4096, 0, -1,
						 IBV_ACCESS_LOCAL_WRITE));
}

/* The verbs that verbs.h inlines through the context's function pointers:
 * with a real context, each refused feature fails cleanly. */
static void test_unsupported_inline_calls(void **state)
{
	struct ibv_srq_init_attr_ex srqx = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_TM,
		.pd = &fake_pd,
	};
	struct ibv_alloc_dm_attr dm = { .length = 4096 };
	struct ibv_td_init_attr td = { 0 };
	struct ibv_xrcd_init_attr xrcd = { .comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1 };
	struct ibv_counters_init_attr cnt = { 0 };
	struct ibv_wq_init_attr wq = { .wq_type = IBV_WQT_RQ, .max_wr = 1, .max_sge = 1 };

	(void)state;
	if (!ctx)
		skip();		/* the core's device list gave none */
	fakes();
	errno = 0;
	assert_null(ibv_alloc_mw(&fake_pd, IBV_MW_TYPE_1));
	assert_int_equal(errno, EOPNOTSUPP);
	ASSERT_NULL_EOPNOTSUPP(ibv_create_srq_ex(ctx, &srqx));
	ASSERT_NULL_EOPNOTSUPP(ibv_alloc_dm(ctx, &dm));
	ASSERT_NULL_EOPNOTSUPP(ibv_alloc_td(ctx, &td));
	ASSERT_NULL_EOPNOTSUPP(ibv_open_xrcd(ctx, &xrcd));
	ASSERT_NULL_EOPNOTSUPP(ibv_create_counters(ctx, &cnt));
	ASSERT_NULL_EOPNOTSUPP(ibv_create_wq(ctx, &wq));
}

/* Providers register themselves from their constructors: accepted and
 * ignored, the device list unchanged; Debian's libmlx5 and libefa (which
 * perftest links) load against this library, and only this one. */
static int count_libibverbs(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *n = info->dlpi_name;
	size_t len = strlen(n);

	(void)size;
	if (len >= 15 && strcmp(n + len - 15, "libibverbs.so.1") == 0)
		++*(int *)data;
	return 0;
}

static void test_providers_register_harmlessly(void **state)
{
	static const char *const providers[] = { "libmlx5.so.1", "libefa.so.1" };
	unsigned char ops[256];		/* what a provider's ops would be: never read */
	int before = ndevices(), loaded = 0;

	(void)state;
	memset(ops, 0xa5, sizeof(ops));
	verbs_register_driver_34((const struct verbs_device_ops *)ops);
	assert_int_equal(ndevices(), before);

	for (unsigned int i = 0; i < sizeof(providers) / sizeof(providers[0]); i++) {
		void *h = dlopen(providers[i], RTLD_NOW | RTLD_LOCAL);
		int n = 0;

		if (!h) {
			printf("# %s not installed: %s\n", providers[i], dlerror());
			continue;
		}
		loaded++;
		assert_int_equal(ndevices(), before);
		dl_iterate_phdr(count_libibverbs, &n);
		assert_int_equal(n, 1);		/* ours: no second libibverbs came in */
		dlclose(h);
	}
	if (!loaded)
		skip();
}

/* The provider interface otherwise: harmless, refusing. */
static void test_private_interface_refuses(void **state)
{
	(void)state;
	errno = 0;
	assert_null(_verbs_init_and_alloc_context(devs ? devs[0] : NULL, -1, 1024, NULL, 0));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(verbs_open_device(devs ? devs[0] : NULL, NULL));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(execute_ioctl(ctx, NULL), EOPNOTSUPP);
	assert_int_equal(ibv_cmd_get_context(NULL, NULL, 0, NULL, 0), EOPNOTSUPP);
	assert_int_equal(ibv_cmd_alloc_pd(ctx, &fake_pd, NULL, 0, NULL, 0), EOPNOTSUPP);
	assert_int_equal(ibv_cmd_create_qp_ex2(ctx, NULL, NULL, NULL, 0, NULL, 0), EOPNOTSUPP);
	assert_int_equal(ibv_cmd_destroy_qp(&fake_qp), EOPNOTSUPP);
	__verbs_log(NULL, 0, "%s", "dropped");
	assert_false(verbs_allow_disassociate_destroy);
	/* fork protection is off or not needed: the range calls have nothing to do */
	assert_int_not_equal(ibv_is_fork_initialized(), IBV_FORK_ENABLED);
	assert_int_equal(ibv_dontfork_range(&fake_pd, sizeof(fake_pd)), 0);
	assert_int_equal(ibv_dofork_range(&fake_pd, sizeof(fake_pd)), 0);
}

static void test_read_sysfs_file(void **state)
{
	char dir[] = "/tmp/mroce-verbs-abi.XXXXXX", path[64], buf[8];
	FILE *f;

	(void)state;
	assert_string_equal(ibv_get_sysfs_path(), "/sys");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/abi_version", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("6\n", f);
	fclose(f);
	memset(buf, 'Z', sizeof(buf));
	assert_int_equal(ibv_read_sysfs_file(dir, "abi_version", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "6");
	/* a file that fills the buffer without its newline: cut, refused */
	errno = 0;
	assert_int_equal(ibv_read_sysfs_file(dir, "abi_version", buf, 1), -1);
	assert_int_equal(errno, EOVERFLOW);
	errno = 0;
	assert_int_equal(ibv_read_sysfs_file(dir, "missing", buf, sizeof(buf)), -1);
	assert_int_equal(errno, ENOENT);
	unlink(path);
	rmdir(dir);
}

/* The pure helpers answer as Debian's rdma-core 44 does, value for value,
 * byte for byte: its library loaded beside ours by path (RTLD_LOCAL). */
static void *debian_lib(void)
{
	void *h;

	if (access(DEBIAN_LIBIBVERBS, R_OK) != 0)
		return NULL;
	h = dlopen(DEBIAN_LIBIBVERBS, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		printf("# %s: %s\n", DEBIAN_LIBIBVERBS, dlerror());
	return h;
}

static void fill_random(void *p, size_t n, unsigned int *seed)
{
	unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		c[i] = (unsigned char)rand_r(seed);
}

#define SAME_COPY(fn, dst_t, src_t, seed)						\
	do {										\
		void (*theirs)(dst_t *, src_t *) = (void (*)(dst_t *, src_t *))dlsym(h, #fn); \
		dst_t a, b;								\
		src_t s;								\
		assert_non_null(theirs);						\
		assert_true((void *)theirs != (void *)fn);				\
		fill_random(&s, sizeof(s), seed);					\
		memset(&a, 0xaa, sizeof(a));						\
		memset(&b, 0xaa, sizeof(b));						\
		fn(&a, &s);								\
		theirs(&b, &s);								\
		assert_memory_equal(&a, &b, sizeof(a));					\
	} while (0)

/* the same text for value v of the enum as Debian's function (as perftest and
 * ibv_devinfo print them, scripts may match on them) */
#define SAME_STR(h, fn, enum_t, v)							\
	do {										\
		const char *(*theirs)(enum_t) = (const char *(*)(enum_t))dlsym(h, #fn);	\
		assert_non_null(theirs);						\
		assert_string_equal(fn((enum_t)(v)), theirs((enum_t)(v)));		\
	} while (0)

static void test_helpers_match_rdma_core(void **state)
{
	int (*to_mult)(enum ibv_rate), (*to_mbps)(enum ibv_rate);
	enum ibv_rate (*from_mult)(int), (*from_mbps)(int);
	unsigned int seed = 44;
	void *h = debian_lib();

	(void)state;
	if (!h)
		skip();
	to_mult = (int (*)(enum ibv_rate))dlsym(h, "ibv_rate_to_mult");
	to_mbps = (int (*)(enum ibv_rate))dlsym(h, "ibv_rate_to_mbps");
	from_mult = (enum ibv_rate (*)(int))dlsym(h, "mult_to_ibv_rate");
	from_mbps = (enum ibv_rate (*)(int))dlsym(h, "mbps_to_ibv_rate");
	assert_non_null(to_mult);
	assert_non_null(to_mbps);
	assert_non_null(from_mult);
	assert_non_null(from_mbps);
	assert_true((void *)to_mult != (void *)ibv_rate_to_mult);	/* really theirs */
	for (int r = -1; r <= 40; r++) {
		assert_int_equal(ibv_rate_to_mult((enum ibv_rate)r), to_mult((enum ibv_rate)r));
		assert_int_equal(ibv_rate_to_mbps((enum ibv_rate)r), to_mbps((enum ibv_rate)r));
	}
	for (int m = -1; m <= 600; m++)
		assert_int_equal(mult_to_ibv_rate(m), from_mult(m));
	for (int r = 0; r <= 40; r++) {
		int mbps = to_mbps((enum ibv_rate)r);

		assert_int_equal(mbps_to_ibv_rate(mbps), from_mbps(mbps));
		assert_int_equal(mbps_to_ibv_rate(mbps + 1), from_mbps(mbps + 1));
	}
	for (int v = -1; v <= 64; v++) {
		SAME_STR(h, ibv_wc_status_str, enum ibv_wc_status, v);
		SAME_STR(h, ibv_node_type_str, enum ibv_node_type, v);
		SAME_STR(h, ibv_port_state_str, enum ibv_port_state, v);
		SAME_STR(h, ibv_event_type_str, enum ibv_event_type, v);
	}
	for (int i = 0; i < 64; i++) {
		SAME_COPY(ibv_copy_qp_attr_from_kern, struct ibv_qp_attr,
			  struct ib_uverbs_qp_attr, &seed);
		SAME_COPY(ibv_copy_ah_attr_from_kern, struct ibv_ah_attr,
			  struct ib_uverbs_ah_attr, &seed);
		SAME_COPY(ibv_copy_path_rec_from_kern, struct ibv_sa_path_rec,
			  struct ib_user_path_rec, &seed);
		SAME_COPY(ibv_copy_path_rec_to_kern, struct ib_user_path_rec,
			  struct ibv_sa_path_rec, &seed);
	}
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_export_resolves),
		cmocka_unit_test(test_versions_and_leaks),
		cmocka_unit_test(test_compat_versions_refuse),
		cmocka_unit_test(test_unsupported_exported_calls),
		cmocka_unit_test(test_unsupported_inline_calls),
		cmocka_unit_test(test_providers_register_harmlessly),
		cmocka_unit_test(test_private_interface_refuses),
		cmocka_unit_test(test_read_sysfs_file),
		cmocka_unit_test(test_helpers_match_rdma_core),
	};

	/* The context is of whatever Ethernet interface the device list gives
	 * (MROCE_VERBS_DEVICES or discovery): opening one touches no datapath,
	 * and no PD or CQ (which would) is made here. */
	return cmocka_run_group_tests(tests, setup, teardown);
}
