/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwlctl's word when devwld cannot be reached. A bare "PATH: ENOENT" leaves an operator
 * to guess whether devwld is down, listens elsewhere or refuses them; each errno connect()
 * and the first read give here has one cause worth naming, and one thing to do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctlmsg.h"

const char *ctl_socket_pick(const char *option, const char *env, enum socket_origin *ret_origin)
{
	if (option) {
		*ret_origin = SOCKET_OPTION;
		return option;
	}
	if (env && *env) {
		*ret_origin = SOCKET_ENV;
		return env;
	}
	*ret_origin = SOCKET_DEFAULT;
	return CTL_SOCKET_DEFAULT;
}

static const char *origin_name(enum socket_origin origin)
{
	switch (origin) {
	case SOCKET_OPTION:
		return "given with --socket";
	case SOCKET_ENV:
		return "from DEVWL_SOCKET";
	default:
		return "the default; --socket PATH or DEVWL_SOCKET=PATH names another";
	}
}

char *ctl_socket_error(int r, const char *path, enum socket_origin origin, char *buf, size_t size)
{
	const char *name = strerrorname_np(-r), *what;

	switch (-r) {
	case ENOENT:
	case ECONNREFUSED:
	case ENOTSOCK:
		/* No socket file, or one nobody accepts on: no devwld there. */
		what = "is devwld running? It listens where its --control says (devwld(8))";
		break;
	case EACCES:
	case EPERM:
		/* The socket is mode 0600, root's: --allow-uid is for runtimes, not devwlctl. */
		what = "the control socket is root's alone: run devwlctl as root";
		break;
	case ECONNRESET:
	case EPIPE:
		/* devwld closes a peer other than root at once (or it stopped meanwhile). */
		what = "devwld closed the connection: it answers root alone, or it stopped";
		break;
	default:
		what = NULL;
		break;
	}
	if (what)
		snprintf(buf, size, "devwlctl: cannot reach devwld at %s (%s): %s: %s", path,
			 origin_name(origin), name ? name : strerror(-r), what);
	else
		snprintf(buf, size, "devwlctl: %s (%s): %s", path, origin_name(origin),
			 name ? name : strerror(-r));
	return buf;
}
