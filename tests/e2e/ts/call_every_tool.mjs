// Drives memory-service through the official TypeScript MCP SDK client, the one Claude Code and the
// MCP Inspector use. Its `callTool` checks every `structuredContent` against the tool's
// `outputSchema` (error results included) and throws when they disagree, a check the Python SDK
// client does not make. tests/e2e/test_typescript_client.py runs this script and judges its output.
//
// Usage: node call_every_tool.mjs SOURCE_FILE -- SERVER_COMMAND [SERVER_ARGS...]
//
//   SOURCE_FILE  a small Python file inside the server's project root, relative to that root; it is
//                indexed with index_file, and its directory with index_directory.
//
// The server gets this process's environment and working directory, so the caller sets
// MEMORY_DATA_DIR, MEMORY_PROJECT_ROOT and the model path.
//
// Output: one JSON line per call on stdout:
//   {tool, case, expect: "ok"|"error", expectCode, isError, threw, thrown, hasStructuredContent,
//    code, suggestion, textError, progress}
// `threw` is true when the client rejected the call (the `thrown` message says why); `code` and
// `suggestion` come from the error envelope in the text content (`textError` when that text is not
// the envelope's JSON); `progress` counts the progress notifications received. A case whose arguments need an
// earlier result that never came is printed with `notRun`.
// Exit status: 0 when every call was made (whatever its result), 2 for a usage error, 1 when the
// server lists a tool that has no case here, or a case names a tool the server does not list.

import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const TIMEOUT_MS = 180_000;

const FIND_ME = `def add_sales_tax(amount, rate):
    """Add sales tax to a net amount."""
    return round(amount * (1 + rate), 2)
`;

/** The value an earlier call stored, or an error naming what is missing. */
function need(state, key) {
    if (state[key] === undefined) {
        throw new Error(`no ${key}: the call that provides it failed`);
    }
    return state[key];
}

/**
 * The calls, in order: valid ones that build on each other, each tool's bad inputs next to them,
 * memory_delete last. `save` keeps what later calls need from a successful result.
 */
