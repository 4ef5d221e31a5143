/**
 * @module
 * `codecall jobs`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall jobs --help` read only this).
 */
import {
  DEFAULT_JOBS_HTTP_TIMEOUT_MS,
  DEFAULT_JOBS_QUEUE,
  DEFAULT_SERVE_PORT,
} from '../../config/defaults.js';
import type { CommandHelp } from '../command.js';
import { SERVE_TOKEN_ENV } from './serve.help.js';

/** Environment variable holding the Redis URL of the jobs queue. */
export const REDIS_URL_ENV = 'CODECALL_REDIS_URL';

/** `codecall jobs --help`. */
export const jobsHelp: CommandHelp = {
  name: 'jobs',
  summary:
    'Submit and follow server-side jobs on a running serve (--url), Redis or PostgreSQL (submit, status, wait, logs, cancel, approve, list)',
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

Backend (every command works on each; give at most one of --url, --redis, --postgres):
  --url <address>       a running \`codecall serve --http\` (e.g. http://127.0.0.1:${DEFAULT_SERVE_PORT}), through its
                        jobs HTTP API (/v1/jobs): its embedded backend, or the queue it was started on
  --token <secret>      with --url: the serve's bearer token (default: $${SERVE_TOKEN_ENV})
  --redis <url>         a BullMQ queue on Redis (default: $${REDIS_URL_ENV})
  --postgres <url>      a pg-boss queue on PostgreSQL, as \`codecall worker --postgres\`
  --queue <name>        with Redis or PostgreSQL: the queue (default: jobs.queue, else "${DEFAULT_JOBS_QUEUE}")
  --config <path>       configuration file whose "jobs" section chooses the backend (default:
                        ./codecall.json, then ./.mcp.json)
Without a flag: $${REDIS_URL_ENV}, then the configuration: "jobs": {"backend": "bullmq" or "postgres",
"connection": "<url>"}, or "backend": "local" for the codecall serve its "serve" section describes
(host, port, token). A serve that cannot be reached, or does not answer within ${DEFAULT_JOBS_HTTP_TIMEOUT_MS / 1_000} s,
and a refused token (401) are errors that name the backend used and how to choose another.

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

Other options:
  --timeout-ms <n>      wait: give up waiting after this long (the job goes on)
  --json                print JSON

Examples:
  codecall jobs submit exec report.ts --url http://127.0.0.1:${DEFAULT_SERVE_PORT} --token "$TOKEN" --wait
  ${SERVE_TOKEN_ENV}=$TOKEN codecall jobs list --url http://127.0.0.1:${DEFAULT_SERVE_PORT} --state completed
  codecall jobs logs 7f3c… --url https://codecall.internal:8443 --token "$TOKEN"
  codecall jobs submit run "Summarise Q3 travel" --redis redis://127.0.0.1:6379 --model demo
  codecall jobs wait 7f3c… --postgres postgres://codecall@db.internal:5432/app --timeout-ms 60000
  codecall jobs approve 7f3c… --deny --reason "not this one" --config codecall.json

Exit status: 0 done (a waited job ended "ok"), 1 the job ended otherwise, 2 usage, configuration
or backend error (unreachable, refused token).
`,
};
