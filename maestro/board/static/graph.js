// The plan's tasks as a graph or a list (loaded after board.js, whose helpers it uses).
// The graph: the server's places laid out in columns, each edge routed through the gaps
// between nodes (never under one), fit to the page or zoomed, a task's chain lit on hover
// or focus. Both views mark a pending task held by a failure: one of the tasks it waits
// on, directly or not, failed or is blocked, so no run will start it until that is settled.
"use strict";

const NODE_W = 210, NODE_H = 58, GAP_X = 64, GAP_Y = 26, PAD = 14;
const FAR = 0.6; // below this scale a node shows its id alone, large
const MAX_SCALE = 2;
const RANK = ["failed", "blocked", "held", "running", "pending", "done"];

const graphView = { scale: 1, x: 0, y: 0, fit: true, width: 0, height: 0 }; // the viewBox
let graphShape = "", listShape = "";
let deps = {}, dependants = {}; // id -> the tasks it waits on / that wait on it, directly
let held = {}; // a pending task's id -> the failed or blocked tasks it waits on
let lit = null; // the task whose chain is lit

// -- what waits on what -----------------------------------------------------------------

// Each pending task's failed or blocked ancestors, reached through tasks not done.
function heldBy(tasks) {
  const byId = new Map(tasks.map((t, i) => [t.id, [t, i]]));
  const memo = new Map();
  const roots = (t) => {
    if (memo.has(t.id)) return memo.get(t.id);
    memo.set(t.id, []); // (a cycle, which no valid plan has, ends here)
    const found = new Set();
    for (const id of t.depends) {
      const [d] = byId.get(id) || [];
      if (!d || d.status === "done") continue;
      if (d.status === "failed" || d.status === "blocked") found.add(d.id);
      else for (const r of roots(d)) found.add(r);
    }
    const list = [...found].sort((a, b) => byId.get(a)[1] - byId.get(b)[1]);
    memo.set(t.id, list);
    return list;
  };
  const out = {};
  for (const t of tasks) if (t.status === "pending" && roots(t).length) out[t.id] = roots(t);
  return out;
}

// Whether `maestro run` would start anything: a pending task no failure holds, or one
// left marked running by an engine that died (a run resumes it).
function canRun(tasks) {
  const holds = heldBy(tasks); // (of these tasks: the header is drawn before the graph)
  return tasks.some((t) => (t.status === "pending" && !holds[t.id]) || t.status === "running");
}

function heldText(id, statusOf) {
  const by = held[id];
  return by ? `held by ${by[0]} ${statusOf[by[0]]}` + (by.length > 1 ? ` +${by.length - 1}` : "") : "";
}

function nodeLabel(t) {
  return `Task ${t.id}: ${t.title}. ${t.status}` + (held[t.id] ? `, held by the failure of Task ${held[t.id].join(", ")}` : "") +
    (t.tool ? `, ${t.tool}` : "") + (t.attempts ? `, ${t.attempts} attempt${t.attempts > 1 ? "s" : ""}` : "");
}

// -- the view: graph or list --------------------------------------------------------------

// The graph, whatever the plan's size (docs/board.md, "The list", says why), or the list
// when the person chose it in this tab.
function viewMode() {
  return sessionStorage.getItem("maestro-view") || "graph";
}

function setView(mode) {
  sessionStorage.setItem("maestro-view", mode);
  renderGraph();
}

function renderGraph() {
  const tasks = state.plan ? state.plan.tasks : [];
  held = heldBy(tasks);
  const mode = viewMode();
  $("as-graph").setAttribute("aria-pressed", String(mode === "graph"));
  $("as-list").setAttribute("aria-pressed", String(mode === "list"));
  $("zoom").hidden = mode !== "graph";
  $("graph").toggleAttribute("hidden", mode !== "graph"); // (an SVG element has no .hidden)
  $("tasklist").hidden = mode !== "list";
  if (mode === "graph") {
    if (listShape) ($("list-body").replaceChildren(), (listShape = ""), (listTasks = ""), listRows.clear());
    drawGraph(tasks);
  } else {
    if (graphShape) ($("graph").replaceChildren(), (graphShape = ""), (lit = null), ($("trace").textContent = ""));
    drawList(tasks);
  }
}

