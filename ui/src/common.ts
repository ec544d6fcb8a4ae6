// Shared by the three views: the App connection to the host, theming,
// DOM helpers and the read-only tool calls a view may make.
import { Host, applyContext } from "./bridge";
import type { CallToolResult } from "@modelcontextprotocol/client";

// The tools a view may call through the host: reads only. A view never
// writes; a write goes through the model and the host's confirmation.
const READ_TOOLS = new Set(["read_text_file", "read_text_files", "read_repo_history", "inspect_repo"]);

export type Props = Record<string, unknown> | null;
export type Child = Node | string | null | undefined | false;

export function h(tag: string, props: Props = null, ...children: (Child | Child[])[]): HTMLElement {
  const e = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v as EventListener);
      else if (k === "class") e.className = String(v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}

export function clear(e: Element, ...children: (Child | Child[])[]) {
  e.replaceChildren();
  for (const c of children.flat()) if (c) e.append(typeof c === "string" ? document.createTextNode(c) : c);
}

export function short(id: string | undefined): string {
  return (id || "").slice(0, 10);
}

export interface View {
  host: Host;
  root: HTMLElement;
  args: Record<string, unknown>;
  // read calls a read tool through the host and returns its result.
  read(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
}

// start connects to the host and calls render with each tool result's
// structuredContent (or its text, when the tool failed).
export function start(name: string, render: (v: View, sc: any, result: CallToolResult) => void) {
  const root = document.getElementById("app")!;
  const view: View = {
    host: null as unknown as Host,
    root,
    args: {},
    async read(tool, args) {
      if (!READ_TOOLS.has(tool)) throw new Error(tool + " is not a read tool");
      return view.host.callTool(tool, args);
    },
  };
  view.host = new Host({ name: "serverfs-" + name, version: "1" }, {
    toolInput: (p) => {
      view.args = (p.arguments as Record<string, unknown>) || {};
    },
    toolResult: (r) => {
      const result = r as CallToolResult;
      if (result.isError && !result.structuredContent) {
        clear(root, h("pre", { class: "error" }, textOf(result)));
        return;
      }
      render(view, result.structuredContent || {}, result);
    },
    context: applyContext,
  });
  view.host.connect().catch((e) => clear(root, h("pre", { class: "error" }, "host: " + String(e))));
  listKeys(root);
}

export function textOf(r: CallToolResult): string {
  return (r.content || []).map((c: any) => (c.type === "text" ? c.text : "")).join("\n");
}

// listKeys: ArrowUp/ArrowDown (and j/k) move the focus between the items
// of the list that holds it; Home/End jump to its ends.
function listKeys(root: HTMLElement) {
  root.addEventListener("keydown", (ev) => {
    const t = ev.target as HTMLElement;
    const list = t.closest("[data-list]");
    if (!list || !t.matches("[data-item]")) return;
    const items = Array.from(list.querySelectorAll<HTMLElement>("[data-item]"));
    let i = items.indexOf(t);
    switch (ev.key) {
      case "ArrowDown":
      case "j":
        i = Math.min(items.length - 1, i + 1);
        break;
      case "ArrowUp":
      case "k":
        i = Math.max(0, i - 1);
        break;
      case "Home":
        i = 0;
        break;
      case "End":
        i = items.length - 1;
        break;
      default:
        return;
    }
    ev.preventDefault();
    items[i].focus();
    items[i].click();
  });
}

// cols fixes a code table's column widths (table-layout: fixed takes them
// from the first row otherwise, which may be a hunk header spanning all).
export function cols(...widths: string[]): HTMLElement {
  return h("colgroup", null, widths.map((w) => h("col", w ? { style: "width:" + w } : null)));
}