function buildCases(sourceFile) {
    const sourceDir = path.posix.dirname(sourceFile);
    const ok = (tool, name, args, save) => ({ tool, name, expect: 'ok', args, save });
    const bad = (tool, name, expectCode, args) => ({ tool, name, expect: 'error', expectCode, args });
    const id = (key) => (state) => need(state, key);
    return [
        ok('memory_add', 'design', () => ({
            type: 'design',
            content: 'Orders over 1000 EUR go through an approval workflow before payment capture.',
            metadata: { tags: ['orders', 'approval'] },
        }), (s, r) => { s.design = r.memory_id; }),
        ok('memory_add', 'fact', () => ({
            type: 'fact',
            content: 'The search cache lives in Redis with a five minute TTL.',
        }), (s, r) => { s.fact = r.memory_id; }),
        ok('memory_add', 'problem', () => ({
            type: 'problem',
            content: 'Large orders were captured before anyone approved them.',
        }), (s, r) => { s.problem = r.memory_id; }),
        ok('memory_add', 'requirement', () => ({
            type: 'requirements',
            content: 'Orders over 1000 EUR need an approval before capture.',
            metadata: { requirement_id: 'REQ-ORD-001', title: 'Order approval' },
        })),
        ok('memory_add', 'component', () => ({
            type: 'component',
            content: 'The approvals workflow; implements REQ-ORD-001.',
            metadata: { component_id: 'approvals', name: 'Approvals' },
        })),
        bad('memory_add', 'missing content', 'VAL_MISSING_FIELD', () => ({ type: 'design' })),
        bad('memory_add', 'unknown relationship target', 'NF_RELATIONSHIP_TARGET', () => ({
            type: 'design',
            content: 'Links to nothing.',
            relationships: [{ type: 'IMPLEMENTS', target_id: UNKNOWN_ID }],
        })),

        ok('memory_get', 'with relationships', (s) => ({
            memory_id: need(s, 'design'),
            include_relationships: true,
        })),
        bad('memory_get', 'not a uuid', 'VAL_INVALID_UUID', () => ({ memory_id: 'not-a-uuid' })),
        bad('memory_get', 'unknown id', 'NF_MEMORY', () => ({ memory_id: UNKNOWN_ID })),

        ok('memory_update', 'metadata', (s) => ({
            memory_id: need(s, 'design'),
            metadata: { status: 'accepted' },
        })),
        bad('memory_update', 'nothing to change', 'VAL_INVALID_VALUE', (s) => ({
            memory_id: need(s, 'design'),
        })),

        ok('memory_bulk_add', 'two memories', () => ({
            memories: [
                { type: 'user_preference', content: 'Use pytest, never unittest.' },
                { type: 'session', content: 'Moved the approval workflow into its own module.' },
            ],
        })),
        bad('memory_bulk_add', 'too many items', 'VAL_TOO_MANY_ITEMS', () => ({
            memories: Array.from({ length: 101 }, (_, i) => ({ type: 'session', content: `item ${i}` })),
        })),

        ok('memory_search', 'query', () => ({ query: 'who approves large orders?', limit: 5 })),
        bad('memory_search', 'empty query', 'VAL_EMPTY', () => ({ query: '' })),
        bad('memory_search', 'limit out of range', 'VAL_OUT_OF_RANGE', () => ({ query: 'orders', limit: 0 })),

        ok('memory_explain', 'query and id', (s) => ({
            query: 'approval of large orders',
            ids: [need(s, 'design')],
        })),
        bad('memory_explain', 'limit out of range', 'VAL_OUT_OF_RANGE', () => ({ query: 'orders', limit: 0 })),

        ok('memory_feedback', 'vote', (s) => ({
            memory_id: need(s, 'design'),
            problem_id: need(s, 'problem'),
            vote: 1,
            rationale: 'The approval workflow fixed it.',
        })),
        bad('memory_feedback', 'problem is not a problem', 'VAL_PROBLEM_LINK_INVALID', (s) => ({
            memory_id: need(s, 'design'),
            problem_id: need(s, 'design'),
            vote: 1,
        })),
        bad('memory_feedback', 'vote out of range', 'VAL_OUT_OF_RANGE', (s) => ({
            memory_id: need(s, 'design'),
            problem_id: need(s, 'problem'),
            vote: 2,
        })),

        ok('memory_supersede', 'new fact and change', (s) => ({
            old_fact_id: need(s, 'fact'),
            new_fact: { content: 'The search cache lives in the local SQLite file.' },
            change: { content: 'PR-42 dropped Redis.' },
        })),
        bad('memory_supersede', 'old fact is not a fact', 'VAL_SUPERSEDE_KIND', (s) => ({
            old_fact_id: need(s, 'design'),
            new_fact: { content: 'Replacement.' },
            change: { content: 'Some change.' },
        })),
        bad('memory_supersede', 'no replacement', 'VAL_INVALID_VALUE', (s) => ({
            old_fact_id: need(s, 'fact'),
        })),

        ok('index_file', 'python file', () => ({ file_path: sourceFile })),
        bad('index_file', 'missing file', 'NF_PATH', () => ({ file_path: `${sourceDir}/no_such_file.py` })),
        bad('index_file', 'a directory', 'VAL_NOT_A_FILE', () => ({ file_path: sourceDir })),

        ok('index_directory', 'wait', () => ({ directory_path: sourceDir, wait: true }),
            (s, r) => { s.job = r.job_id; }),
        bad('index_directory', 'a file', 'VAL_NOT_A_DIRECTORY', () => ({ directory_path: sourceFile })),

        ok('index_status', 'job', (s) => ({ job_id: need(s, 'job') })),
        ok('index_status', 'totals', () => ({})),
        bad('index_status', 'not a uuid', 'VAL_INVALID_UUID', () => ({ job_id: 'job-1' })),
        bad('index_status', 'unknown job', 'NF_JOB', () => ({ job_id: UNKNOWN_ID })),

        ok('reindex', 'changed', () => ({ scope: 'changed', wait: true })),
        bad('reindex', 'bad scope', 'VAL_INVALID_ENUM', () => ({ scope: 'partial' })),

        ok('code_search', 'description', () => ({ query: 'add sales tax to an amount', limit: 5 })),
        bad('code_search', 'unsupported language', 'VAL_UNSUPPORTED_LANGUAGE', () => ({
            query: 'tax',
            language: 'cobol',
        })),

        ok('find_duplicates', 'snippet', () => ({ code: FIND_ME, language: 'python' })),
        bad('find_duplicates', 'threshold out of range', 'VAL_OUT_OF_RANGE', () => ({
            code: FIND_ME,
            threshold: 0.5,
        })),

        ok('graph_query', 'memories by type', () => ({
            cypher: 'MATCH (m:Memory) WHERE m.type = $type RETURN m.id AS id, m LIMIT 5',
            params: { type: 'design' },
        })),
        bad('graph_query', 'write clause', 'VAL_WRITE_NOT_ALLOWED', () => ({
            cypher: "MATCH (m:Memory) SET m.name = 'changed'",
        })),

        ok('get_related', 'design, two hops', (s) => ({ entity_id: need(s, 'design'), depth: 2 })),
        bad('get_related', 'unknown entity', 'NF_ENTITY', () => ({ entity_id: 'no_such_entity' })),

        ok('trace_requirements', 'by requirement id', () => ({ requirement_id: 'REQ-ORD-001' })),
        bad('trace_requirements', 'unknown requirement', 'NF_REQUIREMENT', () => ({
            requirement_id: 'REQ-NOPE-999',
        })),

        ok('get_design_context', 'with code', () => ({ component_id: 'approvals', include_code: true })),
        bad('get_design_context', 'unknown component', 'NF_COMPONENT', () => ({
            component_id: 'no_such_component',
        })),

        ok('check_consistency', 'component', () => ({ component_id: 'approvals' })),
        bad('check_consistency', 'unknown component', 'NF_COMPONENT', () => ({
            component_id: 'no_such_component',
        })),

        ok('validate_fix', 'fix for a requirement', () => ({
            fix_description: 'Check the approval before capture (REQ-ORD-001).',
            component_id: 'approvals',
        })),
        bad('validate_fix', 'missing fix description', 'VAL_MISSING_FIELD', () => ({
            component_id: 'approvals',
        })),

        ok('export_memory', 'default path', () => ({ include_embeddings: true }),
            (s, r) => { s.exportFile = r.file_path; }),
        bad('export_memory', 'unknown memory type', 'VAL_INVALID_TYPE', () => ({ memory_types: ['nonsense'] })),
        ok('import_memory', 'same file, merge', (s) => ({
            file_path: need(s, 'exportFile'),
            conflict_resolution: 'merge',
        })),
        bad('import_memory', 'not an export file', 'VAL_IMPORT_FILE', () => ({ file_path: sourceFile })),

        ok('memory_delete', 'design', (s) => ({ memory_id: need(s, 'design') })),
        bad('memory_delete', 'already deleted', 'NF_MEMORY', (s) => ({ memory_id: need(s, 'design') })),
        bad('memory_delete', 'not a uuid', 'VAL_INVALID_UUID', () => ({ memory_id: 'nope' })),

        ok('memory_statistics', 'no arguments', () => ({})),
        bad('memory_statistics', 'unknown argument', 'VAL_UNKNOWN_FIELD', () => ({ verbose: true })),

        ok('memory_audit', 'a deleted memory', (s) => ({ memory_id: need(s, 'design'), limit: 5 })),
        bad('memory_audit', 'bad cursor', 'VAL_INVALID_CURSOR', () => ({ cursor: 'page-two' })),

        ok('normalize_memory', 'dry run, wait', () => ({ options: { dry_run: true }, wait: true }),
            (s, r) => { s.normalizeJob = r.job_id; }),
        bad('normalize_memory', 'unknown option', 'VAL_UNKNOWN_FIELD', () => ({
            options: { skip_everything: true },
        })),
        ok('normalize_status', 'dry run job', (s) => ({ job_id: need(s, 'normalizeJob') })),
        bad('normalize_status', 'an index job', 'NF_JOB', (s) => ({ job_id: need(s, 'job') })),
        bad('normalize_status', 'not a uuid', 'VAL_INVALID_UUID', () => ({ job_id: 'job-1' })),
    ];
}

