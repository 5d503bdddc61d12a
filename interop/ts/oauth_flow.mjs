// oauth_flow.mjs drives the official MCP TypeScript SDK client through the
// example app's OAuth flow, headless: a 401 sends the SDK to the protected
// resource metadata, the authorization server's metadata and dynamic
// registration; the authorization URL it hands to "the browser" is opened
// with fetch (the app's development approval answers it); the SDK then
// exchanges the code, calls a tool, refreshes its token when the access
// token is refused, meets a 403 insufficient_scope on a write tool with
// its read-only grant, steps up to tasks:write and succeeds.
//
//   node oauth_flow.mjs            (env MCP_URL, SDK_DIR)
//
// It prints one JSON line per step ({"step": ..., ...}) and "DONE" last;
// interop/oauth_test.go checks them. Any failure exits 1.
import { pathToFileURL } from "node:url";

const MCP_URL = process.env.MCP_URL;
const SDK = process.env.SDK_DIR + "/node_modules/@modelcontextprotocol/sdk/dist/esm";
const { Client } = await import(pathToFileURL(SDK + "/client/index.js"));
const { StreamableHTTPClientTransport } = await import(pathToFileURL(SDK + "/client/streamableHttp.js"));
const { auth, UnauthorizedError } = await import(pathToFileURL(SDK + "/client/auth.js"));

const log = (step, extra = {}) => console.log(JSON.stringify({ step, ...extra }));
const REDIRECT = "http://127.0.0.1:1/callback"; // never reached: the code is read from the redirect

// Every HTTP request the SDK makes, for the test to check the order.
const requests = [];
const loggingFetch = async (url, init = {}) => {
  const u = new URL(url instanceof Request ? url.url : url);
  let note = "";
  if (init.body && typeof init.body === "string") {
    const grant = new URLSearchParams(init.body).get("grant_type");
    if (grant) note = grant;
    else if (u.pathname.endsWith("/mcp")) note = JSON.parse(init.body).method ?? "";
  } else if (init.body instanceof URLSearchParams) {
    note = init.body.get("grant_type") ?? "";
  }
  const res = await fetch(url, init);
  requests.push(`${init.method ?? "GET"} ${u.pathname} ${note} ${res.status}`.trim());
  return res;
};

// An in-memory OAuthClientProvider; "the browser" is pendingURL.
let pendingURL = null;
const store = { client: undefined, tokens: undefined, verifier: undefined };
const provider = {
  get redirectUrl() { return REDIRECT; },
  get clientMetadata() {
    return { client_name: "ts-sdk headless", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  state() { return "state-" + Math.random().toString(36).slice(2); },
  clientInformation() { return store.client; },
  saveClientInformation(info) { store.client = info; log("registered", { client_id: info.client_id }); },
  tokens() { return store.tokens; },
  saveTokens(t) { store.tokens = t; log("tokens", { scope: t.scope, refresh: !!t.refresh_token }); },
  redirectToAuthorization(url) { pendingURL = url; },
  saveCodeVerifier(v) { store.verifier = v; },
  codeVerifier() { return store.verifier; },
  invalidateCredentials(scope) {
    if (scope === "all" || scope === "client") store.client = undefined;
    if (scope === "all" || scope === "tokens") store.tokens = undefined;
  },
};

// openAuthorization plays the browser: it follows the authorization
// server's redirects until one leads to the client's redirect URI, and
// returns that URI's code.
async function openAuthorization() {
  if (!pendingURL) throw new Error("the SDK asked for no authorization");
  let url = pendingURL.toString();
  pendingURL = null;
  const sent = new URL(url);
  if (sent.searchParams.get("code_challenge_method") !== "S256") throw new Error("no S256 PKCE");
  log("authorize", { scope: sent.searchParams.get("scope"), resource: sent.searchParams.get("resource") });
  for (let i = 0; i < 5; i++) {
    const res = await fetch(url, { redirect: "manual" });
    const loc = res.headers.get("location");
    if (!loc) throw new Error(`authorization stopped at ${url}: ${res.status} ${await res.text()}`);
    if (loc.startsWith(REDIRECT)) {
      const back = new URL(loc);
      if (back.searchParams.get("error")) throw new Error("authorization error: " + back.searchParams.get("error"));
      if (back.searchParams.get("state") !== sent.searchParams.get("state")) throw new Error("state mismatch");
      return back.searchParams.get("code");
    }
    url = new URL(loc, url).toString();
  }
  throw new Error("too many redirects");
}

const text = (res) => res.content.map((c) => c.text ?? "").join("");

function newTransport() {
  return new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider, fetch: loggingFetch });
}

// 1. Connect: 401, discovery, registration, authorization, code exchange.
let transport = newTransport();
let client = new Client({ name: "ts-sdk-oauth", version: "1.0.0" });
try {
  await client.connect(transport);
  throw new Error("connected without authorization");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
}
log("unauthorized");
await transport.finishAuth(await openAuthorization());
transport = newTransport();
client = new Client({ name: "ts-sdk-oauth", version: "1.0.0" });
await client.connect(transport);
log("connected", { protocol: transport.protocolVersion ?? "", session: !!transport.sessionId });

// 2. A read tool with the read-only grant.
let res = await client.callTool({ name: "list_tasks", arguments: {} });
if (res.isError) throw new Error("list_tasks: " + text(res));
log("list_tasks", { ok: true });

// 3. Refresh: the access token is refused (it is spoiled here), the SDK
// refreshes with its refresh token and retries.
const before = store.tokens.refresh_token;
store.tokens = { ...store.tokens, access_token: store.tokens.access_token.slice(0, -4) + "AAAA" };
res = await client.callTool({ name: "list_tasks", arguments: {} });
if (res.isError) throw new Error("list_tasks after refresh: " + text(res));
if (store.tokens.refresh_token === before) throw new Error("the refresh token did not rotate");
log("refreshed", { rotated: true });

// 4. A write tool with the read-only grant: 403 insufficient_scope. The
// SDK retries once with a refreshed token of the same scope and gives up;
// the application then steps up: new authorization for the challenged
// scope, then the call again.
let challenged = "";
try {
  res = await client.callTool({ name: "add_task", arguments: { title: "Added after step-up" } });
  throw new Error("add_task succeeded with a read-only grant");
} catch (e) {
  if (!String(e.message).includes("403")) throw e;
  log("forbidden", { message: String(e.message).slice(0, 80) });
}
const challenge = requests.filter((r) => r.includes("/mcp tools/call 403"));
if (challenge.length === 0) throw new Error("no 403 seen: " + requests.join(" | "));
provider.invalidateCredentials("tokens");
const stepUp = await auth(provider, { serverUrl: new URL(MCP_URL), scope: "tasks:read tasks:write", fetchFn: loggingFetch });
if (stepUp !== "REDIRECT") throw new Error("step-up did not ask for authorization: " + stepUp);
await transport.finishAuth(await openAuthorization());
if (!String(store.tokens.scope).includes("tasks:write")) throw new Error("no tasks:write after step-up: " + store.tokens.scope);
res = await client.callTool({ name: "add_task", arguments: { title: "Added after step-up" } });
if (res.isError) throw new Error("add_task after step-up: " + text(res));
log("stepped_up", { task: res.structuredContent?.id ?? "" });

res = await client.callTool({ name: "list_tasks", arguments: {} });
const titles = (res.structuredContent?.tasks ?? []).map((t) => t.title);
if (!titles.includes("Added after step-up")) throw new Error("the new task is not listed: " + JSON.stringify(titles));
log("listed", { count: titles.length });
await client.close();
log("requests", { requests });
console.log("DONE");
