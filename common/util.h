/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Until lib/util.h includes base/util.h by its new path; then this file goes. */
#include "../base/util.h"
