/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Policy files: to be written. */
#include "devwl.h"
#include "util.h"

DEVWL_EXPORT int devwl_policy_load_file(const char *file, struct devwl_policy **ret_policy,
					struct devwl_error *err)
{
	(void)ret_policy;
	return devwl_error_set(err, -EOPNOTSUPP, 0, "%s: policy files not supported yet", file);
}
