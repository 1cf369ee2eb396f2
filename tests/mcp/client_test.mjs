// The official MCP TypeScript SDK's client drives `sandboxctl mcp` over stdio through its tools,
// as an agent host would. Run by tests/integration/mcp_test.cpp as an unprivileged user in a
// fresh project (a.txt, sub/), with the test bus in the environment:
//   node client_test.mjs SANDBOXCTL PROJECT
// Exits 0 with "mcp client test: all passed" when every check held; otherwise throws, naming it.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const [sandboxctl, project] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: sandboxctl,
  args: ["mcp"],
  cwd: project,
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "sandboxd-test", version: "1.0.0" });
await client.connect(transport);

const text = (result) => result.content.map((part) => part.text).join("");
const call = (name, args = {}) => client.callTool({ name, arguments: args });
async function refusedByProtocol(name, args, pattern) {
  await assert.rejects(call(name, args), (error) => {
    assert.ok(error instanceof McpError, `${name}: not an McpError: ${error}`);
    assert.equal(error.code, -32602, `${name}: code ${error.code}`);
    assert.match(error.message, pattern);
    return true;
  });
}

// The server and its tools, with the read-only hint on those that only read.
assert.equal(client.getServerVersion().name, "sandboxd");
const { tools } = await client.listTools();
assert.deepEqual(tools.map((tool) => tool.name).sort(),
  ["changes", "diff", "edit_file", "job_cancel", "job_output", "list_dir", "read_file", "request_review", "review_status", "run",
   "sandbox_open", "write_file"]);
const readOnly = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint]));
assert.deepEqual(readOnly, { changes: true, diff: true, job_output: true, job_cancel: false, run: false, sandbox_open: false,
  read_file: true, list_dir: true, write_file: false, edit_file: false, request_review: false, review_status: true });
for (const forbidden of ["commit", "approve", "reject", "undo", "discard", "destroy"])
  assert.ok(!tools.some((tool) => tool.name.includes(forbidden)), `a tool may ${forbidden}`);

// Nothing to act on before a sandbox is open.
let result = await call("run", { command: ["true"] });
assert.equal(result.isError, true);
assert.match(text(result), /sandbox_open/);

// A new sandbox over the server's working directory; the second time, the same one.
result = await call("sandbox_open");
assert.equal(result.isError, false, text(result));
const sandbox = result.structuredContent.sandbox;
assert.equal(result.structuredContent.created, true);
assert.deepEqual(result.structuredContent.roots, [project]);

// A job's output and exit status; what it writes stays in the sandbox.
result = await call("run", { command: ["sh", "-c", "echo changed > a.txt; echo new > new.txt; echo out; echo err >&2; exit 3"] });
assert.equal(result.isError, false, text(result));
assert.equal(result.structuredContent.exit_status, 3);
assert.equal(result.structuredContent.output, "out\nerr\n");
assert.match(text(result), /exited with status 3/);

// cwd beneath the root; env set; a timeout kills.
result = await call("run", { command: ["sh", "-c", "pwd; echo $GREETING"], cwd: "sub", env: { GREETING: "hello" } });
assert.equal(result.structuredContent.output, `${project}/sub\nhello\n`);
result = await call("run", { command: ["sleep", "30"], timeout_seconds: 1 });
assert.equal(result.structuredContent.reason, "timeout");

// The change set and its diff.
result = await call("changes");
assert.match(text(result), /^M a\.txt$/m);
assert.match(text(result), /^A new\.txt$/m);
assert.equal(result.structuredContent.total, 2);
result = await call("diff", { paths: ["a.txt"] });
assert.match(text(result), /^\+changed$/m);
assert.doesNotMatch(text(result), /new\.txt/);
result = await call("diff", { stat: true });
assert.match(text(result), /2 files changed/);

