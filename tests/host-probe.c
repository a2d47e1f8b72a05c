/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What this host can do, for the shell tests (tests/host-probe.sh), found out without
 * devwl (tests/hostprobe.h):
 *
 *   host-probe cgroup2           print the first cgroup2 mount point
 *   host-probe v1 CONTROLLER     print the mount point of that cgroup-v1 controller
 *   host-probe v1-devices        a v1 devices cgroup can be made to deny
 *   host-probe bpf-device        a cgroup-v2 device program loads and attaches
 *   host-probe bpf-ringbuf       a device program can write to a BPF ring buffer
 *   host-probe bpf-ringbuf-pid   ... and ask for the current task's pid
 *   host-probe user-notif        seccomp user notification exists
 *   host-probe ia32              int $0x80 is a system call
 *
 * Exit 0 yes, 1 no (saying why on stdout), 2 usage.
 */
#include "hostprobe.h"

int main(int argc, char **argv)
{
	char buf[4096] = "";
	const char *verb = argc > 1 ? argv[1] : "";

	if (strcmp(verb, "cgroup2") == 0 || (strcmp(verb, "v1") == 0 && argc == 3)) {
		if (hp_cgroup_mount(argc == 3 ? argv[2] : NULL, buf, sizeof(buf)) < 0)
			return 1;
		puts(buf);
		return 0;
	}
	if (strcmp(verb, "v1-devices") == 0 || strcmp(verb, "bpf-device") == 0) {
		int r = verb[0] == 'v' ? hp_v1_devices(buf, sizeof(buf))
				       : hp_bpf_device(buf, sizeof(buf));
		if (r < 0)
			puts(buf);
		return r < 0;
	}
	if (strcmp(verb, "bpf-ringbuf") == 0 || strcmp(verb, "bpf-ringbuf-pid") == 0) {
		int r = hp_bpf_ringbuf(verb[11] == '-', buf, sizeof(buf));
		if (r < 0)
			puts(buf);
		return r < 0;
	}
	if (strcmp(verb, "user-notif") == 0)
		return !hp_user_notif();
	if (strcmp(verb, "ia32") == 0)
		return !hp_ia32();
	fputs("usage: host-probe cgroup2|v1 CTRL|v1-devices|bpf-device|bpf-ringbuf|bpf-ringbuf-pid|"
	      "user-notif|ia32\n",
	      stderr);
	return 2;
}