/**
 * Calls that are wrong at the protocol level rather than per tool. `callTool` sends `arguments`
 * as given (the SDK checks results, not the request), so it also carries the non-object ones.
 */
const PROTOCOL_CASES = [
    { tool: 'memory_search', name: 'arguments is an array', expect: 'error',
        expectCode: 'VAL_INVALID_ARGUMENTS', args: () => ['who approves large orders?'] },
    { tool: 'memory_search', name: 'arguments is a string', expect: 'error',
        expectCode: 'VAL_INVALID_ARGUMENTS', args: () => 'who approves large orders?' },
    { tool: 'no_such_tool', name: 'unknown tool', expect: 'error', expectCode: 'NF_TOOL',
        args: () => ({ query: 'x' }) },
];

/** The error envelope's code and suggestion, from the first text content. */
function envelope(result) {
    const text = result.content?.find((c) => c.type === 'text')?.text;
    if (text === undefined) return { code: null, suggestion: null, textError: 'no text content' };
    try {
        const data = JSON.parse(text);
        return { code: data?.error?.code ?? null, suggestion: data?.error?.suggestion ?? null };
    } catch {
        return { code: null, suggestion: null, textError: `text is not JSON: ${text.slice(0, 200)}` };
    }
}

async function run(client, kase, state) {
    const line = {
        tool: kase.tool,
        case: kase.name,
        expect: kase.expect,
        expectCode: kase.expectCode ?? null,
    };
    let args;
    try {
        args = kase.args(state);
    } catch (e) {
        return { ...line, notRun: e.message };
    }
    // onprogress makes the request carry a progressToken, as the Inspector's calls do.
    let progress = 0;
    const options = { timeout: TIMEOUT_MS, onprogress: () => { progress += 1; } };
    let result;
    try {
        result = await client.callTool({ name: kase.tool, arguments: args }, undefined, options);
    } catch (e) {
        const thrown = `${e?.name ?? 'Error'}: ${e?.message ?? String(e)}`;
        return { ...line, threw: true, thrown, isError: null, hasStructuredContent: null, progress };
    }
    Object.assign(line, {
        threw: false,
        thrown: null,
        isError: result.isError === true,
        hasStructuredContent: result.structuredContent !== undefined,
        progress,
    });
    if (line.isError) {
        Object.assign(line, envelope(result));
    } else if (kase.save && result.structuredContent) {
        kase.save(state, result.structuredContent);
    }
    return line;
}