// Files as the sandbox holds them: what a job wrote is read; what write_file and edit_file write
// a job sees (and the live tree does not: checked by the caller).
result = await call("read_file", { path: "a.txt" });
assert.equal(result.isError, false, text(result));
assert.equal(text(result), "changed\n");
result = await call("write_file", { path: "src/made.py", content: "x = 1\ny = 2\n" });
assert.equal(result.isError, false, text(result));
assert.equal(result.structuredContent.created, true);
result = await call("edit_file", { path: "src/made.py", old_text: "y = 2", new_text: "y = 3" });
assert.equal(result.isError, false, text(result));
assert.equal(result.structuredContent.line, 2);
result = await call("edit_file", { path: "src/made.py", old_text: " = ", new_text: "=" });
assert.equal(result.isError, true);
assert.match(text(result), /occurs 2 times in src\/made\.py/);
result = await call("read_file", { path: "src/made.py", offset: 2, limit: 1 });
assert.match(text(result), /^y = 3\n\[lines 2-2 of 2 of src\/made\.py\]/);
result = await call("run", { command: ["cat", "src/made.py"] });
assert.equal(result.structuredContent.output, "x = 1\ny = 3\n");
result = await call("list_dir", { path: "src" });
assert.match(text(result), /^made\.py \(12 bytes\)$/m);
result = await call("list_dir");
assert.match(text(result), /^sub\/$/m);
assert.match(text(result), /^a\.txt \(8 bytes\)$/m);
// A symlink a job made that leads out of the root is not followed, whatever it names.
await call("run", { command: ["ln", "-s", "/etc/passwd", "leak"] });
result = await call("read_file", { path: "leak" });
assert.equal(result.isError, true);
assert.match(text(result), /leak leads out of the sandbox's root/);
result = await call("write_file", { path: "leak", content: "x" });
assert.match(text(result), /leak is a symlink \(to \/etc\/passwd\)/);
for (const path of ["../x", "/etc/passwd", "src/../../b", ""]) {
  for (const tool of ["read_file", "write_file", "list_dir"]) {
    result = await call(tool, tool === "write_file" ? { path, content: "x" } : { path });
    assert.equal(result.isError, true, `${tool} took ${JSON.stringify(path)}`);
  }
}
await call("run", { command: ["rm", "-r", "src", "leak"] });

// Output past the limit is cut with a note, and job_output reads on from where it stopped.
result = await call("run", { command: ["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"] });
assert.equal(result.structuredContent.more, true);
assert.equal(result.structuredContent.output.length, 65536);
assert.match(text(result), /output cut after 65536 bytes/);
const rest = await call("job_output", { job: result.structuredContent.job, offset: result.structuredContent.next_offset });
assert.equal(rest.structuredContent.output.length, 100000 - 65536);
assert.equal(rest.structuredContent.more, false);

// A job in the background: running, then cancelled.
result = await call("run", { command: ["sleep", "60"], background: true });
const job = result.structuredContent.job;
assert.match(job, /^[0-9a-f]+$/);
result = await call("job_output", { job });
assert.equal(result.structuredContent.state, "running");
result = await call("job_cancel", { job });
assert.equal(result.structuredContent.reason, "cancelled");
result = await call("job_output", { job });
assert.equal(result.structuredContent.state, "finished");

// A client that gives up on a run (its request timeout) cancels the job, and the server is free
// for the next call at once rather than after the job.
const gaveUp = Date.now();
await assert.rejects(client.callTool({ name: "run", arguments: { command: ["sleep", "30"] } }, undefined, { timeout: 1500 }),
  /timed out/i);
result = await call("run", { command: ["echo", "free"] });
assert.equal(result.structuredContent.output, "free\n");
assert.ok(Date.now() - gaveUp < 15000, `a cancelled run held the server ${Date.now() - gaveUp} ms`);

// Refusals the model reads: paths out of the root, a job id that is none, a sandbox not its.
for (const cwd of ["../", "/etc", "sub/../..", "", "a//b"]) {
  result = await call("run", { command: ["true"], cwd });
  assert.equal(result.isError, true, `cwd ${JSON.stringify(cwd)} was taken`);
}
result = await call("diff", { paths: ["../etc/passwd"] });
assert.equal(result.isError, true);
result = await call("job_output", { job: "not-a-job" });
assert.equal(result.isError, true);
result = await call("job_cancel", { job: "0123456789abcdef" });
assert.equal(result.isError, true);
assert.match(text(result), /no job 0123456789abcdef is known/);
result = await call("changes", { sandbox: "no-such-sandbox" });
assert.equal(result.isError, true);
assert.match(text(result), /NotFound/);

// Protocol errors: a tool that is not there, arguments that do not fit.
await refusedByProtocol("commit", {}, /Unknown tool: commit/);
await refusedByProtocol("run", { command: "true" }, /'command'/);
await refusedByProtocol("run", { command: [] }, /'command'/);
await refusedByProtocol("run", { command: ["true"], network: true }, /unknown argument 'network'/);
await refusedByProtocol("run", { command: ["true"], timeout_seconds: 0 }, /'timeout_seconds'/);

// The agent asks for a review; the owner decides, with a note, in their own terminal (the
// agent has no tool for it); review_status answers both.
result = await call("request_review", { message: "tests pass; please look at a.txt" });
assert.equal(result.isError, false, text(result));
result = await call("review_status");
assert.equal(result.isError, false, text(result));
assert.match(text(result), /^  pending  M a\.txt$/m);
assert.match(text(result), /you asked for a review: "tests pass; please look at a\.txt"/);
assert.match(text(result), /waits for the owner/);
assert.equal(result.structuredContent.review_requested.message, "tests pass; please look at a.txt");
execFileSync(sandboxctl, ["reject", sandbox, "new.txt", "--note", "no new files, please"]);
execFileSync(sandboxctl, ["approve", sandbox, "a.txt"]);
result = await call("review_status");
assert.match(text(result), /^  approved M a\.txt$/m);
assert.match(text(result), /^  rejected A new\.txt$/m);
assert.match(text(result), /the owner rejected new\.txt: "no new files, please"/);
assert.doesNotMatch(text(result), /waits for the owner/);
assert.equal(result.structuredContent.review_requested, undefined);
const decided = Object.fromEntries(result.structuredContent.changes.map((change) => [change.path, change.review]));
assert.deepEqual(decided, { "a.txt": "approved", "new.txt": "rejected" });

result = await call("sandbox_open");
assert.equal(result.structuredContent.created, false);
assert.equal(result.structuredContent.sandbox, sandbox);

await client.close();
console.log(`mcp client test: all passed (sandbox ${sandbox})`);
