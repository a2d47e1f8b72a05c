/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* notify: to be written. */
#include "devwl.h"
