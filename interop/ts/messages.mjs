// messages.mjs makes the official MCP TypeScript SDK's client send one of
// each request it has over Streamable HTTP (2025-11-25), so that
// interop/messages_test.go can decode what it sent into saguaro's public
// types.
//
//   node messages.mjs            (env MCP_URL, SDK_DIR)
//
// It prints "DONE" last; any failure exits 1.
import { pathToFileURL } from "node:url";

const SDK = process.env.SDK_DIR + "/node_modules/@modelcontextprotocol/sdk/dist/esm";
const { Client } = await import(pathToFileURL(SDK + "/client/index.js"));
const { StreamableHTTPClientTransport } = await import(pathToFileURL(SDK + "/client/streamableHttp.js"));
const { CreateMessageRequestSchema, ElicitRequestSchema } = await import(pathToFileURL(SDK + "/types.js"));

const client = new Client(
  { name: "interop-ts-messages", version: "0" },
  { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
);
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  role: "assistant",
  model: "ts-model",
  content: { type: "text", text: "4" },
  stopReason: "endTurn",
}));
client.setRequestHandler(ElicitRequestSchema, async () => ({
  action: "accept",
  content: { username: "ts-user", email: "ts@example.com" },
}));
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL)));

await client.ping();
await client.listTools();
await client.callTool({ name: "test_simple_text", arguments: {} });
await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, { onprogress: () => {} });
await client.callTool({ name: "test_sampling", arguments: { prompt: "2+2?" } });
await client.callTool({ name: "test_elicitation", arguments: { message: "Who are you?" } });
await client.listPrompts();
await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "a", arg2: "b" } });
await client.listResources();
await client.listResourceTemplates();
await client.readResource({ uri: "test://static-text" });
await client.subscribeResource({ uri: "test://watched-resource" });
await client.unsubscribeResource({ uri: "test://watched-resource" });
await client.setLoggingLevel("warning");
await client.complete({ ref: { type: "ref/prompt", name: "test_prompt_with_arguments" }, argument: { name: "arg1", value: "a" } });
await client.sendRootsListChanged();
await client.close();
console.log("DONE");
