/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reference: every trapped call continues (SECCOMP_USER_NOTIF_FLAG_CONTINUE). */
#include "ref-supervise.h"

static void answer(struct ref_notif *n)
{
	ref_send(n, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

int main(int argc, char **argv)
{
	return ref_supervise(argc, argv, answer);
}
