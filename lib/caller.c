/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* caller: to be written. */
#include "devwl.h"
