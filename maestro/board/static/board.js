// The board's page: plain JavaScript and SVG, no framework, no build step.
// Every string from the project (titles, results, mail, spokes' output) goes in as a text
// node: nothing is ever parsed as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
let state = null;          // the latest state the server pushed
let selected = null;       // the task id the panel shows ("" with the plan's challenges)
let detailKey = "";        // what the shown detail was built from
let detailTimer = null;    // the selected task read again (its change so far) while its spoke prints
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
}

const fmt = {
  tokens: (n) => (n ? n.toLocaleString("en-US") + " tok" : ""),
  cost: (c, est) => (c === null || c === undefined ? "" : (est ? "~" : "") + "$" + c.toFixed(2)),
  secs(task) {
    if (!task.started) return "";
    const end = task.finished ? Date.parse(task.finished) : Date.now();
    const s = Math.max(0, Math.round((end - Date.parse(task.started)) / 1000));
    return s >= 60 ? Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s" : s + "s";
  },
  cut: (text, n) => (text.length > n ? text.slice(0, n - 1) + "…" : text),
};

function toast(text) {
  $("toast").textContent = text;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => ($("toast").textContent = ""), 8000);
}

// -- the token --------------------------------------------------------------------------
// Given once in the URL's fragment (which the browser sends to no server), kept in this
// origin's session storage (a page of another port cannot read it), and sent in a header
// with every request for data or an action: never in a cookie, which the browser would
// also send to every other server on this host.
const TOKEN = (() => {
  const given = new URLSearchParams(location.hash.slice(1)).get("token");
  if (given) {
    sessionStorage.setItem("maestro-token", given);
    history.replaceState(null, "", location.pathname);
  }
  return sessionStorage.getItem("maestro-token") || "";
})();

// The URL pasted into a tab already on the board (after a restart, or on the bare address)
// changes only the fragment, which loads no page: load it again to take the token.
window.addEventListener("hashchange", () => new URLSearchParams(location.hash.slice(1)).has("token") && location.reload());

function api(url, options = {}) {
  return fetch(url, { ...options, headers: { ...options.headers, "X-Maestro-Token": TOKEN } });
}

function refused() {
  $("run").textContent = "refused: no valid token. Open the URL `maestro board` printed.";
  $("start").disabled = $("abort").disabled = true;
}

async function act(params) {
  const res = await api("/api/action", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(params),
  });
  const data = await res.json().catch(() => ({ error: res.statusText }));
  toast(data.error ? `${data.error} ${data.fix || ""}` : `${data.command}\n${data.output || "done"}`);
  return data;
}

async function getJSON(url) {
  const res = await api(url);
  if (!res.ok) throw new Error(await res.text());
  return res.json();
}

// -- the header ------------------------------------------------------------------------

function renderHeader() {
  const plan = state.plan, run = state.run;
  $("project").textContent = state.project ? "· " + state.project : "";
  $("goal").textContent = plan ? "Goal: " + plan.goal : state.problem || "";
  $("run").textContent = run
    ? `Run ${run.id}: ${run.alive ? "running" : run.status || run.state || "ended"}`
    : "No run yet";
  if (plan) {
    const counts = Object.entries(plan.counts).filter(([, n]) => n).map(([s, n]) => `${n} ${s}`);
    $("counts").textContent = `(${plan.total}: ${counts.join(", ")})`;
    const spent = [fmt.tokens(plan.tokens), fmt.cost(plan.cost, plan.cost_estimated)].filter(Boolean);
    let wall = "";
    if (run && run.started) wall = fmt.secs({ started: run.started, finished: run.alive ? null : run.finished });
    $("totals").textContent = [spent.join(", "), wall && "wall " + wall].filter(Boolean).join(" · ");
  }
  renderPullRequest(plan && plan.pull_request);
  // The latest run's spend by vendor and each budget cap against it (engine/caps.py).
  const spend = (plan && plan.spend && plan.spend.lines) || [];
  $("spend").hidden = !spend.length;
  $("spend").textContent = spend.join(" · ");
  $("challenges").textContent = `Challenges (${plan ? plan.challenges || 0 : 0})`;
  // Only what would work: no second run while one is live, none when nothing can start,
  // no abort once the run ended; an abort asked for shows until the run stops.
  const alive = Boolean(run && run.alive);
  if (!alive || aborting !== run.id) aborting = null;
  if (aborting) $("run").textContent = `Run ${run.id}: aborting (running tasks finish, nothing new starts)`;
  $("start").hidden = !plan || alive || !canRun(plan.tasks);
  $("abort").hidden = !alive;
  $("abort").disabled = Boolean(aborting);
}

