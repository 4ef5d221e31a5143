/** The supported Node.js range, as package.json "engines.node" spells it. */
export declare const NODE_ENGINES: string;
/** True when `version` ("22.18.0", "v24.1.0") is in {@link NODE_ENGINES}. */
export declare function supportsNode(version: string): boolean;
/** The message for an unsupported Node, naming the version, the range and how to get one. */
export declare function unsupportedNodeMessage(version: string, what: string): string;
/** Exits with status 2 and the message when `version` (by default this Node's) is too old. */
export declare function exitUnlessSupportedNode(what: string, version?: string): void;