// -- the graph ------------------------------------------------------------------------------

// The graph is built once per shape (its tasks, places and edges); a state that only
// changes what tasks say updates their nodes in place.
function drawGraph(tasks) {
  const shape = JSON.stringify(tasks.map((t) => [t.id, t.place, t.depends, t.parent]));
  if (shape !== graphShape) {
    buildGraph(tasks);
    graphShape = shape;
    if (graphView.fit) fitGraph();
    else showView();
  }
  const byId = {}, statusOf = Object.fromEntries(tasks.map((t) => [t.id, t.status]));
  for (const node of nodes()) byId[node.dataset.task] = node;
  for (const t of tasks) updateNode(byId[t.id], t, statusOf);
}

function buildGraph(tasks) {
  const g = $("graph");
  const pos = {};
  let width = 0, height = 0;
  deps = {};
  dependants = {};
  for (const t of tasks) {
    const [col, row] = t.place;
    pos[t.id] = { x: PAD + col * (NODE_W + GAP_X), y: PAD + row * (NODE_H + GAP_Y), col, row };
    width = Math.max(width, pos[t.id].x + NODE_W + PAD);
    height = Math.max(height, pos[t.id].y + NODE_H + PAD);
  }
  Object.assign(graphView, { contentW: width, contentH: height });
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.task : null;
  const groups = svg("g"), edges = svg("g", { class: "edges" }), boxes = svg("g");
  g.replaceChildren(arrowHeads(), groups, edges, boxes);
  const members = {};
  for (const t of tasks) if (t.parent && pos[t.parent]) (members[t.parent] ||= []).push(pos[t.id]);
  for (const [parent, inside] of Object.entries(members)) {
    const x0 = Math.min(...inside.map((b) => b.x)) - 6, y0 = Math.min(...inside.map((b) => b.y)) - 6;
    const x1 = Math.max(...inside.map((b) => b.x)) + NODE_W + 6, y1 = Math.max(...inside.map((b) => b.y)) + NODE_H + 6;
    const rect = svg("rect", { class: "group", x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 8 });
    const title = svg("title");
    title.textContent = `subtasks of Task ${parent}`;
    rect.append(title);
    groups.append(rect);
  }
  for (const t of tasks) {
    for (const dep of [...t.depends, ...(t.parent ? [t.parent] : [])]) {
      if (!pos[dep]) continue;
      (deps[t.id] ||= []).push(dep);
      (dependants[dep] ||= []).push(t.id);
      edges.append(svg("path", { class: "edge", d: route(pos[dep], pos[t.id]), "data-from": dep, "data-to": t.id }));
    }
  }
  for (const t of tasks) {
    const p = pos[t.id];
    const node = svg("g", { class: "node", transform: `translate(${p.x},${p.y})`, tabindex: 0, role: "button", "data-task": t.id });
    node.append(svg("title"), svg("rect", { width: NODE_W, height: NODE_H, rx: 6 })); // (the label, on hover)
    for (let i = 0; i < 3; i++) node.append(svg("text", { x: 8, y: 17 + i * 16, class: i ? "sub" : "" }));
    const big = svg("text", { x: NODE_W / 2, y: NODE_H / 2 + 12, class: "big", "text-anchor": "middle" });
    big.textContent = t.id;
    node.append(big);
    boxes.append(node);
  }
  if (focused) {
    const again = g.querySelector(`[data-task="${CSS.escape(focused)}"]`);
    if (again) again.focus({ preventScroll: true });
  }
  const again = lit;
  lit = null;
  light(again);
}

