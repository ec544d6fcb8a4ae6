// Drives Debian's chromium with playwright-core: loads the test host page
// (host.html, served by the Go test at BASE), shows each tool's view with
// real ServerFS results and checks the view's DOM. Every request the page
// or its frames make is recorded; any not to BASE fails the run.
// Env: BASE, PLAYWRIGHT (playwright-core's directory), CHROMIUM, ARTIFACTS,
// SUBMITS (a file holding submit_workspace's answers: merged, conflict),
// SPANS (search_text calls and the marks Go's regexp says the file view
// must draw for them).
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import assert from "node:assert/strict";

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT);
const BASE = process.env.BASE;
const ART = process.env.ARTIFACTS;
const submits = JSON.parse(fs.readFileSync(process.env.SUBMITS, "utf8"));
const spanCases = JSON.parse(fs.readFileSync(process.env.SPANS, "utf8"));

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ["--no-sandbox"] });
const failures = [];
const shots = [];
const timings = []; // logged by the Go test, never asserted
try {
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 640 }, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  const requests = [];
  ctx.on("request", (r) => requests.push({ url: r.url(), main: r.frame() === page.mainFrame() }));
  page.on("pageerror", (e) => failures.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") failures.push("console: " + m.text()); });
  await page.goto(BASE + "/host.html");
  const frame = page.frameLocator("iframe");
  const text = async (sel) => (await frame.locator(sel).first().textContent()).trim();
  const texts = async (sel) => (await frame.locator(sel).allTextContents()).map((s) => s.trim());
  const attrs = async (sel, a) => frame.locator(sel).evaluateAll((es, a) => es.map((e) => e.getAttribute(a)), a);
  const show = async (tool, args, theme = "light", given) => page.evaluate(([t, a, th, g]) => window.show(t, a, th, g), [tool, args, theme, given]);
  const shot = async (name) => { const p = path.join(ART, name + ".png"); await page.screenshot({ path: p }); shots.push(p); };

  const cases = {
    async changes() {
      await show("inspect_repo", { workdir: "wd", view: "changes" });
      await frame.locator(".file").first().waitFor();
      assert.deepEqual(await attrs(".list li", "data-path"), ["NEW.md", "logo.bin", "old.txt", "src/lib.go"]);
      assert.equal(await text(".summary"), "4 files, +4 −2");
      assert.match(await text("h1"), /^Uncommitted changes in wd on main at [0-9a-f]{10}$/);
      assert.deepEqual(await texts(".list li[data-path='NEW.md'] .plus, .list li[data-path='NEW.md'] .minus"), ["+2", "−0"]);
      assert.deepEqual(await texts(".list li[data-path='src/lib.go'] .plus, .list li[data-path='src/lib.go'] .minus"), ["+2", "−1"]);
      // Keyboard: ArrowDown moves through the files and opens each.
      await frame.locator(".list li").first().focus();
      await page.keyboard.press("ArrowDown");
      assert.equal(await text(".file .note"), "logo.bin: binary file, not shown");
      await page.keyboard.press("End");
      await frame.locator(".file[data-path='src/lib.go'] tr.add").first().waitFor();
      const row = (sel) => frame.locator(sel).evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((td) => td.textContent)));
      assert.deepEqual((await row(".file tr.del"))[0], ["7", "", "-", "line 5"]);
      assert.deepEqual((await row(".file tr.add"))[0], ["", "7", "+", "line five"]);
      assert.deepEqual(await texts(".file tr.gap"), ["⋯ 29 unchanged lines"]);
      await shot("changes-unified");
      await page.keyboard.press("s");
      await frame.locator(".file td.del").first().waitFor();
      const pair = await frame.locator(".file tr:has(td.del)").first().evaluate((tr) => Array.from(tr.children).map((td) => td.textContent));
      assert.deepEqual(pair, ["7", "-", "line 5", "7", "+", "line five"]);
      await shot("changes-split");
    },
    async staged_dark() {
      await show("inspect_repo", { workdir: "wd", view: "staged_diff", paths: ["NEW.md"] }, "dark");
      await frame.locator(".file tr.add").first().waitFor();
      assert.equal(await frame.locator("html").getAttribute("data-theme"), "dark");
      assert.match(await text("h1"), /^Staged changes in wd/);
      assert.deepEqual(await attrs(".file tr.add", "class"), ["add", "add"]);
      await shot("changes-dark");
    },
    async conflict() {
      await show("submit_workspace", {}, "light", submits.conflict);
      await frame.locator(".conflict").waitFor();
      assert.match(await text("h1"), /^MERGE_CONFLICT: wd@\w+ into main$/);
      assert.equal(await frame.locator(".conflict").getAttribute("data-path"), "sub/a.txt");
      assert.equal(await text(".conflict .ours"), "<<<<<<< ours (branch main)alpha on main");
      assert.equal(await text(".conflict .base"), "||||||| basealpha");
      assert.match(await text(".conflict .theirs"), /^>>>>>>> theirs \(workspace wd@\w+\)alpha from the workspace$/);
      assert.equal(await text(".conflict header .meta"), "line 1");
      assert.equal(await text(".summary"), "1 file, +1 −1");
      await shot("conflict");
    },
    async merged() {
      await show("submit_workspace", {}, "light", submits.merged);
      await frame.locator(".list li").waitFor();
      assert.match(await text("h1"), /^wd@\w+ merged into main$/);
      assert.equal(await text(".summary"), "1 file, +3 −0");
      assert.match(await text(".bar .meta"), /^[0-9a-f]{10} → [0-9a-f]{10}$/);
      assert.deepEqual(await attrs(".list li", "data-path"), ["notes.md"]);
      assert.equal(await frame.locator(".conflict").count(), 0);
    },
    async file() {
      await show("read_text_file", { workdir: "wd", path: "src/lib.go", start_line: 10, max_lines: 15 });
      await frame.locator("tr[data-line]").first().waitFor();
      const nums = await texts("tr[data-line] td.n");
      assert.equal(nums.length, 15);
      assert.equal(nums[0], "10");
      assert.equal(nums[14], "24");
      assert.equal(await text(".where"), "lines 10–24, more follow");
      await frame.locator("input[type=search]").fill("twenty");
      assert.deepEqual(await texts("mark"), ["twenty"]);
      assert.equal(await frame.locator("tr:has(mark)").getAttribute("data-line"), "22");
      // The next window: a read_text_file call through the host.
      await frame.locator("button.more").click();
      await frame.locator("tr[data-line='25']").waitFor();
      // The next window continues the same table (it is not drawn inside
      // the first one).
      assert.equal(await frame.locator(".file").count(), 1);
      assert.equal(await frame.locator(".file .file").count(), 0);
      assert.equal(await text(".where"), "lines 10–43 of 43");
      const all = await texts("tr[data-line] td.n");
      assert.deepEqual(all, Array.from({ length: 34 }, (_, i) => String(10 + i)));
      assert.equal(await frame.locator("button.more").count(), 0);
      const calls = await page.evaluate(() => window.calls);
      assert.deepEqual(calls, ['read_text_file {"workdir":"wd","path":"src/lib.go","start_line":25}']);
      await shot("file");
    },
    async search() {
      // search_text's hits, case-insensitive: the marks hold the file's text.
      await show("search_text", { workdir: "wd", path: "src", query: "LINE 3", case_sensitive: false });
      await frame.locator("tr.hit").first().waitFor();
      assert.equal(await text("h1"), "“LINE 3” in wd:src");
      assert.match(await text(".summary"), /^11 matching lines in 1 file · \d+ scanned$/);
      assert.deepEqual(await attrs(".file", "data-path"), ["src/lib.go"]);
      const hits = ["5", "32", "33", "34", "35", "36", "37", "38", "39", "40", "41"];
      assert.deepEqual(await texts("tr.hit td.n"), hits);
      assert.deepEqual(await texts("mark.hit"), hits.map(() => "line 3"));
      assert.equal(await text("tr[data-line='33'] td:last-child"), "line 31");
      assert.equal(await text(".where"), "11 matching lines");
      // Opening a hit reads the lines around it through the host and
      // merges them into the file's table, the hits still marked.
      await frame.locator("tr.hit[data-line='5']").click();
      await frame.locator("tr[data-line='1']").waitFor();
      assert.equal(await text(".where"), "11 matching lines · lines 1–21, more follow");
      assert.deepEqual(await texts("tr[data-line] td.n"), [...Array.from({ length: 21 }, (_, i) => String(1 + i)), ...hits.slice(1)]);
      assert.equal(await frame.locator("tr.skip").count(), 1);
      assert.equal(await text("tr[data-line='1'] td:last-child"), "package lib");
      assert.deepEqual(await texts("tr[data-line='5'] mark.hit"), ["line 3"]);
      assert.equal(await frame.locator("tr[data-line='5']").getAttribute("class"), "hit sel");
      assert.deepEqual(await texts("mark.hit"), hits.map(() => "line 3"));
      // Keyboard: ArrowDown goes to the next hit and opens it; one inside
      // a window read already costs no call.
      await page.keyboard.press("ArrowDown");
      await frame.locator("tr[data-line='22']").waitFor();
      assert.equal(await text(".where"), "11 matching lines · lines 1–42, more follow");
      assert.equal(await frame.locator("tr.skip").count(), 0);
      assert.equal(await frame.locator("tr.hit[data-line='32']").evaluate((e) => e === document.activeElement), true);
      await page.keyboard.press("ArrowDown");
      assert.equal(await frame.locator("tr.sel").getAttribute("data-line"), "33");
      assert.deepEqual(await page.evaluate(() => window.calls), [
        'read_text_file {"workdir":"wd","path":"src/lib.go","start_line":1,"max_lines":21}',
        'read_text_file {"workdir":"wd","path":"src/lib.go","start_line":22,"max_lines":21}',
      ]);
      await shot("file-search");
    },
    async search_regex() {
      // The server's matches are marked; context lines are drawn unmarked
      // and are not hits.
      await show("search_text", { workdir: "wd", path: "src", query: "line t\\w+", regex: true, context: 1 }, "dark");
      await frame.locator("tr.hit").first().waitFor();
      assert.deepEqual(await texts("tr[data-line] td.n"), ["21", "22", "23"]);
      assert.deepEqual(await texts("tr.hit td.n"), ["22"]);
      assert.deepEqual(await texts("mark.hit"), ["line twenty"]);
      // RE2's (?i), no JS syntax, is the server's to read.
      await show("search_text", { workdir: "wd", path: "src", query: "(?i)LINE TW", regex: true });
      await frame.locator("tr.hit").first().waitFor();
      assert.deepEqual(await texts("mark.hit"), ["line tw"]);
      await frame.locator("input[type=search]").fill("TWEN");
      assert.equal((await texts("mark.find")).join(""), "twen"); // "tw" is in the hit's mark too
    },
    async search_files() {
      // output files: the file and its count; its lines read come without
      // matches (the answer has none), find-in-view still marks.
      await show("search_text", { workdir: "wd", path: "src", query: "twenty", output: "files" });
      await frame.locator(".file button.more").waitFor();
      assert.equal(await text(".where"), "1 matching line");
      assert.equal(await text(".file button.more"), "Read the file");
      await frame.locator(".file button.more").click();
      await frame.locator("tr[data-line='1']").waitFor();
      assert.equal(await text(".where"), "1 matching line · lines 1–43 of 43");
      assert.equal(await frame.locator("mark.hit").count(), 0);
      await frame.locator("input[type=search]").fill("TWENTY");
      assert.deepEqual(await texts("mark.find"), ["twenty"]);
      assert.equal(await frame.locator("tr:has(mark.find)").getAttribute("data-line"), "22");
      assert.deepEqual(await page.evaluate(() => window.calls), ['read_text_file {"workdir":"wd","path":"src/lib.go","start_line":1}']);
    },
    async search_spans() {
      // The marks are the spans Go's regexp found, to the UTF-16 code unit:
      // a pattern that backtracks exponentially in JavaScript on the first
      // line, a non-ASCII line. The view compiles no pattern, so it draws
      // at once; how long it took is logged.
      for (const c of spanCases) {
        const t0 = performance.now();
        await show("search_text", c.args);
        const t1 = performance.now();
        await frame.locator("tr.hit").first().waitFor();
        const t2 = performance.now();
        timings.push(`${c.name}: call and view load ${(t1 - t0).toFixed(1)} ms, then the matching lines (${Object.keys(c.lines).length}) drawn within ${(t2 - t1).toFixed(1)} ms of the result`);
        const got = await frame.locator("tr.hit").evaluateAll((trs) => Object.fromEntries(trs.map((tr) => {
          const spans = [];
          let at = 0;
          for (const n of tr.lastElementChild.childNodes) {
            const l = n.textContent.length;
            if (n.nodeName === "MARK" && n.classList.contains("hit")) spans.push([at, at + l]);
            at += l;
          }
          return [tr.dataset.line, spans];
        })));
        assert.deepEqual(got, c.lines, c.name);
      }
      // Still responsive: find-in-view answers.
      await frame.locator("input[type=search]").fill("NAÏVE");
      assert.deepEqual(await texts("mark.find"), ["naïve"]);
    },
    async files() {
      await show("read_text_files", { workdir: "wd", paths: ["README.md", "sub/a.txt"] });
      await frame.locator(".file").nth(1).waitFor();
      assert.deepEqual(await attrs(".file", "data-path"), ["README.md", "sub/a.txt"]);
      assert.deepEqual(await texts(".where"), ["lines 1–2 of 2", "lines 1–2 of 2"]);
      assert.deepEqual(await texts(".file[data-path='sub/a.txt'] td:not(.n)"), ["alpha on main", "beta"]);
    },
    async log() {
      await show("read_repo_history", { workdir: "wd", view: "log", files: true });
      await frame.locator(".list li").first().waitFor();
      assert.equal(await frame.locator(".list li").count(), 5);
      assert.deepEqual((await texts(".list li .path")).map((s) => s.split("Ada")[0].split("T 20")[0]), ["a: alpha on main", "notes", "lib: spell out line twenty", "add lib and logo", "base"]);
      await frame.locator(".list li").nth(2).click();
      await frame.locator(".show .file[data-path='src/lib.go'] tr.add").waitFor();
      assert.equal(await text(".show h1"), "lib: spell out line twenty");
      assert.deepEqual(await texts(".show .list li .plus, .show .list li .minus"), ["+1", "−1"]);
      const add = await frame.locator(".show tr.add").evaluate((tr) => Array.from(tr.children).map((td) => td.textContent));
      assert.deepEqual(add, ["", "22", "+", "line twenty"]);
      const calls = await page.evaluate(() => window.calls);
      assert.equal(calls.length, 1);
      assert.match(calls[0], /^read_repo_history \{"workdir":"wd","view":"show","rev":"[0-9a-f]{40}"\}$/);
      await shot("history");
    },
    async blame() {
      await show("read_repo_history", { workdir: "wd", view: "blame", path: "src/lib.go" });
      await frame.locator("tr[data-line]").first().waitFor();
      assert.equal(await frame.locator("tr[data-line]").count(), 42);
      assert.equal(await frame.locator("tr.runstart").count(), 3);
      const l22 = await frame.locator("tr[data-line='22']").evaluate((tr) => Array.from(tr.children).map((td) => td.textContent));
      assert.match(l22[0], /^[0-9a-f]{10} Ada Reviewer · lib: spell out line twenty$/);
      assert.deepEqual(l22.slice(1), ["22", "line twenty"]);
      assert.equal(await text("tr[data-line='1'] td:last-child"), "package lib");
      assert.equal(await text("tr[data-line='24'] td.blame"), "");
    },
  };
  for (const [name, run] of Object.entries(cases)) {
    await page.evaluate(() => (window.calls = []));
    try {
      // A bound on a hang (a message that never comes), not on speed.
      let timer;
      await Promise.race([run(), new Promise((_, fail) => (timer = setTimeout(() => fail(new Error("no answer in 60 s")), 60000)))]).finally(() => clearTimeout(timer));
    } catch (e) {
      failures.push(`${name}: ${e.message}`);
      await shot("failed-" + name).catch(() => {});
    }
  }
  const foreign = requests.filter((r) => !r.url.startsWith(BASE + "/"));
  if (foreign.length) failures.push("requests off the host's origin: " + JSON.stringify(foreign));
  const fromViews = requests.filter((r) => !r.main);
  if (fromViews.length) failures.push("requests from a view: " + JSON.stringify(fromViews));
  console.log(JSON.stringify({ requests: requests.map((r) => r.url.slice(BASE.length)), shots, failures, timings }));
} finally {
  await browser.close();
}
process.exit(failures.length ? 1 : 0);
