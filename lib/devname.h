/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device-name resolver (lib/devname.c) is public: devwl_devname_resolve() and
 * devwl_devname_is_name() are declared in devwl.h. Nothing private is left here; the
 * header stays only while some files still include it.
 */
#ifndef DEVWL_DEVNAME_H
#define DEVWL_DEVNAME_H

#include "devwl.h"

#endif
