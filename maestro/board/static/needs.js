// "Needs you": what waits for the person (the state's `needs`, maestro/engine/needs.py),
// in the header, in the tab's title and on the tasks' nodes. One click on a moment opens
// its task in the panel and, under the list, the box that answers it, through the same
// actions as the rest of the page (`maestro mail reply`, `maestro run N --clarify`, ...).
// Loaded after board.js, whose helpers (state, $, el, svg, nodes, select, act) it uses.
"use strict";

const NEED_WORDS = { question: "Question", blocker: "Blocker", decision: "Decision", failed: "Failed", cap: "Budget reached" };
// A need's own label when it has one (a cap: "Dollar budget near its cap"), else its kind's.
const needWord = (n) => n.label || NEED_WORDS[n.kind] || n.kind;
let needOpen = null; // the id of the moment whose answer box is open
let needsKey = "";

function needAbout(n) {
  return n.task ? `Task ${n.task} · ${n.title || ""}` : n.who || "the run";
}

function waited(since) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(since)) / 1000));
  if (!since || Number.isNaN(s)) return "";
  if (s < 60) return "just now";
  if (s < 3600) return `for ${Math.floor(s / 60)} min`;
  return `for ${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

function renderNeeds() {
  const needs = state.needs || [];
  const name = "Maestro board" + (state.project ? " · " + state.project : "");
  document.title = (needs.length ? `(${needs.length}) ` : "") + name;
  markNodes(needs);
  const key = JSON.stringify(needs);
  if (key === needsKey) return;
  needsKey = key;
  $("needs").hidden = !needs.length;
  $("needs-count").textContent = `(${needs.length})`;
  $("needs-list").replaceChildren(...needs.map((n) =>
    el("li", { class: "need kind-" + n.kind },
      el("button", { type: "button", "aria-expanded": n.id === needOpen, "data-need": n.id, onclick: () => openNeed(n.id) },
        el("strong", {}, needWord(n)), " ", needAbout(n), " — ", n.asked),
      el("span", { class: "muted", title: n.since }, " " + waited(n.since)))));
  if (!needs.some((n) => n.id === needOpen)) needOpen = null;
  renderNeedBox();
}

// Each task that waits is marked on its node: a badge, and the reason in its description.
function markNodes(needs) {
  const on = {};
  for (const n of needs) if (n.task && !on[n.task]) on[n.task] = n;
  for (const node of nodes()) {
    const n = on[node.dataset.task];
    node.classList.toggle("needs", Boolean(n));
    let badge = node.querySelector(".need-badge");
    if (n && !badge) {
      badge = svg("circle", { class: "need-badge", cx: NODE_W - 4, cy: 4, r: 7 });
      node.append(badge);
    }
    if (!n && badge) badge.remove();
    const said = n ? `needs you: ${(needWord(n)).toLowerCase()}` : null;
    if (said) node.setAttribute("aria-description", said);
    else node.removeAttribute("aria-description");
  }
}

function openNeed(id) {
  needOpen = needOpen === id ? null : id;
  const n = (state.needs || []).find((x) => x.id === needOpen);
  for (const b of $("needs-list").querySelectorAll("button")) b.setAttribute("aria-expanded", String(b.dataset.need === needOpen));
  if (n && n.task) select(n.task);
  renderNeedBox();
  const answer = $("need-answer");
  if (answer) answer.focus();
}

// What answers each kind: the page's own actions, each the command a person would type.
function answerFor(n) {
  const text = () => $("need-answer").value;
  const done = (r) => { if (r && r.exit === 0 && $("need-answer")) $("need-answer").value = ""; };
  if (n.kind === "question" || n.kind === "blocker") {
    return ["Your answer to " + n.mail, "Send reply", async () => done(await act({ action: "reply", mail: n.mail, text: text() }))];
  }
  if (n.id.startsWith("review:")) return [null, "Accept the review", () => act({ action: "accept", task: n.task })];
  // At 80% the run goes on: what the page can do is stop it; the line says how to raise it.
  if (n.kind === "cap" && n.id.includes(":near:")) return [null, "Stop the run", () => act({ action: "abort" })];
  if (n.kind === "cap") return [null, "Continue the run", () => act({ action: "continue" })];
  // A decision of no task's (a pull request's checks): its command is the way, from a shell.
  if (!n.task) return [null, null, null];
  return ["What the task needs to know", "Clarify and retry", async () => done(await act({ action: "clarify", task: n.task, text: text() }))];
}

function renderNeedBox() {
  const box = $("need-box");
  const n = (state.needs || []).find((x) => x.id === needOpen);
  box.hidden = !n;
  if (!n) return box.replaceChildren();
  if (box.dataset.need === n.id) return; // keep what the person is typing
  box.dataset.need = n.id;
  const [label, verb, run] = answerFor(n);
  box.replaceChildren(...[
    el("h3", { id: "need-title" }, `${needWord(n)}: ${needAbout(n)}` + (n.who && n.task ? ` (from ${n.who})` : "")),
    el("pre", {}, n.asked),
    el("p", { class: "muted" }, "From a shell: ", el("code", {}, n.command)),
    label ? el("label", { for: "need-answer" }, label) : null,
    label ? el("textarea", { id: "need-answer" }) : null,
    el("div", { class: "row" },
      verb ? el("button", { type: "button", onclick: run }, verb) : null,
      el("button", { type: "button", onclick: () => openNeed(n.id) }, "Close")),
  ].filter(Boolean));
}
