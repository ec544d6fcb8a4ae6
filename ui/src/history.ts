// History: read_repo_history's log (a commit list; choosing one reads its
// show through the host), show (the commit's files and patch) and blame
// (who last changed each line, beside the lines).
import { start, h, clear, cols, short, textOf, type View } from "./common";
import { parsePatch, renderFile } from "./diff";

start("history", (v, sc, r) => {
  if (sc.log) return renderLog(v, sc);
  if (sc.show) return clear(v.root, renderShow(sc.show));
  if (sc.blame) return renderBlame(v, sc, textOf(r));
  clear(v.root, h("p", { class: "note" }, "Nothing to show."));
});

function who(a: any): string {
  return a ? `${a.name} ${String(a.date || "").slice(0, 10)}` : "";
}

function renderLog(v: View, sc: any) {
  const commits: any[] = sc.log.commits || [];
  const detail = h("div", { class: "detail" }, h("p", { class: "note" }, "Choose a commit (Enter) to read its patch."));
  const list = h("ul", { class: "list", "data-list": "commits", "aria-label": "commits" });
  const open = async (i: number) => {
    list.querySelectorAll("li").forEach((li, j) => li.setAttribute("aria-selected", String(j === i)));
    clear(detail, h("p", { class: "note" }, "Reading…"));
    const r = await v.read("read_repo_history", { workdir: sc.workdir, view: "show", rev: commits[i].id });
    const s = (r.structuredContent as any)?.show;
    clear(detail, r.isError || !s ? h("pre", { class: "error" }, textOf(r)) : renderShow(s));
  };
  commits.forEach((c, i) => list.append(h("li", { "data-item": true, tabindex: 0, "data-commit": c.id, onkeydown: (e: KeyboardEvent) => { if (e.key === "Enter") open(i); }, ondblclick: () => open(i) },
    h("span", { class: "st" }, short(c.id)),
    h("span", { class: "path" }, c.subject, h("br"), h("span", { class: "meta" }, who(c.author) + (c.files ? ` · ${c.files.length} file${c.files.length === 1 ? "" : "s"}` : ""))))));
  list.querySelectorAll("li").forEach((li, i) => li.addEventListener("click", () => { if ((li as HTMLElement).dataset.opened !== "1") { (li as HTMLElement).dataset.opened = "1"; } open(i); }));
  clear(v.root, h("h1", null, `History of ${sc.workdir}`, sc.log.next_cursor ? h("span", { class: "meta" }, " (more with the cursor)") : null), h("div", { class: "cols" }, list, detail));
}

function renderShow(s: any): HTMLElement {
  const c = s.commit || {};
  const files: any[] = s.files || [];
  const byPath = new Map(parsePatch(s.patch || "").map((p) => [p.path, p]));
  return h("div", { class: "show", "data-commit": c.id },
    h("h1", null, c.subject || ""),
    h("div", { class: "bar meta" }, `${short(c.id)} · ${who(c.author)}`, c.parents?.length ? ` · parent ${short(c.parents[0])}` : ""),
    c.body ? h("pre", { class: "side" }, c.body) : null,
    h("ul", { class: "list", "data-list": "files" }, files.map((f) => h("li", { "data-item": true, tabindex: 0, "data-path": f.path },
      h("span", { class: "st st-" + f.status }, f.status), h("span", { class: "path" }, f.path),
      f.binary ? h("span", { class: "meta" }, "binary") : [h("span", { class: "plus" }, "+" + (f.added ?? 0)), h("span", { class: "minus" }, "−" + (f.deleted ?? 0))]))),
    files.map((f) => {
      const p = byPath.get(f.path);
      return h("section", { class: "file", "data-path": f.path }, h("header", null, h("span", { class: "path" }, f.path)),
        p && p.hunks.length ? renderFile(p, false) : h("p", { class: "note" }, f.binary || p?.binary ? "binary file, not shown" : "no text changes shown"));
    }),
    s.truncated ? h("p", { class: "note" }, "patch cut by max_bytes") : null);
}

// renderBlame pairs the runs of the structured answer with the line texts
// of the text answer ("<commit> <n>: <text>").
function renderBlame(v: View, sc: any, text: string) {
  const b = sc.blame;
  const texts = new Map<number, string>();
  for (const l of text.split("\n")) {
    const m = /^(?:[0-9a-f]{10}| {10}) (\d+): ?(.*)$/.exec(l);
    if (m) texts.set(+m[1], m[2]);
  }
  const rows: HTMLElement[] = [];
  for (const run of b.runs || []) {
    const c = b.commits?.[run.commit] || {};
    for (let i = 0; i < run.lines; i++) {
      const n = run.start_line + i;
      rows.push(h("tr", { class: i === 0 ? "runstart" : "", "data-line": n, "data-commit": run.commit },
        h("td", { class: "blame", title: i === 0 ? `${run.commit} ${c.subject || ""}` : "" }, i === 0 ? `${short(run.commit)} ${c.author?.name || ""} · ${c.subject || ""}` : ""),
        h("td", { class: "n" }, String(n)), h("td", null, texts.get(n) ?? "")));
    }
  }
  clear(v.root, h("h1", null, `Blame of ${sc.workdir}:${b.path} at ${short(b.commit)}`),
    h("div", { class: "bar meta" }, `lines ${b.start_line}–${b.end_line} of ${b.total_lines}`),
    h("table", { class: "code" }, cols("18em", "4em", ""), h("tbody", null, rows)));
}
