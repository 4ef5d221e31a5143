/**
 * @module
 * A self-made catalog for the tests of RM3's per-query decision: a dozen export tools that share
 * two words, and two tools that each answer one intent of a multi-step request, plus a sibling.
 */
import type { SearchableTool } from '../../../src/search/tool-search.js';

/** A dozen tools that share "export" and "spreadsheet", each with words of its own. */
const EXPORTS: SearchableTool[] = [
  'invoices',
  'contracts',
  'payroll',
  'tickets',
  'leads',
  'orders',
  'shipments',
  'assets',
  'vendors',
  'budgets',
  'audits',
  'refunds',
].map((topic, i) => ({
  name: `${topic}.export_${topic}`,
  description: `Export ${topic} as a spreadsheet ${['with totals', 'with owners', 'with dates'][i % 3]}.`,
}));

export const EXPANSION_TOOLS: SearchableTool[] = [
  {
    name: 'currency.convert_currency',
    description: 'Convert an amount from one currency to another at the current rate.',
  },
  { name: 'mail.send_email', description: 'Send an email message to a recipient.' },
  { name: 'currency.list_rates', description: 'Exchange rates of a currency as a spreadsheet.' },
  ...EXPORTS,
];

/** Every export tool matches only "export" and "spreadsheet", equally: a flat first pass. */
export const FLAT_QUERY = 'export a spreadsheet';
/**
 * Two intents, each named by one tool, above a dozen weak matches: a first pass with a head.
 * RM3 lifts `currency.list_rates`, a sibling of the converter, from among the weak matches.
 */
export const HEAD_QUERY = 'convert 20 dollars to euros and email me the spreadsheet';
