/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * no-netlink PROTOCOL PROGRAM [ARG...]: run PROGRAM where netlink sockets of PROTOCOL
 * ("uevent": NETLINK_KOBJECT_UEVENT, "sock_diag": NETLINK_SOCK_DIAG) cannot be had: a
 * seccomp filter answers socket(AF_NETLINK, *, PROTOCOL) EACCES, as a sandbox that
 * allows no netlink would, and allows everything else. For tests of what devwld does
 * without them (tests/oci/165-metrics-admission.sh, 166-fail-loudly.sh).
 */
#include <errno.h>
#include <linux/netlink.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx;
	int r, proto;

	if (argc < 3 || (strcmp(argv[1], "uevent") && strcmp(argv[1], "sock_diag"))) {
		fprintf(stderr, "usage: no-netlink uevent|sock_diag PROGRAM [ARG...]\n");
		return 2;
	}
	proto = !strcmp(argv[1], "uevent") ? NETLINK_KOBJECT_UEVENT : NETLINK_SOCK_DIAG;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		fprintf(stderr, "no-netlink: seccomp_init failed\n");
		return 1;
	}
	/* The int arguments compared on their low 32 bits, as the kernel reads them. */
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 2,
			     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, AF_NETLINK),
			     SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffff, (scmp_datum_t)proto));
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0) {
		fprintf(stderr, "no-netlink: cannot install the filter: %s\n", strerror(-r));
		return 1;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "no-netlink: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
