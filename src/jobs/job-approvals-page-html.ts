/**
 * @module
 * The HTML of the approvals page (`/admin/approvals`): one card per job that waits on a call, with
 * the tool, why it needs approval, when it expires, and **every argument, whole** (the arguments'
 * JSON, indented, never cut: a cut can hide the field that matters), then a form to approve or
 * deny with a reason. Everything shown comes from the script or its tools and is hostile: it is
 * HTML-escaped, and control, bidirectional-formatting and invisible characters (U+202E reorders
 * what follows it on screen) are shown as visible `\uXXXX` stand-ins, marked, by the helper the
 * other approval prompts use (`escapeInvisible`). The page has no script at all.
 */
import { escapeInvisible } from '../tools/approval-text.js';
import type { PendingApproval } from '../store/job-state.js';
import { ADMIN_PATH } from './admin-auth.js';
import { MAX_APPROVAL_REASON_CHARS } from './job-approvals.js';
import type { JobRecord } from './job-types.js';

/** Path the approvals page is served at. */
export const JOB_APPROVALS_PAGE_PATH = `${ADMIN_PATH}/approvals`;
/** Path of its style sheet (the page's content security policy allows no inline style). */
export const JOB_APPROVALS_PAGE_STYLE_PATH = `${JOB_APPROVALS_PAGE_PATH}/style.css`;

/** A job waiting on a call, as the page lists it. */
export type WaitingJob = Pick<JobRecord, 'id' | 'config' | 'labels' | 'createdAt'> & {
  approval: PendingApproval;
};

/** What {@link renderApprovalsPage} shows. */
export interface ApprovalsPageModel {
  /** The jobs waiting on a call, in the order shown. */
  jobs: readonly WaitingJob[];
  /** More jobs wait than are listed. */
  more: boolean;
  /** The outcome of the last decision, or why it was refused. */
  notice?: { kind: 'ok' | 'error'; text: string };
  /** Where the jobs dashboard is, to link to it. @defaultValue no link */
  dashboardPath?: string;
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `text` safe in HTML text and in a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!);
}

/**
 * `text` as HTML, escaped, with each control, bidirectional-formatting or invisible character
 * shown as its `\uXXXX` stand-in inside `<mark class="stand-in">` (with `keepNewlines`, a line
 * break stays a line break: the indentation of pretty-printed JSON, whose strings have their own
 * line breaks escaped already).
 */
export function visibleHtml(text: string, options: { keepNewlines?: boolean } = {}): string {
  let html = '';
  // By code point: a surrogate pair stays whole, a lone surrogate is one character.
  for (const char of text) {
    const stand = char === '\n' && options.keepNewlines === true ? char : escapeInvisible(char);
    if (stand === char) html += escapeHtml(char);
    else {
      const code = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      html += `<mark class="stand-in" title="U+${code}, shown as its escape">${escapeHtml(stand)}</mark>`;
    }
  }
  return html;
}

/** The arguments' JSON, indented, every field and every character of every value. */
export function argumentsJson(args: unknown): string {
  try {
    return JSON.stringify(args, null, 2) ?? String(args);
  } catch {
    return String(args);
  }
}

const iso = (ms: number): string => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));
const time = (ms: number): string => `<time datetime="${iso(ms)}">${iso(ms)}</time>`;

function renderJob(job: WaitingJob): string {
  const { approval } = job;
  const labels = Object.entries(job.labels ?? {});
  const id = escapeHtml(job.id);
  return `<section class="approval" id="job-${id}" data-job="${id}">
<h2><code class="tool">${visibleHtml(approval.tool)}</code> <span class="call">call ${approval.callIndex} of job <code>${visibleHtml(job.id)}</code></span></h2>
<dl>
<dt>Needs approval because</dt><dd class="why">${visibleHtml(approval.reason)}</dd>
<dt>Asked at</dt><dd>${time(approval.requestedAt)}</dd>
<dt>Ends the job unless decided by</dt><dd>${time(approval.expiresAt)}</dd>
<dt>Configuration</dt><dd><code>${visibleHtml(job.config)}</code></dd>${
    labels.length > 0
      ? `\n<dt>Labels</dt><dd>${labels.map(([key, value]) => `<code>${visibleHtml(key)}=${visibleHtml(value)}</code>`).join(' ')}</dd>`
      : ''
  }
</dl>
<h3>Arguments</h3>
<pre class="args">${visibleHtml(argumentsJson(approval.args), { keepNewlines: true })}</pre>
<form method="post" action="${JOB_APPROVALS_PAGE_PATH}">
<input type="hidden" name="job" value="${id}">
<input type="hidden" name="call" value="${approval.callIndex}">
<input type="hidden" name="args" value="${escapeHtml(approval.argsHash)}">
<label>Reason <span class="hint">(recorded with the decision; a denied script sees it)</span>
<textarea name="reason" maxlength="${MAX_APPROVAL_REASON_CHARS}" rows="2"></textarea></label>
<div class="buttons">
<button type="submit" name="decision" value="approve" class="approve">Approve and run this call</button>
<button type="submit" name="decision" value="deny" class="deny">Deny</button>
</div>
</form>
</section>`;
}

