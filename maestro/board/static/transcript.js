// The transcript reader: what a spoke printed, as the panel's full height with its own
// scroll. Its Markdown is drawn and its colour codes (ANSI SGR) coloured (markdown.js),
// each tool call shown as the command or the edit it was with its output folded under
// it; a search marks what it finds, and the reader follows the end while the person
// stays there.
// Every string from a spoke goes in as a text node (`append` of a string, `textContent`):
// nothing is parsed as HTML, no link is made, no image is loaded.
"use strict";

const ENTRIES_KEPT = 400;
const TEXT_JOINED = 8000; // parts of a message joined up to this many characters, then a new entry
let follow = null; // the transcript shown: {source, key, owner, caption, offset, calls, following, unseen}

// A transcript's source: a task attempt's {run, task, attempt, kind}, or a kept
// reviewer's {reviews: session} or challenger's {challenges: session}.
const sourceKey = (s) => (s.reviews ? "reviews " + s.reviews : s.challenges ? "challenges " + s.challenges : `${s.run} ${s.task} ${s.attempt}`);
const attemptSource = (a, task) => ({ run: a.run, task, attempt: a.attempt, kind: a.kind || "stream.jsonl" });
const attemptCaption = (a) => `Transcript of attempt ${a.attempt} (run ${a.run})`;

// -- entries -----------------------------------------------------------------------------

const firstLine = (text, n = 100) => fmt.cut(text.split("\n")[0], n) + (text.includes("\n") ? " …" : "");

function outputLabel(e) {
  if (e.cut) return `a line of ${e.cut.toLocaleString("en-US")} bytes, cut`;
  const lines = e.text ? e.text.split("\n").length : 0;
  return lines === 1 ? "1 line" : `${lines} lines`;
}

function toolView(e) {
  const text = e.text || "";
  const head = (e.shell ? "$ " : "") + firstLine(text);
  const summary = el("summary", {}, el("span", { class: "who" }, e.name), el("code", { class: "head" }, ...ansi(head)));
  const box = el("details", { class: "entry tool" + (e.error ? " error" : ""), "data-call": e.id || null }, summary);
  if (e.diff) {
    const lines = e.diff.split("\n");
    const added = lines.filter((l) => l.startsWith("+")).length, removed = lines.filter((l) => l.startsWith("-")).length;
    summary.append(el("span", { class: "size" }, [added && `+${added}`, removed && `−${removed}`].filter(Boolean).join(" ")));
  }
  if (text.includes("\n") || text.length > 100) box.append(el("pre", { class: "command" }, ...ansi((e.shell ? "$ " : "") + text)));
  if (e.args) box.append(el("pre", { class: "args" }, ...ansi(e.args)));
  if (e.diff) {
    const diff = diffView(e.diff);
    diff.setAttribute("aria-label", `the change to ${text || "the file"}`);
    box.append(diff);
  }
  return box;
}

function outputView(e) {
  return el("pre", { class: "output" + (e.error ? " error" : "") }, ...ansi(e.text));
}

function messageView(e) {
  const who = e.who || "";
  if (who === "output") return el("div", { class: "entry message output" }, el("pre", { class: "plain" }, ...ansi(e.text)));
  // What the model thought, and the prompt a CLI echoes, fold: they are long.
  if (who === "thinking" || who === "user") {
    return el("details", { class: "entry message " + who },
      el("summary", {}, el("span", { class: "who" }, who === "user" ? "prompt" : who), firstLine(e.text)), markdown(e.text));
  }
  return el("div", { class: "entry message " + who }, el("span", { class: "who" }, who), markdown(e.text));
}

function entryView(e) {
  const cls = "entry " + e.kind + (e.error ? " error" : "");
  let node;
  if (e.kind === "tool") node = toolView(e);
  else if (e.kind === "result") node = el("details", { class: cls }, el("summary", {}, `output (${outputLabel(e)})`), outputView(e));
  else if (e.kind === "status") node = el("div", { class: cls }, ...ansi(e.text));
  else node = messageView(e);
  node.entry = e;
  return node;
}

// One entry shown: a result under its call when the call is shown, a message's next part
// (Gemini's deltas, plain output's next line) joined to it; the nodes it added.
function show(e, box) {
  const call = e.kind === "result" && e.id ? follow.calls.get(e.id) : null;
  if (call && box.contains(call)) {
    const output = outputView(e);
    call.append(output);
    call.querySelector("summary").append(el("span", { class: "size" }, (e.error ? "failed, output " : "output ") + outputLabel(e)));
    if (e.error) call.classList.add("error");
    return [output];
  }
  const last = box.lastElementChild;
  const prev = last && last.entry;
  if (prev && prev.kind === "message" && e.kind === "message" && prev.who === e.who &&
      ((prev.delta && e.delta) || e.who === "output") && prev.text.length < TEXT_JOINED) {
    const joined = entryView({ ...prev, text: prev.text + (e.who === "output" ? "\n" : "") + e.text });
    joined.className = last.className;
    last.replaceWith(joined);
    return [joined];
  }
  const node = entryView(e);
  if (e.kind === "tool" && e.id) follow.calls.set(e.id, node);
  if (prev && prev.kind === "message" && e.kind === "message" && prev.who === e.who) node.classList.add("cont");
  box.append(node);
  return [node];
}

