// The Node cells of the interop matrix (mcp/interop_test.go): one process
// per client library, each cell a fresh connection that calls stat_file,
// read_text_file and search_text, once after tools/list ("listed") and
// once without it ("unlisted"), as a client does that reuses a known tool
// list. The v2 SDK (@modelcontextprotocol/client) runs both of its protocol
// lanes: "legacy" (initialize, 2025-11-25, its default) and "modern"
// (server/discover, pinned to 2026-07-28), four cells.
//
//	node interop.mjs ts-http BASE        TypeScript SDK, BASE/listed/mcp and BASE/unlisted/mcp
//	node interop.mjs ts-stdio BIN DIR     TypeScript SDK, `BIN serve --stdio --workdir wd=DIR`
//	node interop.mjs ts2-http BASE       TypeScript SDK v2 on both lanes, BASE/LANE/listed/mcp and BASE/LANE/unlisted/mcp
//	node interop.mjs ts2-stdio BIN DIR    TypeScript SDK v2 on both lanes over stdio
//	node interop.mjs agents BASE          @openai/agents MCPServerStreamableHttp (no model, no key)
//	node interop.mjs agents-stdio BIN DIR @openai/agents MCPServerStdio
//
// It expects node_test.go's fixture (workdir "wd", notes/hello.txt) and
// prints {"versions": {...}, "cells": [...]} on stdout: each cell has
// listed, its lane (the v2 SDK's cells), the protocol version the client negotiated when it can tell (the
// HTTP cells' version is read by the test's recording proxy), ok and its
// checks. It exits 1 when a check failed, 2 when it could not run.
//
// The packages are .ci/npm's, resolved from there (ES modules do not
// search node_modules outside their own parents).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

const WORKDIR = "wd";
const FILE = "notes/hello.txt";
const CONTENT = "hello from serverfs\nsecond line, ünïcödé\n";
const TOOLS = ["find_files", "list_directory", "list_workdirs", "read_text_file", "read_text_files", "search_text", "stat_file"];

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const npm = path.join(repo, ".ci/npm");
const require = createRequire(path.join(npm, "package.json"));
const sdkDir = path.join(npm, "node_modules/@modelcontextprotocol/sdk");
const sdk = (p) => import(pathToFileURL(path.join(sdkDir, "dist/esm", p)).href);
const client2Dir = path.join(npm, "node_modules/@modelcontextprotocol/client");
const client2 = (p) => import(pathToFileURL(path.join(client2Dir, "dist", p)).href);
const version = (pkg) => JSON.parse(readFileSync(path.join(npm, "node_modules", pkg, "package.json"), "utf8")).version;

const [mode, ...args] = process.argv.slice(2);
const out = { mode, versions: {}, cells: [] };

