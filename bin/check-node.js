// The Node.js versions codecall runs on, checked before anything that would fail on an older
// Node is loaded (bin/codecall.js, the test setup). Keep this file free of newer syntax and APIs:
// it must run, and explain, on old Node versions. bin/preinstall.js runs it at install time.
//
// Why this floor: node:sqlite (the usage history) works without a flag from 22.13 and 23.4;
// running the .ts examples with plain `node` (type stripping on by default) needs 22.18 or 23.6.
// package.json "engines" says the same (test/unit/node-floor.test.ts keeps them in step).

/** The supported range, as package.json "engines.node" spells it. */
export const NODE_ENGINES = '^22.18.0 || >=23.6.0';

/** True when `version` ("22.18.0", "v24.1.0") is in {@link NODE_ENGINES}. */
export function supportsNode(version) {
  const [major, minor] = String(version).replace(/^v/, '').split('.').map(Number);
  if (major === 22) return minor >= 18;
  if (major === 23) return minor >= 6;
  return major > 23;
}

/** The message for an unsupported Node, naming the version, the range and how to get one. */
export function unsupportedNodeMessage(version, what) {
  return (
    `${what} needs Node.js ${NODE_ENGINES} (22.18 or newer); this is ${version}.\n` +
    'Install a current Node (https://nodejs.org), or without root: ' +
    '`npm install --prefix ~/.node24 node@24` and put ~/.node24/node_modules/.bin first on PATH.\n'
  );
}

/** Exits with status 2 and the message when `version` (by default this Node's) is too old. */
export function exitUnlessSupportedNode(what, version = process.version) {
  if (supportsNode(version)) return;
  process.stderr.write(unsupportedNodeMessage(version, what));
  process.exit(2);
}