// -- search ------------------------------------------------------------------------------

const found = { term: "", marks: [], at: -1 };

function clearMarks() {
  const box = $("transcript");
  for (const m of box.querySelectorAll("mark.found")) m.replaceWith(...m.childNodes);
  box.normalize();
  found.marks = [];
  found.at = -1;
}

// Marks every match under ``roots`` (what was just added), kept in the page's order.
function markIn(roots) {
  const box = $("transcript");
  const current = found.marks[found.at];
  const needle = found.term.toLowerCase();
  const hits = [];
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const hay = n.data.toLowerCase();
      if (hay.length !== n.data.length) continue; // a letter whose lower case is longer: offsets would not hold
      for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) hits.push([n, i]);
    }
  }
  const made = [];
  for (const [node, i] of hits.reverse()) { // from the end, so each earlier offset still holds
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + needle.length);
    const mark = el("mark", { class: "found" });
    range.surroundContents(mark);
    made.push(mark);
  }
  found.marks = found.marks.filter((m) => box.contains(m)).concat(made)
    .sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
  found.at = current ? found.marks.indexOf(current) : -1;
  counted();
}

function counted() {
  const out = $("transcript-found");
  if (!out) return;
  out.textContent = !found.term ? "" : found.marks.length ? `${found.at + 1 || "–"} of ${found.marks.length}` : "no match";
}

function search(term) {
  clearMarks();
  found.term = term;
  if (term) markIn([$("transcript")]);
  if (found.marks.length) go(0);
  counted();
}

// Goes to match ``n`` (wrapping round): its folds opened, the reader scrolled to it.
function go(n) {
  if (!found.marks.length) return;
  const before = found.marks[found.at];
  if (before) before.classList.remove("current");
  found.at = (n + found.marks.length) % found.marks.length;
  const mark = found.marks[found.at];
  mark.classList.add("current");
  for (let fold = mark.closest("details"); fold; fold = fold.parentElement.closest("details")) {
    if (!fold.querySelector(":scope > summary").contains(mark)) fold.open = true; // a summary shows folded
  }
  const box = $("transcript");
  box.scrollTop += mark.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 3;
  counted();
}

// -- following the end -------------------------------------------------------------------

const atEnd = (box) => box.scrollHeight - box.scrollTop - box.clientHeight < 4;
const sized = (box) => (box.size = `${box.scrollHeight} ${box.clientHeight}`);

function toEnd() {
  const box = $("transcript");
  if (!box) return;
  box.scrollTop = box.scrollHeight;
  sized(box);
}

// The person scrolled: up, it stops following; to the end, it follows again. A scroll
// the browser made because the content or the reader changed size is not theirs.
function scrolled(box) {
  if (!follow) return;
  const was = box.size;
  if (was !== sized(box)) {
    if (follow.following) toEnd();
  } else following(atEnd(box));
}

function following(on) {
  if (!follow) return;
  follow.following = on;
  if (on) follow.unseen = 0;
  const button = $("transcript-follow");
  button.setAttribute("aria-pressed", String(on));
  button.textContent = on ? "Following" : follow.unseen ? `Follow (${follow.unseen} new)` : "Follow";
}

// The reader takes the panel's whole height; the panel scrolls to it when a transcript
// is opened by hand.
function fitReader() {
  const reader = document.getElementById("reader"), panel = document.getElementById("panel");
  if (!reader || !panel) return;
  reader.style.height = Math.max(240, panel.clientHeight - 16) + "px";
  if (follow && follow.following) toEnd();
  else sized($("transcript"));
}

function revealReader() {
  const reader = $("reader"), panel = $("panel");
  if (reader) panel.scrollTop += reader.getBoundingClientRect().top - panel.getBoundingClientRect().top - 8;
}

// The way to the reader from the panel's top, while it shows a transcript.
function jumper(shown) {
  let button = $("to-reader");
  if (!button) {
    button = el("button", { type: "button", id: "to-reader", onclick: revealReader }, "Read the transcript ↓");
    $("panel-title").after(button);
  }
  button.hidden = !shown;
}

new ResizeObserver(fitReader).observe(document.getElementById("panel"));
document.addEventListener("click", (e) => { // after the button's own handler opened it
  if (e.target.closest && e.target.closest("#detail button[aria-label^='Transcript of']")) revealReader();
});

