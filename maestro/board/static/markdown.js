// Text from a spoke drawn as elements, for the transcript reader (transcript.js): its
// colour codes and its Markdown. Every string goes in as a text node (`append` of a
// string): nothing is parsed as HTML, no link is made, no image is loaded.
"use strict";

// -- colour codes ------------------------------------------------------------------------
// SGR colours and weights become classes (board.css); every other escape sequence and
// control character is dropped, so none shows as a box. A line a progress bar rewrote
// (carriage returns) shows as it ended.

const ESCAPES = /\x1b\[([0-9;:]*)m|\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

function sgr(style, params) {
  const codes = params === "" ? [0] : params.split(/[;:]/).map(Number);
  for (let i = 0; i < codes.length; i++) {
    const n = codes[i];
    if (n === 0) Object.assign(style, { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false });
    else if (n === 1) style.bold = true;
    else if (n === 2) style.dim = true;
    else if (n === 3) style.italic = true;
    else if (n === 4) style.underline = true;
    else if (n === 22) style.bold = style.dim = false;
    else if (n === 23) style.italic = false;
    else if (n === 24) style.underline = false;
    else if (n >= 30 && n <= 37) style.fg = n - 30;
    else if (n >= 90 && n <= 97) style.fg = n - 82;
    else if (n === 39) style.fg = null;
    else if (n >= 40 && n <= 47) style.bg = n - 40;
    else if (n >= 100 && n <= 107) style.bg = n - 92;
    else if (n === 49) style.bg = null;
    else if (n === 38 || n === 48) { // 256 colours: the first 16 kept, the rest and true colour dropped
      const key = n === 38 ? "fg" : "bg";
      if (codes[i + 1] === 5) {
        if (codes[i + 2] < 16) style[key] = codes[i + 2];
        i += 2;
      } else if (codes[i + 1] === 2) i += 4;
    }
  }
}

function ansi(text) {
  if (!CONTROL.test(text)) return [text];
  text = text.split("\n").map((line) => {
    const shown = line.replace(/\r+$/, "");
    return shown.slice(shown.lastIndexOf("\r") + 1);
  }).join("\n");
  const out = [];
  const style = {};
  let at = 0;
  const put = (part) => {
    if (!part) return;
    const cls = [style.fg != null && "ansi-fg-" + style.fg, style.bg != null && "ansi-bg-" + style.bg,
      style.bold && "ansi-bold", style.dim && "ansi-dim", style.italic && "ansi-italic", style.underline && "ansi-underline"].filter(Boolean);
    out.push(cls.length ? el("span", { class: cls.join(" ") }, part) : part);
  };
  for (const m of text.matchAll(ESCAPES)) {
    put(text.slice(at, m.index));
    if (m[1] !== undefined) sgr(style, m[1]);
    at = m.index + m[0].length;
  }
  put(text.slice(at));
  return out;
}

// -- Markdown ----------------------------------------------------------------------------
// The blocks models write (headings, lists, quotes, fenced code, tables, rules) and their
// spans (code, emphasis, links): a link shows its text and its URL, an image its
// description and its URL, both as text; HTML stays the text it is.

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const LIST = /^( *)([-*+]|\d{1,9}[.)])(?: +|$)(.*)$/;
const RULE = /^ {0,3}([-*_])( *\1){2,} *$/;
const TABLE_RULE = /^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$/;

