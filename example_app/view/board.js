// The board as an MCP App view. It speaks the extension's JSON-RPC over
// postMessage with the host (its parent frame), without an SDK: the
// ui/initialize handshake, the tool result the host hands it, and
// tools/call through the host, which runs them as the signed-in user.
// It follows the board with the app-only tool watch_board, which
// answers when the board changes.
"use strict";
(function () {
  const host = window.parent;
  const pending = new Map();
  let nextId = 1;
  let version = "";
  let closing = false;

  const $ = (id) => document.getElementById(id);
  const status = (text, error) => {
    $("status").textContent = text || "";
    $("status").className = error ? "error" : "muted";
  };

  function send(msg) { host.postMessage(Object.assign({ jsonrpc: "2.0" }, msg), "*"); }
  function request(method, params) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      send({ id, method, params });
    });
  }
  function notify(method, params) { send({ method, params }); }

  // callTool runs a tool through the host; a tool error (isError) and a
  // refusal (such as a token without tasks:write) both reject.
  async function callTool(name, args) {
    const res = await request("tools/call", { name, arguments: args });
    if (res.isError) {
      const text = (res.content || []).map((c) => c.text || "").join(" ");
      throw new Error(text || name + " failed");
    }
    return res;
  }

  window.addEventListener("message", (event) => {
    if (event.source !== host) return;
    const msg = event.data;
    if (!msg || msg.jsonrpc !== "2.0") return;
    if (msg.method === undefined && pending.has(msg.id)) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(msg.error.message || "error " + msg.error.code));
      else p.resolve(msg.result);
      return;
    }
    if (msg.id !== undefined) return answer(msg);
    switch (msg.method) {
      case "ui/notifications/tool-result":
        if (msg.params && msg.params.structuredContent) render(msg.params.structuredContent.tasks);
        break;
      case "ui/notifications/host-context-changed":
        theme(msg.params);
        break;
    }
  });

  // answer replies to the host's requests: ping, and teardown, after
  // which the view stops following the board.
  function answer(msg) {
    switch (msg.method) {
      case "ping":
        return send({ id: msg.id, result: {} });
      case "ui/resource-teardown":
        closing = true;
        return send({ id: msg.id, result: {} });
    }
    send({ id: msg.id, error: { code: -32601, message: "Method not found" } });
  }

  function theme(ctx) {
    const vars = ctx && ctx.styles && ctx.styles.variables;
    for (const k in vars || {}) if (vars[k]) document.documentElement.style.setProperty(k, vars[k]);
    if (ctx && ctx.theme) document.documentElement.style.colorScheme = ctx.theme;
  }

  function render(tasks) {
    if (!Array.isArray(tasks)) return;
    const ul = $("tasks");
    ul.replaceChildren();
    let open = 0;
    for (const t of tasks) {
      const li = document.createElement("li");
      li.dataset.id = t.id;
      if (t.done) li.className = "done";
      const id = document.createElement("span");
      id.className = "id";
      id.textContent = t.id;
      const title = document.createElement("span");
      title.className = "title";
      title.textContent = t.title;
      li.append(id, title);
      if (t.done) {
        const check = document.createElement("span");
        check.className = "check";
        check.textContent = "✓";
        li.append(check);
      } else {
        open++;
        const b = document.createElement("button");
        b.className = "complete";
        b.textContent = "Done";
        b.addEventListener("click", () => complete(t.id, b));
        li.append(b);
      }
      ul.append(li);
    }
    if (!tasks.length) {
      const li = document.createElement("li");
      li.className = "muted";
      li.id = "empty";
      li.textContent = "No tasks yet.";
      ul.append(li);
    }
    $("counts").textContent = open + " open, " + (tasks.length - open) + " done";
  }

  async function complete(id, button) {
    button.disabled = true;
    try {
      await callTool("complete_task", { id });
      status("Completed " + id + ".");
    } catch (e) {
      button.disabled = false;
      status(e.message, true);
    }
  }

  // No form submission: a host's sandbox may not allow forms.
  $("add").addEventListener("submit", (event) => event.preventDefault());
  $("add-button").addEventListener("click", add);
  $("title").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      add();
    }
  });
  async function add() {
    const input = $("title");
    const title = input.value.trim();
    if (!title) return;
    try {
      const res = await callTool("add_task", { title });
      input.value = "";
      status("Added " + res.structuredContent.id + ".");
    } catch (e) {
      status(e.message, true);
    }
  }

  // follow asks watch_board for the board each time it changes.
  async function follow() {
    while (!closing) {
      try {
        const res = await callTool("watch_board", { since: version });
        version = res.structuredContent.version;
        render(res.structuredContent.tasks);
      } catch (e) {
        status(e.message, true);
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }

  new ResizeObserver(() => {
    const r = document.documentElement.getBoundingClientRect();
    notify("ui/notifications/size-changed", { width: Math.ceil(r.width), height: Math.ceil(r.height) });
  }).observe(document.documentElement);

  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: "task-board-view", version: "1.0.0" },
    appCapabilities: { availableDisplayModes: ["inline"] },
  }).then((res) => {
    theme(res && res.hostContext);
    notify("ui/notifications/initialized", {});
    follow();
  }, (e) => status("The host refused the view: " + e.message, true));
})();
