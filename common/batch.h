/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The batch protocol of devwlctl(1): one command per line, one result per command. */
#ifndef DEVWL_BATCH_H
#define DEVWL_BATCH_H

#include <stdio.h>

#include "devwl.h"

/*
 * Execute one command line (without its newline) on policy and write its result to
 * out: "ok", "error ENAME: REASON", "allow"/"deny", or listing lines followed by ".".
 * Returns 0, or the negative errno of an error answer.
 */
int batch_exec(struct devwl_policy *policy, const char *line, size_t len, FILE *out);

struct selector_env;

/* The same, with the selectors of allow and deny lines (usb:..., cdi:...) resolved against
 * env's roots (NULL: the host's, as batch_exec()). */
int batch_exec_env(struct devwl_policy *policy, const struct selector_env *env, const char *line,
		   size_t len, FILE *out);

/*
 * Answer "error ENAME: REASON" for the negative errno r, REASON formatted from fmt
 * (control characters escaped: an answer is one line). Returns r.
 */
int batch_reply_error(FILE *out, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The negative errno an answer line names ("error ENAME" or "error ENAME: ..."), 0 for
 * an answer that is no error, -EPROTO for a name it does not know. */
int batch_answer_errno(const char *answer);

/* Decode the escapes \n \t \r \v \f \0 \\ \xHH of s[0..len) into out (len bytes
 * suffice). Returns the decoded length, or -EINVAL for a bad escape. */
int batch_unescape(const char *s, size_t len, char *out);

/* Write s[0..len) to out as batch_unescape() reads it back: a backslash, \n \t \r \v \f
 * and NUL by their names, other control bytes as \xHH, so that any bytes stay on one
 * line as one RULE. */
void batch_escape(FILE *out, const char *s, size_t len);

/* The one rule that the RULE text s[0..len) of an allow or deny line writes (escaped as
 * on the line): -EINVAL for a device name or selector (several rules), a bad escape or a
 * bad rule. */
int batch_plain_rule(const char *s, size_t len, struct devwl_rule *ret_rule);

#endif
