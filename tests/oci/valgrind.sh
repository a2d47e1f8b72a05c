#!/bin/bash
# One valgrind pass of devwld over the OCI tests: each test runs as usual
# with devwld started under valgrind (lib.sh's DEVWLD_WRAP), and the logs are then
# checked for memory errors and leaks. Not registered with CTest (slow); run by hand:
#
#   tests/oci/valgrind.sh BUILD-DIR [TEST...]      (default: 10-runc 20-crun 30-hostile 40-reload)
#
# valgrind 3.19 knows neither seccomp(2) (317) nor openat2 (437): it answers both
# ENOSYS with a warning. Without seccomp(2) devwld finds "no user notification" and
# exits, so a small LD_PRELOAD shim (built here) answers devwld's three seccomp(2)
# queries with what the real kernel said to a native probe run just before: the
# action check, the notification struct sizes, and the feature probe's throwaway
# listener in a child. devwld installs no filter itself, so nothing it enforces is
# faked; the notify fds it serves are real. openat2 would fail ENOSYS and so every
# lookup devwld makes for a container: the shim runs openat2 calls whose only resolve
# flag is RESOLVE_NO_MAGICLINKS as plain openat (so magic links are followed in this
# pass: it checks memory, not resolution) and leaves the others ENOSYS, counted as
# noise. SECCOMP_IOCTL_NOTIF_SET_FLAGS passes its flag by value where valgrind's
# generic ioctl check expects a pointer: that report is suppressed. devwld's keeper
# starts its worker with execve("/proc/self/exe"), which under valgrind would run
# valgrind's own tool: the shim names devwld's path instead, and valgrind follows the
# exec (--trace-children), so keeper and worker are both checked.
# Exit status: 0 clean, 1 a test failed or valgrind found errors or definitely/
# indirectly lost memory, 77 no valgrind or not root.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:?usage: valgrind.sh BUILD-DIR [TEST...]}" && pwd) || exit 1
shift
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(10-runc 20-crun 30-hostile 40-reload)
command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed" >&2; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: the OCI tests need root" >&2; exit 77; }

OUT=${VG_OUT:-$(mktemp -d /tmp/devwl-valgrind.XXXXXX)}
mkdir -p "$OUT"
export DEVWL_BUILD=$BUILD
export DEVWLD=$BUILD/supervisor/devwld DEVWLCTL=$BUILD/tools/devwlctl
export OCI_HOOK=$BUILD/tools/devwl-oci-hook OCI_BIN=$BUILD/tests/oci

# The native probe: what this kernel answers; the shim replays it under valgrind.
cat >"$OUT/probe.c" <<'C'
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "devwl.h"
int main(void)
{
	struct seccomp_notif_sizes sz = {0};

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return 1;
	printf("%u,%u,%u,%u\n", sz.seccomp_notif, sz.seccomp_notif_resp, sz.seccomp_data,
	       devwl_features());
	return 0;
}
C
cat >"$OUT/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define F_ADDFD_SEND 2u
#define F_WAIT_KILLABLE 4u
#define F_SYNC_WAKE_UP 8u
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
static unsigned int sizes[3], features;
static int fake_listener = -1;

static void load(void)
{
	const char *e = getenv("DEVWL_VG_SECCOMP");

	if (!e || sscanf(e, "%u,%u,%u,%u", &sizes[0], &sizes[1], &sizes[2], &features) != 4)
		abort();
}

