import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentAssociationReport, type DocumentVariant, type TransferSet } from './transfer-documents.js';
import { defaultDataDir } from './command.js';
const dataDir = defaultDataDir(process.env);
const lines = <T,>(p: string): T[] => readFileSync(p, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T);
const set = (name: string, q?: string): TransferSet => ({ name, tools: lines(join(dataDir, name, 'tools.jsonl')), queries: q ? lines(join(dataDir, name, q)) : [] });
const labelled = [set('toolbench', 'dev.jsonl'), set('ultratool', 'train.jsonl')];
const unlabelled = [set('mcp-catalog'), set('seal-tools')];
const variants: DocumentVariant[] = [];
const tunings = [{ minCount: 3, perTerm: 3, mutual: false }, { minCount: 5, perTerm: 3, mutual: true }, { minCount: 5, perTerm: 2, mutual: false }, { minCount: 10, perTerm: 3, mutual: true }];
if (process.env.TUNE) for (const model of (process.env.MODELS ?? 'cooc').split(',') as DocumentVariant['model'][]) for (const tuning of tunings) {
  for (const gate of ['all', 'flat'] as const) for (const weight of [0.1, 0.2, 0.3]) variants.push({ model, tuning, use: 'late', gate, weight, maxWords: 0 });
  for (const weight of [0.1, 0.25]) variants.push({ model, tuning, use: 'documents', weight, maxWords: 0 });
  for (const weight of [0.1, 0.2]) variants.push({ model, tuning, use: 'query', gate: 'flat', weight });
}
const models = process.env.TUNE ? [] : (process.env.MODELS ?? 'cooc,name,cooc+queries').split(',') as DocumentVariant['model'][];
for (const model of models) {
  if (process.env.QUERY) for (const gate of ['all', 'flat', 'gaps'] as const) for (const weight of [0.1, 0.2, 0.3]) variants.push({ model, use: 'query', gate, weight });
  if (process.env.LATE) { for (const gate of ['all', 'flat'] as const) for (const maxWords of [10, 0]) for (const weight of [0.05, 0.1, 0.2, 0.3]) variants.push({ model, use: 'late', gate, weight, maxWords }); continue; }
  for (const maxTerms of [6, 8, 12, 16, Infinity]) for (const maxWords of [10, 0]) for (const weight of [0.1, 0.25]) variants.push({ model, use: 'documents', weight, maxTerms, maxWords });
}
process.stdout.write(documentAssociationReport(labelled, unlabelled, variants));
