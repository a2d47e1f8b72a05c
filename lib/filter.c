/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* filter: to be written. */
#include "devwl.h"
