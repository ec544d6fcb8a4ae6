// File view: read_text_file's window (or read_text_files' files), or
// search_text's hits, with line numbers and where the lines sit in the
// file. More of a file comes through the host as read_text_file calls (the
// next window; the lines around a hit) and is merged into the lines the
// view already holds, so a file stays one table. Search matches and
// find-in-view matches are highlighted. The search's matches are the
// spans the server found (search_text's _meta, serverfs/spans): the view
// compiles nothing from a tool's input, as JavaScript's RegExp
// backtracks where RE2 does not (^(\w+\s?)+$|x took V8 27 s on a line
// of 28 word characters).
import { start, h, clear, cols, textOf, type View } from "./common";

interface Win { path: string; error?: string; content?: string; start_line: number; end_line: number; total_lines?: number; has_more?: boolean; next_start_line?: number }

// AROUND is how many lines before a hit opening it reads (and as many after).
const AROUND = 10;

type Matcher = (t: string) => [number, number][];

// Spans are a line's search matches as the server sends them: [start,
// end) offsets in UTF-16 code units, flattened (s0, e0, s1, e1, …), and
// the text they were found in.
interface Spans { t: string; s: number[] }

let find = ""; // the find-in-view text
let findM: Matcher | null = null;

// fold lower-cases t without changing its length, so that offsets in it
// are offsets in t: where lower case would be longer (İ) a code point
// stays as it is.
function fold(t: string): string {
  const l = t.toLowerCase();
  if (l.length === t.length) return l;
  let out = "";
  for (const c of t) {
    const lc = c.toLowerCase();
    out += lc.length === c.length ? lc : c;
  }
  return out;
}

// finder finds the find-in-view text q in a line, literally, ignoring
// case: indexOf, no pattern.
function finder(q: string): Matcher | null {
  if (!q) return null;
  const fq = fold(q);
  return (t) => {
    const ft = fold(t);
    const out: [number, number][] = [];
    for (let i = ft.indexOf(fq); i >= 0; i = ft.indexOf(fq, i + fq.length)) out.push([i, i + fq.length]);
    return out;
  };
}

// Doc is what the view knows of one file: lines from search hits and
// their context, and from the windows read.
class Doc {
  lines = new Map<number, string>();
  hits = new Set<number>();
  spans = new Map<number, Spans>(); // the search's matches by line
  cut = new Set<number>(); // texts search cut at its line limit
  read: [number, number][] = [];
  pending: [number, number][] = [];
  count?: number; // search_text's files and count modes: matching lines
  end = 0;
  next?: number;
  total?: number;
  err?: string;
  sel?: number;
  sec: HTMLElement;
  constructor(public v: View, public workdir: string, public path: string) {
    this.sec = h("section", { class: "file", "data-path": path });
  }

  add(w: Win) {
    if (w.error) { this.err = w.error; return; }
    const c = w.content || "";
    const ls = c === "" ? [] : (c.endsWith("\n") ? c.slice(0, -1) : c).split("\n");
    ls.forEach((t, i) => { this.lines.set(w.start_line + i, t); this.cut.delete(w.start_line + i); });
    if (ls.length) this.read.push([w.start_line, w.start_line + ls.length - 1]);
    if (w.total_lines) this.total = w.total_lines;
    if (w.end_line >= this.end) {
      this.end = w.end_line;
      this.next = w.has_more && w.next_start_line ? w.next_start_line : undefined;
    }
  }

  covered(n: number): boolean {
    return [...this.read, ...this.pending].some(([a, b]) => a <= n && n <= b);
  }

  // fetch reads a window through the host and merges it.
  async fetch(args: Record<string, unknown>, span: [number, number]) {
    this.pending.push(span);
    try {
      const r = await this.v.read("read_text_file", { workdir: this.workdir, path: this.path, ...args });
      const w = r.structuredContent as unknown as Win | undefined;
      if (r.isError || !w) this.err = textOf(r);
      else { this.err = undefined; this.add(w); }
    } catch (e) {
      this.err = String(e);
    }
    this.pending.splice(this.pending.indexOf(span), 1);
    this.draw();
  }

