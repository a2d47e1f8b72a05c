/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reference: every trapped call fails EPERM, answered by the supervisor. */
#include <errno.h>

#include "ref-supervise.h"

static void answer(struct ref_notif *n)
{
	ref_send(n, -EPERM, 0, 0);
}

int main(int argc, char **argv)
{
	return ref_supervise(argc, argv, answer);
}
