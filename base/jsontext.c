/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "jsontext.h"

size_t json_text_ws(const char *t, size_t i)
{
	while (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n')
		i++;
	return i;
}

size_t json_text_string_end(const char *t, size_t i)
{
	for (i++; t[i] && t[i] != '"'; i++)
		if (t[i] == '\\' && t[i + 1])
			i++;
	return t[i] ? i + 1 : i;
}

size_t json_text_value_end(const char *t, size_t i)
{
	int depth = 0;

	if (t[i] == '"')
		return json_text_string_end(t, i);
	if (t[i] != '{' && t[i] != '[') {
		while (t[i] && !strchr(",]} \t\r\n", t[i]))
			i++;
		return i;
	}
	/* Strings may hold brackets: skipped whole, they are not counted. */
	while (t[i]) {
		if (t[i] == '"') {
			i = json_text_string_end(t, i);
			continue;
		}
		if (t[i] == '{' || t[i] == '[')
			depth++;
		else if ((t[i] == '}' || t[i] == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return i;
}
