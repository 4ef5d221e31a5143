/**
 * @module
 * What codecall adds to the BullMQ dashboard's page (`@bull-board`'s `index.ejs`): a style sheet
 * that keeps a job's script readable and every tab in view, and a link to the approvals page.
 * bull-board renders a job's data as a JSON tree whose string values collapse their line breaks,
 * so a script read as one long line; and its state tabs sit in a strip that scrolls sideways,
 * which cut the last ones off at common widths (1280 px and below). The selectors match
 * bull-board's CSS-module class names by their stable prefix (`statusTabs-…`), not by the hash
 * after it, which changes between releases, and start with `:root` to outrank bull-board's own
 * rules, whose style sheets load after this one. The link sits outside bull-board's React root
 * (which would otherwise replace it), fixed in the bottom corner: its header is fixed too, and
 * its own link menu hides behind an account icon.
 */

/** The style sheet added to the dashboard's page. */
export const JOB_DASHBOARD_STYLE = [
  // Every state tab, and every tab of a job card, stays in view: the strip wraps instead of scrolling.
  ':root [class*="statusTabs-"],:root [class*="tabActions-"]{flex-wrap:wrap;overflow:visible;-webkit-mask-image:none;mask-image:none}',
  // A string value (a job's script, its output) keeps its lines and indentation and wraps long lines.
  ':root [class*="stringValue-"]{white-space:pre-wrap;overflow-wrap:anywhere;tab-size:2}',
  '#codecall-approvals-link{position:fixed;right:1rem;bottom:1rem;z-index:50;padding:.5rem 1rem;border-radius:999px;' +
    'background:var(--primary,#0f766e);color:var(--primary-foreground,#fff);font:500 .9rem/1.2 var(--font-sans,system-ui,sans-serif);' +
    'text-decoration:none;box-shadow:0 2px 8px #0004}',
  '@media (max-width:48rem){#codecall-approvals-link{right:.5rem;bottom:.5rem;padding:.35rem .75rem;font-size:.8rem}}',
  '#codecall-approvals-link:focus-visible{outline:2px solid var(--ring,#2563eb);outline-offset:2px}',
].join('\n');

/**
 * Returns the dashboard's HTML page with {@link JOB_DASHBOARD_STYLE} added at the end of its
 * `<head>` (after bull-board's own style sheet) and a link to `approvalsPath` at the end of its
 * `<body>`; a page without them is returned unchanged.
 *
 * @example
 * ```ts
 * addToDashboardPage('<html><head></head><body></body></html>', { approvalsPath: '/admin/approvals' });
 * // '<html><head><style id="codecall-dashboard-style">…</style></head><body><a id="codecall-approvals-link" …'
 * ```
 */
export function addToDashboardPage(html: string, options: { approvalsPath: string }): string {
  const head = html.indexOf('</head>');
  const body = html.lastIndexOf('</body>');
  if (head < 0 || body < head) return html;
  return (
    `${html.slice(0, head)}<style id="codecall-dashboard-style">\n${JOB_DASHBOARD_STYLE}\n</style>` +
    `${html.slice(head, body)}<a id="codecall-approvals-link" href="${options.approvalsPath}">Approvals</a>\n` +
    html.slice(body)
  );
}
