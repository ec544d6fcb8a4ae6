// The view's side of the MCP Apps protocol (io.modelcontextprotocol/ui):
// JSON-RPC 2.0 over postMessage with the host window. The extension's
// App class (@modelcontextprotocol/ext-apps) validates every message with
// the MCP SDK's zod schemas, which alone put a view at about 300 KB; this
// speaks the same messages, typed by the package's spec types, in a few
// KB. The Chromium test drives it with the package's own AppBridge host.
import type {
  McpUiHostContext,
  McpUiInitializeRequest,
  McpUiInitializeResult,
  McpUiInitializedNotification,
  McpUiToolInputNotification,
  McpUiToolResultNotification,
  McpUiHostContextChangedNotification,
  McpUiResourceTeardownRequest,
  McpUiSizeChangedNotification,
} from "@modelcontextprotocol/ext-apps";
import type { CallToolResult } from "@modelcontextprotocol/client";

const PROTOCOL_VERSION = "2026-01-26"; // ext-apps LATEST_PROTOCOL_VERSION

type Handlers = {
  toolInput?: (p: McpUiToolInputNotification["params"]) => void;
  toolResult?: (p: McpUiToolResultNotification["params"]) => void;
  context?: (c: McpUiHostContext) => void;
};

export class Host {
  private next = 1;
  private pending = new Map<number, { ok: (v: any) => void; fail: (e: Error) => void }>();
  context: McpUiHostContext = {};

  constructor(private appInfo: { name: string; version: string }, private on: Handlers) {
    window.addEventListener("message", (ev) => {
      if (ev.source !== window.parent) return;
      this.receive(ev.data);
    });
  }

  private post(msg: object) {
    window.parent.postMessage({ jsonrpc: "2.0", ...msg }, "*");
  }

  request<R>(method: string, params: object): Promise<R> {
    const id = this.next++;
    return new Promise((ok, fail) => {
      this.pending.set(id, { ok, fail });
      this.post({ id, method, params });
    });
  }

  notify(method: string, params: object = {}) {
    this.post({ method, params });
  }

  private receive(m: any) {
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined && m.id !== undefined) {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error) p.fail(new Error(m.error.message));
      else p.ok(m.result);
      return;
    }
    switch (m.method as string) {
      case "ui/notifications/tool-input" satisfies McpUiToolInputNotification["method"]:
        this.on.toolInput?.(m.params);
        break;
      case "ui/notifications/tool-result" satisfies McpUiToolResultNotification["method"]:
        this.on.toolResult?.(m.params);
        break;
      case "ui/notifications/host-context-changed" satisfies McpUiHostContextChangedNotification["method"]:
        this.context = { ...this.context, ...m.params };
        this.on.context?.(this.context);
        break;
      case "ui/resource-teardown" satisfies McpUiResourceTeardownRequest["method"]:
      case "ping":
        this.post({ id: m.id, result: {} });
        break;
      default:
        if (m.id !== undefined) this.post({ id: m.id, error: { code: -32601, message: "method not found: " + m.method } });
    }
  }

  async connect() {
    const params: McpUiInitializeRequest["params"] = { appInfo: this.appInfo, appCapabilities: {}, protocolVersion: PROTOCOL_VERSION };
    const r = await this.request<McpUiInitializeResult>("ui/initialize" satisfies McpUiInitializeRequest["method"], params);
    this.context = r.hostContext || {};
    this.on.context?.(this.context);
    this.notify("ui/notifications/initialized" satisfies McpUiInitializedNotification["method"]);
    this.watchSize();
  }

  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return this.request<CallToolResult>("tools/call", { name, arguments: args });
  }

  // watchSize tells the host the document's size as it changes, so that
  // the frame fits its content.
  private watchSize() {
    let last = "";
    const send = () => {
      const p: McpUiSizeChangedNotification["params"] = { width: Math.ceil(document.documentElement.scrollWidth), height: Math.ceil(document.documentElement.scrollHeight) };
      const k = p.width + "x" + p.height;
      if (k === last) return;
      last = k;
      this.notify("ui/notifications/size-changed" satisfies McpUiSizeChangedNotification["method"], p);
    };
    new ResizeObserver(send).observe(document.documentElement);
  }
}

// applyContext applies the host's theme and style variables.
export function applyContext(ctx: McpUiHostContext) {
  const root = document.documentElement;
  if (ctx.theme) {
    root.dataset.theme = ctx.theme;
    root.style.colorScheme = ctx.theme;
  }
  const vars = ctx.styles?.variables as Record<string, string | undefined> | undefined;
  for (const [k, v] of Object.entries(vars || {})) if (v) root.style.setProperty(k, v);
}
