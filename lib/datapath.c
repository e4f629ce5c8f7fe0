// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Attach, find and drive the XDP datapath of one interface.
 *
 * Attaching goes through libxdp, so mroce joins libxdp's multi-program
 * dispatcher where the kernel allows one and is attached alone where it does
 * not (docs/datapath.md, "Attaching").
 *
 * The maps are found from the interface's attached program (program id ->
 * map ids), so this works whether mroce, `ip link` or libxdp (alone or
 * behind its dispatcher) attached the object, and inside `ip netns exec`
 * where nothing pinned survives. Ids need CAP_SYS_ADMIN: without it, the
 * objects `mroce attach --pin` pinned are opened instead (file permissions
 * only), once the pinned program is shown to be the one the interface runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "mroce/mroce.h"
#include "mroce/wire.h"
#include "internal.h"
#include "mroce.skel.h"

#define DEFAULT_PIN_ROOT "/sys/fs/bpf/mroce"
#define DISPATCHER_NAME "xdp_dispatcher"	/* libxdp's multi-program dispatcher */

struct mroce_dp {
	__u32			ifindex;
	__u32			prog_id;
	enum mroce_xdp_mode	mode;
	char			ifname[IF_NAMESIZE];
	int			prog_fd;
	int			flows_fd;
	int			stats_fd;
	int			cfg_fd;
	int			xsks_fd;
	int			dm_fd;
	int			dmr_fd;
	int			dm_own_fd;
	int			queues_fd;
	int			ncpus;
	struct mroce_flow	*flows;		/* the flows map, mmap'ed */
	size_t			flows_len;
	struct mroce_dmr	*dmr;		/* the dmr map, mmap'ed */
	size_t			dmr_len;
	__u32			*dm_own;	/* the dm_own map, mmap'ed */
	size_t			dm_own_len;
	struct mroce_queue	*queues;	/* the queues map, mmap'ed */
	size_t			queues_len;
	__u32			dm_chunks;	/* the pool's size, in MROCE_DM_CHUNK */
	bool			xdp_places;	/* the program places device-memory WRITEs */
};

static const char *const map_names[] = {
	MROCE_MAP_FLOWS, MROCE_MAP_STATS, MROCE_MAP_CFG, MROCE_MAP_XSKS,
	MROCE_MAP_DM, MROCE_MAP_DMR, MROCE_MAP_DM_OWN, MROCE_MAP_QUEUES,
};
#define N_MAPS	(sizeof(map_names) / sizeof(map_names[0]))
/* Pinned beside the maps with --pin: the program, to check the pins are the
 * attached ones, and its .rodata (the placement switch). */
#define PIN_PROG	MROCE_PROG_NAME
#define PIN_RODATA	"mroce_rodata"

static void *map_mmap(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int prog_name_by_id(__u32 id, char name[BPF_OBJ_NAME_LEN], int *fd_out)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd, err;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return mroce_cap_err(-errno, MROCE_NEED_SYS_ADMIN);
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (err) {
		err = -errno;
		close(fd);
		return err;
	}
	memcpy(name, info.name, BPF_OBJ_NAME_LEN);
	if (fd_out)
		*fd_out = fd;
	else
		close(fd);
	return 0;
}

/*
 * mroce's program among the ones libxdp's dispatcher (prog_id) runs, if it
 * is one: 1 and its id, 0 if it is not there or the dispatcher cannot be read.
 */
static int find_dispatched(__u32 ifindex, __u32 *prog_id, bool *skb)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex((int)ifindex);
	struct xdp_program *p = NULL;
	int found = 0;

	if (!mp || libxdp_get_error(mp))
		return 0;
	if (!xdp_multiprog__is_legacy(mp)) {
		while (!found && (p = xdp_multiprog__next_prog(p, mp)))
			if (!strcmp(xdp_program__name(p), MROCE_PROG_NAME)) {
				*prog_id = xdp_program__id(p);
				*skb = xdp_multiprog__attach_mode(mp) == XDP_MODE_SKB;
				found = 1;
			}
	}
	xdp_multiprog__close(mp);
	return found;
}

/*
 * Which program sits on ifindex: *prog_id 0 when none. Returns 1 when it is
 * mroce's, attached alone or behind libxdp's dispatcher (*dispatched says
 * which; its fd in *fd_out if asked for), 0 when it is another one (a
 * dispatcher without mroce behind it included).
 */
static int find_attached(__u32 ifindex, __u32 *prog_id, enum mroce_xdp_mode *mode, int *fd_out,
			 bool *dispatched)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char name[BPF_OBJ_NAME_LEN];
	__u32 ids[2], behind;
	bool skb;
	int err;

	*prog_id = 0;
	if (dispatched)
		*dispatched = false;
	if (bpf_xdp_query((int)ifindex, 0, &q))
		return -errno;
	/* Native first: in the rare both-modes case, that is where traffic meets us. */
	ids[0] = q.drv_prog_id ? q.drv_prog_id : q.prog_id;
	ids[1] = q.skb_prog_id;
	for (int i = 0; i < 2; i++) {
		if (!ids[i])
			continue;
		if (!*prog_id)
			*prog_id = ids[i];
		err = prog_name_by_id(ids[i], name, NULL);
		if (err)
			return err;
		if (!strcmp(name, DISPATCHER_NAME) && find_dispatched(ifindex, &behind, &skb)) {
			*prog_id = behind;
			if (mode)
				*mode = skb ? MROCE_XDP_SKB : MROCE_XDP_NATIVE;
			if (dispatched)
				*dispatched = true;
			if (fd_out)
				return prog_name_by_id(behind, name, fd_out) ?: 1;
			return 1;
		}
		if (strcmp(name, MROCE_PROG_NAME))
			continue;
		*prog_id = ids[i];
		if (mode)
			*mode = ids[i] == q.skb_prog_id ? MROCE_XDP_SKB : MROCE_XDP_NATIVE;
		if (fd_out)
			return prog_name_by_id(ids[i], name, fd_out) ?: 1;
		return 1;
	}
	return 0;
}

