// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Load the NCCL plugin the way NCCL does, by its file name from the library
 * search path, and print the name in its ncclNet_v8 table (the table's first
 * member). selftests/test_install.sh and scripts/test-debs.sh run it against
 * an installed plugin. Exit 1 with dlerror()'s text if it does not load.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	void *h = dlopen("libnccl-net-mroce.so", RTLD_NOW | RTLD_LOCAL);
	const char *const *table;

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	table = dlsym(h, "ncclNetPlugin_v8");	/* ncclNet_v8_t: its name first */
	if (!table) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	printf("%s\n", *table);
	return dlclose(h) != 0;
}