  // open selects hit n and reads the lines around it unless they are here.
  open(n: number) {
    this.sel = n;
    this.sec.closest("[data-list]")?.querySelectorAll("tr.sel").forEach((tr) => tr.classList.remove("sel"));
    this.sec.querySelector(`tr[data-line="${n}"]`)?.classList.add("sel");
    if (this.covered(n)) return;
    const from = Math.max(1, n - AROUND);
    void this.fetch({ start_line: from, max_lines: 2 * AROUND + 1 }, [from, from + 2 * AROUND]);
  }

  where(): string {
    const rs = merged(this.read);
    const parts: string[] = [];
    if (this.hits.size || this.count) parts.push(plural(this.count ?? this.hits.size, "matching line"));
    if (rs.length) parts.push("lines " + rs.map(([a, b]) => `${a}–${b}`).join(", ") + (this.total ? ` of ${this.total}` : this.next ? ", more follow" : ""));
    return parts.join(" · ");
  }

  draw() {
    // A hit that held the focus keeps it in the redrawn table.
    const f = document.activeElement;
    const focused = f instanceof HTMLElement && this.sec.contains(f) ? f.closest("tr")?.dataset.line : undefined;
    const where = this.where();
    const bar = this.total ? h("span", { class: "pos", title: where, "aria-hidden": "true" }, merged(this.read).map(([a, b]) =>
      h("span", { style: `left:${((a - 1) / this.total!) * 100}%;width:${Math.max(1, ((b - a + 1) / this.total!) * 100)}%` }))) : null;
    const rows: HTMLElement[] = [];
    let prev = 0;
    for (const n of [...this.lines.keys()].sort((a, b) => a - b)) {
      if (prev && n !== prev + 1) rows.push(h("tr", { class: "skip" }, h("td", { class: "n" }, "⋯"), h("td", null, "")));
      prev = n;
      const hit = this.hits.has(n);
      rows.push(h("tr", { "data-line": n, class: [hit && "hit", n === this.sel && "sel"].filter(Boolean).join(" ") || null, ...(hit ? { "data-item": true, tabindex: 0, title: "Enter or click: the lines around it" } : {}), onclick: hit ? () => this.open(n) : null },
        h("td", { class: "n" }, String(n)), h("td", null, this.marked(n), this.cut.has(n) ? h("span", { class: "meta" }, " […]") : null)));
    }
    let more: HTMLElement | null = null;
    if (this.next && !this.lines.has(this.next) && !this.covered(this.next)) {
      const from = this.next;
      more = h("button", { class: "more", "data-next": from }, this.lines.size ? `Next lines from ${from}` : "Read the file");
      more.addEventListener("click", () => {
        more!.setAttribute("disabled", "");
        more!.textContent = "Reading…";
        void this.fetch({ start_line: from }, [from, from]);
      });
    }
    clear(this.sec,
      h("header", null, h("span", { class: "path" }, this.path), h("span", { class: "meta where" }, where), bar),
      rows.length ? h("table", { class: "code" }, cols("4em", ""), h("tbody", null, rows)) : null,
      this.err ? h("p", { class: "error" }, this.err) : null,
      more ? h("div", { class: "bar" }, more) : null);
    if (focused) (this.sec.querySelector(`tr[data-line="${focused}"][data-item]`) as HTMLElement | null)?.focus();
  }

  // marked is line n with the search's matches (class hit) and find's in
  // marks. The matches apply while the line's text is (or begins with,
  // when the search cut it) the text they were found in.
  marked(n: number): (Node | string)[] {
    const t = this.lines.get(n)!;
    const fl = new Uint8Array(t.length);
    const set = (a: number, b: number, bit: number) => { for (let i = a; i < Math.min(b, t.length); i++) fl[i] |= bit; };
    const sp = this.spans.get(n);
    if (sp && t.startsWith(sp.t)) for (let i = 0; i + 1 < sp.s.length; i += 2) set(sp.s[i], sp.s[i + 1], 1);
    if (findM) for (const [a, b] of findM(t)) set(a, b, 2);
    const out: (Node | string)[] = [];
    for (let i = 0; i < t.length; ) {
      let j = i;
      while (j < t.length && fl[j] === fl[i]) j++;
      const s = t.slice(i, j);
      out.push(fl[i] ? h("mark", { class: ["", "hit", "find", "hit find"][fl[i]] }, s) : s);
      i = j;
    }
    return out;
  }
}

