// Change review: inspect_repo's diff, staged_diff and changes views and
// submit_workspace's answers (merged, base moved, merge conflict).
import { start, h, clear, short, type View } from "./common";
import { parsePatch, renderFile, type PatchFile } from "./diff";

interface DiffFile { path: string; change: string; binary?: boolean; not_utf8?: boolean; patch_omitted?: boolean }

let split = false;

start("changes", (v, sc) => render(v, sc));

function render(v: View, sc: any) {
  if (sc.diff) return renderDiff(v, sc);
  if (sc.workspace !== undefined && sc.status !== undefined && typeof sc.status === "string") return renderSubmit(v, sc);
  if (sc.status) return renderStatus(v, sc);
  clear(v.root, h("p", { class: "note" }, `Nothing to review in inspect_repo's ${sc.view || ""} view.`));
}

const SIGN: Record<string, string> = { added: "A", modified: "M", deleted: "D", type_changed: "T", mode_changed: "M", unchanged: "=", untracked: "?", unmerged: "U", too_large: "!" };

function renderDiff(v: View, sc: any) {
  const d = sc.diff;
  const parsed = parsePatch(d.patch);
  const byPath = new Map<string, PatchFile>(parsed.map((p) => [p.path, p]));
  const files: DiffFile[] = d.files && d.files.length ? d.files : parsed.map((p) => ({ path: p.path, change: "modified", binary: p.binary }));
  let added = 0, deleted = 0;
  for (const p of parsed) { added += p.added; deleted += p.deleted; }
  const main = h("div");
  const list = h("ul", { class: "list", "data-list": "files", "aria-label": "files" });
  let sel = 0;
  const show = (i: number) => {
    sel = i;
    list.querySelectorAll("li").forEach((li, j) => li.setAttribute("aria-selected", String(j === i)));
    clear(main, fileSection(files[i], byPath.get(files[i].path)));
  };
  files.forEach((f, i) => {
    const p = byPath.get(f.path);
    list.append(h("li", { "data-item": true, tabindex: 0, role: "option", "data-path": f.path, onclick: () => show(i), onkeydown: (e: KeyboardEvent) => { if (e.key === "Enter") show(i); } },
      h("span", { class: "st st-" + f.change, title: f.change }, SIGN[f.change] || "?"),
      h("span", { class: "path" }, f.path),
      p && !p.binary ? [h("span", { class: "plus" }, "+" + p.added), h("span", { class: "minus" }, "−" + p.deleted)] : null,
      f.binary || p?.binary ? h("span", { class: "meta" }, "binary") : null,
      f.change === "too_large" ? h("span", { class: "meta" }, "too large") : null));
  });
  const modes = modeButtons(() => show(sel));
  const title = sc.view === "staged_diff" || d.staged ? "Staged changes" : sc.view === "changes" ? "Uncommitted changes" : "Changes";
  const branch = sc.status ? ` on ${sc.status.branch} at ${short(sc.status.head)}` : "";
  clear(v.root,
    h("h1", null, `${title} in ${sc.workdir || d.workdir}${branch}`),
    h("div", { class: "bar" },
      h("span", { class: "summary" }, `${files.length} file${files.length === 1 ? "" : "s"}, `, h("span", { class: "plus" }, `+${added}`), " ", h("span", { class: "minus" }, `−${deleted}`)),
      modes,
      d.truncated ? h("span", { class: "meta truncated" }, `patch cut (${d.truncated_reason || "max_bytes"}): ask for fewer paths or a larger max_bytes`) : null),
    files.length ? h("div", { class: "cols" }, list, main) : h("p", { class: "note" }, "No changes."));
  if (files.length) show(0);
}

function modeButtons(redraw: () => void): HTMLElement {
  const u = h("button", { "aria-pressed": String(!split), "data-mode": "unified", title: "unified (u)" }, "Unified");
  const s = h("button", { "aria-pressed": String(split), "data-mode": "split", title: "side by side (s)" }, "Side by side");
  const set = (x: boolean) => { split = x; u.setAttribute("aria-pressed", String(!x)); s.setAttribute("aria-pressed", String(x)); redraw(); };
  u.addEventListener("click", () => set(false));
  s.addEventListener("click", () => set(true));
  document.onkeydown = (e) => {
    if ((e.target as HTMLElement).tagName === "INPUT") return;
    if (e.key === "u") set(false);
    if (e.key === "s") set(true);
  };
  return h("span", { class: "modes" }, u, s);
}

