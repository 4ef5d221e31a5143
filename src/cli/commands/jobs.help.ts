/**
 * @module
 * `codecall jobs`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall jobs --help` read only this).
 */
import { DEFAULT_JOBS_QUEUE } from '../../config/defaults.js';
import type { CommandHelp } from '../command.js';

/** Environment variable holding the Redis URL of the jobs queue. */
export const REDIS_URL_ENV = 'CODECALL_REDIS_URL';

/** `codecall jobs --help`. */
export const jobsHelp: CommandHelp = {
  name: 'jobs',
  summary:
    'Submit and follow server-side jobs on a BullMQ queue (submit, status, wait, logs, cancel, approve, list)',
  usage: `Usage: codecall jobs <command> [options]

Commands:
  submit exec <file | ->        queue a script job (prints its id)
  submit run "<task>"           queue an agent task (--model demo|provider:model, --mode code|direct)
  status <id>                   state, result status and attempts
  wait <id>                     follow progress (stderr) until the job ends; print its output
  logs <id>                     the job's log lines
  cancel <id>                   cancel a waiting or running job
  approve <id> [--deny] [--reason <text>]
                                decide the call a job waits on (state waiting-approval): approve it
                                (it runs once) or deny it (the script sees APPROVAL_DENIED)
  list [--state <s>]... [--limit <n>]

Submit options:
  --config-name <name>  configuration the worker runs the job with (default: "default")
  --key <key>           idempotency key: submitting the same key again queues nothing new
  --priority <n>        1 (highest) … 2097152; unset jobs run first, in order
  --deadline <iso>      do not start after, and stop at, this time (e.g. 2030-01-01T06:00:00Z)
  --attempts <n>        attempts on infrastructure faults (default 3)
  --model <spec>        run jobs: the model (default: the worker configuration's agent.model)
  --messages <file | -> run jobs: continue a conversation (a JSON array of messages, e.g. a previous
                        run's messages); the task words, if any, are appended as the user's message
  --mode code|direct    run jobs: how the model uses tools
  --max-steps <n>       run jobs: model requests before the run stops
  --wait                after submitting, wait as \`jobs wait\` does

Common options:
  --redis <url>         Redis (default: $${REDIS_URL_ENV}, else jobs.connection in the configuration)
  --postgres <url>      a PostgreSQL (pg-boss) queue instead, as \`codecall worker --postgres\`
  --queue <name>        queue (default: jobs.queue, else "${DEFAULT_JOBS_QUEUE}")
  --config <path>       configuration file to read the "jobs" section from
  --timeout-ms <n>      wait: give up waiting after this long (the job goes on)
  --json                print JSON

Exit status: 0 done (a waited job ended "ok"), 1 the job ended otherwise, 2 usage or configuration error.
`,
};
