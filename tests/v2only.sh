#!/bin/bash
# tests/v2only.sh CMD [ARG...]: run CMD in a view of this host where cgroup2 alone is
# mounted, at /sys/fs/cgroup, as on a v2-only host. In a private mount namespace every
# cgroup and cgroup2 mount and the tmpfs under them are unmounted and a fresh cgroup2
# mount takes /sys/fs/cgroup. On a hybrid host the v1 hierarchies still exist, but what
# runs here cannot name them, and the v1 devices controller's root (where this process
# is) allows every device: only a cgroup-v2 device program can refuse one, so devwl's
# v2 path is what is tested. Exits 77 where no such view can be made.
set -u
[ $# -gt 0 ] || { echo "usage: tests/v2only.sh CMD [ARG...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (a mount namespace with cgroup2 remounted)" >&2; exit 77; }
grep -qw cgroup2 /proc/filesystems || { echo "SKIP: the kernel has no cgroup2" >&2; exit 77; }
exec unshare -m --propagation private bash -c '
	set -u
	# Deepest first: the hierarchies, then the tmpfs (or cgroup2) they were mounted on.
	awk '"'"'$0 ~ / - cgroup2? / {print $5}'"'"' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" || exit 1; done || exit 1
	if mountpoint -q /sys/fs/cgroup; then umount -l /sys/fs/cgroup || exit 1; fi
	mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup ||
		{ echo "FAIL: cannot mount cgroup2 at /sys/fs/cgroup" >&2; exit 1; }
	# The view is what it claims: one cgroup mount, cgroup2, at /sys/fs/cgroup.
	mounts=$(awk '"'"'$0 ~ / - cgroup2? / {print $5}'"'"' /proc/self/mountinfo)
	[ "$mounts" = /sys/fs/cgroup ] || { echo "FAIL: cgroup mounts left: $mounts" >&2; exit 1; }
	[ "$(awk -F: '"'"'$2 == "devices" {print $3}'"'"' /proc/self/cgroup)" = / ] ||
		echo "note: not in the v1 devices root: $(grep devices /proc/self/cgroup)" >&2
	echo "# v2-only view: cgroup2 alone, at /sys/fs/cgroup" >&2
	exec "$@"' v2only "$@"
