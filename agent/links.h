/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef DC_LINKS_H
#define DC_LINKS_H

#include <stddef.h>

struct bpf_link;

/* Destroys n BPF links, side by side on up to 64 threads (see links.c). */
void dc_links_destroy(struct bpf_link **links, size_t n);

#endif