// An edge between neighbouring columns is one curve through the gap between them; one
// that skips columns runs along the gap between two rows (no node lies there), from the
// gap after its task's column to the gap before its dependant's.
function route(a, b) {
  const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2;
  if (b.col - a.col <= 1) {
    const mid = (x1 + x2) / 2;
    return `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`;
  }
  // Spread the edges that share a gap a little, so each can be followed.
  const xa = x1 + GAP_X / 2 + ((a.row % 5) - 2) * 5, xb = x2 - GAP_X / 2 + ((b.row % 5) - 2) * 5;
  const lane = (y1 <= y2 ? b.y - GAP_Y / 2 : b.y + NODE_H + GAP_Y / 2) + ((a.row % 3) - 1) * 5;
  return rounded([[x1, y1], [xa, y1], [xa, lane], [xb, lane], [xb, y2], [x2, y2]]);
}

function rounded(points) {
  let d = `M${points[0][0]},${points[0][1]}`;
  for (let i = 1; i < points.length - 1; i++) {
    const [px, py] = points[i - 1], [x, y] = points[i], [nx, ny] = points[i + 1];
    const r = Math.min(8, Math.hypot(x - px, y - py) / 2, Math.hypot(nx - x, ny - y) / 2);
    const ax = x - Math.sign(x - px) * r, ay = y - Math.sign(y - py) * r;
    const bx = x + Math.sign(nx - x) * r, by = y + Math.sign(ny - y) * r;
    d += ` L${ax},${ay} Q${x},${y} ${bx},${by}`;
  }
  const [lx, ly] = points[points.length - 1];
  return d + ` L${lx},${ly}`;
}

function arrowHeads() {
  const defs = svg("defs");
  for (const kind of ["", "-up", "-down"]) {
    const marker = svg("marker", { id: "arrow" + kind, viewBox: "0 0 10 10", refX: 10, refY: 5, markerUnits: "userSpaceOnUse", markerWidth: 9, markerHeight: 9, orient: "auto" });
    marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow" + kind }));
    defs.append(marker);
  }
  return defs;
}

function updateNode(node, t, statusOf) {
  const set = (name, value) => node.getAttribute(name) !== value && node.setAttribute(name, value);
  set("data-status", t.status);
  if (node.getAttribute("aria-label") !== nodeLabel(t)) {
    node.setAttribute("aria-label", nodeLabel(t));
    node.firstChild.textContent = nodeLabel(t);
  }
  node.classList.toggle("selected", t.id === selected);
  node.classList.toggle("held", Boolean(held[t.id]));
  const lines = [
    `${t.id} · ${fmt.cut(t.title, 26)}`,
    held[t.id] ? heldText(t.id, statusOf) : [t.status, t.tool || "-", t.agent || t.specialist || "-"].join(" · "),
    [t.attempts ? "×" + t.attempts : "", fmt.tokens(t.tokens), fmt.cost(t.cost, t.cost_estimated), fmt.secs(t)].filter(Boolean).join(" · "),
  ];
  node.querySelectorAll("text:not(.big)").forEach((line, i) => {
    if (line.textContent !== lines[i]) line.textContent = lines[i];
  });
}

function nodes() {
  return [...$("tasks").querySelectorAll("[data-task]")];
}

// -- a task's chain, lit ------------------------------------------------------------------

function chain(id, next) {
  const seen = new Set(), todo = [id];
  while (todo.length) for (const n of next[todo.pop()] || []) if (!seen.has(n)) seen.add(n), todo.push(n);
  return seen;
}

// The tasks `id` waits on (upstream) and those that wait on it (downstream), directly or
// not, and the edges between them; everything else fades.
function light(id) {
  if (id === lit) return;
  lit = id;
  const g = $("graph");
  const up = id ? chain(id, deps) : new Set(), down = id ? chain(id, dependants) : new Set();
  g.classList.toggle("tracing", Boolean(id));
  for (const n of g.querySelectorAll(".node")) {
    const t = n.dataset.task;
    n.classList.toggle("up", up.has(t));
    n.classList.toggle("down", down.has(t));
    n.classList.toggle("lit", t === id);
  }
  const raised = [];
  for (const e of g.querySelectorAll(".edge")) {
    const from = e.dataset.from, to = e.dataset.to;
    const u = up.has(from) && (to === id || up.has(to)), d = down.has(to) && (from === id || down.has(from));
    e.classList.toggle("up", u);
    e.classList.toggle("down", d);
    if (u || d) raised.push(e);
  }
  for (const e of raised) e.parentNode.append(e); // drawn over the faded ones
  $("trace").textContent = id
    ? `Task ${id} waits on ${up.size} task${up.size === 1 ? "" : "s"} (blue); ${down.size} wait${down.size === 1 ? "s" : ""} on it (purple).`
    : "";
}

