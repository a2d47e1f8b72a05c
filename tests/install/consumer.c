/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program as an embedder writes it, built by tests/install/10-install.sh against the
 * installed header and library with nothing but `pkg-config --cflags --libs devwl`.
 * Prints the library's version and one decision of a small policy.
 */
#include <devwl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !DEVWL_VERSION_AT_LEAST(0, 1, 0)
#error "devwl.h older than 0.1.0"
#endif

int main(void)
{
	struct devwl_policy *policy = devwl_policy_new();
	struct devwl_error err = {0};
	const char *deny = "a", *allow = "c 1:3 rw";
	int null_rw = -1, zero_r = -1;

	if (!policy)
		return 1;
	if (devwl_policy_mkdir(policy, "/app") < 0 ||
	    devwl_policy_write(policy, "/app", DEVWL_FILE_DENY, deny, strlen(deny), &err) < 0 ||
	    devwl_policy_write(policy, "/app", DEVWL_FILE_ALLOW, allow, strlen(allow), &err) < 0) {
		fprintf(stderr, "consumer: %s\n", err.msg);
		devwl_policy_free(policy);
		return 1;
	}
	null_rw = devwl_node_check(devwl_policy_find(policy, "/app"), DEVWL_DEV_CHAR, 1, 3,
				   DEVWL_ACC_READ | DEVWL_ACC_WRITE);
	zero_r = devwl_node_check(devwl_policy_find(policy, "/app"), DEVWL_DEV_CHAR, 1, 5,
				  DEVWL_ACC_READ);
	printf("libdevwl %s: c 1:3 rw %s, c 1:5 r %s\n", devwl_version(),
	       null_rw == 1 ? "allowed" : "denied", zero_r == 1 ? "allowed" : "denied");
	devwl_policy_free(policy);
	return null_rw == 1 && zero_r == 0 ? 0 : 1;
}
