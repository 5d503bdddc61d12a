// The dashboard: one EventSource on /events. The first event is a
// snapshot of the board; every later "task" event updates it in place, and
// "task", "mcp" and "broadcast" events are listed in the live feed. The
// browser reconnects by itself with Last-Event-ID, and the server replays
// what it missed.
(function () {
  "use strict";
  const tasks = new Map();
  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text; // never innerHTML: events carry user text
    return e;
  }

  function render() {
    const list = $("tasks");
    list.replaceChildren();
    const all = [...tasks.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id, undefined, { numeric: true }));
    for (const t of all) {
      const li = el("li", t.done ? "done" : "");
      li.dataset.id = t.id;
      li.append(el("span", "id", t.id), el("span", "check", t.done ? "✓" : "○"), el("span", "title", t.title));
      for (const tag of t.tags || []) li.append(el("span", "tag", tag));
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
})();