static long fake_seccomp(unsigned long op, unsigned long flags, void *args)
{
	load();
	switch (op) {
	case SECCOMP_GET_ACTION_AVAIL:
		return 0;
	case SECCOMP_GET_NOTIF_SIZES: {
		struct seccomp_notif_sizes *sz = args;
		sz->seccomp_notif = (__u16)sizes[0];
		sz->seccomp_notif_resp = (__u16)sizes[1];
		sz->seccomp_data = (__u16)sizes[2];
		return 0;
	}
	case SECCOMP_SET_MODE_FILTER:
		/* Only the feature probe's throwaway child gets here. */
		if ((flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) && !(features & F_WAIT_KILLABLE))
			break;
		fake_listener = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return fake_listener;
	}
	errno = EINVAL;
	return -1;
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_seccomp)
		return fake_seccomp((unsigned long)a[0], (unsigned long)a[1], (void *)a[2]);
	if (nr == SYS_openat2) {
		const struct open_how *how = (const void *)a[2];

		if (how->resolve & ~(unsigned long long)RESOLVE_NO_MAGICLINKS) {
			errno = ENOSYS;
			return -1;
		}
		return openat((int)a[0], (const char *)a[1], (int)how->flags, (mode_t)how->mode);
	}
	return ((long (*)(long, ...))dlsym(RTLD_NEXT, "syscall"))(nr, a[0], a[1], a[2], a[3],
								    a[4], a[5]);
}

/* devwld's keeper starts its worker with execve("/proc/self/exe"), which under valgrind
 * names valgrind's tool, not devwld: name devwld's own path instead (valgrind answers
 * readlink of /proc/self/exe with it), so the worker runs under valgrind as well. */