// `maestro run --pr`'s request as its last look found it: its checks and CI rounds.
function renderPullRequest(pr) {
  const box = $("pr");
  box.hidden = !pr;
  if (!pr) return;
  if (pr.problem) return box.replaceChildren("Pull request: " + pr.problem);
  const name = pr.number ? `Pull request #${pr.number}` : "Pull request (not opened yet)";
  const link = pr.url && /^https:\/\//.test(pr.url) ? el("a", { href: pr.url, rel: "noreferrer", target: "_blank" }, name) : name;
  const checks = pr.checks || [];
  const failing = checks.filter((c) => c.state === "fail").map((c) => c.name);
  const parts = [`${pr.branch} → ${pr.base}`];
  if (checks.length) parts.push(`checks ${checks.length - failing.length} of ${checks.length} passed` + (failing.length ? `, failing: ${failing.join(", ")}` : ""));
  if ((pr.rounds || []).length) parts.push(`CI rounds: ${pr.rounds.length}`);
  if (pr.decision) parts.push(`waits for you: ${pr.decision.asked}`);
  box.replaceChildren(link, ": " + parts.join(" · "));
}

let aborting = null; // the run an abort was asked of, until it stops

async function abortRun() {
  const run = state && state.run;
  if (!run || !run.alive || !confirm(`Abort run ${run.id}? Running tasks finish; nothing new starts.`)) return;
  aborting = run.id;
  renderHeader();
  const done = await act({ action: "abort" });
  if (done.exit !== 0) aborting = null;
  renderHeader();
}

// -- the panel: one task ---------------------------------------------------------------

function select(id, focusPanel) {
  selected = id;
  detailKey = "";
  follow = null;
  for (const n of nodes()) n.classList.toggle("selected", n.dataset.task === id);
  openDrawer();
  loadDetail();
  if (focusPanel) $("panel").focus();
}

async function loadDetail() {
  if (!selected) return;
  const id = selected;
  let d;
  try {
    d = await getJSON("/api/task?id=" + encodeURIComponent(id));
  } catch (err) {
    toast(String(err));
    return;
  }
  if (id !== selected) return;
  renderDetail(d);
}

function field(name, value) {
  return value || value === 0 ? [el("dt", {}, name), el("dd", {}, String(value))] : [];
}

