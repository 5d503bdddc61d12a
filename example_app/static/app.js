// The dashboard: one EventSource on /events. The first event is a
// snapshot of the board; every later "task" event updates it in place, and
// "task", "mcp" and "broadcast" events are listed in the live feed. The
// browser reconnects by itself with Last-Event-ID, and the server replays
// what it missed.
//
// Signing in uses the app's own authorization server, like any OAuth
// client: the authorization code flow with PKCE (S256), as the public
// client "dashboard" whose redirect URI is this page. The access token is
// kept in sessionStorage (this tab only) and sent to the JSON API to add
// and complete tasks; the changes come back, to every dashboard, through
// /events.
(function () {
  "use strict";
  const tasks = new Map();
  const $ = (id) => document.getElementById(id);
  const origin = window.location.origin;
  const redirectURI = origin + "/";
  const store = window.sessionStorage;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text; // never innerHTML: events carry user text
    return e;
  }

  // --- signing in ---------------------------------------------------------

  function b64url(bytes) {
    let s = "";
    for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function random() { return b64url(crypto.getRandomValues(new Uint8Array(32))); }

  async function signIn() {
    const verifier = random(), state = random();
    const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
    store.setItem("pkce", JSON.stringify({ verifier, state }));
    const q = new URLSearchParams({
      response_type: "code", client_id: "dashboard", redirect_uri: redirectURI,
      scope: "tasks:read tasks:write", state, code_challenge: challenge, code_challenge_method: "S256",
      resource: origin + "/mcp",
    });
    window.location.assign("/oauth/authorize?" + q.toString());
  }

  // finishSignIn exchanges the code the authorization server sent back.
  async function finishSignIn() {
    const q = new URLSearchParams(window.location.search);
    if (!q.has("code") && !q.has("error")) return;
    window.history.replaceState(null, "", "/");
    const pkce = JSON.parse(store.getItem("pkce") || "null");
    store.removeItem("pkce");
    if (q.has("error")) return showError("Sign-in refused: " + q.get("error"));
    if (!pkce || q.get("state") !== pkce.state) return showError("Sign-in failed: the state does not match.");
    const res = await fetch("/oauth/token", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code", code: q.get("code"), redirect_uri: redirectURI,
        client_id: "dashboard", code_verifier: pkce.verifier, resource: origin + "/mcp",
      }),
    });
    const tok = await res.json();
    if (!res.ok) return showError("Sign-in failed: " + (tok.error || res.status));
    store.setItem("token", tok.access_token);
  }

  function token() { return store.getItem("token"); }

  function subject(t) {
    try {
      return JSON.parse(atob(t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).sub;
    } catch (e) { return "?"; }
  }

  function signOut() { store.removeItem("token"); account(); render(); }

  function account() {
    const t = token();
    $("signin").hidden = !!t;
    $("signout").hidden = !t;
    $("add").hidden = !t;
    $("user").textContent = t ? "signed in as " + subject(t) : "";
  }

  function showError(msg) {
    $("error").textContent = msg;
    $("error").hidden = !msg;
  }

  // api calls the JSON API with the token; a refused token signs out.
  // Without one nothing is sent: the visitor has not signed in (the
  // controls that call it are hidden then, but a script can still).
  async function api(method, path, body) {
    showError("");
    if (!token()) { account(); render(); showError("Sign in to add or complete tasks."); return; }
    const res = await fetch(path, {
      method,
      headers: Object.assign({ Authorization: "Bearer " + token() }, body ? { "Content-Type": "application/json" } : {}),
      body: body ? JSON.stringify(body) : undefined,
    });
    if (res.status === 401) { signOut(); showError("Your sign-in expired; sign in again."); return; }
    if (!res.ok) {
      const e = await res.json().catch(() => ({}));
      showError(e.error_description || e.error || "the server answered " + res.status);
    }
  }

  // --- the board ------------------------------------------------------------

  function render() {
    const list = $("tasks");
    list.replaceChildren();
    const all = [...tasks.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id, undefined, { numeric: true }));
    for (const t of all) {
      const li = el("li", t.done ? "done" : "");
      li.dataset.id = t.id;
      li.append(el("span", "id", t.id), el("span", "check", t.done ? "✓" : "○"), el("span", "title", t.title));
      for (const tag of t.tags || []) li.append(el("span", "tag", tag));
      if (token() && !t.done) {
        const b = el("button", "complete", "Complete");
        b.type = "button";
        b.addEventListener("click", () => api("POST", "/api/tasks/" + encodeURIComponent(t.id) + "/complete"));
        li.append(b);
      }
      list.append(li);
    }
    const open = all.filter((t) => !t.done).length;
    $("counts").textContent = all.length ? `${open} open, ${all.length - open} done` : "";
    $("empty").hidden = all.length > 0;
  }

  function feed(kind, text) {
    const li = el("li");
    li.append(el("span", "kind", kind), document.createTextNode(text));
    $("feed").prepend(li);
    while ($("feed").children.length > 200) $("feed").lastChild.remove();
  }

  $("signin").addEventListener("click", () => { signIn().catch((e) => showError(String(e))); });
  $("signout").addEventListener("click", signOut);
  $("add").addEventListener("submit", async (e) => {
    e.preventDefault();
    const title = $("title").value;
    const tags = $("tags").value.split(",").map((s) => s.trim()).filter(Boolean);
    await api("POST", "/api/tasks", { title, tags });
    $("title").value = "";
    $("tags").value = "";
  });

  finishSignIn().catch((e) => showError(String(e))).finally(() => { account(); render(); });

  const es = new EventSource("/events");
  es.onopen = () => { $("status").textContent = "live"; $("status").className = "status live"; };
  es.onerror = () => { $("status").textContent = "reconnecting…"; $("status").className = "status connecting"; };
  es.addEventListener("snapshot", (e) => {
    tasks.clear();
    for (const t of JSON.parse(e.data).tasks) tasks.set(t.id, t);
    render();
  });
  es.addEventListener("task", (e) => {
    const c = JSON.parse(e.data);
    if (c.kind === "deleted") tasks.delete(c.task.id); else tasks.set(c.task.id, c.task);
    render();
    feed("task " + c.kind, `${c.task.id} ${c.task.title}`);
  });
  es.addEventListener("mcp", (e) => {
    const m = JSON.parse(e.data);
    if (m.kind === "tool") feed("mcp tool", `${m.tool}${m.ok ? "" : " (failed)"}`);
    else feed("mcp " + m.kind, m.session ? `session ${m.session.slice(0, 8)}…` : "");
  });
  es.addEventListener("broadcast", (e) => feed("broadcast", e.data));

  // The chart: a bar per tool, its length the tool's calls, red for the
  // share that failed, with the mean latency beside it.
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const n = document.createElementNS(SVG, tag);
    for (const k in attrs) n.setAttribute(k, attrs[k]);
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function chart(tools) {
    const c = $("chart"), row = 22, label = 130, width = 360;
    c.replaceChildren();
    $("nochart").hidden = tools.length > 0;
    c.setAttribute("height", String(tools.length * row));
    c.setAttribute("viewBox", "0 0 " + (label + width + 90) + " " + (tools.length * row));
    const max = Math.max(1, ...tools.map((t) => t.calls));
    tools.forEach((t, i) => {
      const y = i * row, w = Math.max(2, (t.calls / max) * width);
      const g = svg("g", { "data-tool": t.tool, "data-calls": String(t.calls) });
      g.append(svg("text", { x: 0, y: y + 15 }, t.tool));
      g.append(svg("rect", { class: "bar", x: label, y: y + 3, height: 16, width: w }));
      if (t.errors > 0) {
        g.append(svg("rect", { class: "bar errors", x: label, y: y + 3, height: 16, width: w * t.errors / t.calls }));
      }
      g.append(svg("text", { x: label + w + 6, y: y + 15 }, String(t.calls)));
      g.append(svg("text", { class: "ms", x: label + w + 40, y: y + 15 }, t.meanMs.toFixed(1) + " ms"));
      c.append(g);
    });
  }
  es.addEventListener("tools", (e) => chart(JSON.parse(e.data).tools || []));
})();
