/**
 * Helpers of the end-to-end tests that drive a real headless Chromium (Debian's `chromium`, through
 * puppeteer-core, no browser download): finding it, launching it, and the layout facts the pages
 * must hold at common widths, measured in the page.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { Browser } from 'puppeteer-core';

/** Widths the pages must read well at: a laptop, a small laptop or tablet, a phone. */
export const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'tablet', width: 1024, height: 768 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/**
 * Folder the screenshots go to: `$CODECALL_KEEP_SCREENSHOTS` when set (a folder of your own, to
 * look at them after the run), else `scratch` (the test's temp folder, removed after it).
 */
export function screenshotFolder(scratch: string): string {
  return process.env.CODECALL_KEEP_SCREENSHOTS || scratch;
}

/** Debian's chromium (CI installs it: .ci/run), or $CODECALL_CHROMIUM. */
export function findChromium(): string | undefined {
  const candidates = [process.env.CODECALL_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  for (const path of candidates) if (path && existsSync(path)) return path;
  const which = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], {
    encoding: 'utf8',
  });
  return which.status === 0 && which.stdout.trim() !== '' ? which.stdout.trim() : undefined;
}

/** A headless Chromium; close it in a `finally`. */
export async function launchChromium(executablePath: string): Promise<Browser> {
  const { default: puppeteer } = await import('puppeteer-core');
  return puppeteer.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    // A loaded 2-core machine can be slow to start a browser.
    timeout: 120_000,
    protocolTimeout: 120_000,
  });
}

/**
 * The browser's globals as page functions use them. A page function runs in the browser, where
 * it cannot reach this module: each one starts with `const { document } = globalThis as unknown
 * as Dom;` (the tests are typed without the DOM lib).
 */
export interface Dom {
  document: {
    body: DomElement & { innerText: string };
    documentElement: DomElement;
    querySelector(selector: string): DomElement | null;
    querySelectorAll(selector: string): ArrayLike<DomElement>;
  };
  innerWidth: number;
  getComputedStyle(element: DomElement): { whiteSpace: string; fontFamily: string; overflowX: string };
}
/** An element, as page functions use it. */
export interface DomElement {
  textContent: string | null;
  className: string;
  scrollWidth: number;
  clientWidth: number;
  parentElement: DomElement | null;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { left: number; right: number; top: number; bottom: number; width: number };
  closest(selector: string): DomElement | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}

/** The page's body text. */
export const bodyText = (): string => (globalThis as unknown as Dom).document.body.innerText;
/** True once the page's body text contains `text` (for `page.waitForFunction`). */
export const bodyIncludes = (text: string): boolean =>
  (globalThis as unknown as Dom).document.body.innerText.includes(text);
/** How far the page scrolls sideways, and the viewport's width. */
export const pageWidths = (): { scrollWidth: number; viewport: number } => {
  const { document, innerWidth } = globalThis as unknown as Dom;
  return { scrollWidth: document.documentElement.scrollWidth, viewport: innerWidth };
};

/** Checks a PNG screenshot: the viewport's width, and big enough not to be a blank page. */
export function expectScreenshot(file: string, width: number, minBytes: number): void {
  const png = readFileSync(file);
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  // IHDR: the width.
  expect(png.readUInt32BE(16)).toBe(width);
  expect(png.length).toBeGreaterThan(minBytes);
}