// The task's tokens as its node shows them: the same figure from the same state.
function readerTokens() {
  const out = $("transcript-tokens");
  if (!out) return;
  const id = follow && follow.source.task;
  const task = id && state && state.plan ? state.plan.tasks.find((t) => t.id === id) : null;
  const all = task && task.attempts > 1 ? ` in all ${task.attempts} attempts` : "";
  out.textContent = task && task.tokens ? `Task ${id}: ${fmt.tokens(task.tokens)}${all}, as on its node` : "";
}

// -- the reader --------------------------------------------------------------------------

function transcriptBox() {
  jumper(false);
  const box = el("div", { id: "transcript", "aria-live": "polite", tabindex: 0, "aria-label": "the spoke's transcript" });
  box.addEventListener("scroll", () => scrolled(box), { passive: true });
  box.addEventListener("toggle", () => follow && (sized(box), following(atEnd(box))), true); // a fold opened above the end
  const find = el("input", { type: "search", id: "transcript-find", "aria-label": "Search the transcript", placeholder: "Search" });
  let typing = null;
  find.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => search(find.value), 150);
  });
  find.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      if (find.value !== found.term) search(find.value);
      else go(found.at + (e.shiftKey ? -1 : 1));
    } else if (e.key === "Escape") {
      find.value = "";
      search("");
    }
  });
  const folds = el("button", { type: "button", id: "transcript-folds", "aria-label": "Open or close every tool call and output" }, "Open all");
  folds.addEventListener("click", () => {
    const open = folds.textContent === "Open all";
    for (const d of box.querySelectorAll("details")) d.open = open;
    folds.textContent = open ? "Close all" : "Open all";
  });
  return [el("section", { id: "reader", class: "reader", "aria-label": "Transcript reader" },
    el("div", { class: "reader-head" },
      el("p", { class: "reader-title" }, el("span", { id: "transcript-of" }), el("span", { id: "transcript-tokens" })),
      el("div", { class: "reader-tools" },
        el("div", { class: "find", role: "search" }, find,
          el("button", { type: "button", "aria-label": "Previous match", onclick: () => go(found.at - 1) }, "↑"),
          el("button", { type: "button", "aria-label": "Next match", onclick: () => go(found.at + 1) }, "↓"),
          el("span", { id: "transcript-found", role: "status" })),
        folds,
        el("button", { type: "button", id: "transcript-follow", "aria-label": "Follow the end", "aria-pressed": "true", onclick: () => {
          const on = !follow.following;
          following(on);
          if (on) toEnd();
        } }, "Following"))),
    box)];
}

// The reader, kept while board.js builds the panel again around it, then put back as it
// was: where it was scrolled to, and the search being typed in (a running task's panel is
// built again every few seconds).
function keptReader() {
  const reader = $("reader");
  if (reader) reader.kept = { top: $("transcript").scrollTop, typing: document.activeElement === $("transcript-find") };
  return reader;
}

function readerBack(kept) {
  $("reader").replaceWith(kept);
  if (follow.following) toEnd();
  else $("transcript").scrollTop = kept.kept.top;
  if (kept.kept.typing) $("transcript-find").focus({ preventScroll: true });
  jumper(true);
  fitReader();
}

async function openTranscript(source, caption, owner) {
  follow = { source, key: sourceKey(source), owner, caption, offset: null, calls: new Map(), following: true, unseen: 0 };
  $("reader").classList.add("open");
  jumper(true);
  $("transcript-of").textContent = caption;
  $("transcript").replaceChildren();
  found.term = $("transcript-find").value; // another attempt in the same reader: the same search
  found.marks = [];
  found.at = -1;
  following(true);
  readerTokens();
  fitReader();
  await more();
}

// One read at a time: a notice that comes meanwhile, or a read that left more to read
// (a spoke printing faster than the page reads), reads again once it is done.
async function more() {
  const f = follow;
  if (!f) return;
  if (more.busy) {
    more.again = true;
    return;
  }
  more.busy = true;
  more.again = false;
  try {
    const q = new URLSearchParams(f.source);
    if (f.offset !== null) q.set("from", f.offset);
    const data = await getJSON("/api/transcript?" + q);
    if (f === follow) {
      f.offset = data.offset;
      const box = $("transcript");
      const added = data.entries.flatMap((e) => show(e, box));
      while (box.childElementCount > ENTRIES_KEPT) {
        f.calls.delete(box.firstElementChild.dataset.call);
        box.firstElementChild.remove();
      }
      if (found.term && added.length) markIn(added);
      if (f.following) toEnd();
      else if (data.entries.length) {
        f.unseen += data.entries.length;
        following(false);
      }
      sized(box);
      more.again ||= data.behind;
    }
  } catch (err) {
    toast(String(err));
  } finally {
    more.busy = false;
  }
  if (more.again) more();
}
