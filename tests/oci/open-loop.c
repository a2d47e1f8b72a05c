/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* open-loop PATH N: open and close PATH N times; print the mean µs per open on stdout.
 * Run under devwl-run --connect to time devwld's round trip. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n;

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fputs("usage: open-loop PATH N\n", stderr);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
				 (double)n / 1000.0);
	return 0;
}
