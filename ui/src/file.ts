// File view: read_text_file's window (or read_text_files' files) with line
// numbers, where the window sits in the file, the next window on demand
// (a read_text_file call through the host) and find-in-view highlighting.
import { start, h, clear, cols, textOf, type View } from "./common";

interface Win { path: string; content: string; start_line: number; end_line: number; total_lines?: number; has_more?: boolean; next_start_line?: number; revision?: string; truncated?: boolean }

let query = "";

start("file", (v, sc) => {
  const wins: Win[] = sc.files ? sc.files : sc.content !== undefined ? [sc] : [];
  const workdir = sc.workdir || "";
  const find = h("input", { type: "search", placeholder: "Find (/)", "aria-label": "find", value: query }) as HTMLInputElement;
  const body = h("div");
  const draw = () => clear(body, wins.map((w) => section(v, workdir, w)));
  find.addEventListener("input", () => { query = find.value; draw(); });
  document.onkeydown = (e) => { if (e.key === "/" && document.activeElement !== find) { e.preventDefault(); find.focus(); } };
  const q = v.args.highlight ?? v.args.pattern ?? v.args.query;
  if (typeof q === "string" && !query) { query = q; find.value = q; }
  clear(v.root, h("div", { class: "bar" }, h("h1", null, wins.length === 1 ? `${workdir}:${wins[0].path}` : `${wins.length} files in ${workdir}`), find), body);
  draw();
});

function section(v: View, workdir: string, w: Win): HTMLElement {
  const total = w.total_lines;
  const where = total ? `lines ${w.start_line}–${w.end_line} of ${total}` : `lines ${w.start_line}–${w.end_line}${w.has_more ? ", more follow" : ""}`;
  const bar = total ? h("span", { class: "pos", title: where, "aria-hidden": "true" }) : null;
  if (bar && total) bar.append(h("span", { style: `left:${((w.start_line - 1) / total) * 100}%;width:${Math.max(1, ((w.end_line - w.start_line + 1) / total) * 100)}%` }));
  const table = lines(w.content, w.start_line);
  const sec = h("section", { class: "file", "data-path": w.path },
    h("header", null, h("span", { class: "path" }, w.path), h("span", { class: "meta where" }, where), bar),
    table);
  if (w.has_more && w.next_start_line) {
    const more = h("button", { class: "more", "data-next": w.next_start_line }, `Next lines from ${w.next_start_line}`);
    more.addEventListener("click", async () => {
      more.setAttribute("disabled", "");
      more.textContent = "Reading…";
      try {
        const r = await v.read("read_text_file", { workdir, path: w.path, start_line: w.next_start_line });
        const next = r.structuredContent as unknown as Win | undefined;
        if (r.isError || !next) { more.replaceWith(h("p", { class: "error" }, textOf(r))); return; }
        more.replaceWith(section(v, workdir, next));
      } catch (e) {
        more.replaceWith(h("p", { class: "error" }, String(e)));
      }
    });
    sec.append(h("div", { class: "bar" }, more));
  }
  return sec;
}

export function lines(content: string, first: number): HTMLElement {
  const ls = content.endsWith("\n") ? content.slice(0, -1).split("\n") : content.split("\n");
  return h("table", { class: "code" }, cols("4em", ""), h("tbody", null, ls.map((t, i) => h("tr", { "data-line": first + i }, h("td", { class: "n" }, String(first + i)), h("td", null, marked(t))))));
}

function marked(t: string): (Node | string)[] {
  if (!query) return [t];
  const out: (Node | string)[] = [];
  const lt = t.toLowerCase(), lq = query.toLowerCase();
  let i = 0;
  for (let j = lt.indexOf(lq); j >= 0; j = lt.indexOf(lq, i)) {
    out.push(t.slice(i, j), h("mark", null, t.slice(j, j + query.length)));
    i = j + query.length;
  }
  out.push(t.slice(i));
  return out;
}
