/**
 * @module
 * The young generation of sandbox isolates. isolated-vm sizes it from the isolate's memory limit
 * (4 MB at the default 256 MB), so a script that parses a large tool result, whose objects all
 * survive, spends much of the parse copying them between semi-spaces and promoting them. V8's
 * `--max-semi-space-size`, set after isolated-vm has initialised (it resets that flag when it
 * loads), sets it for the isolates created afterwards in this process, and `--min-semi-space-size`
 * where they start: a parse of a large result skips the scavenges of the first doublings. The
 * semi-spaces are reserved, not touched, until objects are made in them (an idle sandbox stays
 * small in resident memory), they grow only while objects survive, and the limit isolated-vm
 * enforces (used heap, young generation included, at most `memoryMb` after each collection) is
 * unchanged.
 */
import 'isolated-vm';
import { setFlagsFromString } from 'node:v8';
import { DEFAULT_SANDBOX_MIN_SEMI_SPACE_MB, DEFAULT_SANDBOX_SEMI_SPACE_MB } from '../config/defaults.js';

setFlagsFromString(`--max-semi-space-size=${DEFAULT_SANDBOX_SEMI_SPACE_MB}`);
setFlagsFromString(`--min-semi-space-size=${DEFAULT_SANDBOX_MIN_SEMI_SPACE_MB}`);
