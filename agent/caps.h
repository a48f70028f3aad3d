/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef DC_CAPS_H
#define DC_CAPS_H

#include <stddef.h>

/* 0 when this process may load BPF and attach probes; else -1 and a message
 * naming the missing capabilities and how to grant them. */
int dc_check_capabilities(char *msg, size_t len);

#endif