// Only what the command would do now: `maestro run` starts no second run while one is
// live (Run, Clarify, Reassign, Send back and Continue wait for it to end), a task whose
// dependencies are not all done cannot run alone, and Continue needs a task that can start.
function steering(d) {
  const box = el("div", { class: "steer", role: "group", "aria-label": "Steer this task" });
  const text = (label, id) => [el("label", { for: id }, label), el("textarea", { id })];
  const value = (id) => ($(id) ? $(id).value : "");
  const alive = Boolean(state.run && state.run.alive);
  const status = Object.fromEntries(state.plan.tasks.map((t) => [t.id, t.status]));
  const waiting = d.depends.filter((id) => status[id] !== "done");
  // A running task's spoke is ended; a pending one waiting in a live run never starts.
  if (d.status === "running" || (d.status === "pending" && alive)) {
    box.append(...text("Why stop it (recorded with the task)", "stop-reason"),
      el("button", { type: "button", class: "danger", onclick: () => act({ action: "stop", task: d.id, text: value("stop-reason") || "stopped from the board" }) }, "Stop task"));
  }
  if ((d.status === "failed" || d.status === "blocked") && alive) {
    box.append(el("h3", {}, "Decision"),
      el("p", { class: "muted" }, "Clarify, reassign or run it again once this run ends: `maestro run` starts no second run while one is live."),
      el("button", { type: "button", class: "danger", onclick: abortRun, disabled: Boolean(aborting) }, "Abort the run"));
  } else if (d.status === "failed" || d.status === "blocked") {
    box.append(el("h3", {}, "Decision"),
      ...text("1. Clarify and retry: the clarification", "clarify"),
      el("button", { type: "button", onclick: () => act({ action: "clarify", task: d.id, text: value("clarify") }) }, "Clarify and retry"),
      el("div", { class: "row" },
        el("label", { for: "reassign" }, "2. Reassign to"),
        el("select", { id: "reassign" }, (state.clis || []).map((c) => el("option", { value: c, selected: c === d.tool }, c))),
        el("button", { type: "button", onclick: () => act({ action: "reassign", task: d.id, tool: value("reassign") }) }, "Reassign and retry")),
      canRun(state.plan.tasks)
        ? el("button", { type: "button", onclick: () => act({ action: "continue" }) }, "3. Leave it and continue the run")
        : el("p", { class: "muted" }, "Nothing else can run until this task is settled."));
  }
  if (!alive && !waiting.length && ["pending", "failed", "blocked"].includes(d.status)) {
    box.append(el("button", { type: "button", onclick: () => act({ action: "retry", task: d.id }) }, `Run task ${d.id}`));
  } else if (d.status === "pending" && waiting.length) {
    box.append(el("p", { class: "muted" }, held[d.id]
      ? `Held by the failure of Task ${held[d.id].join(", ")}: settle that first.`
      : `Starts once Task ${waiting.join(", ")} ${waiting.length > 1 ? "are" : "is"} done.`));
  }
  if (d.status === "done" && d.reviews.length) {
    box.append(el("h3", {}, "Review"),
      el("button", { type: "button", onclick: () => act({ action: "accept", task: d.id }) }, "Accept the review"));
    if (!alive) {
      box.append(...text("Send back: what to change", "send-back"),
        el("button", { type: "button", onclick: () => act({ action: "send-back", task: d.id, text: value("send-back") }) }, "Send back"));
    }
  }
  return box.childElementCount ? box : null;
}

// What each run did with the task: clarifications, CLIs, attempts, and how each ended.
function historyView(d) {
  if (!d.history.length) return null;
  return el("section", { "aria-label": "History" }, el("h3", {}, "History"),
    el("ol", { class: "history" }, d.history.map((h) =>
      el("li", { class: "h-" + h.kind }, el("span", { class: "muted" }, (h.time || "").slice(5, 19).replace("T", " ") + " "), h.text))));
}

function diffView(text) {
  const pre = el("pre", { class: "diff", "aria-label": "diff against the task's base" });
  for (const line of text.split("\n")) {
    const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : null;
    pre.append(el("span", { class: cls }, line + "\n"));
  }
  return pre;
}

