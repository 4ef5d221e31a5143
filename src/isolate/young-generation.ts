/**
 * @module
 * The young generation of sandbox isolates. isolated-vm sizes it from the isolate's memory limit
 * (4 MB at the default 256 MB), so a script that parses a large tool result, whose objects all
 * survive, spends much of the parse copying them between semi-spaces and promoting them. V8's
 * `--max-semi-space-size`, set after isolated-vm has initialised (it resets that flag when it
 * loads), sets it for the isolates created afterwards in this process. The semi-spaces grow only
 * while objects survive (an idle sandbox keeps its small start size), and the limit isolated-vm
 * enforces (used heap, young generation included, at most `memoryMb` after each collection) is
 * unchanged.
 */
import 'isolated-vm';
import { setFlagsFromString } from 'node:v8';
import { DEFAULT_SANDBOX_SEMI_SPACE_MB } from '../config/defaults.js';

setFlagsFromString(`--max-semi-space-size=${DEFAULT_SANDBOX_SEMI_SPACE_MB}`);
