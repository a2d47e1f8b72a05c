/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What devwlctl tells an operator (ctlmsg.c): kept apart from devwlctl.c so the unit
 * tests read the very text a failure prints. */
#ifndef DEVWLCTL_CTLMSG_H
#define DEVWLCTL_CTLMSG_H

#include <stddef.h>
#include <stdio.h>

/* Where the control socket's path came from: --socket, DEVWL_SOCKET or the default. */
enum socket_origin {
	SOCKET_DEFAULT,
	SOCKET_OPTION,
	SOCKET_ENV,
};

#define CTL_SOCKET_DEFAULT "/run/devwl/control.sock"

/*
 * The control socket devwlctl talks to: option (--socket, or NULL), else env (the
 * DEVWL_SOCKET variable, or NULL; empty counts as unset), else the default. *ret_origin
 * says which.
 */
const char *ctl_socket_pick(const char *option, const char *env, enum socket_origin *ret_origin);

/*
 * The line devwlctl prints when devwld at path could not be reached or spoke no answer:
 * error r (negative errno), what it means and what to do, without a newline. Writes at
 * most size bytes into buf (truncated, always terminated); returns buf.
 */
char *ctl_socket_error(int r, const char *path, enum socket_origin origin, char *buf, size_t size);

/*
 * A line of devwlctl events for people, from its JSON object, to out: a decision (time,
 * container, node, pid, call, path, device, access, decision, errno, reason and rule), a
 * record that is no decision (attach, detach: its event, path, device, access, result)
 * or a selector's change (its node, binding, selector, what it revoked and granted).
 */
struct json_object;
void ctl_event_print(FILE *out, struct json_object *obj);

/* devwlctl --help. */
void ctl_usage(FILE *f);

#endif