function renderDetail(d) {
  const alive = Boolean(state && state.run && state.run.alive);
  const key = JSON.stringify([d.status, d.attempts, d.result, d.review, d.reviews.length, d.review_streams.length, d.transcripts.length, d.diff.length, alive, d.history.length, held[d.id], aborting]);
  if (key === detailKey) return;
  detailKey = key;
  $("panel-title").textContent = `Task ${d.id}: ${d.title}`;
  const receipt = d.receipt || {};
  const parts = [
    el("dl", {},
      field("Status", d.status), field("CLI", d.tool), field("Persona", [d.specialist, d.agent].filter(Boolean).join("/")),
      field("Attempts", d.attempts), field("Tokens", d.tokens ? d.tokens.toLocaleString("en-US") : ""),
      field("Cost", fmt.cost(d.cost, d.cost_estimated)), field("Time", fmt.secs(d)), field("Depends on", d.depends.join(", ")),
      field("Files", d.files.join(", ")), field("Parent", d.parent), field("Validation", d.validation),
      field("Review", d.review)),
    // The reason above the buttons; a result from before is not this attempt's.
    ["done", "failed", "blocked"].includes(d.status) && d.result && el("section", { "aria-label": "Result" }, el("h3", {}, "Result"), el("pre", {}, d.result)),
    steering(d),
    historyView(d),
  ];
  const gates = d.log.map((r) => el("li", {}, `${r.time} ${r.tool} ${r.action}: ${r.outcome}`));
  parts.push(el("section", { "aria-label": "The change" }, el("h3", {}, "The change"),
    receipt.diff_stat ? el("p", {}, `${receipt.diff_stat}; validation ${receipt.validation || "none"} exit ${receipt.validation_exit ?? "-"}`) : el("p", { class: "muted" }, "no change recorded yet"),
    gates.length ? el("ul", { "aria-label": "gates and log rows" }, gates) : null,
    d.diff ? el("details", { open: d.status === "running" }, el("summary", {}, d.status === "running" ? "Its change so far" : "Diff against its base"), diffView(d.diff)) : null,
    d.withheld ? el("details", { open: true }, el("summary", {}, `Withheld change: ${d.withheld.path}`), diffView(d.withheld.patch)) : null));
  if (d.reviews.length || d.review_streams.length) {
    // Each review with its reviewer's transcript; a reviewer answering now, or one that
    // failed, has a transcript and no review yet.
    const recorded = new Set(d.reviews.map((r) => r.id));
    const open = (s, label) => el("button", { type: "button", "aria-label": `Transcript of ${label}`,
      onclick: () => openTranscript({ reviews: s.session }, `Transcript of ${label}`, d.id) }, "transcript");
    parts.push(el("section", { "aria-label": "Reviews" }, el("h3", {}, "Reviews"),
      d.reviews.map((r) => {
        const stream = d.review_streams.filter((s) => s.id === r.id).pop();
        return el("div", {}, el("p", {}, `${r.id} by ${r.reviewer}, round ${r.round}: ${r.verdict || "unparsed"} → ${r.outcome || "awaiting"} `,
          stream ? open(stream, `review ${r.id}`) : null),
          el("ul", {}, r.findings.map((f) => el("li", {}, `[${f.severity || "-"}] ${f.text}`))));
      }),
      d.review_streams.filter((s) => !recorded.has(s.id)).map((s) => el("p", {},
        `round ${s.round || "?"} by ${s.cli || "?"}, begun ${s.started || "?"}: no review recorded (answering, or it failed) `,
        open(s, `the review by ${s.cli || "?"} begun ${s.started || "?"}`)))));
  }
  const picker = el("div", { class: "row", role: "group", "aria-label": "Attempts" });
  for (const a of d.transcripts) {
    picker.append(el("button", { type: "button", "aria-label": `Transcript of attempt ${a.attempt} (run ${a.run})`,
      onclick: () => openTranscript(attemptSource(a, d.id), attemptCaption(a), d.id) }, `attempt ${a.attempt}` + (a.kind === "output.txt" ? " (raw output)" : "")));
  }
  const talk = el("section", { "aria-label": "Transcript" }, el("h3", {}, "Transcript"),
    d.transcripts.length ? picker : el("p", { class: "muted" }, "no transcript kept yet"),
    ...transcriptBox());
  // A running task's transcript comes first: what its spoke does now.
  if (d.status === "running") parts.splice(3, 0, talk);
  else parts.push(talk);
  const kept = keptReader();
  $("detail").replaceChildren(...parts.filter(Boolean));
  const last = d.transcripts[d.transcripts.length - 1];
  // The transcript followed goes on where it was: a review's, or the latest attempt's.
  if (follow && kept && follow.owner === d.id && (follow.source.reviews || (last && follow.key === sourceKey(attemptSource(last, d.id))))) {
    readerBack(kept);
  } else if (last) {
    openTranscript(attemptSource(last, d.id), attemptCaption(last), d.id);
  }
}