function focusedTask() {
  const f = document.activeElement;
  return f && f.closest && f.closest("#graph .node") ? f.dataset.task : null;
}

// -- fit and zoom -----------------------------------------------------------------------------

function fitGraph() {
  const g = $("graph");
  const width = g.clientWidth || $("tasks").clientWidth || 800;
  const most = Math.max(260, Math.round(window.innerHeight * 0.72));
  const cw = graphView.contentW || 1, ch = graphView.contentH || 1;
  const scale = Math.min(width / cw, most / ch, 1);
  graphView.height = Math.max(120, Math.ceil(ch * scale));
  Object.assign(graphView, { scale, x: 0, y: 0, fit: true });
  showView();
}

function showView() {
  const g = $("graph");
  graphView.width = g.clientWidth || graphView.width || 800;
  const s = graphView.scale;
  g.setAttribute("height", graphView.height);
  g.setAttribute("viewBox", `${graphView.x} ${graphView.y} ${graphView.width / s} ${graphView.height / s}`);
  g.classList.toggle("far", s < FAR);
  $("zoom-level").textContent = Math.round(s * 100) + "%";
}

// Zoom by `factor` around the point (px, py) of the graph's box, which stays put.
function zoomAt(factor, px, py) {
  const s = graphView.scale;
  const least = Math.min(0.1, (graphView.width || 800) / (graphView.contentW || 1));
  const next = Math.min(MAX_SCALE, Math.max(least, s * factor));
  graphView.x += px / s - px / next;
  graphView.y += py / s - py / next;
  graphView.scale = next;
  graphView.fit = false;
  showView();
}

function zoomCentre(factor) {
  zoomAt(factor, graphView.width / 2, graphView.height / 2);
}

function panBy(dx, dy) {
  const s = graphView.scale;
  const w = graphView.width / s, h = graphView.height / s;
  graphView.x = Math.min(Math.max(graphView.x - dx / s, -w / 2), graphView.contentW - w / 2);
  graphView.y = Math.min(Math.max(graphView.y - dy / s, -h / 2), graphView.contentH - h / 2);
  graphView.fit = false;
  showView();
}

// A node reached from the keyboard comes into view.
function reveal(node) {
  const [x, y] = node.getAttribute("transform").match(/[\d.]+/g).map(Number);
  const s = graphView.scale, w = graphView.width / s, h = graphView.height / s;
  if (x >= graphView.x && y >= graphView.y && x + NODE_W <= graphView.x + w && y + NODE_H <= graphView.y + h) return;
  graphView.x = x + NODE_W / 2 - w / 2;
  graphView.y = y + NODE_H / 2 - h / 2;
  showView();
}

// -- the list ---------------------------------------------------------------------------------

const rankOf = (t) => RANK.indexOf(held[t.id] ? "held" : t.status);

// Each task's row is made once per plan and only the cells that changed are written (a
// table made anew per state took 35 ms at 200 tasks); a row out of sight is not drawn
// (CSS content-visibility).
const listRows = new Map(), groupRows = {};
let listTasks = "", listSorted = 0;

function listRow(t) {
  const cell = (cls) => el("div", { role: "cell", class: cls });
  return el("div", { class: "item", role: "row", tabindex: 0, "data-task": t.id },
    cell(), cell("title"), cell("status"), cell(), cell("wide"), cell("num"), cell("num"), cell("num wide"), cell("num"), cell());
}