int execve(const char *path, char *const argv[], char *const envp[])
{
	static char self[4096];

	if (!strcmp(path, "/proc/self/exe")) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n > 0) {
			self[n] = '\0';
			path = self;
		}
	}
	return ((int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve"))(
		path, argv, envp);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == fake_listener) {
		if (req == SECCOMP_IOCTL_NOTIF_ADDFD && (features & F_ADDFD_SEND)) {
			errno = ENOENT;
			return -1;
		}
		if (req == SECCOMP_IOW(4, __u64) && (features & F_SYNC_WAKE_UP))
			return 0;
		errno = EINVAL;
		return -1;
	}
	return ((int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl"))(fd, req, arg);
}
C
cc -O1 -I"$HERE/../../include" "$OUT/probe.c" "$BUILD/lib/libdevwl.a" \
	$(pkg-config --libs libseccomp libcap json-c liburing) -lpthread -o "$OUT/probe" ||
	{ echo "cannot build the seccomp probe" >&2; exit 1; }
cc -O1 -shared -fPIC "$OUT/shim.c" -o "$OUT/seccomp-shim.so" -ldl ||
	{ echo "cannot build the seccomp shim" >&2; exit 1; }
cat >"$OUT/devwld.supp" <<'SUPP'
{
   SECCOMP_IOCTL_NOTIF_SET_FLAGS takes its flag by value, not a pointer
   Memcheck:Param
   ioctl(generic)
   ...
   fun:container_attach
}
SUPP
DEVWL_VG_SECCOMP=$("$OUT/probe") || { echo "no seccomp user notification here" >&2; exit 77; }
export DEVWL_VG_SECCOMP
echo "native probe (notif,resp,data sizes, features): $DEVWL_VG_SECCOMP"

status=0
for t in "${tests[@]}"; do
	mkdir -p "$OUT/$t"
	export DEVWLD_WRAP="env LD_PRELOAD=$OUT/seccomp-shim.so valgrind --trace-children=yes --leak-check=full
		--show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect
		--error-exitcode=99 --num-callers=30 --suppressions=$OUT/devwld.supp
		--log-file=$OUT/$t/vg-%p.log"
	start=$(date +%s)
	bash "$HERE/$t.sh" >"$OUT/$t/test.log" 2>&1 &
	test_pid=$!
	# Some tests SIGKILL devwld on purpose (fail-closed checks), which leaves no exit
	# summary. VG_LIVE=1 asks every live devwld for a leak check now and then through
	# vgdb, so that memory already lost shows up anyway; off by default, because
	# valgrind's gdbserver opens its FIFOs in /tmp from whichever thread it interrupts,
	# and a worker thread chrooted into a container's root at that moment makes that a
	# fatal error for devwld (seen here: the worker died, the keeper restarted it).
	while [ -n "${VG_LIVE:-}" ] && kill -0 "$test_pid" 2>/dev/null; do
		for log in "$OUT/$t"/vg-*.log; do
			pid=${log##*/vg-}
			pid=${pid%.log}
			[ -f "$log" ] && kill -0 "$pid" 2>/dev/null && grep -q 'devwld --listen' "$log" &&
				timeout 20 vgdb --pid="$pid" leak_check full definite \
					>"$OUT/$t/live-$pid.new" 2>&1 &&
				grep -q 'LEAK SUMMARY\|All heap blocks' "$OUT/$t/live-$pid.new" &&
				mv "$OUT/$t/live-$pid.new" "$OUT/$t/live-$pid.txt"
		done
		sleep 0.3
	done
	wait "$test_pid"
	rc=$?
	printf '%-18s test exit %s (%ss)\n' "$t" "$rc" "$(($(date +%s) - start))"
	[ "$rc" = 0 ] || [ "$rc" = 77 ] || { status=1; tail -15 "$OUT/$t/test.log" | sed 's/^/    /'; }
	for vglog in "$OUT/$t"/vg-*.log; do
		[ -f "$vglog" ] || { echo "    no valgrind log: devwld never ran"; continue; }
		# A forked child (the feature probe, a worker) may write into its parent's
		# file as well as its own: gather this process's lines from all of them.
		pid=${vglog##*/vg-}
		pid=${pid%.log}
		log=$OUT/$t/own-$pid.log
		cat "$OUT/$t"/vg-*.log | grep -E "^(==|--)$pid(==|--)" >"$log"
		parent=$(sed -n 's/.*Parent PID: \([0-9]*\).*/\1/p' "$log" | head -1)
		what=devwld
		[ -f "$OUT/$t/vg-$parent.log" ] && what="forked by $parent"
		errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | tail -1)
		def=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$log" | tr -d ,)
		ind=$(sed -n 's/.*indirectly lost: \([0-9,]*\) bytes.*/\1/p' "$log" | tr -d ,)
		pos=$(sed -n 's/.*possibly lost: \([0-9,]*\) bytes.*/\1/p' "$log" | tr -d ,)
		reach=$(sed -n 's/.*still reachable: \([0-9,]*\) bytes.*/\1/p' "$log" | tr -d ,)
		noise=$(grep -c 'unhandled .* syscall\|unhandled ioctl' "$log")
		printf '    %s (%s): errors %s, definitely lost %s, indirectly %s, possibly %s, reachable %s; unknown syscall/ioctl warnings %s\n' \
			"$(basename "$vglog")" "$what" "${errs:-?}" "${def:-0}" "${ind:-0}" "${pos:-0}" \
			"${reach:-0}" "$noise"
		if [ -z "$errs" ]; then
			live=$OUT/$t/live-$pid.txt
			if [ -s "$live" ] && grep -q 'LEAK SUMMARY\|All heap blocks\|definitely lost' "$live"; then
				echo "    killed without an exit summary; its last live leak check:"
				grep -E 'definitely lost|indirectly lost|possibly lost|still reachable|All heap' \
					"$live" | sed 's/^==[0-9]*== */      /'
				grep -q 'definitely lost: [1-9]\|indirectly lost: [1-9]' "$live" && status=1
			else
				echo "    (no leak summary: killed by the test; its errors, if any, are above)"
			fi
		fi
		# Error reports are written as they happen: look for them whether or not
		# devwld lived to print its summary.
		if grep -qE '^==[0-9]+== (Invalid|Conditional|Syscall param|Use of|Source and|Mismatched|Argument)' "$log" ||
			[ "${errs:-0}" != 0 ] || [ "${def:-0}" != 0 ] || [ "${ind:-0}" != 0 ]; then
			status=1
			grep -E '^==[0-9]+== (Invalid|Conditional|Syscall param|Use of|Source and|Mismatched|Argument|[0-9,]+ .*bytes in)' "$log" |
				sed 's/^==[0-9]*== //' | sort | uniq -c | head -20 | sed 's/^/      /'
		fi
		grep -h 'unhandled' "$log" | sed 's/^[=-]*[0-9]*[=-]* //' | sort | uniq -c | sed 's/^/      noise: /'
	done
done
echo "valgrind logs and test output: $OUT"
exit $status
