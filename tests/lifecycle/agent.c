/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lifecycle driver's workload (tests/lifecycle/README.md).
 *
 * agent setup NODES -- COMMAND...
 *	A mount namespace of its own with a tmpfs /dev holding the device nodes NODES
 *	(comma separated NAME:MAJOR:MINOR, each mode 0666), made before devwl sees the
 *	process; then exec COMMAND (devwl-run ... -- agent serve FD).
 * agent serve FD
 *	Answer the driver on the socket FD, one line per command:
 *	"probe PATH..." -> "PATH RD WR..." (open(2) O_RDONLY and O_WRONLY: "ok" or the
 *	errno's name), "ping" -> "pong", "pid" -> its pid, "exec probe PATH..." -> the
 *	same answer from a new process (fork and exec of this program, which inherits
 *	the seccomp filter, the cgroup and the namespaces: a process the container
 *	starts later), "exit" -> exit 0 (so does EOF).
 * agent once PATH...
 *	The answer to "probe PATH..." on standard output, then exit (what "exec" runs, and
 *	what the driver runs in a workload's namespaces and cgroup from outside).
 *
 * The kernel (or devwld on the kernel's behalf) is the ground truth: every answer is the
 * result of a real open of a real node, nothing is inferred.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *result(const char *path, int flags, char buf[static 32])
{
	int fd = open(path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd >= 0) {
		close(fd);
		return "ok";
	}
	snprintf(buf, 32, "%s", strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
	return buf;
}

static int setup(char *nodes, char **argv)
{
	char *save = NULL;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("none", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") < 0) {
		fprintf(stderr, "agent: a private /dev: %s\n", strerror(errno));
		return 1;
	}
	umask(0);
	for (char *n = strtok_r(nodes, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		char name[64], path[80];
		unsigned int maj, min;

		if (sscanf(n, "%63[^:]:%u:%u", name, &maj, &min) != 3) {
			fprintf(stderr, "agent: bad node %s\n", n);
			return 1;
		}
		snprintf(path, sizeof(path), "/dev/%s", name);
		if (mknod(path, S_IFCHR | 0666, makedev(maj, min)) < 0) {
			fprintf(stderr, "agent: mknod %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	execvp(argv[0], argv);
	fprintf(stderr, "agent: %s: %s\n", argv[0], strerror(errno));
	return 127;
}

static void probe(FILE *out, char **save)
{
	const char *sep = "";
	char *word;

	while ((word = strtok_r(NULL, " ", save))) {
		char a[32], b[32];

		fprintf(out, "%s%s %s %s", sep, word, result(word, O_RDONLY, a),
			result(word, O_WRONLY, b));
		sep = " ";
	}
	fputc('\n', out);
}

/* "exec probe PATH...": a new program answers (on the same socket), this one waits. */
static void exec_probe(FILE *out, int fd, char *rest)
{
	char *argv[256] = {"agent", "once"};
	char *save = NULL;
	size_t n = 2;
	pid_t pid;
	int status;

	for (char *w = strtok_r(rest, " ", &save); w && n < 255; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	fflush(out);
	pid = fork();
	if (pid == 0) {
		if (dup2(fd, 1) < 0)
			_exit(126);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		fprintf(out, "error exec %s\n", pid < 0 ? strerror(errno) : "failed");
}

static int serve(int fd)
{
	FILE *in = fdopen(fd, "r");
	FILE *out = fdopen(dup(fd), "w");
	char line[4096];

	if (!in || !out)
		return 1;
	fputs("ready\n", out);
	fflush(out);
	while (fgets(line, sizeof(line), in)) {
		char *save = NULL, *word;

		line[strcspn(line, "\n")] = '\0';
		word = strtok_r(line, " ", &save);
		if (!word)
			continue;
		if (!strcmp(word, "exit"))
			return 0;
		if (!strcmp(word, "ping")) {
			fputs("pong\n", out);
		} else if (!strcmp(word, "pid")) {
			fprintf(out, "%d\n", (int)getpid());
		} else if (!strcmp(word, "probe")) {
			probe(out, &save);
		} else if (!strcmp(word, "exec") && (word = strtok_r(NULL, " ", &save)) &&
			   !strcmp(word, "probe")) {
			exec_probe(out, fileno(out), save ? save : (char *)"");
		} else {
			fprintf(out, "error %s\n", word);
		}
		fflush(out);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "setup") && !strcmp(argv[3], "--"))
		return setup(argv[2], argv + 4);
	if (argc >= 2 && !strcmp(argv[1], "once")) {
		const char *sep = "";

		for (int i = 2; i < argc; i++) {
			char a[32], b[32];

			printf("%s%s %s %s", sep, argv[i], result(argv[i], O_RDONLY, a),
			       result(argv[i], O_WRONLY, b));
			sep = " ";
		}
		putchar('\n');
		return fflush(stdout) ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(atoi(argv[2]));
	fputs("usage: agent setup NODES -- COMMAND... | agent serve FD | agent once PATH...\n",
	      stderr);
	return 2;
}
