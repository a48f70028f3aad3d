/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dc-agent run by Slurm as a prolog or epilog (srun --prolog=dc-agent,
 * slurm.conf Prolog=dc-agent): Slurm names the context in the environment
 * (SLURM_SCRIPT_CONTEXT), and srun passes the step's command as arguments,
 * which must not be run again under the agent. The agent then does what
 * dc-prolog or dc-epilog does for the job.
 */
#ifndef DC_SLURM_CONTEXT_H
#define DC_SLURM_CONTEXT_H

/* Returns only when this is no Slurm prolog or epilog: else it becomes
 * dc-prolog or dc-epilog (exec), or exits 0 with a message (a prolog never
 * fails the job). */
void dc_slurm_context_take(void);

#endif