function drawList(tasks) {
  const ids = tasks.map((t) => t.id).join(" ");
  if (ids !== listTasks) {
    listRows.clear();
    for (const t of tasks) listRows.set(t.id, listRow(t));
    listTasks = ids;
    listShape = "";
  }
  const rows = tasks.map((t, i) => [t, i]).sort((a, b) => rankOf(a[0]) - rankOf(b[0]) || a[1] - b[1]);
  const shape = JSON.stringify(rows.map(([t]) => [t.id, rankOf(t)]));
  const body = $("list-body");
  // A row shows a new status at once and moves to its group within a second: a move
  // redraws the rows below it, and moving at each of a busy run's events cost the browser
  // 2.5 times the graph's time (40 events at 200 tasks: 1.5 s, against 0.6 s; moved at
  // most once a second, 0.7 s).
  const since = performance.now() - listSorted;
  if (shape !== listShape && listShape && since < 1000) {
    drawList.later ||= setTimeout(() => ((drawList.later = null), renderGraph()), 1000 - since);
  } else if (shape !== listShape) {
    listSorted = performance.now();
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.task : null;
    const counts = {};
    for (const [t] of rows) counts[rankOf(t)] = (counts[rankOf(t)] || 0) + 1;
    const placed = [];
    let group = null;
    for (const [t] of rows) {
      if (rankOf(t) !== group) {
        group = rankOf(t);
        const kind = RANK[group];
        groupRows[kind] ||= el("div", { class: "group", role: "row" }, el("div", { role: "rowheader", class: "st-" + kind }));
        groupRows[kind].firstChild.textContent = `${kind === "held" ? "held by a failure" : kind} · ${counts[group]}`;
        placed.push(groupRows[kind]);
      }
      placed.push(listRows.get(t.id));
    }
    // Only the rows out of place move: moving all 200 had the page lay out all (25 ms).
    placed.forEach((row, i) => body.children[i] !== row && body.insertBefore(row, body.children[i] || null));
    while (body.children.length > placed.length) body.lastElementChild.remove();
    listShape = shape;
    if (focused && listRows.has(focused)) listRows.get(focused).focus({ preventScroll: true });
  }
  const statusOf = Object.fromEntries(tasks.map((t) => [t.id, t.status]));
  for (const t of tasks) {
    const row = listRows.get(t.id);
    if (row.getAttribute("data-status") !== t.status) row.setAttribute("data-status", t.status);
    if (row.getAttribute("aria-label") !== nodeLabel(t)) row.setAttribute("aria-label", nodeLabel(t));
    if (row.classList.contains("selected") !== (t.id === selected)) row.classList.toggle("selected");
    if (row.classList.contains("held") !== Boolean(held[t.id])) row.classList.toggle("held");
    const cells = [t.id, t.title, held[t.id] ? heldText(t.id, statusOf) : t.status, t.tool || "", t.agent || t.specialist || "",
      t.attempts ? "×" + t.attempts : "", fmt.tokens(t.tokens), fmt.cost(t.cost, t.cost_estimated), fmt.secs(t), t.depends.join(", ")];
    if (row.children[1].title !== t.title) row.children[1].title = t.title; // (cut to fit)
    for (let i = 0, cell = row.firstChild; cell; i++, cell = cell.nextSibling) {
      if (cell.textContent !== cells[i]) cell.textContent = cells[i];
    }
  }
}

// -- the drawer -------------------------------------------------------------------------------

// Over the page (below 1200 px) the drawer starts under the header, whose "Needs you" list
// stays in reach: the header's height, as it changes, in --head.
new ResizeObserver(() => {
  const head = document.querySelector("header");
  document.documentElement.style.setProperty("--head", `${head.offsetHeight}px`);
}).observe(document.querySelector("header"));

function openDrawer() {
  $("panel").hidden = false;
  document.body.classList.add("drawer-open");
}

function closeDrawer() {
  const was = selected;
  selected = null;
  follow = null;
  detailKey = "";
  $("panel").hidden = true;
  document.body.classList.remove("drawer-open");
  for (const n of nodes()) n.classList.remove("selected");
  const node = was && $("tasks").querySelector(`[data-task="${CSS.escape(was)}"]`);
  if (node) node.focus();
}