/**
 * The whole approvals page for `model`.
 *
 * @example
 * ```ts
 * const html = renderApprovalsPage({ jobs: [], more: false, dashboardPath: '/admin/queues' });
 * ```
 */
export function renderApprovalsPage(model: ApprovalsPageModel): string {
  const count = model.jobs.length;
  const summary =
    count === 0
      ? 'No call waits for a decision.'
      : `${count}${model.more ? '+' : ''} ${count === 1 && !model.more ? 'call waits' : 'calls wait'} for a decision.` +
        (model.more ? ` Only ${count} are listed; decide some and reload for the rest.` : '');
  const notice = model.notice
    ? `<p class="notice ${model.notice.kind}" role="${model.notice.kind === 'error' ? 'alert' : 'status'}">${visibleHtml(model.notice.text)}</p>\n`
    : '';
  const nav = [
    `<a href="${JOB_APPROVALS_PAGE_PATH}">Reload</a>`,
    ...(model.dashboardPath !== undefined
      ? [`<a href="${escapeHtml(model.dashboardPath)}">Jobs dashboard</a>`]
      : []),
  ].join('\n');
  return `<!doctype html>
<html lang="en" dir="ltr">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>codecall approvals</title>
<link rel="stylesheet" href="${JOB_APPROVALS_PAGE_STYLE_PATH}">
</head>
<body>
<header><h1>codecall approvals</h1><nav>
${nav}
</nav></header>
<main>
${notice}<p class="summary">${summary}</p>
${model.jobs.map(renderJob).join('\n')}
</main>
</body>
</html>
`;
}

/** The page's style sheet: readable from a 390 px phone to a wide screen, light or dark. */
export const JOB_APPROVALS_PAGE_STYLE = `:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#f6f8fa;--card:#fff;--border:#d1d9e0;--link:#0969da;--ok:#1a7f37;--danger:#cf222e;--mark:#fff1a8;--mark-border:#bf8700}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--card:#151b23;--border:#3d444d;--link:#4493f8;--ok:#238636;--danger:#da3633;--mark:#5c4700;--mark-border:#d29922}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--link)}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:.25rem 1.5rem;padding:.75rem 1rem;background:var(--card);border-bottom:1px solid var(--border)}
header h1{margin:0;font-size:1.25rem}
header nav{display:flex;flex-wrap:wrap;gap:1rem}
main{max-width:72rem;margin:0 auto;padding:1rem}
code,pre,textarea{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
code{overflow-wrap:anywhere}
.approval{margin:0 0 1rem;padding:1rem;background:var(--card);border:1px solid var(--border);border-radius:8px;min-width:0}
.approval h2{margin:0 0 .75rem;font-size:1.1rem;overflow-wrap:anywhere}
.approval h2 .call{color:var(--muted);font-size:.9rem;font-weight:normal}
.approval h3{margin:0 0 .25rem;font-size:1rem}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem 1rem;margin:0 0 1rem}
dt{color:var(--muted)}
dd{margin:0;min-width:0;overflow-wrap:anywhere}
pre.args{margin:0 0 1rem;padding:.75rem;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;tab-size:2;font-size:.875rem;background:var(--bg);border:1px solid var(--border);border-radius:6px;direction:ltr;unicode-bidi:isolate}
mark.stand-in{padding:0 .1em;color:inherit;background:var(--mark);border:1px solid var(--mark-border);border-radius:3px}
form{display:grid;gap:.5rem}
label{display:grid;gap:.25rem}
.hint{color:var(--muted);font-size:.875rem}
textarea{width:100%;font-size:.95rem;padding:.5rem;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--fg)}
.buttons{display:flex;flex-wrap:wrap;gap:.5rem}
button{font:inherit;padding:.5rem 1rem;border:1px solid transparent;border-radius:6px;color:#fff;cursor:pointer}
button.approve{background:var(--ok)}
button.deny{background:var(--danger)}
.notice{padding:.75rem 1rem;background:var(--card);border:1px solid var(--ok);border-radius:6px;overflow-wrap:anywhere}
.notice.error{border-color:var(--danger)}
@media (max-width:40rem){dl{grid-template-columns:minmax(0,1fr)}dd{margin-bottom:.25rem}}
`;
