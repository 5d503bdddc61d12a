// A small MCP Apps host for the browser test: an MCP client (the official
// TypeScript client) connected to the server behind /mcp, which a real
// host's backend would hold the user's token for; the model's turn is
// scripted (list the tools, call the one that has a view); the view is
// rendered through app-bridge in a sandbox proxy on another origin, as
// the extension asks of web hosts. Every message between the host and the
// view is recorded in window.hostLog for the test to check against the
// extension's schema.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const params = new URLSearchParams(location.search);
const log = (window.hostLog = { protocolVersion: "", messages: [], tools: null, result: null, resource: null, errors: [] });
const state = (s) => {
  const el = document.getElementById("state");
  el.dataset.state = s;
  el.textContent = s;
};

async function main() {
  const client = new Client(
    { name: "saguaro-test-host", version: "1.0.0" },
    {
      capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } },
      versionNegotiation: params.get("era") === "modern" ? { mode: { pin: "2026-07-28" } } : undefined,
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  log.protocolVersion = client.getNegotiatedProtocolVersion();
  document.getElementById("server").textContent = client.getServerVersion().name + " · " + log.protocolVersion;

  // The model's turn: the tools it may see, and the one that has a view.
  const { tools } = await client.listTools();
  log.tools = tools;
  const modelTools = tools.filter((t) => !isToolVisibilityAppOnly(t));
  const tool = modelTools.find((t) => t.name === (params.get("tool") || "list_tasks"));
  const uri = getToolUiResourceUri(tool);
  document.getElementById("tool").textContent = tool.name;
  const result = await client.callTool({ name: tool.name, arguments: {} });
  log.result = result;
  document.getElementById("text").textContent = result.content.map((c) => c.text || "").join(" ").slice(0, 200);

  const read = await client.readResource({ uri });
  log.resource = read;
  const contents = read.contents[0];
  if (contents.mimeType !== RESOURCE_MIME_TYPE) throw new Error("not a view: " + contents.mimeType);
  const ui = (contents._meta && contents._meta.ui) || {};

  // The view, through the sandbox proxy.
  const frame = document.createElement("iframe");
  frame.id = "sandbox";
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  if (ui.prefersBorder === false) frame.style.border = "0";
  document.getElementById("view").append(frame);

  const bridge = new AppBridge(
    client,
    { name: "saguaro-test-host", version: "1.0.0" },
    { serverTools: {}, serverResources: {}, logging: {} },
    { hostContext: { theme: "light", displayMode: "inline", availableDisplayModes: ["inline"], platform: "web" } },
  );
  bridge.onsandboxready = () => {
    bridge.sendSandboxResourceReady({ html: contents.text, csp: ui.csp, permissions: ui.permissions });
  };
  bridge.oninitialized = () => {
    bridge.sendToolInput({ arguments: {} });
    bridge.sendToolResult(result);
    state("rendered");
  };
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = height + 2 + "px";
  };
  const transport = new PostMessageTransport(frame.contentWindow, frame.contentWindow);
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    log.messages.push({ from: "host", message });
    return send(message, options);
  };
  window.addEventListener("message", (e) => {
    if (e.source === frame.contentWindow) log.messages.push({ from: "view", message: e.data });
  });
  await bridge.connect(transport);
  // The view may call only tools whose visibility includes it.
  const forward = bridge.oncalltool;
  bridge.oncalltool = async (p, extra) => {
    const t = tools.find((x) => x.name === p.name);
    const vis = t && t._meta && t._meta.ui && t._meta.ui.visibility;
    if (!t || (vis && !vis.includes("app"))) throw new Error("tool " + p.name + " is not the view's to call");
    return forward(p, extra);
  };
  frame.src = params.get("sandbox") + "/sandbox.html";
  state("loading");
}

main().catch((e) => {
  log.errors.push(String((e && e.stack) || e));
  state("failed: " + e);
});
