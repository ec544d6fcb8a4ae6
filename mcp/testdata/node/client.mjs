// A third-party client for ServerFS: the TypeScript MCP SDK's Client over
// StreamableHTTPClientTransport, run by mcp/node_test.go with the machine's
// Node (>= 18).
//
//	node mcp/testdata/node/client.mjs http://127.0.0.1:PORT/mcp
//
// It expects the fixture node_test.go serves: workdir "wd" holding
// notes/hello.txt with the content below. It lists the tools, reads the
// file (tool and resource template), reads "../x" (a tool error with a
// code), stats the file, prints a JSON summary on stdout and exits 1 when
// any assertion failed (2 when it could not run at all).
//
// The SDK is .ci/npm's (npm ci there installs it); it is imported by path
// because ES modules do not search node_modules outside their own parents.

import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

const WORKDIR = "wd";
const FILE = "notes/hello.txt";
const CONTENT = "hello from serverfs\nsecond line, ünïcödé\n";
const TOOLS = ["find_files", "list_directory", "list_workdirs", "read_text_file", "read_text_files", "search_text", "stat_file"];

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const sdkDir = path.join(repo, ".ci/npm/node_modules/@modelcontextprotocol/sdk");
const sdk = (p) => import(pathToFileURL(path.join(sdkDir, "dist/esm", p)).href);

const url = process.argv[2];
if (!url) {
  console.error("usage: node client.mjs http://HOST:PORT/mcp");
  process.exit(2);
}

const summary = { url, sdk_version: null, server: null, tools: null, checks: [], ok: true };

// check records an assertion; detail is kept only when it failed.
function check(name, ok, detail) {
  summary.checks.push(ok || detail === undefined ? { name, ok } : { name, ok, detail });
  if (!ok) summary.ok = false;
}

function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

let client;
try {
  summary.sdk_version = JSON.parse(readFileSync(path.join(sdkDir, "package.json"), "utf8")).version;
  const { Client } = await sdk("client/index.js");
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

  client = new Client({ name: "serverfs-node-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  summary.server = client.getServerVersion();
  check("initialize: server name is serverfs", summary.server?.name === "serverfs", summary.server);
  check("initialize: instructions sent", (client.getInstructions() ?? "").includes("read-only"));

  // tools/list: exactly the seven read tools, each described and read-only.
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  summary.tools = names;
  check("tools/list: the seven read tools", JSON.stringify(names) === JSON.stringify(TOOLS), names);
  for (const t of tools) {
    const a = t.annotations ?? {};
    const ok = !!t.description && a.readOnlyHint === true && a.destructiveHint === false &&
      a.idempotentHint === true && a.openWorldHint === false && t.outputSchema === undefined;
    check(`tools/list: ${t.name} described, annotated read-only, without an output schema`, ok, { description: t.description, annotations: a });
  }

  // read_text_file on a known file: structuredContent without an
  // outputSchema, which MCP allows and the SDK accepts.
  const read = await client.callTool({ name: "read_text_file", arguments: { workdir: WORKDIR, path: FILE } });
  const sc = read.structuredContent ?? {};
  check("read_text_file: content", !read.isError && sc.content === CONTENT, read.isError ? text(read) : sc);
  check("read_text_file: window fields", sc.start_line === 1 && sc.end_line === 2 && sc.has_more === false &&
    sc.bytes_returned === Buffer.byteLength(CONTENT), sc);

  // read_text_file above the workdir root: a tool error, not a protocol error.
  const outside = await client.callTool({ name: "read_text_file", arguments: { workdir: WORKDIR, path: "../x" } });
  check("read_text_file ../x: isError with PATH_OUTSIDE_WORKDIR", outside.isError === true && text(outside).startsWith("PATH_OUTSIDE_WORKDIR"), outside);
  check("read_text_file ../x: no structured content", outside.structuredContent === undefined, outside);

  // stat_file.
  const stat = await client.callTool({ name: "stat_file", arguments: { workdir: WORKDIR, path: FILE } });
  const st = stat.structuredContent ?? {};
  check("stat_file: a file of the right size", !stat.isError && st.type === "file" && st.size === Buffer.byteLength(CONTENT) &&
    st.workdir === WORKDIR && st.path === FILE && typeof st.modified_at === "string", stat.isError ? text(stat) : st);

  // find_files and search_text: compact answers, which the SDK checks
  // against their output schemas.
  const find = await client.callTool({ name: "find_files", arguments: { workdir: WORKDIR, pattern: "*.txt" } });
  const fd = find.structuredContent ?? {};
  check("find_files: matches grouped by directory", !find.isError && JSON.stringify(fd.matches) === JSON.stringify({ notes: ["hello.txt"] }) &&
    fd.returned === 1 && text(find) === `${WORKDIR}:/ *.txt\n${FILE}\n`, find.isError ? text(find) : { fd, text: text(find) });
  const grep = await client.callTool({ name: "search_text", arguments: { workdir: WORKDIR, query: "second line", context: 1 } });
  const gr = grep.structuredContent ?? {};
  check("search_text: matches and blocks by file", !grep.isError && JSON.stringify(gr.blocks) ===
    JSON.stringify({ [FILE]: [{ line: 1, text: ["hello from serverfs", "second line, ünïcödé"], match: [2] }] }),
    grep.isError ? text(grep) : gr);
  const lines = await client.callTool({ name: "search_text", arguments: { workdir: WORKDIR, query: "ünïcödé" } });
  check("search_text: [line, text] pairs", !lines.isError && JSON.stringify(lines.structuredContent?.matches) ===
    JSON.stringify({ [FILE]: [[2, "second line, ünïcödé"]] }), lines.isError ? text(lines) : lines.structuredContent);

  // The resource template reads the same file.
  const res = await client.readResource({ uri: `serverfs://${WORKDIR}/${FILE}` });
  check("resources/read: template", res.contents?.length === 1 && res.contents[0].text === CONTENT, res.contents);
} catch (err) {
  check("no exception", false, String(err?.stack ?? err));
} finally {
  try {
    await client?.close();
  } catch (err) {
    check("close", false, String(err));
  }
}

console.log(JSON.stringify(summary, null, 2));
process.exit(summary.ok ? 0 : 1);
