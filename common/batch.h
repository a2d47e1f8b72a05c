/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The batch protocol of devwlctl(1): one command per line, one result per command. */
#ifndef DEVWL_BATCH_H
#define DEVWL_BATCH_H

#include <stdio.h>

#include "devwl.h"

/*
 * Execute one command line (without its newline) on policy and write its result to
 * out: "ok", "error ENAME", "allow"/"deny", or listing lines followed by ".".
 */
void batch_exec(struct devwl_policy *policy, const char *line, size_t len, FILE *out);

/* Answer "error ENAME" for the negative errno r. */
void batch_reply_errno(FILE *out, int r);

/* Decode the escapes \n \t \r \v \f \0 \\ \xHH of s[0..len) into out (len bytes
 * suffice). Returns the decoded length, or -EINVAL for a bad escape. */
int batch_unescape(const char *s, size_t len, char *out);

/* The one rule that the RULE text s[0..len) of an allow or deny line writes (escaped as
 * on the line): -EINVAL for a device name (several rules), a bad escape or a bad rule. */
int batch_plain_rule(const char *s, size_t len, struct devwl_rule *ret_rule);

#endif