const SPANS = [
  [/\\([!-/:-@[-`{-~])/, (m) => m[1]],
  [/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/, (m) => el("code", {}, ...ansi(m[2]))],
  [/!\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/, (m) => el("span", { class: "md-url" }, `[image: ${m[1] || "no description"}] (${m[2]})`)],
  [/\[([^\]]+)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/, (m) => [el("span", { class: "md-link" }, ...inline(m[1])), el("span", { class: "md-url" }, ` (${m[2]})`)]],
  [/<((?:https?|mailto|ftp):[^>\s]+)>/, (m) => el("span", { class: "md-url" }, m[1])],
  [/\*\*(?=\S)([\s\S]*?\S)\*\*|(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)/, (m) => el("strong", {}, ...inline(m[1] ?? m[2]))],
  [/\*(?=[^\s*])([\s\S]*?[^\s*])\*(?!\*)|(?<!\w)_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)/, (m) => el("em", {}, ...inline(m[1] ?? m[2]))],
  [/~~(?=\S)([\s\S]*?\S)~~/, (m) => el("del", {}, ...inline(m[1]))],
];

function inline(text) {
  const out = [];
  while (text) {
    let best = null;
    for (const [pattern, make] of SPANS) {
      const m = pattern.exec(text);
      if (m && (!best || m.index < best.m.index)) best = { m, make };
    }
    if (!best) {
      out.push(...ansi(text));
      break;
    }
    out.push(...ansi(text.slice(0, best.m.index)), ...[best.make(best.m)].flat());
    text = text.slice(best.m.index + best.m[0].length);
  }
  return out;
}

const indent = (line) => line.length - line.trimStart().length;
const blank = (line) => !line.trim();

function list(lines, i, parent) {
  const first = LIST.exec(lines[i]);
  const depth = first[1].length, ordered = /\d/.test(first[2]);
  const node = el(ordered ? "ol" : "ul", ordered && parseInt(first[2], 10) !== 1 ? { start: parseInt(first[2], 10) } : {});
  while (i < lines.length) {
    const m = LIST.exec(lines[i]);
    if (!m || m[1].length !== depth || /\d/.test(m[2]) !== ordered) break;
    const body = [m[3]];
    const inner = depth + m[2].length + 1;
    for (i++; i < lines.length; i++) {
      // An item goes on over lines indented past its marker, and over blank lines before one.
      if (blank(lines[i])) {
        const next = lines.slice(i).find((l) => !blank(l));
        if (next === undefined || indent(next) <= depth) break;
        body.push("");
      } else if (indent(lines[i]) > depth) body.push(lines[i].slice(Math.min(indent(lines[i]), inner)));
      else break;
    }
    let task = /^\[([ xX])\] /.exec(body[0]);
    if (task) body[0] = (task[1] === " " ? "☐ " : "☑ ") + body[0].slice(4);
    const item = el("li");
    blocks(body, item);
    node.append(item);
    while (i < lines.length && blank(lines[i]) && LIST.test(lines[i + 1] || "") && indent(lines[i + 1]) === depth) i++;
  }
  parent.append(node);
  return i;
}

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

function table(lines, i, parent) {
  const head = cells(lines[i]);
  const rows = [];
  for (i += 2; i < lines.length && lines[i].includes("|") && !blank(lines[i]); i++) rows.push(cells(lines[i]));
  parent.append(el("div", { class: "md-table" }, el("table", {},
    el("thead", {}, el("tr", {}, head.map((c) => el("th", {}, ...inline(c))))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, ...inline(c)))))))));
  return i;
}

function blocks(lines, parent) {
  let para = [];
  const flush = () => {
    if (para.length) parent.append(el("p", {}, ...inline(para.join("\n"))));
    para = [];
  };
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    let m;
    if ((m = FENCE.exec(line))) {
      flush();
      const body = [];
      const close = new RegExp(`^ {0,3}${m[1][0] === "`" ? "`" : "~"}{${m[1].length},}\\s*$`);
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i]);
      i++;
      parent.append(el("pre", { class: "code", "data-lang": m[2] || null }, el("code", {}, ...ansi(body.join("\n")))));
    } else if (blank(line)) {
      flush();
      i++;
    } else if ((m = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(line))) {
      flush();
      const level = m[1].length;
      parent.append(el("div", { class: "md-h md-h" + level, role: "heading", "aria-level": Math.min(6, level + 3) }, ...inline(m[2])));
      i++;
    } else if (RULE.test(line)) {
      flush();
      parent.append(el("hr"));
      i++;
    } else if (/^ {0,3}>/.test(line)) {
      flush();
      const body = [];
      for (; i < lines.length && /^ {0,3}>/.test(lines[i]); i++) body.push(lines[i].replace(/^ {0,3}> ?/, ""));
      const quote = el("blockquote");
      blocks(body, quote);
      parent.append(quote);
    } else if ((m = LIST.exec(line)) && (!para.length || (m[3] && /^([-*+]|1[.)])$/.test(m[2])))) {
      flush();
      i = list(lines, i, parent);
    } else if (line.includes("|") && TABLE_RULE.test(lines[i + 1] || "") && (lines[i + 1] || "").includes("|")) {
      flush();
      i = table(lines, i, parent);
    } else {
      para.push(line);
      i++;
    }
  }
  flush();
}

function markdown(text) {
  const box = el("div", { class: "md" });
  blocks(text.replace(/\r\n/g, "\n").split("\n"), box);
  return box;
}
