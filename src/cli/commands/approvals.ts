/**
 * @module
 * `codecall approvals [--json] [--limit N]`: the audit trail of approvals, read from the usage
 * history store where every decision is recorded (see docs/approvals.md).
 */
import { existsSync } from 'node:fs';
import { DEFAULT_APPROVALS_LIST_LIMIT } from '../../config/defaults.js';
import { loadConfig } from '../../config/index.js';
import { SqliteHistoryStore, type ApprovalAuditEntry } from '../../store/index.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { neutralizeControls } from '../terminal-text.js';
import { approvalsHelp } from './approvals.help.js';

/** Characters of a reason shown in the table. */
const MAX_REASON_CHARS = 80;

function renderTable(entries: readonly ApprovalAuditEntry[]): string {
  if (entries.length === 0) return 'No approval decisions recorded yet.\n';
  const rows = [
    ['when', 'tool', 'outcome', 'decided by', 'caller', 'run', 'call', 'line', 'args sha256', 'reason'],
  ];
  for (const e of entries) {
    const reason = e.reason ?? '';
    rows.push([
      new Date(e.at).toISOString(),
      e.tool,
      e.outcome,
      e.decidedBy,
      e.caller,
      e.runId ?? '-',
      e.callIndex !== undefined ? String(e.callIndex) : '-',
      e.line !== undefined ? String(e.line) : '-',
      e.argsSha256.slice(0, 12),
      reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS - 1)}…` : reason,
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  // Tool names and reasons come from servers and approvers: never send their control sequences.
  return neutralizeControls(`${lines.join('\n')}\n`);
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { values }: { values: Record<string, string | boolean | undefined> } = parseCommandArgs({
    args: argv,
    options: {
      json: { type: 'boolean' },
      limit: { type: 'string' },
      config: { type: 'string' },
      history: { type: 'string' },
    },
    allowPositionals: false,
  });
  const rawLimit = values.limit as string | undefined;
  const limit = rawLimit === undefined ? DEFAULT_APPROVALS_LIST_LIMIT : Number(rawLimit);
  if (rawLimit !== undefined && (!/^\d+$/.test(rawLimit) || !Number.isSafeInteger(limit) || limit < 1))
    throw new UsageError(`--limit must be a positive integer; got "${rawLimit}".`);
  let path = values.history as string | undefined;
  if (path === undefined) {
    const config = await loadConfig({
      ...(values.config !== undefined ? { path: values.config as string } : {}),
      cwd: io.cwd,
      env: io.env,
      onNotice: configNoticeWriter(io),
    });
    if (!config.history.enabled)
      io.stderr.write(
        'codecall approvals: the history store is disabled in the configuration (history.enabled: false): decisions are not recorded.\n',
      );
    path = config.history.path;
  }
  let entries: ApprovalAuditEntry[] = [];
  if (existsSync(path)) {
    const store = await SqliteHistoryStore.open({ path });
    try {
      entries = await store.listApprovals({ limit });
    } finally {
      await store.close();
    }
  } else io.stderr.write(`codecall approvals: no history store at ${path} yet.\n`);
  if (values.json === true) io.stdout.write(`${JSON.stringify({ approvals: entries })}\n`);
  else io.stdout.write(renderTable(entries));
  return 0;
}

/** `codecall approvals`. */
export const approvalsCommand: CliCommand = {
  ...approvalsHelp,
  run,
};
