// Drives memory-service through the official TypeScript MCP SDK client with calls given as JSON,
// for the compatibility profiles (tests/e2e/test_profiles_typescript.py). Like call_every_tool.mjs
// it relies on the client's own checks: `callTool` validates `structuredContent` against the tool's
// `outputSchema` (error results included) and throws when they disagree, and `listTools` parses
// every tool definition (names included).
//
// Usage: node call_cases.mjs CASES_FILE -- SERVER_COMMAND [SERVER_ARGS...]
//
//   CASES_FILE  a JSON array of {tool, args, save?}: `save` maps a state key to a dotted path in the
//               result's structured content (else its parsed text), and any string argument
//               "$key" (at any depth) is replaced by that saved value.
//
// Output, one JSON line each on stdout: first {tools: [names listed]}, then per case
//   {tool, index, threw, thrown, isError, hasStructuredContent, structured, text, notRun?}
// Exit status: 0 when every case was attempted, 2 for a usage error.

import fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const TIMEOUT_MS = 180_000;

function dig(value, dotted) {
    return dotted.split('.').reduce((v, key) => (v === undefined || v === null ? undefined : v[key]), value);
}

function substitute(value, state) {
    if (typeof value === 'string' && value.startsWith('$')) {
        const key = value.slice(1);
        if (state[key] === undefined) {
            throw new Error(`no ${key}: the call that provides it failed`);
        }
        return state[key];
    }
    if (Array.isArray(value)) {
        return value.map((v) => substitute(v, state));
    }
    if (value && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, state)]));
    }
    return value;
}

async function run(client, kase, index, state) {
    const line = { tool: kase.tool, index };
    let args;
    try {
        args = substitute(kase.args, state);
    } catch (e) {
        return { ...line, notRun: e.message };
    }
    let result;
    try {
        result = await client.callTool({ name: kase.tool, arguments: args }, undefined, { timeout: TIMEOUT_MS });
    } catch (e) {
        return { ...line, threw: true, thrown: `${e?.name ?? 'Error'}: ${e?.message ?? String(e)}` };
    }
    const text = result.content?.[0]?.text ?? null;
    let parsed = null;
    try {
        parsed = text === null ? null : JSON.parse(text);
    } catch {
        parsed = null;
    }
    const source = result.structuredContent ?? parsed;
    for (const [key, dotted] of Object.entries(kase.save ?? {})) {
        const value = dig(source, dotted);
        if (value !== undefined) {
            state[key] = value;
        }
    }
    return {
        ...line,
        threw: false,
        thrown: null,
        isError: result.isError === true,
        hasStructuredContent: result.structuredContent !== undefined,
        structured: result.structuredContent ?? null,
        text: parsed ?? text,
    };
}

async function main(argv) {
    const sep = argv.indexOf('--');
    if (sep !== 1 || argv.length < 3) {
        console.error('usage: node call_cases.mjs CASES_FILE -- SERVER_COMMAND [SERVER_ARGS...]');
        return 2;
    }
    const cases = JSON.parse(fs.readFileSync(argv[0], 'utf8'));
    const [command, ...args] = argv.slice(2);
    const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'inherit' });
    const client = new Client({ name: 'memory-service-ts-profiles', version: '1.0.0' });
    await client.connect(transport);
    try {
        const { tools } = await client.listTools();
        console.log(JSON.stringify({ tools: tools.map((t) => t.name) }));
        const state = {};
        for (const [index, kase] of cases.entries()) {
            console.log(JSON.stringify(await run(client, kase, index, state)));
        }
        return 0;
    } finally {
        await client.close();
    }
}

process.exitCode = await main(process.argv.slice(2));