function text(result) {
  return (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

// exercise runs one cell: list (when listed) and the three calls, each
// answer checked by content. call(name, args) returns a CallToolResult.
async function exercise(cell, list, call) {
  const check = (name, ok, detail) => {
    cell.checks.push(ok || detail === undefined ? { name, ok } : { name, ok, detail });
    if (!ok) cell.ok = false;
  };
  try {
    if (cell.listed) {
      const names = (await list()).map((t) => t.name).sort();
      check("tools/list: the seven read tools", JSON.stringify(names) === JSON.stringify(TOOLS), names);
    }
    const stat = await call("stat_file", { workdir: WORKDIR, path: FILE });
    const st = stat.structuredContent ?? {};
    check("stat_file: the file's size", !stat.isError && st.type === "file" && st.size === Buffer.byteLength(CONTENT) &&
      st.path === FILE, stat.isError ? text(stat) : st);
    const read = await call("read_text_file", { workdir: WORKDIR, path: FILE });
    check("read_text_file: the file's content", !read.isError && read.structuredContent?.content === CONTENT,
      read.isError ? text(read) : read.structuredContent);
    const grep = await call("search_text", { workdir: WORKDIR, query: "second line" });
    check("search_text: the matching line", !grep.isError && JSON.stringify(grep.structuredContent?.matches) ===
      JSON.stringify({ [FILE]: [[2, "second line, ünïcödé"]] }), grep.isError ? text(grep) : grep.structuredContent);
  } catch (err) {
    check("no exception", false, String(err?.stack ?? err));
  }
}

// tsCell connects the TypeScript SDK's Client over transport; the
// negotiated version is what initialize answered (the SDK hands it to the
// transport).
async function tsCell(listed, transport) {
  const cell = { listed, version: null, ok: true, checks: [] };
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    cell.version = v;
    setVersion?.(v);
  };
  const { Client } = await sdk("client/index.js");
  const client = new Client({ name: "serverfs-interop", version: "1.0.0" });
  try {
    await client.connect(transport);
    await exercise(cell, async () => (await client.listTools()).tools, (name, a) => client.callTool({ name, arguments: a }));
  } catch (err) {
    cell.ok = false;
    cell.checks.push({ name: "connect", ok: false, detail: String(err?.stack ?? err) });
  } finally {
    await client.close().catch(() => {});
  }
  out.cells.push(cell);
}

// The v2 SDK's lanes: what versionNegotiation asks for each.
const LANES = { legacy: { mode: "legacy" }, modern: { mode: { pin: "2026-07-28" } } };

// ts2Cell connects the v2 SDK's Client on lane over transport; the
// client reports the era and version it negotiated.
async function ts2Cell(lane, listed, transport) {
  const cell = { lane, listed, version: null, ok: true, checks: [] };
  const { Client } = await client2("index.mjs");
  const client = new Client({ name: "serverfs-interop", version: "1.0.0" }, { versionNegotiation: LANES[lane] });
  try {
    await client.connect(transport);
    cell.version = client.getNegotiatedProtocolVersion() ?? null;
    const era = client.getProtocolEra();
    cell.checks.push(era === lane ? { name: "the lane's era", ok: true } : { name: "the lane's era", ok: false, detail: era });
    if (era !== lane) cell.ok = false;
    await exercise(cell, async () => (await client.listTools()).tools, (name, a) => client.callTool({ name, arguments: a }));
  } catch (err) {
    cell.ok = false;
    cell.checks.push({ name: "connect", ok: false, detail: String(err?.stack ?? err) });
  } finally {
    await client.close().catch(() => {});
  }
  out.cells.push(cell);
}

// agentsCell drives an @openai/agents MCP server object the way an Agent
// does (connect, listTools, callTool), without a model.
async function agentsCell(listed, server) {
  const cell = { listed, version: null, ok: true, checks: [] };
  try {
    await server.connect();
    // The SDK client inside (@modelcontextprotocol/client) knows the
    // version it negotiated; agents does not expose it.
    cell.version = server.underlying?.session?.getNegotiatedProtocolVersion?.() ?? null;
    await exercise(cell, () => server.listTools(), (name, a) => server.callToolResult(name, a));
  } catch (err) {
    cell.ok = false;
    cell.checks.push({ name: "connect", ok: false, detail: String(err?.stack ?? err) });
  } finally {
    await server.close().catch(() => {});
  }
  out.cells.push(cell);
}

const stdioArgs = (dir) => ["serve", "--stdio", "--workdir", `${WORKDIR}=${dir}`];

try {
  switch (mode) {
    case "ts-http": {
      out.versions["@modelcontextprotocol/sdk"] = version("@modelcontextprotocol/sdk");
      const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
      for (const listed of [true, false]) {
        await tsCell(listed, new StreamableHTTPClientTransport(new URL(`${args[0]}/${listed ? "listed" : "unlisted"}/mcp`)));
      }
      break;
    }
    case "ts-stdio": {
      out.versions["@modelcontextprotocol/sdk"] = version("@modelcontextprotocol/sdk");
      const { StdioClientTransport } = await sdk("client/stdio.js");
      for (const listed of [true, false]) {
        await tsCell(listed, new StdioClientTransport({ command: args[0], args: stdioArgs(args[1]), stderr: "ignore" }));
      }
      break;
    }
    case "ts2-http":
    case "ts2-stdio": {
      out.versions["@modelcontextprotocol/client"] = version("@modelcontextprotocol/client");
      const { StreamableHTTPClientTransport } = await client2("index.mjs");
      const { StdioClientTransport } = await client2("stdio.mjs");
      for (const lane of Object.keys(LANES)) {
        for (const listed of [true, false]) {
          await ts2Cell(lane, listed, mode === "ts2-http"
            ? new StreamableHTTPClientTransport(new URL(`${args[0]}/${lane}/${listed ? "listed" : "unlisted"}/mcp`))
            : new StdioClientTransport({ command: args[0], args: stdioArgs(args[1]), stderr: "ignore" }));
        }
      }
      break;
    }
    case "agents":
    case "agents-stdio": {
      out.versions["@openai/agents"] = version("@openai/agents");
      out.versions["@modelcontextprotocol/client"] = version("@modelcontextprotocol/client");
      const agents = await import(pathToFileURL(require.resolve("@openai/agents")).href);
      for (const listed of [true, false]) {
        const server = mode === "agents"
          ? new agents.MCPServerStreamableHttp({ name: "serverfs", url: `${args[0]}/${listed ? "listed" : "unlisted"}/mcp` })
          : new agents.MCPServerStdio({ name: "serverfs", command: args[0], args: stdioArgs(args[1]) });
        await agentsCell(listed, server);
      }
      break;
    }
    default:
      console.error("usage: node interop.mjs ts-http|ts2-http|agents BASE_URL | ts-stdio|ts2-stdio|agents-stdio BIN DIR");
      process.exit(2);
  }
} catch (err) {
  console.error(String(err?.stack ?? err));
  process.exit(2);
}

console.log(JSON.stringify(out, null, 2));
process.exit(out.cells.every((c) => c.ok) ? 0 : 1);
