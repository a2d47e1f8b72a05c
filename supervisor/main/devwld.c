/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwld: the devwl supervisor daemon; see devwld(8). Everything but main() is in the
 * devwld_core library, so tests and fuzzers can link the daemon's parts. */
#include "daemon.h"

int main(int argc, char **argv)
{
	return devwld_main(argc, argv);
}
