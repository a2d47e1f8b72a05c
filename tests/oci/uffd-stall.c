/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A workload whose trapped call stalls its supervisor (tests/oci/91-stall.sh), run under
 * devwl-run --connect:
 *
 *   uffd-stall DIR
 *
 * open()s a path that lies on a page registered with userfaultfd and never filled, so
 * whoever reads the path (devwld, with process_vm_readv) waits for the fault. Our own
 * monitor thread sees that fault, makes the directory DIR/stalled and leaves it unresolved until
 * DIR/release exists (at most 120 s); then it fills the page with "/dev/null", creates
 * DIR/released (directories: an open would trap) and the open may go on. Prints
 *
 *   open ERR before-release|after-release    (ERR: OK or the errno name)
 *
 * once the open returns, then opens /dev/null until one works (the supervisor serves us
 * normally again; 120 s at most) and prints "served again after N tries". Exit 77 when
 * userfaultfd is not available.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

static const char *dir;
static int uffd = -1;
static long page;

static bool exists(const char *name)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* A mark for the test: mkdir, since an open would trap and wait behind the stuck call. */
static void mark(const char *name)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	(void)mkdir(p, 0755);
}

static void pause_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void *monitor(void *arg)
{
	struct pollfd pfd = {.fd = uffd, .events = POLLIN};
	struct uffd_msg msg;
	struct uffdio_copy copy = {0};
	char *src = NULL;

	(void)arg;
	if (poll(&pfd, 1, 120000) <= 0 || read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT) {
		fprintf(stderr, "uffd-stall: no page fault came\n");
		exit(1);
	}
	mark("stalled");
	for (int i = 0; i < 6000 && !exists("release"); i++)
		pause_ms(20);
	src = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED)
		exit(1);
	strcpy(src, "/dev/null");
	copy.dst = msg.arg.pagefault.address & ~(uint64_t)(page - 1);
	copy.src = (uint64_t)(uintptr_t)src;
	copy.len = (uint64_t)page;
	mark("released");
	if (ioctl(uffd, UFFDIO_COPY, &copy) < 0 && errno != EEXIST) {
		perror("uffd-stall: UFFDIO_COPY");
		exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = {.api = UFFD_API};
	struct uffdio_register reg = {0};
	pthread_t t;
	char *area = NULL;
	int fd = -1, err = 0, tries = 0;
	bool released = false;

	if (argc != 2) {
		fprintf(stderr, "usage: uffd-stall DIR\n");
		return 2;
	}
	dir = argv[1];
	page = sysconf(_SC_PAGESIZE);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0) {
		fprintf(stderr, "uffd-stall: userfaultfd: %s\n", strerror(errno));
		return 77;
	}
	area = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	reg.range.start = (uint64_t)(uintptr_t)area;
	reg.range.len = (uint64_t)page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0) {
		fprintf(stderr, "uffd-stall: UFFDIO_REGISTER: %s\n", strerror(errno));
		return 77;
	}
	if (pthread_create(&t, NULL, monitor, NULL) != 0)
		return 1;
	/* The page is never touched here: only the supervisor's read faults. */
	fd = open(area, O_RDONLY | O_CLOEXEC);
	err = errno;
	released = exists("released");
	printf("open %s %s\n", fd >= 0 ? "OK" : strerrorname_np(err),
	       released ? "after-release" : "before-release");
	fflush(stdout);
	if (fd >= 0)
		close(fd);
	pthread_join(t, NULL);
	for (tries = 1; tries <= 2400; tries++) {
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			break;
		pause_ms(50);
	}
	if (fd < 0) {
		printf("never served again: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	printf("served again after %d tries\n", tries);
	return 0;
}