/* Whether the program on ifindex (id) is libxdp's dispatcher, which mroce may join. */
static bool is_dispatcher(__u32 id)
{
	char name[BPF_OBJ_NAME_LEN];

	return id && !prog_name_by_id(id, name, NULL) && !strcmp(name, DISPATCHER_NAME);
}

static int ifindex_of(const char *ifname, __u32 *ifindex)
{
	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE)
		return -EINVAL;
	*ifindex = if_nametoindex(ifname);
	return *ifindex ? 0 : -ENODEV;
}

static int pin_path(char *buf, size_t size, const char *root, const char *ifname,
		    const char *map)
{
	int n = map ? snprintf(buf, size, "%s/%s/%s", root, ifname, map)
		    : snprintf(buf, size, "%s/%s", root, ifname);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static void unpin_all(const char *root, const char *ifname)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(map_names) / sizeof(map_names[0]); i++)
		if (!pin_path(path, sizeof(path), root, ifname, map_names[i]))
			unlink(path);
	if (!pin_path(path, sizeof(path), root, ifname, PIN_PROG))
		unlink(path);
	if (!pin_path(path, sizeof(path), root, ifname, PIN_RODATA))
		unlink(path);
	if (!pin_path(path, sizeof(path), root, ifname, NULL))
		rmdir(path);
	rmdir(root);	/* only succeeds once no interface is pinned */
}

static int pin_all(struct bpf_object *obj, const char *root, const char *ifname)
{
	struct bpf_map *rodata = bpf_object__find_map_by_name(obj, ".rodata");
	char path[PATH_MAX];
	int err;

	err = mroce_bpffs_ensure();
	if (err)
		return err;
	if (mkdir(root, 0700) && errno != EEXIST)
		return -errno;
	err = pin_path(path, sizeof(path), root, ifname, NULL);
	if (err)
		return err;
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	for (size_t i = 0; i < sizeof(map_names) / sizeof(map_names[0]); i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, map_names[i]);

		err = pin_path(path, sizeof(path), root, ifname, map_names[i]);
		if (!err && bpf_obj_pin(bpf_map__fd(map), path))
			err = -errno;
		if (err) {
			unpin_all(root, ifname);
			return err;
		}
	}
	err = pin_path(path, sizeof(path), root, ifname, PIN_PROG);
	if (!err && bpf_obj_pin(bpf_program__fd(bpf_object__find_program_by_name(obj,
					MROCE_PROG_NAME)), path))
		err = -errno;
	if (!err && rodata && !pin_path(path, sizeof(path), root, ifname, PIN_RODATA) &&
	    bpf_obj_pin(bpf_map__fd(rodata), path))
		err = -errno;
	if (err)
		unpin_all(root, ifname);
	return err;
}

/*
 * The program --pin pinned for ifname, if it is the one attached there
 * alone (bpf_xdp_query and the pin's own info need no capability): its fd,
 * id and mode. -ENOENT when there is no such pin or it is not the attached
 * program (a stale pin, another namespace's interface of that name, or one
 * behind libxdp's dispatcher, which only ids can show).
 */
static int pinned_prog(const char *ifname, __u32 ifindex, __u32 *prog_id,
		       enum mroce_xdp_mode *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	if (pin_path(path, sizeof(path), DEFAULT_PIN_ROOT, ifname, PIN_PROG))
		return -ENOENT;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || strcmp(info.name, MROCE_PROG_NAME) ||
	    bpf_xdp_query((int)ifindex, 0, &q)) {
		close(fd);
		return -ENOENT;
	}
	if (info.id == (q.drv_prog_id ? q.drv_prog_id : q.prog_id) && info.id != q.skb_prog_id) {
		*mode = MROCE_XDP_NATIVE;
	} else if (info.id == q.skb_prog_id) {
		*mode = MROCE_XDP_SKB;
	} else {
		close(fd);
		return -ENOENT;
	}
	*prog_id = info.id;
	return fd;
}

/* The interface's MAC, or none when it has no Ethernet address (lo). */
/*
 * Fill cfg with this host's addresses on ifname, for the XDP program to pass
 * MetaRoCE frames meant for other hosts. Link-local IPv6 is left out (mroce
 * never uses it); a family with more addresses than fit is not checked.
 */
static int host_addrs(const char *ifname, struct mroce_cfg *cfg)
{
	struct ifaddrs *ifa, *i;
	unsigned int n4 = 0, n6 = 0;
	int err;

	memset(cfg->mac, 0, sizeof(cfg->mac));
	err = mroce_if_hw(ifname, cfg->mac, NULL);
	if (err)
		return err;
	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			if (n4 < MROCE_CFG_ADDRS)
				cfg->ip4[n4] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
			n4++;
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			const struct in6_addr *a = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;

			if (IN6_IS_ADDR_LINKLOCAL(a))
				continue;
			if (n6 < MROCE_CFG_ADDRS)
				memcpy(cfg->ip6[n6], a, 16);
			n6++;
		}
	}
	freeifaddrs(ifa);
	cfg->n_ip4 = n4 <= MROCE_CFG_ADDRS ? (__u8)n4 : 0;
	cfg->n_ip6 = n6 <= MROCE_CFG_ADDRS ? (__u8)n6 : 0;
	return 0;
}

/*
 * One UDP port per receive queue (struct mroce_cfg): as many as ifname has
 * now, within what MROCE_MAX_QUEUES and the port space leave.
 */
static __u16 cfg_ports(const char *ifname, __u16 base)
{
	__u32 n = mroce_if_rx_queues(ifname), room = 65536u - (base ? base : MROCE_DEFAULT_PORT);

	if (n > MROCE_MAX_QUEUES)
		n = MROCE_MAX_QUEUES;
	return (__u16)(n < room ? n : room);
}

/*
 * Addresses change after attach, and `ip link` attaches without any, and
 * queues come and go (ethtool -L): renew them.
 */