async function listAllTools(client) {
    const tools = [];
    let cursor;
    do {
        const page = await client.listTools(cursor ? { cursor } : undefined);
        tools.push(...page.tools);
        cursor = page.nextCursor;
    } while (cursor);
    return tools;
}

async function main(argv) {
    const sep = argv.indexOf('--');
    if (sep !== 1 || argv.length < 3) {
        console.error('usage: node call_every_tool.mjs SOURCE_FILE -- SERVER_COMMAND [SERVER_ARGS...]');
        return 2;
    }
    const sourceFile = argv[0];
    const [command, ...args] = argv.slice(2);
    // The default environment of StdioClientTransport is a short allow-list (HOME, PATH...):
    // pass everything, since the server's settings come from MEMORY_* variables.
    const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'inherit' });
    const client = new Client({ name: 'memory-service-ts-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
        const listed = (await listAllTools(client)).map((t) => t.name);
        console.log(JSON.stringify({ tools: listed }));
        const cases = buildCases(sourceFile);
        const covered = new Set(cases.map((c) => c.tool));
        const uncovered = listed.filter((name) => !covered.has(name));
        const unlisted = [...covered].filter((name) => !listed.includes(name));
        if (uncovered.length || unlisted.length) {
            if (uncovered.length) {
                console.error(`tools without a case in call_every_tool.mjs: ${uncovered.join(', ')}; add a valid `
                    + 'call and a bad input for each');
            }
            if (unlisted.length) {
                console.error(`call_every_tool.mjs has cases for tools the server does not list: ${unlisted.join(', ')}`);
            }
            return 1;
        }
        const state = {};
        for (const kase of [...cases, ...PROTOCOL_CASES]) {
            console.log(JSON.stringify(await run(client, kase, state)));
        }
        return 0;
    } finally {
        await client.close();
    }
}

process.exitCode = await main(process.argv.slice(2));
