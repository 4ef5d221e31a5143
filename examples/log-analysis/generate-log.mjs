#!/usr/bin/env node
// Writes a deterministic multi-MB application log for the log-analysis example, rotated into
// app-1.log … app-4.log (≈ 2 MB each, so each file fits in one MCP message), and prints the
// directory it wrote to. Usage: node generate-log.mjs [dir] [lines per file]
// (default: a fresh temp dir, 25000 lines per file ≈ 8.6 MB in all).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const dir = process.argv[2] ? resolve(process.argv[2]) : mkdtempSync(join(tmpdir(), 'codecall-logs-'));
const linesPerFile = Number(process.argv[3] ?? 25_000);
const FILES = 4;
mkdirSync(dir, { recursive: true });

// mulberry32: a small seeded PRNG, so every run writes the same file.
let seed = 20_260_314;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}
const pick = (items) => items[Math.floor(random() * items.length)];

// Endpoints with their own latency and failure profiles.
const ENDPOINTS = [
  { method: 'GET', path: '/api/orders', latency: 80, fail: 0.01 },
  { method: 'POST', path: '/api/checkout', latency: 250, fail: 0.06 },
  { method: 'GET', path: '/api/search', latency: 400, fail: 0.02 },
  { method: 'GET', path: '/api/products', latency: 60, fail: 0.005 },
  { method: 'POST', path: '/api/login', latency: 120, fail: 0.03 },
  { method: 'GET', path: '/api/recommendations', latency: 300, fail: 0.04 },
  { method: 'PUT', path: '/api/cart', latency: 90, fail: 0.015 },
];

let time = Date.UTC(2026, 2, 14, 0, 0, 0);
for (let file = 1; file <= FILES; file++) {
  const out = [];
  for (let i = 0; i < linesPerFile; i++) {
    time += Math.floor(random() * 1_000);
    const endpoint = pick(ENDPOINTS);
    const roll = random();
    const status =
      roll < endpoint.fail
        ? pick([500, 502, 503, 504])
        : roll < endpoint.fail + 0.05
          ? pick([400, 401, 404, 429])
          : 200;
    // Long-tailed latency: most requests near the endpoint's typical time, a few far slower.
    const ms = Math.round(endpoint.latency * (0.5 + random()) * (random() < 0.05 ? 4 + random() * 6 : 1));
    const level = status >= 500 ? 'ERROR' : status >= 400 || ms > endpoint.latency * 3 ? 'WARN' : 'INFO';
    const user = `u${String(Math.floor(random() * 5_000)).padStart(4, '0')}`;
    const request = [random(), random()]
      .map((r) =>
        Math.floor(r * 2 ** 24)
          .toString(16)
          .padStart(6, '0'),
      )
      .join('');
    out.push(
      `${new Date(time).toISOString()} ${level.padEnd(5)} ${endpoint.method} ${endpoint.path} ${status} ${ms}ms user=${user} req=${request}`,
    );
  }
  writeFileSync(join(dir, `app-${file}.log`), `${out.join('\n')}\n`);
}
process.stdout.write(`${dir}\n`);