static int cfg_refresh(int cfg_fd, const char *ifname)
{
	struct mroce_cfg cfg = {};
	__u32 zero = 0;
	int err;

	if (bpf_map_lookup_elem(cfg_fd, &zero, &cfg))
		return -errno;
	err = host_addrs(ifname, &cfg);
	if (err)
		return err;
	cfg.n_ports = cfg_ports(ifname, cfg.udp_port);
	return bpf_map_update_elem(cfg_fd, &zero, &cfg, BPF_ANY) ? -errno : 0;
}

/*
 * Create the config map already filled in, with the object's BTF (so bpftool
 * still names its fields), and make the object use it: the program never
 * runs without this host's port and addresses, although libxdp loads and
 * attaches it in one step.
 */
static int cfg_prefill(struct bpf_object *obj, const struct mroce_cfg *cfg)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, MROCE_MAP_CFG);
	const struct btf *obtf = bpf_object__btf(obj);
	LIBBPF_OPTS(bpf_map_create_opts, o);
	struct btf *btf = NULL;
	const void *raw;
	__u32 raw_len, zero = 0;
	int fd, err;

	if (!map || bpf_map__value_size(map) != sizeof(*cfg) || bpf_map__max_entries(map) != 1)
		return -MROCE_ERR_BAD_OBJ;
	if (obtf && bpf_map__btf_value_type_id(map)) {
		raw = btf__raw_data(obtf, &raw_len);
		btf = raw ? btf__new(raw, raw_len) : NULL;
		if (!btf || btf__load_into_kernel(btf)) {
			btf__free(btf);
			btf = NULL;	/* an old kernel without BTF: the map works without */
		} else {
			o.btf_fd = btf__fd(btf);
			o.btf_key_type_id = bpf_map__btf_key_type_id(map);
			o.btf_value_type_id = bpf_map__btf_value_type_id(map);
		}
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, MROCE_MAP_CFG, sizeof(__u32), sizeof(*cfg), 1, &o);
	if (fd < 0 && btf) {	/* BTF refused for the map: without it */
		LIBBPF_OPTS(bpf_map_create_opts, plain);

		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, MROCE_MAP_CFG, sizeof(__u32), sizeof(*cfg),
				    1, &plain);
	}
	err = fd < 0 ? -errno : 0;
	btf__free(btf);	/* the map holds its own reference */
	if (!err && bpf_map_update_elem(fd, &zero, cfg, BPF_ANY))
		err = -errno;
	if (!err)
		err = bpf_map__reuse_fd(map, fd);
	if (fd >= 0)
		close(fd);	/* reuse_fd keeps a duplicate */
	return err;
}

/* One instruction of the probe below (the kernel's insn macros are not uapi). */
#define INSN(c, d, sr, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (sr), \
						 .off = (o), .imm = (i) })
#define MOV_REG(d, sr)	INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, sr, 0, 0)
#define MOV_IMM(d, i)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD_IMM(d, i)	INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define CALL(f)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)

/*
 * libbpf_probe_bpf_helper() cannot answer this: it takes every refusal but
 * "unknown func" for "supported", and a kernel that knows the helper but
 * refuses it to XDP ("program of this type cannot use helper
 * bpf_xdp_adjust_meta#54") passes its probe. So load the smallest program
 * calling each helper placement uses, flagged as the real one is: the
 * verifier's verdict is the answer.
 */
int mroce_xdp_place_probe(bool frags)
{
	const struct bpf_insn insns[] = {
		MOV_REG(BPF_REG_6, BPF_REG_1),
		MOV_IMM(BPF_REG_2, 0),
		CALL(BPF_FUNC_xdp_adjust_meta),
		MOV_REG(BPF_REG_1, BPF_REG_6),
		MOV_IMM(BPF_REG_2, 0),
		CALL(BPF_FUNC_xdp_adjust_tail),
		MOV_REG(BPF_REG_1, BPF_REG_6),
		MOV_IMM(BPF_REG_2, 0),
		MOV_REG(BPF_REG_3, BPF_REG_10),
		ADD_IMM(BPF_REG_3, -8),
		MOV_IMM(BPF_REG_4, 1),
		CALL(BPF_FUNC_xdp_load_bytes),
		MOV_IMM(BPF_REG_0, XDP_PASS),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_XDP,
		    .prog_flags = frags ? BPF_F_XDP_HAS_FRAGS : 0);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "mroce_probe", "Dual BSD/GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), &o);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* Where variable name lies in data section sec_id of btf: 0, or -ENOENT. */
static int datasec_var(const struct btf *btf, __u32 sec_id, const char *name, __u32 *off,
		       __u32 *size)
{
	const struct btf_type *sec = btf__type_by_id(btf, sec_id);
	const struct btf_var_secinfo *vi;

	if (!sec || !btf_is_datasec(sec))
		return -ENOENT;
	vi = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vi++) {
		const struct btf_type *v = btf__type_by_id(btf, vi->type);

		if (v && btf_is_var(v) && !strcmp(btf__name_by_offset(btf, v->name_off), name)) {
			*off = vi->offset;
			*size = vi->size;
			return 0;
		}
	}
	return -ENOENT;
}

/* Set the __u32 const volatile `name` of obj before it is loaded: 0, or -ENOENT when it has none. */
static int rodata_set(struct bpf_object *obj, const char *name, __u32 val)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, ".rodata");
	const struct btf *btf = bpf_object__btf(obj);
	const void *cur;
	__u32 off, size;
	size_t len;
	__u8 *data;
	int err;

	if (!map || !btf || datasec_var(btf, bpf_map__btf_value_type_id(map), name, &off, &size))
		return -ENOENT;
	cur = bpf_map__initial_value(map, &len);
	if (!cur || size != sizeof(val) || off > len || len - off < sizeof(val))
		return -MROCE_ERR_BAD_OBJ;
	data = malloc(len);	/* libbpf 1.1 hands the image out read-only: set a copy */
	if (!data)
		return -ENOMEM;
	memcpy(data, cur, len);
	memcpy(data + off, &val, sizeof(val));
	err = bpf_map__set_initial_value(map, data, len);
	free(data);
	return err ? -MROCE_ERR_BAD_OBJ : 0;
}