function fileSection(f: DiffFile, p: PatchFile | undefined): HTMLElement {
  let body: HTMLElement;
  if (f.binary || p?.binary) body = h("p", { class: "note" }, `${f.path}: binary file, not shown`);
  else if (f.change === "too_large") body = h("p", { class: "note" }, `${f.path}: too large to diff (over 8 MiB or 262,144 lines)`);
  else if (f.not_utf8) body = h("p", { class: "note" }, `${f.path}: not UTF-8, not shown`);
  else if (f.patch_omitted && !p) body = h("p", { class: "note" }, `${f.path}: left out of the patch by max_bytes`);
  else if (!p || !p.hunks.length) body = h("p", { class: "note" }, `${f.path}: ${f.change}, no text changes`);
  else body = renderFile(p, split);
  return h("section", { class: "file", "data-path": f.path }, h("header", null, h("span", { class: "st st-" + f.change }, SIGN[f.change] || "?"), h("span", { class: "path" }, f.path)), body);
}

function renderStatus(v: View, sc: any) {
  const s = sc.status;
  clear(v.root, h("h1", null, `${sc.workdir}: ${s.branch} at ${short(s.head)}`),
    h("ul", { class: "list", "data-list": "status" }, (s.entries || []).map((e: any) =>
      h("li", { "data-item": true, tabindex: 0 }, h("span", { class: "st" }, `${e.staged}${e.unstaged}`), h("span", { class: "path" }, e.path)))));
}

function renderSubmit(v: View, sc: any) {
  const parts: HTMLElement[] = [];
  const head = sc.code ? `${sc.code}: ${sc.workspace} into ${sc.branch}` : `${sc.workspace} ${sc.status} into ${sc.branch}`;
  parts.push(h("h1", { class: sc.code ? "error" : "" }, head));
  const p = sc.patch;
  if (p) {
    const ds = p.diffstat || {};
    parts.push(h("div", { class: "bar" }, h("span", { class: "summary" }, `${ds.files ?? (p.files_changed || []).length} file${ds.files === 1 ? "" : "s"}, `, h("span", { class: "plus" }, `+${ds.insertions || 0}`), " ", h("span", { class: "minus" }, `−${ds.deletions || 0}`)),
      sc.from ? h("span", { class: "meta" }, sc.to ? `${short(sc.from)} → ${short(sc.to)}` : `branch at ${short(sc.from)}`) : null));
    parts.push(h("ul", { class: "list", "data-list": "files" }, (p.files_changed || []).map((f: string) =>
      h("li", { "data-item": true, tabindex: 0, "data-path": f }, h("span", { class: "st" + ((sc.files || []).includes(f) ? " st-D" : "") }, (sc.files || []).includes(f) ? "U" : "M"), h("span", { class: "path" }, f)))));
  }
  for (const hk of sc.hunks || []) {
    parts.push(h("section", { class: "conflict", "data-path": hk.file },
      h("header", null, h("span", { class: "path" }, hk.file), h("span", { class: "meta" }, ` line ${hk.line}`)),
      side("ours", `<<<<<<< ours (branch ${sc.branch})`, hk.ours),
      hk.base !== undefined ? side("base", "||||||| base", hk.base) : null,
      side("theirs", `>>>>>>> theirs (workspace ${sc.workspace})`, hk.theirs)));
  }
  if (sc.hunks_truncated || sc.artifact) parts.push(h("p", { class: "note" }, sc.artifact ? `conflict artifact ${short(sc.artifact.sha256)} (${sc.artifact.bytes} bytes)` : ""));
  clear(v.root, ...parts);
}

function side(cls: string, label: string, text: string): HTMLElement {
  return h("pre", { class: "side " + cls }, h("span", { class: "lbl" }, label), text || "");
}
