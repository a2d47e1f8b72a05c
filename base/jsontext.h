/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A walk over JSON text json-c has accepted strictly (so well formed): json-c keeps no
 * positions, and a policy file's messages and its selector rules need them. Each
 * returns the offset after what it skips, or the offset of the NUL that ends t.
 */
#ifndef DEVWL_JSONTEXT_H
#define DEVWL_JSONTEXT_H

#include <stddef.h>

/* Past the JSON whitespace at t[i]. */
size_t json_text_ws(const char *t, size_t i);
/* Past the string whose opening quote is t[i]. */
size_t json_text_string_end(const char *t, size_t i);
/* Past the value (string, number, word, object or array) that starts at t[i]. */
size_t json_text_value_end(const char *t, size_t i);

#endif