// -- input --------------------------------------------------------------------------------------

$("tasks").addEventListener("click", (e) => {
  if (panning.moved) return;
  const node = e.target.closest("[data-task]");
  if (node) select(node.dataset.task);
});

$("tasks").addEventListener("keydown", (e) => {
  const node = e.target.closest("[data-task]");
  if (!node) return;
  if (e.key === "Enter" || e.key === " ") {
    e.preventDefault();
    select(node.dataset.task, true);
    return;
  }
  const moves = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 };
  if (!(e.key in moves)) return;
  e.preventDefault();
  const all = nodes();
  const next = all[all.indexOf(node) + moves[e.key]];
  if (next) next.focus();
});

$("dag").addEventListener("keydown", (e) => {
  if ($("graph").hasAttribute("hidden") || e.ctrlKey || e.metaKey || e.altKey) return;
  const zoom = { "+": 1.25, "=": 1.25, "-": 0.8, "_": 0.8 }[e.key];
  if (zoom) zoomCentre(zoom);
  else if (e.key === "0") fitGraph();
  else return;
  e.preventDefault();
});

const graph = $("graph");
graph.addEventListener("pointerover", (e) => {
  const node = e.target.closest(".node");
  light(node ? node.dataset.task : focusedTask());
});
graph.addEventListener("pointerleave", () => light(focusedTask()));
graph.addEventListener("focusin", (e) => {
  const node = e.target.closest(".node");
  if (!node) return;
  light(node.dataset.task);
  reveal(node);
});
graph.addEventListener("focusout", () => setTimeout(() => light(focusedTask()), 0));

// Ctrl or ⌘ with the wheel, or a trackpad's pinch (which the browser sends as such), zooms
// around the pointer; the wheel alone scrolls the page, as everywhere else on it.
graph.addEventListener("wheel", (e) => {
  if (!(e.ctrlKey || e.metaKey)) return;
  e.preventDefault();
  const box = graph.getBoundingClientRect();
  zoomAt(Math.exp(-e.deltaY * 0.002), e.clientX - box.left, e.clientY - box.top);
}, { passive: false });

// Dragging pans; a drag is no click on the node it began on.
const panning = { from: null, moved: false };
graph.addEventListener("pointerdown", (e) => {
  if (e.button !== 0) return;
  Object.assign(panning, { from: [e.clientX, e.clientY], moved: false, id: e.pointerId });
});
graph.addEventListener("pointermove", (e) => {
  if (!panning.from || e.pointerId !== panning.id) return;
  const dx = e.clientX - panning.from[0], dy = e.clientY - panning.from[1];
  if (!panning.moved && Math.hypot(dx, dy) < 5) return;
  if (!panning.moved) graph.setPointerCapture(e.pointerId);
  panning.moved = true;
  panning.from = [e.clientX, e.clientY];
  panBy(dx, dy);
});
for (const kind of ["pointerup", "pointercancel"]) {
  graph.addEventListener(kind, () => {
    panning.from = null;
    setTimeout(() => (panning.moved = false), 0); // after the click this drag would make
  });
}

$("zoom-in").addEventListener("click", () => zoomCentre(1.25));
$("zoom-out").addEventListener("click", () => zoomCentre(0.8));
$("zoom-fit").addEventListener("click", fitGraph);
$("as-graph").addEventListener("click", () => setView("graph"));
$("as-list").addEventListener("click", () => setView("list"));
$("close").addEventListener("click", closeDrawer);
// Escape closes the drawer, unless it is in a reply or a reason being written.
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && !$("panel").hidden && !e.target.closest("textarea, select")) closeDrawer();
});

// The graph refits when its width changes (the window, the drawer opening beside it).
new ResizeObserver(() => {
  if (!graphShape) return;
  if (graphView.fit) fitGraph();
  else showView();
}).observe($("tasks"));