// -- the plan's challenges -------------------------------------------------------------

function showChallenges() {
  selected = "";
  detailKey = "";
  follow = null;
  for (const n of nodes()) n.classList.remove("selected");
  openDrawer();
  loadChallenges();
  $("panel").focus();
}

async function loadChallenges() {
  let c;
  try {
    c = await getJSON("/api/challenges");
  } catch (err) {
    toast(String(err));
    return;
  }
  if (selected !== "") return;
  const key = JSON.stringify([c.challenges.map((x) => x.id), c.streams]);
  if (key === detailKey) return;
  detailKey = key;
  $("panel-title").textContent = "Challenges of the plan";
  const open = (s, label) => el("button", { type: "button", "aria-label": `Transcript of ${label}`,
    onclick: () => openTranscript({ challenges: s.session }, `Transcript of ${label}`, "") }, "transcript");
  const recorded = new Set(c.challenges.map((x) => x.id));
  const kept = keptReader();
  $("detail").replaceChildren(
    c.challenges.length || c.streams.length ? el("p", { class: "muted" }, "Each challenger read the plan and answered in four parts.") : el("p", { class: "muted" }, "No challenge yet: `maestro challenge` asks other vendors' CLIs."),
    ...c.challenges.map((x) => {
      const stream = c.streams.filter((s) => s.id === x.id).pop();
      const found = Object.entries(x.findings).filter(([, items]) => items.length);
      return el("section", { "aria-label": `Challenge ${x.id}` },
        el("h3", {}, `${x.id} by ${x.challenger}, ${x.time} `, stream ? open(stream, `challenge ${x.id}`) : null),
        x.parsed ? el("ul", {}, found.map(([category, items]) => el("li", {}, category.replace(/_/g, " ") + ":",
          el("ul", {}, items.map((f) => el("li", {}, (f.task ? `Task ${f.task}: ` : "") + f.text))))))
          : el("pre", {}, x.raw || ""));
    }),
    ...c.streams.filter((s) => !recorded.has(s.id)).map((s) => el("p", {},
      `${s.cli || "?"}, begun ${s.started || "?"}: no challenge recorded (answering, or it failed) `,
      open(s, `the challenge by ${s.cli || "?"} begun ${s.started || "?"}`))),
    el("section", { "aria-label": "Transcript" }, el("h3", {}, "Transcript"), ...transcriptBox()));
  if (follow && kept && follow.owner === "") {
    readerBack(kept);
  } else {
    const last = c.streams[c.streams.length - 1];
    if (last) openTranscript({ challenges: last.session }, `Transcript of the challenge by ${last.cli || "?"} begun ${last.started || "?"}`, "");
  }
}

// -- the office and the events ---------------------------------------------------------

async function loadOffice() {
  let o;
  const begun = performance.now();
  try {
    o = await getJSON("/api/office");
  } catch (err) {
    return;
  }
  officeTook = performance.now() - begun;
  const key = JSON.stringify(o);
  if (key === loadOffice.key) return;
  loadOffice.key = key;
  $("questions").replaceChildren(...(o.open.length ? o.open.map((m) => {
    const id = "reply-" + m.id;
    const box = el("textarea", { id });
    const send = async () => {
      const r = await act({ action: "reply", mail: m.id, text: box.value });
      if (r.exit === 0) box.value = "";
    };
    return el("li", {}, el("p", {}, `${m.id} from ${m.from} (${m.type}): ${m.subject}`), el("pre", {}, m.message),
      el("label", { for: id }, `Reply to ${m.id}`), box,
      el("button", { type: "button", onclick: send }, "Send reply"));
  }) : [el("li", { class: "muted" }, "none")]));
  const earlier = o.sessions_total - o.sessions.length;
  $("sessions").replaceChildren(
    ...(earlier > 0 ? [el("li", { class: "muted" }, `${earlier} earlier, not shown (maestro session list shows them all)`)] : []),
    ...o.sessions.map((s) =>
      el("li", {}, `${s.id} · ${s.mode} · `, el("span", { class: "status st-" + s.status }, s.status), s.tasks.length ? ` · task ${s.tasks.join(",")}` : "")));
  $("threads").replaceChildren(...o.threads.map((thread) =>
    el("details", {}, el("summary", {}, `${thread[0].id}: ${thread[0].subject} (${thread.length})`),
      el("ol", {}, thread.map((m) => el("li", {}, `${m.from} → ${m.to.join(", ")} [${m.type}]: `, el("pre", {}, m.message)))))));
}

