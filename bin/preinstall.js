// package.json "preinstall": refuses to install codecall on a Node.js it cannot run on, with the
// message the CLI gives (bin/check-node.js). As a dependency (`npm install codecall`, a tarball,
// `npm install -g`) npm runs it once the packages are unpacked and before any of them builds, so
// the refusal comes before isolated-vm compiles. A checkout's own `npm ci` runs the root's
// preinstall only after everything is installed; package.json "devEngines" refuses there first
// (npm 10.9 or newer). Keep this file free of newer syntax and APIs: it runs on old Node versions.
//
// CODECALL_PREINSTALL_NODE_VERSION (for tests of this script only) stands in for the running
// Node's version.
import { exitUnlessSupportedNode } from './check-node.js';

exitUnlessSupportedNode('codecall', process.env.CODECALL_PREINSTALL_NODE_VERSION || process.version);