static struct bpf_object *open_object(const char *path)
{
	LIBBPF_OPTS(bpf_object_open_opts, o, .object_name = "mroce");
	const void *elf;
	size_t sz;

	if (path) {
		if (access(path, R_OK))
			return NULL;	/* errno says why, typically ENOENT */
		return bpf_object__open_file(path, NULL);
	}
	elf = mroce_bpf__elf_bytes(&sz);
	return bpf_object__open_mem(elf, sz, &o);
}

static int dp_open(const char *ifname, struct bpf_object *obj, enum mroce_xdp_mode mode,
		   struct mroce_dp **dpp);

/* Attach; with dpp, also open the datapath from the object just loaded. */
static int dp_attach(const char *ifname, const struct mroce_attach_opts *opts,
		     struct mroce_dp **dpp)
{
	enum mroce_xdp_mode mode;
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct xdp_program *xprog = NULL;
	struct mroce_cfg cfg = {};
	__u32 ifindex, cur_id;
	int err;

	mroce_print_install();
	if (!mroce_opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts)))
		return -EINVAL;
	mode = MROCE_OPT(opts, mode, MROCE_XDP_NATIVE);
	if (mode != MROCE_XDP_NATIVE && mode != MROCE_XDP_SKB)
		return -EINVAL;
	cfg.udp_port = MROCE_OPT(opts, udp_port, 0);
	cfg.n_ports = cfg_ports(ifname, cfg.udp_port);
	err = ifindex_of(ifname, &ifindex);
	if (err)
		return err;
	err = find_attached(ifindex, &cur_id, NULL, NULL, NULL);
	if (err < 0)
		return err;
	if (err == 1)
		return -MROCE_ERR_ATTACHED;
	/* Another program alone is never replaced; libxdp's dispatcher is joined. */
	if (cur_id && !is_dispatcher(cur_id))
		return -MROCE_ERR_FOREIGN_PROG;

	obj = open_object(MROCE_OPT(opts, obj_path, NULL));
	if (!obj)
		return errno == EINVAL ? -MROCE_ERR_BAD_OBJ : -errno;
	prog = bpf_object__find_program_by_name(obj, MROCE_PROG_NAME);
	err = prog ? 0 : -MROCE_ERR_BAD_OBJ;
	for (size_t i = 0; !err && i < N_MAPS; i++)
		if (!bpf_object__find_map_by_name(obj, map_names[i]))
			err = -MROCE_ERR_BAD_OBJ;
	if (!err && MROCE_OPT(opts, dm_bytes, 0)) {
		__u64 bytes = MROCE_OPT(opts, dm_bytes, 0);
		__u64 chunks = (bytes + MROCE_DM_CHUNK - 1) / MROCE_DM_CHUNK;

		if (bytes > (64ULL << 30))
			err = -EINVAL;
		else if (bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, MROCE_MAP_DM),
						  (__u32)chunks) ||
			 bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, MROCE_MAP_DM_OWN),
						  (__u32)chunks))
			err = -MROCE_ERR_BAD_OBJ;
	}
	if (!err)
		err = host_addrs(ifname, &cfg);
	if (!err)
		err = cfg_prefill(obj, &cfg);
	/*
	 * Placement in XDP where the kernel allows it; elsewhere the switch
	 * stays off, so the verifier drops the call it would refuse. An object
	 * without the switch places always (and loads only where allowed).
	 */
	if (!err) {
		err = rodata_set(obj, MROCE_VAR_PLACE, (__u32)mroce_xdp_place_probe(
					 !strcmp(bpf_program__section_name(prog), "xdp.frags")));
		if (err == -ENOENT)
			err = 0;
	}
	if (err)
		goto out;

	/*
	 * libxdp loads the program and attaches it: behind its dispatcher
	 * (joining one already there) where the kernel allows it, else alone
	 * with XDP_FLAGS_UPDATE_IF_NOEXIST, so it never replaces a program.
	 */
	xprog = xdp_program__from_bpf_obj(obj, bpf_program__section_name(prog));
	err = libxdp_get_error(xprog);
	if (err) {
		xprog = NULL;
		goto out;
	}
	/*
	 * libbpf applies "xdp.frags" only when it loads the program, so libxdp
	 * cannot see it beforehand: say it, or a dispatcher would be built
	 * without frags and jumbo frames refused (libxdp still drops it on a
	 * kernel without frags support).
	 */
	if (!strcmp(bpf_program__section_name(prog), "xdp.frags"))
		err = xdp_program__set_xdp_frags_support(xprog, true);
	if (err)
		goto out;
	err = xdp_program__attach(xprog, (int)ifindex,
				  mode == MROCE_XDP_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	/*
	 * Lost a race with another loader: mroce's own (processes starting
	 * together on a fresh interface; the caller opens it) or another's.
	 */
	if (err == -EBUSY || err == -EEXIST)
		err = find_attached(ifindex, &cur_id, NULL, NULL, NULL) == 1 ? -MROCE_ERR_ATTACHED :
									       -MROCE_ERR_FOREIGN_PROG;
	if (err)
		goto out;
	if (MROCE_OPT(opts, pin, false)) {
		err = pin_all(obj, DEFAULT_PIN_ROOT, ifname);
		if (err)
			xdp_program__detach(xprog, (int)ifindex,
					    mode == MROCE_XDP_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	}
	/*
	 * The object's own fds: an attacher never has to find what it just
	 * attached by id (CAP_SYS_ADMIN). The program stays attached if this
	 * fails, as after any attach followed by a failed open.
	 */
	if (!err && dpp)
		err = dp_open(ifname, obj, mode, dpp);
out:
	if (xprog)
		xdp_program__close(xprog);	/* from_bpf_obj: the object stays ours */
	bpf_object__close(obj);
	return mroce_cap_err(err, MROCE_NEED_LOAD);
}

int mroce_dp_attach(const char *ifname, const struct mroce_attach_opts *opts)
{
	return dp_attach(ifname, opts, NULL);
}

int mroce_dp_attach_open(const char *ifname, const struct mroce_attach_opts *opts,
			 struct mroce_dp **dpp)
{
	if (!dpp)
		return -EINVAL;
	*dpp = NULL;
	return dp_attach(ifname, opts, dpp);
}

int mroce_dp_detach(const char *ifname)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o);
	enum mroce_xdp_mode mode = MROCE_XDP_NATIVE;
	__u32 ifindex, id, flags;
	bool dispatched;
	int err, fd = -1;

	mroce_print_install();
	err = ifindex_of(ifname, &ifindex);
	if (err)
		return err;
	err = find_attached(ifindex, &id, &mode, &fd, &dispatched);
	if (err == -MROCE_ERR_CAP_SYS_ADMIN) {	/* no ids: the pinned program, if attached */
		fd = pinned_prog(ifname, ifindex, &id, &mode);
		err = fd >= 0 ? 1 : err;
	}
	if (err < 0)
		return err;
	if (err == 0)
		return id ? -MROCE_ERR_FOREIGN_PROG : -MROCE_ERR_NOT_ATTACHED;
	if (dispatched) {
		/* libxdp takes ours out of the dispatcher; the others keep running. */
		struct xdp_program *xp = xdp_program__from_id(id);

		close(fd);
		err = libxdp_get_error(xp);
		if (!err) {
			err = xdp_program__detach(xp, (int)ifindex, mode == MROCE_XDP_SKB ?
						  XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
			xdp_program__close(xp);
		}
		if (!err)
			unpin_all(DEFAULT_PIN_ROOT, ifname);
		return mroce_cap_err(err, MROCE_NEED_NET_ADMIN | MROCE_NEED_SYS_ADMIN);
	}
	/* Replace only our program, atomically, even if another loader races us. */
	o.old_prog_fd = fd;
	flags = XDP_FLAGS_REPLACE | (mode == MROCE_XDP_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	err = bpf_xdp_detach((int)ifindex, flags, &o);
	err = err ? mroce_cap_err(err, MROCE_NEED_NET_ADMIN) : 0;
	close(fd);
	if (!err)
		unpin_all(DEFAULT_PIN_ROOT, ifname);
	return err;
}

static int map_fd_by_name(const __u32 *ids, __u32 n, const char *name,
			  struct bpf_map_info *info_out)
{
	for (__u32 i = 0; i < n; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0 && errno == EPERM)
			return mroce_cap_err(-EPERM, MROCE_NEED_SYS_ADMIN);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, name)) {
			*info_out = info;
			return fd;
		}
		close(fd);
	}
	return -MROCE_ERR_BAD_OBJ;
}