function renderEvents() {
  const events = state.events || [];
  $("events").replaceChildren(...events.slice().reverse().map((e) =>
    el("li", {}, `${e.time.slice(11, 19)} ${e.kind}` + (e.task ? ` task ${e.task}` : "") + (e.detail || e.message ? `: ${e.detail || e.message}` : ""))));
  $("next").replaceChildren(...((state.plan && state.plan.next) || []).map((a) => el("li", {}, el("code", {}, a.command), " ", a.why)));
}

// -- the stream ------------------------------------------------------------------------

function onState(data) {
  state = data;
  renderHeader();
  renderGraph();
  renderNeeds(); // needs.js: what waits for the person
  renderEvents();
  readerTokens();
  const row = selected && state.plan ? state.plan.tasks.find((t) => t.id === selected) : null;
  const rowKey = JSON.stringify([row, state.run && state.run.alive, held[selected]]);
  if (selected && rowKey !== onState.rowKey) loadDetail();
  onState.rowKey = rowKey;
  const challenged = state.plan ? state.plan.challenges : 0;
  if (selected === "" && challenged !== onState.challenged) loadChallenges();
  onState.challenged = challenged;
  officeSoon(onState.office ? officeEvery() : 0); // the first read at once
  onState.office = true;
}

// The office is read again at once when mail arrives, and at most every few seconds while
// sessions come and go and the state changes (reading 200 sessions takes ~40 ms).
// (1000 sessions: ~200 ms, so then never more than a tenth of the time.)
const OFFICE_EVERY_MS = 3000;
let officeTook = 0;
const officeEvery = () => Math.max(OFFICE_EVERY_MS, 10 * officeTook);

function officeSoon(ms) {
  if (officeSoon.timer) return;
  officeSoon.timer = setTimeout(() => {
    officeSoon.timer = null;
    loadOffice();
  }, ms);
}

$("start").addEventListener("click", () => act({ action: "start" }));
$("abort").addEventListener("click", abortRun);
$("challenges").addEventListener("click", showChallenges);

// The event stream: read with fetch, as EventSource cannot send the token's header.
const handlers = {
  state: onState,
  transcript(n) {
    if (follow && sourceKey(n) === follow.key) more();
    const showing = n.challenges ? selected === "" : selected === n.task;
    if (showing && !detailTimer) {
      detailTimer = setTimeout(() => ((detailTimer = null), selected === "" ? loadChallenges() : loadDetail()), 2000);
    }
  },
  office(n) {
    if (!n.mail) return officeSoon(officeEvery());
    clearTimeout(officeSoon.timer);
    officeSoon.timer = null;
    officeSoon(50);
  },
};

function dispatch(block) {
  let kind = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) kind = line.slice(7);
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  if (data.length && handlers[kind]) handlers[kind](JSON.parse(data.join("\n")));
}

async function listen() {
  try {
    const res = await api("/events");
    if (res.status === 401) return refused();
    if (res.ok) {
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (let got = await reader.read(); !got.done; got = await reader.read()) {
        buffer += got.value;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          dispatch(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
    }
  } catch (err) {
    // the board stopped, or the connection broke: try again
  }
  $("run").textContent = "reconnecting…";
  setTimeout(listen, 1000);
}

if (TOKEN) listen();
else refused();
setInterval(() => state && (renderHeader(), renderGraph()), 1000); // running times tick
