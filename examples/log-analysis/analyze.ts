// Log analysis over a multi-MB file through @modelcontextprotocol/server-filesystem: the whole
// log flows into the sandbox, and only this summary comes back to the model.
//   LOG_DIR=$(node examples/log-analysis/generate-log.mjs) \
//     npx codecall exec examples/log-analysis/analyze.ts --config examples/log-analysis/codecall.json

// The tools this script uses, as `search_tools` / `codecall tools --declarations` render them
// (declared here so tsc checks the script; codecall strips the declaration before it runs).
declare const tools: {
  fs: {
    list_allowed_directories(args?: Record<string, never>): Promise<{ content: string }>;
    list_directory(args: { path: string }): Promise<{ content: string }>;
    read_text_file(args: { path: string; tail?: number; head?: number }): Promise<{ content: string }>;
  };
};

const { content: allowed } = await tools.fs.list_allowed_directories({});
const dir = allowed.split('\n')[1]!.trim();
const { content: listing } = await tools.fs.list_directory({ path: dir });
const files = [...listing.matchAll(/^\[FILE\] (app-\d+\.log)$/gm)].map((m) => m[1]!).sort();
// Independent reads run concurrently; the text stays in the sandbox.
const texts = await Promise.all(
  files.map(async (file) => (await tools.fs.read_text_file({ path: `${dir}/${file}` })).content),
);
const log = texts.join('');

interface Entry {
  level: string;
  endpoint: string;
  status: number;
  ms: number;
}
const entries: Entry[] = [];
for (const line of log.split('\n')) {
  const match = /^\S+ (\w+)\s+(\w+) (\S+) (\d{3}) (\d+)ms /.exec(line);
  if (match)
    entries.push({
      level: match[1]!,
      endpoint: `${match[2]} ${match[3]}`,
      status: Number(match[4]),
      ms: Number(match[5]),
    });
}

const count = (items: string[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return counts;
};
const p95 = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length * 0.95) - 1]!;
};

const levels = count(entries.map((e) => e.level));
const serverErrors = entries.filter((e) => e.status >= 500);
const byEndpoint = count(serverErrors.map((e) => e.endpoint));
const latencies = new Map<string, number[]>();
for (const e of entries) {
  const list = latencies.get(e.endpoint) ?? [];
  list.push(e.ms);
  latencies.set(e.endpoint, list);
}
const slowest = [...latencies]
  .map(([endpoint, ms]) => ({ endpoint, p95: p95(ms) }))
  .sort((a, b) => b.p95 - a.p95);

console.log(
  `Scanned ${entries.length} requests (${(log.length / 1_048_576).toFixed(1)} MB in ${files.length} log files)`,
);
console.log(
  `Levels: ERROR ${levels.get('ERROR') ?? 0}, WARN ${levels.get('WARN') ?? 0}, INFO ${levels.get('INFO') ?? 0}`,
);
console.log(
  `Server errors (5xx): ${serverErrors.length} (${((100 * serverErrors.length) / entries.length).toFixed(2)}%)`,
);
console.log('Most 5xx by endpoint:');
for (const [endpoint, n] of [...byEndpoint].sort((a, b) => b[1] - a[1]).slice(0, 3))
  console.log(`  ${endpoint}: ${n}`);
console.log(`Slowest endpoint by p95 latency: ${slowest[0]!.endpoint} (${slowest[0]!.p95} ms)`);