/* One map's answer: -1 when fd is not a .rodata holding the switch, else 0 or 1. */
static int places_of_map(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), off, size, val = 0;
	size_t nl;
	struct btf *btf;
	__u8 *value;
	int on = -1;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    (nl = strnlen(info.name, sizeof(info.name))) < 7 ||
	    strcmp(info.name + nl - 7, ".rodata"))
		return -1;
	btf = info.btf_id ? btf__load_from_kernel_by_id(info.btf_id) : NULL;
	if (btf && !datasec_var(btf, info.btf_value_type_id, MROCE_VAR_PLACE, &off, &size)) {
		on = 0;
		value = calloc(1, info.value_size);
		if (value && size == sizeof(val) && off <= info.value_size &&
		    info.value_size - off >= sizeof(val) &&
		    !bpf_map_lookup_elem(fd, &(__u32){ 0 }, value)) {
			memcpy(&val, value + off, sizeof(val));
			on = val != 0;
		}
		free(value);
	}
	btf__free(btf);
	return on;
}

/*
 * Whether the attached program places device-memory WRITEs: its .rodata
 * switch (the map libbpf named "<object>.rodata", read through its BTF), or
 * true for an object without one (it calls bpf_xdp_adjust_meta always).
 * False when the switch is there but cannot be read.
 */
static bool places_flag(const __u32 *ids, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		int fd = bpf_map_get_fd_by_id(ids[i]), on;

		if (fd < 0)
			continue;
		on = places_of_map(fd);
		close(fd);
		if (on >= 0)
			return on;
	}
	return true;
}

/*
 * The maps without ids: from the object just attached (obj), or else the
 * pins of ifname (pinned_prog() vouched for them). fds[i] for map_names[i].
 */
static int maps_by_fd(const char *ifname, struct bpf_object *obj, int *const fds[N_MAPS],
		      struct bpf_map_info infos[N_MAPS], bool *places)
{
	struct bpf_map *rodata = obj ? bpf_object__find_map_by_name(obj, ".rodata") : NULL;
	char path[PATH_MAX];
	int fd = -1, on;

	for (size_t i = 0; i < N_MAPS; i++) {
		__u32 len = sizeof(infos[i]);

		memset(&infos[i], 0, sizeof(infos[i]));
		if (obj) {
			*fds[i] = fcntl(bpf_map__fd(bpf_object__find_map_by_name(obj, map_names[i])),
					F_DUPFD_CLOEXEC, 0);
		} else {
			if (pin_path(path, sizeof(path), DEFAULT_PIN_ROOT, ifname, map_names[i]))
				return -ENAMETOOLONG;
			*fds[i] = bpf_obj_get(path);
		}
		if (*fds[i] < 0)
			return -errno;
		if (bpf_obj_get_info_by_fd(*fds[i], &infos[i], &len) ||
		    strcmp(infos[i].name, map_names[i]))
			return -MROCE_ERR_BAD_OBJ;
	}
	*places = true;	/* an object without the switch: as places_flag() */
	if (obj)
		fd = rodata ? fcntl(bpf_map__fd(rodata), F_DUPFD_CLOEXEC, 0) : -1;
	else if (!pin_path(path, sizeof(path), DEFAULT_PIN_ROOT, ifname, PIN_RODATA))
		fd = bpf_obj_get(path);
	if (fd >= 0) {
		on = places_of_map(fd);
		close(fd);
		if (on >= 0)
			*places = on;
	}
	return 0;
}

