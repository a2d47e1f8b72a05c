/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loop-bind DEV FILE | loop-bind -d DEV: what `losetup DEV FILE` and `losetup -d DEV` do
 * (LOOP_CONFIGURE, LOOP_CLR_FD), printing the CLOCK_REALTIME nanoseconds right after the
 * call returns. loop-bind --add N | --remove N: make or remove loop device N
 * (LOOP_CTL_ADD, LOOP_CTL_REMOVE), so that a benchmark has devices of its own that
 * `losetup -f` on a shared host does not hand to others first. bench/follow.sh times from there:
 * the kernel sends the uevent within the call, and the time to exec a program, which on a loaded
 * machine dwarfs the rest, is left out for both sides alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static int now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	printf("%lld\n", (long long)ts.tv_sec * 1000000000 + ts.tv_nsec);
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct loop_config cfg;
	int dev, r;

	if (argc != 3) {
		fputs("usage: loop-bind DEV FILE | loop-bind -d DEV | loop-bind --add|--remove N\n",
		      stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--add") || !strcmp(argv[1], "--remove")) {
		int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);

		r = ctl < 0 ? -1
			    : ioctl(ctl, argv[1][2] == 'a' ? LOOP_CTL_ADD : LOOP_CTL_REMOVE,
				    atoi(argv[2]));
		if (r < 0) {
			fprintf(stderr, "loop-bind: %s %s: %s\n", argv[1], argv[2],
				strerror(errno));
			return errno == EEXIST ? 3 : 1;
		}
		return 0;
	}
	if (!strcmp(argv[1], "-d")) {
		dev = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (dev < 0 || ioctl(dev, LOOP_CLR_FD, 0) < 0) {
			fprintf(stderr, "loop-bind: -d %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		/* The device is gone when the last opener closes: this one first. */
		close(dev);
		return now();
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = (unsigned)open(argv[2], O_RDWR | O_CLOEXEC);
	dev = open(argv[1], O_RDWR | O_CLOEXEC);
	if ((int)cfg.fd < 0 || dev < 0) {
		fprintf(stderr, "loop-bind: %s: %s\n", (int)cfg.fd < 0 ? argv[2] : argv[1],
			strerror(errno));
		return 1;
	}
	r = ioctl(dev, LOOP_CONFIGURE, &cfg);
	if (r < 0) {
		fprintf(stderr, "loop-bind: %s %s: %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}
	r = now();
	close(dev);
	close((int)cfg.fd);
	return r;
}
