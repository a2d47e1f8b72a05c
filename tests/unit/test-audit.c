/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwld's audit (supervisor/core/audit.c): a decision taken by an audit file and a
 * `devwlctl events` subscriber at once is built and formatted once: /proc/TID/status is
 * opened once, and both get the same line, to the nanosecond of its time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit.h"
#include "devwld.h"
#include "events.h"
#include "fileio.h"
#include "sink.h"
#include "statuswrap.h"
#include "util.h"

/* What the subscriber at fd has been sent, up to the second newline (after "ok"). */
static void read_subscriber(int fd, char *buf, size_t size)
{
	size_t len = 0;

	while (len < size - 1) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		assert_true(poll(&p, 1, 10000) == 1);
		n = read(fd, buf + len, size - 1 - len);
		assert_true(n > 0);
		len += (size_t)n;
		buf[len] = '\0';
		if (strchr(buf, '\n') && strchr(strchr(buf, '\n') + 1, '\n'))
			break;
	}
}

static void test_audit_event_file_and_subscriber(void **state)
{
	struct audit a = {.lock = PTHREAD_MUTEX_INITIALIZER};
	char file[] = "/tmp/test-audit-XXXXXX", sub[8192], want[64];
	struct container c = {.id = (char *)"ctr", .node_path = (char *)"/c", .owner_uid = 0};
	struct devwl_event ev = {.tid = (int)gettid(),
				 .syscall = "openat",
				 .path = "/dev/x",
				 .type = DEVWL_DEV_CHAR,
				 .major = 1,
				 .minor = 3,
				 .access = DEVWL_ACC_READ,
				 .verdict = DEVWL_VERDICT_DENY,
				 .error = EPERM};
	_cleanup_free_ char *text = NULL;
	const char *line = NULL;
	int sv[2], fd;

	(void)state;
	fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(audit_open(&a, file, false, NULL), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(events_subscribe(sv[1], false, 0, NULL), 0);

	status_opens = 0;
	audit_event(&a, &ev, &c, "policy", NULL);
	assert_int_equal(status_opens, 1);

	read_subscriber(sv[0], sub, sizeof(sub));
	events_fini();
	close(sv[0]);
	audit_close(&a);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(devwl_read_all(fd, 1 << 20, &text) > 0);
	close(fd);
	unlink(file);

	/* The subscriber's line after its "ok" is the file's, byte for byte. */
	line = strchr(sub, '\n');
	assert_non_null(line);
	assert_string_equal(line + 1, text);
	snprintf(want, sizeof(want), ",\"pid\":%d,\"tid\":%d,", (int)getpid(), (int)gettid());
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "\"container\":\"ctr\",\"node\":\"/c\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_event_file_and_subscriber),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