int mroce_dp_open(const char *ifname, struct mroce_dp **dpp)
{
	return dp_open(ifname, NULL, MROCE_XDP_NATIVE, dpp);
}

/*
 * Open the datapath of ifname: from obj when the caller just attached it
 * (in mode), else found by ids, else (no CAP_SYS_ADMIN) by its pins.
 */
static int dp_open(const char *ifname, struct bpf_object *obj, enum mroce_xdp_mode mode,
		   struct mroce_dp **dpp)
{
	struct bpf_prog_info pinfo = {};
	struct bpf_map_info minfo = {}, pinned[N_MAPS];
	__u32 len = sizeof(pinfo), ids[16];
	struct mroce_dp *dp;
	long page = sysconf(_SC_PAGESIZE);
	int err, *fds[N_MAPS];
	bool by_pin = false;

	mroce_print_install();
	if (!dpp)
		return -EINVAL;
	*dpp = NULL;
	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return -ENOMEM;
	dp->prog_fd = dp->flows_fd = dp->stats_fd = dp->cfg_fd = dp->xsks_fd = -1;
	dp->dm_fd = dp->dmr_fd = dp->dm_own_fd = dp->queues_fd = -1;
	err = ifindex_of(ifname, &dp->ifindex);
	if (err)
		goto fail;
	snprintf(dp->ifname, sizeof(dp->ifname), "%s", ifname);
	if (obj) {
		struct bpf_program *prog = bpf_object__find_program_by_name(obj, MROCE_PROG_NAME);

		dp->mode = mode;
		dp->prog_fd = prog ? fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 0) : -1;
		err = dp->prog_fd >= 0 ? 1 : -MROCE_ERR_BAD_OBJ;
		by_pin = true;
	} else {
		err = find_attached(dp->ifindex, &dp->prog_id, &dp->mode, &dp->prog_fd, NULL);
	}
	if (err == -MROCE_ERR_CAP_SYS_ADMIN) {
		dp->prog_fd = pinned_prog(ifname, dp->ifindex, &dp->prog_id, &dp->mode);
		by_pin = dp->prog_fd >= 0;
		if (by_pin)
			err = 1;
	}
	if (err == 0)
		err = dp->prog_id ? -MROCE_ERR_FOREIGN_PROG : -MROCE_ERR_NOT_ATTACHED;
	if (err < 0)
		goto fail;

	pinfo.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pinfo.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(dp->prog_fd, &pinfo, &len)) {
		err = -errno;
		goto fail;
	}
	if (obj)
		dp->prog_id = pinfo.id;
	fds[0] = &dp->flows_fd;
	fds[1] = &dp->stats_fd;
	fds[2] = &dp->cfg_fd;
	fds[3] = &dp->xsks_fd;
	fds[4] = &dp->dm_fd;
	fds[5] = &dp->dmr_fd;
	fds[6] = &dp->dm_own_fd;
	fds[7] = &dp->queues_fd;
	if (by_pin) {
		err = maps_by_fd(ifname, obj, fds, pinned, &dp->xdp_places);
		if (err)
			goto fail;
		/* the pins must be the program's own maps, not an older attach's */
		for (size_t i = 0; i < N_MAPS; i++) {
			bool own = false;

			for (__u32 j = 0; j < pinfo.nr_map_ids && j < 16; j++)
				own |= ids[j] == pinned[i].id;
			if (!own) {
				err = -MROCE_ERR_BAD_OBJ;
				goto fail;
			}
		}
	}
	for (size_t i = 0; i < N_MAPS; i++) {
		if (by_pin)
			minfo = pinned[i];
		else
			*fds[i] = map_fd_by_name(ids, pinfo.nr_map_ids < 16 ? pinfo.nr_map_ids : 16,
						 map_names[i], &minfo);
		if (*fds[i] < 0) {
			err = *fds[i];
			goto fail;
		}
		/* An object built from other headers would be misread: refuse it. */
		if (i == 0 && (minfo.value_size != sizeof(struct mroce_flow) ||
			       minfo.max_entries != MROCE_MAX_QPS ||
			       !(minfo.map_flags & BPF_F_MMAPABLE))) {
			err = -MROCE_ERR_BAD_OBJ;
			goto fail;
		}
		if ((i == 1 && (minfo.max_entries != 1 ||
				minfo.value_size != sizeof(struct mroce_dp_counters))) ||
		    (i == 2 && minfo.value_size != sizeof(struct mroce_cfg)) ||
		    (i == 4 && (minfo.value_size != MROCE_DM_CHUNK || !minfo.max_entries ||
				!(minfo.map_flags & BPF_F_MMAPABLE))) ||
		    (i == 5 && (minfo.value_size != sizeof(struct mroce_dmr) ||
				minfo.max_entries != MROCE_DMR_MAX ||
				!(minfo.map_flags & BPF_F_MMAPABLE))) ||
		    (i == 6 && (minfo.value_size != sizeof(__u32) ||
				minfo.max_entries != dp->dm_chunks ||
				!(minfo.map_flags & BPF_F_MMAPABLE))) ||
		    (i == 7 && (minfo.value_size != sizeof(struct mroce_queue) ||
				minfo.max_entries != MROCE_MAX_QUEUES ||
				!(minfo.map_flags & BPF_F_MMAPABLE)))) {
			err = -MROCE_ERR_BAD_OBJ;
			goto fail;
		}
		if (i == 4)
			dp->dm_chunks = minfo.max_entries;
	}
	if (!by_pin)
		dp->xdp_places = places_flag(ids, pinfo.nr_map_ids < 16 ? pinfo.nr_map_ids : 16);
	err = cfg_refresh(dp->cfg_fd, dp->ifname);
	if (err)
		goto fail;
	dp->ncpus = libbpf_num_possible_cpus();
	if (dp->ncpus <= 0) {
		err = dp->ncpus ? dp->ncpus : -EINVAL;
		goto fail;
	}
	dp->flows_len = (sizeof(struct mroce_flow) * MROCE_MAX_QPS + page - 1) / page * page;
	dp->flows = mmap(NULL, dp->flows_len, PROT_READ | PROT_WRITE, MAP_SHARED, dp->flows_fd, 0);
	if (dp->flows == MAP_FAILED) {
		dp->flows = NULL;
		err = -errno;
		goto fail;
	}
	dp->dmr_len = (sizeof(struct mroce_dmr) * MROCE_DMR_MAX + page - 1) / page * page;
	dp->dm_own_len = (sizeof(__u32) * dp->dm_chunks + page - 1) / page * page;
	dp->dmr = map_mmap(dp->dmr_fd, dp->dmr_len);
	dp->dm_own = map_mmap(dp->dm_own_fd, dp->dm_own_len);
	dp->queues_len = (sizeof(struct mroce_queue) * MROCE_MAX_QUEUES + page - 1) / page * page;
	dp->queues = map_mmap(dp->queues_fd, dp->queues_len);
	if (!dp->dmr || !dp->dm_own || !dp->queues) {
		err = -errno;
		goto fail;
	}
	*dpp = dp;
	return 0;