function merged(rs: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [a, b] of [...rs].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

function plural(n: number, s: string): string {
  return `${n} ${s}${n === 1 ? "" : "s"}`;
}

start("file", (v, sc, result) => {
  const workdir = sc.workdir || "";
  const search = sc.matches || sc.blocks || (sc.files && !Array.isArray(sc.files));
  const docs = search ? searchDocs(v, sc, result._meta?.["serverfs/spans"]) : (sc.files ? sc.files : sc.content !== undefined ? [sc] : []).map((w: Win) => {
    const d = new Doc(v, workdir, w.path);
    d.add(w);
    return d;
  });
  const input = h("input", { type: "search", placeholder: "Find (/)", "aria-label": "find", value: find }) as HTMLInputElement;
  const draw = () => docs.forEach((d: Doc) => d.draw());
  input.addEventListener("input", () => { find = input.value; findM = finder(find); draw(); });
  document.onkeydown = (e) => {
    if (e.key === "/" && document.activeElement !== input) { e.preventDefault(); input.focus(); }
    const t = e.target as HTMLElement;
    if (e.key === "Enter" && t.matches?.("tr[data-item]")) t.click();
  };
  const title = search ? `“${sc.query}” in ${workdir}${sc.path ? ":" + sc.path : ""}` : docs.length === 1 ? `${workdir}:${docs[0].path}` : `${docs.length} files in ${workdir}`;
  const meta = search ? (sc.matches || sc.blocks ? plural(sc.returned ?? 0, "matching line") + " in " : "") + plural(docs.length, "file") +
    (sc.truncated ? `, more past the ${sc.truncated_reason || "limit"}` : "") + ` · ${sc.files_scanned ?? 0} scanned` : "";
  clear(v.root, h("div", { class: "bar" }, h("h1", null, title), meta ? h("span", { class: "meta summary" }, meta) : null, input),
    h("div", { "data-list": "hits", "aria-label": search ? "matching lines" : "files" }, docs.map((d: Doc) => d.sec)));
  draw();
});

// searchDocs are search_text's files: their matching lines (and context),
// keyed relative to the searched path, read by their workdir path, with
// the matches the server found in them (spans, keyed as the files); the
// files and count modes have none.
function searchDocs(v: View, sc: any, spans: any): Doc[] {
  const base = sc.path && sc.path !== "." ? sc.path : "";
  const docs = new Map<string, Doc>();
  const doc = (k: string) => {
    let d = docs.get(k);
    if (!d) docs.set(k, (d = new Doc(v, sc.workdir || "", !base || k === base ? k : base + "/" + k)));
    return d;
  };
  for (const [k, ms] of Object.entries<[number, string][]>(sc.matches || {})) for (const [n, t] of ms) { doc(k).lines.set(n, t); doc(k).hits.add(n); }
  for (const [k, bs] of Object.entries<any[]>(sc.blocks || {})) for (const b of bs) {
    b.text.forEach((t: string, i: number) => doc(k).lines.set(b.line + i, t));
    for (const n of b.match) doc(k).hits.add(n);
  }
  if (sc.files && !Array.isArray(sc.files)) for (const [k, c] of Object.entries<number>(sc.files)) { doc(k).count = c || undefined; doc(k).next = 1; }
  for (const [k, ns] of Object.entries<number[]>(sc.text_truncated || {})) for (const n of ns) doc(k).cut.add(n);
  for (const [k, ls] of Object.entries<Record<string, number[]>>(spans || {})) {
    const d = docs.get(k);
    if (d) for (const [n, s] of Object.entries(ls)) { const t = d.lines.get(+n); if (t !== undefined) d.spans.set(+n, { t, s }); }
  }
  return [...docs.values()];
}
