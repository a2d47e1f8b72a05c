/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Prints devwl_version() of the libdevwl.so it loads (tests/unit/versions.sh). */
#include <stdio.h>

#include "devwl.h"

int main(void)
{
	printf("%s\n", devwl_version());
	return 0;
}
