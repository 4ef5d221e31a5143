/**
 * The HTML of the approvals page and what codecall adds to the jobs dashboard's page, as pure
 * functions: every argument whole (none of the approval prompt's limits apply), everything hostile
 * escaped, invisible characters as marked stand-ins.
 */
import { describe, expect, it } from 'vitest';
import {
  argumentsJson,
  escapeHtml,
  renderApprovalsPage,
  visibleHtml,
  type WaitingJob,
} from '../../../src/jobs/job-approvals-page-html.js';
import { addToDashboardPage, JOB_DASHBOARD_STYLE } from '../../../src/jobs/job-dashboard-additions.js';

const waiting = (args: unknown, tool = 'bank.transfer'): WaitingJob => ({
  id: 'job-1',
  config: 'default',
  createdAt: 0,
  approval: {
    tool,
    args,
    argsHash: 'a'.repeat(64),
    callIndex: 3,
    reason: 'mcpServers.bank.tools.transfer.requireApproval is true',
    requestedAt: Date.UTC(2026, 0, 1),
    expiresAt: Date.UTC(2026, 0, 2),
  },
});

describe('visibleHtml', () => {
  it('escapes markup and shows invisible characters as marked escapes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    expect(visibleHtml('a\u202Eb<i>')).toBe(
      'a<mark class="stand-in" title="U+202E, shown as its escape">\\u202e</mark>b&lt;i&gt;',
    );
    // A line break is a stand-in, unless kept; a surrogate pair is one visible character, a lone one is not.
    expect(visibleHtml('1\n2')).toContain('\\u000a</mark>');
    expect(visibleHtml('1\n2', { keepNewlines: true })).toBe('1\n2');
    expect(visibleHtml('\u{1F600}')).toBe('\u{1F600}');
    expect(visibleHtml('\uD800')).toContain('\\ud800</mark>');
  });
});

describe('renderApprovalsPage', () => {
  it('shows every argument whole, past the limits of the approval prompt', () => {
    const args: Record<string, string> = { note: 'n'.repeat(5_000) };
    for (let i = 0; i < 30; i++) args[`field${i}`] = `value ${i}`;
    args.id = 'ALL-RECORDS';
    const html = renderApprovalsPage({ jobs: [waiting(args)], more: false });
    expect(html).toContain(escapeHtml(argumentsJson(args)));
    expect(html).toContain('&quot;id&quot;: &quot;ALL-RECORDS&quot;');
    expect(html).not.toContain('shortened');
    expect(html).toContain('1 call waits for a decision.');
    expect(html).toContain('<input type="hidden" name="call" value="3">');
    expect(html).toContain('<button type="submit" name="decision" value="approve"');
  });

  it('keeps hostile text inert: no markup of its own, invisible characters marked', () => {
    const hostile = '</pre></script><script>alert(1)</script><img src=x onerror=alert(1)>\u202Etxt.exe';
    const html = renderApprovalsPage({
      jobs: [{ ...waiting({ path: hostile }, `files.${hostile}`), labels: { [hostile]: hostile } }],
      more: false,
      notice: { kind: 'ok', text: hostile },
    });
    expect(html).not.toMatch(/<script|<img|<\/script>/i);
    expect(html).not.toContain('\u202E');
    expect(html).toContain('<mark class="stand-in" title="U+202E, shown as its escape">\\u202e</mark>');
    // Exactly the page's own elements: one pre, one form.
    expect(html.match(/<pre/g)).toHaveLength(1);
    expect(html.match(/<form/g)).toHaveLength(1);
  });

  it('says when more calls wait than it lists, and links the dashboard when told where', () => {
    const html = renderApprovalsPage({ jobs: [waiting({})], more: true, dashboardPath: '/admin/queues' });
    expect(html).toContain('1+ calls wait for a decision. Only 1 are listed');
    expect(html).toContain('<a href="/admin/queues">Jobs dashboard</a>');
    expect(renderApprovalsPage({ jobs: [], more: false })).toContain('No call waits for a decision.');
  });
});

describe('addToDashboardPage', () => {
  it('adds the style sheet at the end of the head and the approvals link at the end of the body', () => {
    const page = '<html><head><link href="main.css"></head><body><div id="root"></div></body></html>';
    const added = addToDashboardPage(page, { approvalsPath: '/admin/approvals' });
    expect(added).toBe(
      `<html><head><link href="main.css"><style id="codecall-dashboard-style">\n${JOB_DASHBOARD_STYLE}\n</style></head>` +
        '<body><div id="root"></div><a id="codecall-approvals-link" href="/admin/approvals">Approvals</a>\n</body></html>',
    );
    expect(addToDashboardPage('<p>no head</p>', { approvalsPath: '/x' })).toBe('<p>no head</p>');
  });

  it('keeps scripts readable and tabs in view, over bull-board rules that load later', () => {
    expect(JOB_DASHBOARD_STYLE).toContain(':root [class*="stringValue-"]{white-space:pre-wrap;');
    expect(JOB_DASHBOARD_STYLE).toContain(
      ':root [class*="statusTabs-"],:root [class*="tabActions-"]{flex-wrap:wrap;',
    );
  });
});
