// Unified diffs as git writes them: parsed into files and hunks, shown
// unified or side by side with line numbers, long unchanged runs and the
// lines between hunks collapsed.
import { h, cols as colgroup } from "./common";

export interface Line { k: " " | "+" | "-"; t: string; o?: number; n?: number }
export interface Hunk { oldStart: number; newStart: number; head: string; lines: Line[] }
export interface PatchFile { path: string; binary: boolean; hunks: Hunk[]; added: number; deleted: number }

export function parsePatch(patch: string): PatchFile[] {
  const files: PatchFile[] = [];
  let f: PatchFile | null = null;
  let hk: Hunk | null = null;
  let o = 0, n = 0;
  for (const line of (patch || "").split("\n")) {
    if (line.startsWith("diff --git ")) {
      const m = / b\/(.*)$/.exec(line);
      f = { path: m ? m[1] : line.slice(11), binary: false, hunks: [], added: 0, deleted: 0 };
      files.push(f);
      hk = null;
      continue;
    }
    if (!f) continue;
    if (line.startsWith("Binary files ")) { f.binary = true; continue; }
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/.exec(line);
    if (m) {
      o = +m[1]; n = +m[2];
      hk = { oldStart: o, newStart: n, head: line, lines: [] };
      f.hunks.push(hk);
      continue;
    }
    if (!hk) continue;
    const k = line[0];
    if (k === "+") { hk.lines.push({ k: "+", t: line.slice(1), n: n++ }); f.added++; }
    else if (k === "-") { hk.lines.push({ k: "-", t: line.slice(1), o: o++ }); f.deleted++; }
    else if (k === " ") hk.lines.push({ k: " ", t: line.slice(1), o: o++, n: n++ });
  }
  return files;
}

const KEEP = 3; // context lines kept each side of a collapsed run

function gapRow(cols: number, count: number, rows: HTMLElement[]): HTMLElement {
  const tr = h("tr", { class: "gap", tabindex: 0, title: "show the unchanged lines" },
    h("td", { colspan: cols }, `⋯ ${count} unchanged line${count === 1 ? "" : "s"}`));
  const open = () => { tr.replaceWith(...rows); };
  tr.addEventListener("click", open);
  tr.addEventListener("keydown", (e) => { if ((e as KeyboardEvent).key === "Enter") open(); });
  return tr;
}

// segments splits a hunk's lines into runs of context and runs of changes.
function segments(lines: Line[]): Line[][] {
  const out: Line[][] = [];
  for (const l of lines) {
    const ctx = l.k === " ";
    const last = out[out.length - 1];
    if (last && (last[0].k === " ") === ctx) last.push(l);
    else out.push([l]);
  }
  return out;
}

function num(x?: number) { return x === undefined ? "" : String(x); }

export function renderFile(f: PatchFile, split: boolean): HTMLElement {
  const cols = split ? 6 : 4;
  const body = h("tbody");
  let prevOldEnd = 1;
  for (const hk of f.hunks) {
    const between = hk.oldStart - prevOldEnd;
    if (between > 0 && prevOldEnd > 1) body.append(h("tr", { class: "gap" }, h("td", { colspan: cols }, `⋯ ${between} unchanged line${between === 1 ? "" : "s"}`)));
    body.append(h("tr", { class: "hunk" }, h("td", { colspan: cols }, hk.head)));
    const segs = segments(hk.lines);
    segs.forEach((seg, i) => {
      if (seg[0].k === " ") {
        const rows = seg.map((l) => ctxRow(l, split));
        const headKeep = i === 0 ? 0 : KEEP, tailKeep = i === segs.length - 1 ? 0 : KEEP;
        if (seg.length > headKeep + tailKeep + 2) {
          body.append(...rows.slice(0, headKeep), gapRow(cols, seg.length - headKeep - tailKeep, rows.slice(headKeep, seg.length - tailKeep)), ...rows.slice(seg.length - tailKeep));
        } else body.append(...rows);
      } else body.append(...changeRows(seg, split));
    });
    const last = hk.lines.filter((l) => l.o !== undefined).pop();
    prevOldEnd = last?.o !== undefined ? last.o + 1 : hk.oldStart;
  }
  const w = split ? ["3.5em", "1.2em", "", "3.5em", "1.2em", ""] : ["3.5em", "3.5em", "1.2em", ""];
  return h("table", { class: "code" }, colgroup(...w), body);
}

function ctxRow(l: Line, split: boolean): HTMLElement {
  if (split) return h("tr", null, h("td", { class: "n" }, num(l.o)), h("td", { class: "s" }, ""), h("td", null, l.t), h("td", { class: "n" }, num(l.n)), h("td", { class: "s" }, ""), h("td", null, l.t));
  return h("tr", null, h("td", { class: "n" }, num(l.o)), h("td", { class: "n" }, num(l.n)), h("td", { class: "s" }, " "), h("td", null, l.t));
}

function changeRows(seg: Line[], split: boolean): HTMLElement[] {
  if (!split) {
    return seg.map((l) => h("tr", { class: l.k === "+" ? "add" : "del" }, h("td", { class: "n" }, num(l.o)), h("td", { class: "n" }, num(l.n)), h("td", { class: "s" }, l.k), h("td", null, l.t)));
  }
  const dels = seg.filter((l) => l.k === "-"), adds = seg.filter((l) => l.k === "+");
  const rows: HTMLElement[] = [];
  for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
    const d = dels[i], a = adds[i];
    rows.push(h("tr", null,
      h("td", { class: "n" }, num(d?.o)), h("td", { class: "s " + (d ? "del" : "empty") }, d ? "-" : ""), h("td", { class: d ? "del" : "empty" }, d ? d.t : ""),
      h("td", { class: "n" }, num(a?.n)), h("td", { class: "s " + (a ? "add" : "empty") }, a ? "+" : ""), h("td", { class: a ? "add" : "empty" }, a ? a.t : "")));
  }
  return rows;
}
