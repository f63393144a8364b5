// Used by tests/engine/test_report.py: mermaid.parse() for each diagram, in a DOM from jsdom
// (mermaid sanitizes labels with DOMPurify, which needs one).
// Reads a JSON array of diagram texts on stdin; prints a JSON array of null (ok) or the error.
import { JSDOM } from 'jsdom';
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
let input = '';
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const text of JSON.parse(input)) {
  try { await mermaid.parse(text); out.push(null); }
  catch (e) { out.push(String(e && e.message || e)); }
}
process.stdout.write(JSON.stringify(out));
