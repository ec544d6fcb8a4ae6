// A minimal MCP Apps host for the Chromium test: the extension's own
// AppBridge (@modelcontextprotocol/ext-apps/app-bridge, 2.x) talks to a view in
// a sandboxed iframe; MCP requests go to /rpc on this page's origin, where
// the Go test forwards them to a real ServerFS over a session that
// declared the extension. Only read tools are forwarded from the view.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const READ_TOOLS = new Set(["read_text_file", "read_text_files", "read_repo_history", "inspect_repo"]);

async function rpc(method: string, params: unknown): Promise<any> {
  const r = await fetch("/rpc", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ method, params }) });
  const j = await r.json();
  if (j.error) throw new Error(j.error);
  return j.result;
}

// cspFor is the policy a host derives from the resource's _meta.ui.csp:
// inline script and style only, and the declared origins (none here).
function cspFor(csp: { connectDomains?: string[]; resourceDomains?: string[] } | undefined): string {
  const res = (csp?.resourceDomains || []).join(" ");
  const con = (csp?.connectDomains || []).join(" ") || "'none'";
  return `default-src 'none'; script-src 'unsafe-inline' ${res}; style-src 'unsafe-inline' ${res}; img-src data: ${res}; font-src ${res || "'none'"}; connect-src ${con}`;
}

declare global {
  interface Window { show: (tool: string, args: Record<string, unknown>, theme: "light" | "dark", result?: unknown) => Promise<string>; calls: string[] }
}

window.calls = [];

// show does what a host does for a tool call: find the tool's view in
// tools/list, read the ui:// resource, load it in a sandboxed frame, call
// the tool (or take the given result) and hand input and result to the view.
window.show = async (tool, args, theme, given) => {
  const tools = (await rpc("tools/list", {})).tools as any[];
  const def = tools.find((t) => t.name === tool);
  const uri = def?._meta?.ui?.resourceUri;
  if (!uri) throw new Error(tool + " declares no view");
  const res = (await rpc("resources/read", { uri })).contents[0];
  if (res.mimeType !== "text/html;profile=mcp-app") throw new Error("mime type " + res.mimeType);
  const html = String(res.text).replace("<head>", `<head><meta http-equiv="Content-Security-Policy" content="${cspFor(res._meta?.ui?.csp)}">`);
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.title = uri;
  document.body.replaceChildren(frame);
  const bridge = new AppBridge(null, { name: "serverfs-test-host", version: "0" }, { serverTools: {}, serverResources: {} }, {
    hostContext: { theme, displayMode: "inline", platform: "web", toolInfo: { tool: def } },
  });
  bridge.oncalltool = async (params) => {
    window.calls.push(params.name + " " + JSON.stringify(params.arguments));
    if (!READ_TOOLS.has(params.name)) throw new Error(params.name + " is not a read tool");
    return rpc("tools/call", params);
  };
  const ready = new Promise<void>((ok) => (bridge.oninitialized = () => ok()));
  // Listening before the view loads: its ui/initialize comes at once.
  await bridge.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
  frame.srcdoc = html;
  await ready;
  const result = given ?? (await rpc("tools/call", { name: tool, arguments: args }));
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result as any);
  return uri;
};
