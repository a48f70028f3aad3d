// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "parallel.h"

#include <pthread.h>

#define MAX_THREADS 64

struct share {
	void (*fn)(void *ctx, size_t i);
	void *ctx;
	size_t from, n, stride;
};

static void *run_share(void *arg)
{
	struct share *s = arg;

	for (size_t i = s->from; i < s->n; i += s->stride)
		s->fn(s->ctx, i);
	return NULL;
}

void dc_parallel_for(size_t n, int nthreads, void (*fn)(void *ctx, size_t i), void *ctx)
{
	pthread_t tids[MAX_THREADS];
	struct share shares[MAX_THREADS];
	size_t nt = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : (size_t)nthreads;
	size_t started = 1;

	if (nt > n)
		nt = n ? n : 1;
	for (size_t t = 0; t < nt; t++)
		shares[t] = (struct share){ fn, ctx, t, n, nt };
	while (started < nt && pthread_create(&tids[started], NULL, run_share, &shares[started]) == 0)
		started++;
	run_share(&shares[0]);
	for (size_t t = 1; t < started; t++)
		pthread_join(tids[t], NULL);
	for (size_t t = started; t < nt; t++)
		run_share(&shares[t]);
}
