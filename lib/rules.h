/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers of the rule grammar (lib/rules.c). */
#ifndef DEVWL_RULES_H
#define DEVWL_RULES_H

#include <stdbool.h>

/* The kernel's isspace(), which differs from libc's (it includes 0xa0). */
bool rules_kspace(unsigned char c);
/* 'b', 'c' or 'a'. */
char rules_type_char(unsigned type);

#endif
