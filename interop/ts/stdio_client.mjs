// stdio_client.mjs drives the example app over stdio with the official MCP
// TypeScript SDK's StdioClientTransport, as a desktop client does: the SDK
// starts the app as its own child process (-stdio) and speaks
// newline-delimited JSON-RPC on its standard input and output. It lists and
// calls tools, follows an import's progress, answers the app's sampling
// request, cancels a call while its sampling request waits (the app must
// cancel that request too), and subscribes to a task to hear it change.
//
//   node stdio_client.mjs            (env APP_BIN, APP_DATA, SDK_DIR)
//
// It prints one JSON line per step ({"step": ..., ...}) and "DONE" last;
// interop/stdio_test.go checks them. Any failure exits 1.
import { pathToFileURL } from "node:url";

const SDK = process.env.SDK_DIR + "/node_modules/@modelcontextprotocol/sdk/dist/esm";
const { Client } = await import(pathToFileURL(SDK + "/client/index.js"));
const { StdioClientTransport } = await import(pathToFileURL(SDK + "/client/stdio.js"));
const { CreateMessageRequestSchema, ProgressNotificationSchema, ResourceUpdatedNotificationSchema } = await import(
  pathToFileURL(SDK + "/types.js")
);

const log = (step, extra = {}) => console.log(JSON.stringify({ step, ...extra }));
const SUMMARY = "Two tasks are open; start with the tests.";
const withTimeout = (p, ms, what) =>
  Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(what + ": timed out")), ms))]);

const transport = new StdioClientTransport({
  command: process.env.APP_BIN,
  args: ["-stdio", "-data", process.env.APP_DATA],
  env: { EXAMPLE_USER: "interop-ts" },
  stderr: "inherit",
});
const client = new Client({ name: "interop-ts-stdio", version: "0" }, { capabilities: { sampling: {} } });

// Sampling: answer at once, or hold until the app cancels the request.
let hold = false;
let heldStarted;
const heldStartedP = new Promise((r) => (heldStarted = r));
let heldEnded;
const heldEndedP = new Promise((r) => (heldEnded = r));
client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
  if (!hold) {
    return { role: "assistant", model: "ts-model", content: { type: "text", text: SUMMARY } };
  }
  heldStarted(req.params.messages.length);
  await new Promise((resolve) => extra.signal.addEventListener("abort", resolve, { once: true }));
  heldEnded(String(extra.signal.reason ?? "aborted"));
  throw new Error("cancelled");
});
const updates = [];
let updated;
const updatedP = new Promise((r) => (updated = r));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  updates.push(n.params.uri);
  updated(n.params.uri);
});

await client.connect(transport);
log("connected", { server: client.getServerVersion().name, version: transport._process ? "spawned" : "?" });

const tools = await client.listTools();
log("list", { tools: tools.tools.map((t) => t.name).sort() });

const added = await client.callTool({ name: "add_task", arguments: { title: "from TypeScript over stdio" } });
log("call", { title: added.structuredContent.title, isError: added.isError ?? false });
const uri = "tasks://" + added.structuredContent.id;

// Progress is read off the wire with a notification handler, not with
// callTool's onprogress: over stdio the app writes the last progress
// notification and the result back to back, the SDK reads both in one
// chunk, handles the response at once and the notification a microtask
// later, after it dropped the call's progress callback (a known SDK race,
// reported upstream, that a server cannot avoid).
const progress = [];
client.setNotificationHandler(ProgressNotificationSchema, (n) =>
  progress.push([n.params.progressToken, n.params.progress, n.params.total]),
);
const imported = await client.callTool({
  name: "import_tasks",
  arguments: { titles: ["t1", "t2", "t3"] },
  _meta: { progressToken: "ts-import" },
});
await new Promise((r) => setTimeout(r, 50)); // the notifications' microtasks
log("progress", { imported: imported.structuredContent.imported, progress });

const summary = await client.callTool({ name: "summarize_tasks", arguments: {} });
log("sampling", { summary: summary.structuredContent.summary, source: summary.structuredContent.source });

hold = true;
const ac = new AbortController();
const call = client.callTool({ name: "summarize_tasks", arguments: {} }, undefined, { signal: ac.signal });
await withTimeout(heldStartedP, 10000, "the held sampling request");
ac.abort("the user stopped it");
let callError = "";
try {
  await call;
} catch (e) {
  callError = String(e?.message ?? e);
}
const reason = await withTimeout(heldEndedP, 10000, "the app's cancellation of its sampling request");
hold = false;
await client.ping();
log("cancel", { callRejected: callError !== "", samplingCancelled: reason !== "" });

await client.subscribeResource({ uri });
const read = await client.readResource({ uri });
await client.callTool({ name: "complete_task", arguments: { id: added.structuredContent.id } });
const got = await withTimeout(updatedP, 10000, "resources/updated");
log("subscribe", { read: read.contents[0].text.includes("from TypeScript over stdio"), updated: got === uri });

await client.close();
console.log("DONE");