fail:
	mroce_dp_close(dp);
	return err;
}

void mroce_dp_close(struct mroce_dp *dp)
{
	if (!dp)
		return;
	if (dp->flows)
		munmap(dp->flows, dp->flows_len);
	if (dp->dmr)
		munmap(dp->dmr, dp->dmr_len);
	if (dp->dm_own)
		munmap(dp->dm_own, dp->dm_own_len);
	if (dp->queues)
		munmap(dp->queues, dp->queues_len);
	for (int *fd = &dp->prog_fd; fd <= &dp->queues_fd; fd++)
		if (*fd >= 0)
			close(*fd);
	free(dp);
}

int mroce_dp_info(const struct mroce_dp *dp, struct mroce_dp_info *info)
{
	struct mroce_cfg cfg = {};
	__u32 zero = 0;
	char path[PATH_MAX];
	struct stat st;

	if (!dp || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->ifindex = dp->ifindex;
	info->prog_id = dp->prog_id;
	info->mode = dp->mode;
	info->xdp_places = dp->xdp_places;
	snprintf(info->ifname, sizeof(info->ifname), "%s", dp->ifname);
	if (bpf_map_lookup_elem(dp->cfg_fd, &zero, &cfg))
		return -errno;
	info->udp_port = cfg.udp_port ? cfg.udp_port : MROCE_DEFAULT_PORT;
	info->udp_ports = (__u8)(cfg.n_ports ? cfg.n_ports : 1);	/* <= MROCE_MAX_QUEUES */
	for (__u32 q = 1; q < MROCE_MAX_QPS; q++)
		info->flows += __atomic_load_n(&dp->flows[q].state, __ATOMIC_ACQUIRE) ==
			       MROCE_FLOW_ACTIVE;
	if (!pin_path(path, sizeof(path), DEFAULT_PIN_ROOT, dp->ifname, MROCE_MAP_FLOWS) &&
	    !stat(path, &st))
		pin_path(info->pin_dir, sizeof(info->pin_dir), DEFAULT_PIN_ROOT, dp->ifname, NULL);
	return 0;
}

int mroce_dp_stats(const struct mroce_dp *dp, __u64 out[MROCE_STAT_MAX])
{
	struct mroce_dp_counters *percpu;
	__u32 zero = 0;
	int err = 0;

	if (!dp || !out)
		return -EINVAL;
	memset(out, 0, sizeof(__u64) * MROCE_STAT_MAX);
	percpu = calloc((size_t)dp->ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(dp->stats_fd, &zero, percpu))
		err = -errno;
	/* Counter s is word s of each CPU's struct (stats.h, dp_maps.h). */
	for (int c = 0; !err && c < dp->ncpus; c++) {
		const __u64 *w = (const __u64 *)&percpu[c];

		for (int s = 0; s < MROCE_STAT_MAX; s++)
			out[s] += w[s];
	}
	free(percpu);
	return err;
}

int mroce_dp_set_port(struct mroce_dp *dp, __u16 udp_port)
{
	struct mroce_cfg cfg = {};
	__u32 zero = 0;

	if (!dp)
		return -EINVAL;
	if (bpf_map_lookup_elem(dp->cfg_fd, &zero, &cfg))
		return -errno;
	cfg.udp_port = udp_port;	/* the host's addresses stay */
	cfg.n_ports = cfg_ports(dp->ifname, udp_port);
	return bpf_map_update_elem(dp->cfg_fd, &zero, &cfg, BPF_ANY) ? -errno : 0;
}

struct mroce_flow *mroce_dp_flow(struct mroce_dp *dp, __u32 qpn)
{
	if (!dp || qpn == 0 || qpn >= MROCE_MAX_QPS) {
		errno = EINVAL;
		return NULL;
	}
	return &dp->flows[qpn];
}

/*
 * Whether the owner PID recorded in a shared map (a flow's, a region entry's,
 * a chunk's) is a process that has died: what it held is anyone's. A value
 * no PID takes (a foreign writer's) is no one's either; this process is alive.
 */
bool mroce_pid_dead(__u32 pid)
{
	if (!pid || pid == (__u32)getpid())
		return false;
	return pid > INT_MAX || (kill((pid_t)pid, 0) && errno == ESRCH);
}

/* XDP stops accepting the flow first, then what identified it goes. */
static void flow_quiesce(struct mroce_flow *f)
{
	__atomic_store_n(&f->state, MROCE_FLOW_RESERVED, __ATOMIC_RELEASE);
	f->token = 0;
	f->pd_cookie = 0;
}

/*
 * Processes on one interface share its flows map, and a flow's owner PID is
 * its lock: a process holds a flow once it has swapped the PID there, 0 (a
 * free flow) or a dead process's (dead_too), for its own. Two never both
 * do, and the state moves only under the lock (docs/datapath.md, "Maps").
 */
static bool flow_claim(struct mroce_flow *f, bool dead_too)
{
	__u32 pid = __atomic_load_n(&f->owner_pid, __ATOMIC_ACQUIRE);

	if (pid && (!dead_too || !mroce_pid_dead(pid)))
		return false;
	if (!__atomic_compare_exchange_n(&f->owner_pid, &pid, (__u32)getpid(), false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false;
	flow_quiesce(f);	/* a dead process's active flow stops */
	return true;
}

static bool flow_ours(const struct mroce_flow *f)
{
	return __atomic_load_n(&f->owner_pid, __ATOMIC_ACQUIRE) == (__u32)getpid();
}

int mroce_dp_flow_reserve(struct mroce_dp *dp, __u32 qpn)
{
	struct mroce_flow *f = mroce_dp_flow(dp, qpn);

	if (!f)
		return -EINVAL;
	return flow_claim(f, true) ? 0 : -EEXIST;
}

int mroce_dp_flow_add(struct mroce_dp *dp, __u32 qpn, const struct mroce_flow_cfg *cfg)
{
	struct mroce_flow *f = mroce_dp_flow(dp, qpn);
	__u32 st;

	if (!f || !cfg || !mroce_opts_valid(cfg, cfg->sz, sizeof(*cfg)))
		return -EINVAL;
	if (MROCE_OPT(cfg, flags, 0) & ~(__u32)MROCE_FLOW_GO_BACK_N)
		return -EINVAL;
	/*
	 * Reserved by this process; or free, or a dead process's not active (its
	 * state cannot move while the dead PID holds it): an active flow is
	 * never replaced.
	 */
	st = __atomic_load_n(&f->state, __ATOMIC_ACQUIRE);
	if ((st != MROCE_FLOW_RESERVED || !flow_ours(f)) &&
	    !flow_claim(f, st != MROCE_FLOW_ACTIVE))
		return -EEXIST;
	/* Fill everything in first; state flips last so XDP never sees a half flow. */
	f->token = mroce_be64(MROCE_OPT(cfg, token, 0));
	f->peer_qpn = MROCE_OPT(cfg, peer_qpn, 0);
	f->flags = MROCE_OPT(cfg, flags, 0);
	f->dev_id = MROCE_OPT(cfg, dev_id, 0);
	f->pd_cookie = MROCE_OPT(cfg, pd_cookie, 0);
	memset(&f->tx, 0, sizeof(f->tx));	/* a previous QP's counters are not this one's */
	mroce_rxwin_reset(f, MROCE_OPT(cfg, rx_psn, 0));
	__atomic_store_n(&f->state, MROCE_FLOW_ACTIVE, __ATOMIC_RELEASE);
	return 0;
}

/* This process's active flow back to reserved: XDP stops, the QPN stays ours. */
int mroce_dp_flow_unset(struct mroce_dp *dp, __u32 qpn)
{
	struct mroce_flow *f = mroce_dp_flow(dp, qpn);

	if (!f)
		return -EINVAL;
	if (!flow_ours(f))
		return -ENOENT;
	flow_quiesce(f);
	return 0;
}

int mroce_dp_flow_del(struct mroce_dp *dp, __u32 qpn)
{
	struct mroce_flow *f = mroce_dp_flow(dp, qpn);

	if (!f)
		return -EINVAL;
	if (!flow_ours(f)) {
		if (!__atomic_load_n(&f->owner_pid, __ATOMIC_ACQUIRE))
			return -ENOENT;
		if (!flow_claim(f, true))
			return -EBUSY;	/* a live process's */
	}
	flow_quiesce(f);
	__atomic_store_n(&f->state, MROCE_FLOW_FREE, __ATOMIC_RELEASE);
	__atomic_store_n(&f->owner_pid, 0, __ATOMIC_RELEASE);	/* the lock last */
	return 0;
}

int mroce_dp_xsk_set(struct mroce_dp *dp, __u32 queue, int xsk_fd)
{
	if (!dp || queue >= MROCE_MAX_QUEUES || xsk_fd < 0)
		return -EINVAL;
	return bpf_map_update_elem(dp->xsks_fd, &queue, &xsk_fd, BPF_ANY) ? -errno : 0;
}

int mroce_dp_queue_set(struct mroce_dp *dp, __u32 queue, __u32 dev_id, __u32 flags)
{
	struct mroce_queue *q;

	if (!dp || queue >= MROCE_MAX_QUEUES || (flags & ~(__u32)MROCE_QUEUE_PORT) ||
	    (!dev_id && flags))
		return -EINVAL;
	q = &dp->queues[queue];
	/* dev_id last when serving, first when leaving: XDP reads it alone. */
	if (!dev_id)
		__atomic_store_n(&q->dev_id, 0, __ATOMIC_RELEASE);
	q->owner_pid = dev_id ? (__u32)getpid() : 0;
	q->flags = flags;
	if (dev_id)
		__atomic_store_n(&q->dev_id, dev_id, __ATOMIC_RELEASE);
	return 0;
}

int mroce_dp_queue_get(const struct mroce_dp *dp, __u32 queue, __u32 *dev_id, __u32 *owner_pid)
{
	if (!dp || queue >= MROCE_MAX_QUEUES || !dev_id || !owner_pid)
		return -EINVAL;
	*dev_id = __atomic_load_n(&dp->queues[queue].dev_id, __ATOMIC_ACQUIRE);
	*owner_pid = *dev_id ? dp->queues[queue].owner_pid : 0;
	return 0;
}

int mroce_dp_xsk_clear(struct mroce_dp *dp, __u32 queue)
{
	if (!dp || queue >= MROCE_MAX_QUEUES)
		return -EINVAL;
	return bpf_map_delete_elem(dp->xsks_fd, &queue) && errno != ENOENT ? -errno : 0;
}

/* Device memory (dm.c): the pool's map, its chunk owners, the region table. */
int mroce_dp_dm(struct mroce_dp *dp, struct mroce_dp_dm *out)
{
	if (!dp || !out)
		return -EINVAL;
	*out = (struct mroce_dp_dm){ .fd = dp->dm_fd, .chunks = dp->dm_chunks,
				     .own = dp->dm_own, .dmr = dp->dmr };
	return 0;
}
