// Type-checks the sources (the protocol's messages are typed by
// @modelcontextprotocol/ext-apps's spec types), then builds each view into one self-contained HTML file (scripts and styles
// inlined, nothing fetched): node build.mjs [outdir], default ../mcp/ui.
// Also builds the test host page when given --host (the Chromium test).
import { build } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";
import { fileURLToPath } from "node:url";
import path from "node:path";
import fs from "node:fs";
import { execFileSync } from "node:child_process";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const out = path.resolve(args.find((a) => !a.startsWith("--")) || path.join(here, "../mcp/ui"));
const pages = [["src", "changes"], ["src", "file"], ["src", "history"]];
if (args.includes("--host")) pages.push(["test", "host"]);

execFileSync(process.execPath, [path.join(here, "node_modules/typescript/bin/tsc"), "-p", here], { stdio: "inherit" });
fs.mkdirSync(out, { recursive: true });
for (const [dir, name] of pages) {
  const tmp = fs.mkdtempSync(path.join(out, ".build-"));
  await build({
    configFile: false,
    logLevel: "warn",
    root: path.join(here, dir),
    plugins: [viteSingleFile({ removeViteModuleLoader: true })],
    build: { outDir: tmp, emptyOutDir: true, rollupOptions: { input: path.join(here, dir, name + ".html") } },
  });
  fs.renameSync(path.join(tmp, name + ".html"), path.join(out, name + ".html"));
  fs.rmSync(tmp, { recursive: true });
}
