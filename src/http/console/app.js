// docreader console: upload, read (with SSE progress), and show the text or Markdown
// beside the page it came from. Plain JS, no dependencies, no inline script (it runs
// under the strict Content-Security-Policy the service sends). The read options are built
// from the service's own OpenAPI schema, so they cannot drift from the API: a file is
// offered the options its media type takes (`x-options-by-media-type`, the strict rule).
"use strict";

const $ = (sel) => document.querySelector(sel);
// Never fields: what names the file, what the console always sends (`include_units`, to
// page by) and what would make the read a job the console does not follow.
const NEVER = new Set(["file_id", "file_ids", "path", "url", "include_units", "async", "callback_url"]);
const FIRST = ["output", "max_chars", "pages", "sheet", "range", "query"];
// Where a read starts and ends: `next` says these anew.
const POSITION = ["pages", "chapters", "offset", "limit", "byte_offset", "byte_length", "sheet",
  "sheets_after", "range", "paragraph_offset"];
const OCR_DPI = 300; // what OCR boxes of PDF pages are measured in (src/extract/pdf/render.rs)

const state = {
  files: [],       // {file_id, name, format, mime}
  current: null,   // the selected file
  env: null,       // the last envelope
  body: null,      // the last read's body
  page: 1,         // the page shown
  pages: [],       // [{page, text}] of the text, by its page units
  imageUrl: null,
  options: null,   // every option the form has, by name
  byType: null,    // media type -> the options a read of it takes
  universal: null, // the options every media type takes
  mark: null,      // the search hit the last read was for: {page, line, snippet, ...}
  uploads: 0,      // upload batches so far (ids of their progress bars)
};

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) e.append(c);
  return e;
}

function headers(extra = {}) {
  const key = sessionStorage.getItem("docreader-key") || $("#key").value.trim();
  return key ? { ...extra, Authorization: `Bearer ${key}` } : extra;
}

function say(text, ok = false) {
  const li = el("li", { class: ok ? "ok" : "", text });
  $("#messages").prepend(li);
}

function errorText(body, status) {
  const e = body && body.error;
  if (!e) return `HTTP ${status}`;
  return `${e.message}${e.hint ? ` — ${e.hint}` : ""} (${e.code})`;
}

// Bytes as people read them.
function size(n) {
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  return `${(n / 1e6).toFixed(1)} MB`;
}

// `code` spans and [links](href) of the schema's descriptions as DOM nodes: no raw
// backticks, and nothing in the text becomes markup. `links: false` for text that may carry
// a document's words (an error's hint can quote a sheet name): code spans only, no link a
// file could plant.
function richText(node, text, { links = true } = {}) {
  const src = String(text || "").replace(/\s*\n\s*/g, " ").trim();
  const re = links ? /`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\)/g : /`([^`]+)`/g;
  let at = 0;
  let m;
  while ((m = re.exec(src))) {
    node.append(src.slice(at, m.index));
    if (m[1] !== undefined) node.append(el("code", { text: m[1] }));
    else node.append(safeUrl(m[3]) ? el("a", { href: m[3], rel: "noopener noreferrer", target: "_blank", text: m[2] }) : m[2]);
    at = re.lastIndex;
  }
  node.append(src.slice(at));
  return node;
}

// ---------------------------------------------------------------- files

// One batch (the files picked or dropped at once): one progress bar for the bytes of all
// of them, each file its own request (a refused file does not refuse the others).
async function upload(files) {
  if (!files.length) return;
  for (const old of document.querySelectorAll("#uploads li.done")) old.remove();
  const total = files.reduce((n, f) => n + f.size, 0);
  const id = `upload-${++state.uploads}`;
  const what = files.length === 1 ? files[0].name : `${files.length} files`;
  const bar = el("progress", { id, max: String(Math.max(1, total)), value: "0" });
  const label = el("label", { for: id });
  const li = el("li", {}, label, bar);
  $("#uploads").append(li);
  const shown = (sent) => {
    bar.value = Math.min(total, Math.round(sent));
    label.textContent = `Uploading ${what}: ${size(bar.value)} of ${size(total)} sent`;
  };
  shown(0);
  let before = 0;
  for (const f of files) {
    const res = await send(f, (loaded, all) => shown(before + (all ? Math.min(1, loaded / all) * f.size : 0)));
    before += f.size;
    shown(before);
    if (res.error) {
      say(`${f.name}: the upload did not reach the service (${res.error}).`);
      continue;
    }
    const body = res.body;
    if (res.status < 200 || res.status > 299 || !body || body.status !== "ok") {
      say(`${f.name} was refused: ${errorText(body, res.status)}`);
      continue;
    }
    for (const info of body.files || []) {
      addFile({ file_id: info.file_id, name: info.name || f.name, format: info.format, mime: info.mime });
      say(`${f.name} uploaded.`, true);
    }
  }
  if (!total) bar.max = bar.value = 1;
  li.classList.add("done");
  label.textContent = `Sent ${what}: ${size(total)}`;
}

// XMLHttpRequest, not fetch: only it tells how many bytes of a request went out.
function send(file, progress) {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/upload");
    for (const [k, v] of Object.entries(headers())) xhr.setRequestHeader(k, v);
    xhr.upload.addEventListener("progress", (e) => progress(e.loaded, e.lengthComputable ? e.total : 0));
    xhr.addEventListener("load", () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch (_) { /* not JSON: said by status */ }
      resolve({ status: xhr.status, body });
    });
    xhr.addEventListener("error", () => resolve({ error: "network error" }));
    xhr.addEventListener("abort", () => resolve({ error: "aborted" }));
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}

function addFile(info, { atEnd = false } = {}) {
  if (state.files.some((f) => f.file_id === info.file_id)) return;
  state.files.push(info);
  const b = el("button", { type: "button", class: "link", "aria-pressed": "false", "data-id": info.file_id },
    `${info.name}${info.format ? ` (${info.format})` : ""}`);
  b.addEventListener("click", () => select(info));
  const del = el("button", { type: "button", class: "delete", "aria-label": `Delete ${info.name}`, text: "Delete" });
  del.addEventListener("click", () => removeFile(info, li));
  const li = el("li", {}, b, " ", del);
  // Uploaded now: on top (the list is newest first, as GET /files gives it).
  if (atEnd) $("#files").append(li); else $("#files").prepend(li);
  // A file just uploaded is the one to read; a listed one only when none is chosen.
  if (!state.current || !atEnd) select(info);
}

// The tenant's files as the service keeps them: a reload of the page lists them again.
async function listFiles() {
  let res;
  try {
    res = await fetch("/files?limit=100", { headers: headers() });
  } catch (_) {
    return;
  }
  if (!res.ok) return; // a key is asked for first (401), or the list waits for the next load
  const body = await res.json().catch(() => null);
  for (const f of (body && body.files) || []) {
    addFile({ file_id: f.file_id, name: f.name, format: f.format, mime: f.mime }, { atEnd: true });
  }
}

async function removeFile(info, li) {
  let res;
  try {
    res = await fetch(`/files/${encodeURIComponent(info.file_id)}`, { method: "DELETE", headers: headers() });
  } catch (err) {
    say(`${info.name} was not deleted: the service did not answer (${err.message}).`);
    return;
  }
  if (!res.ok && res.status !== 404) {
    const body = await res.json().catch(() => null);
    say(`${info.name} was not deleted: ${errorText(body, res.status)}`);
    return;
  }
  li.remove();
  state.files = state.files.filter((f) => f.file_id !== info.file_id);
  if (state.current && state.current.file_id === info.file_id) {
    state.current = null;
    $("#read").disabled = true;
    $("#read").textContent = "Read";
    scopeOptions();
  }
  say(`${info.name} deleted.`, true);
}

function select(info) {
  state.current = info;
  for (const b of document.querySelectorAll("#files button[data-id]")) {
    b.setAttribute("aria-pressed", String(b.getAttribute("data-id") === info.file_id));
  }
  $("#read").disabled = false;
  $("#read").textContent = `Read ${info.name}`;
  scopeOptions();
}

// ---------------------------------------------------------------- search

// Where a hit (or a finding) stands: page, slide, sheet, chapter, Word block.
function place(p) {
  const at = [];
  if (p.page != null) at.push(`page ${p.page}`);
  if (p.slide != null) at.push(`slide ${p.slide}`);
  if (p.sheet != null) at.push(`sheet ${p.sheet}`);
  if (p.chapter != null) at.push(`chapter ${p.chapter}`);
  if (p.paragraph != null) at.push(`block ${p.paragraph}`);
  if (p.line) at.push(`line ${p.line}`);
  return at.join(", ");
}

async function search(query) {
  const status = $("#search-status");
  const list = $("#hits");
  list.replaceChildren();
  if (!query) {
    status.textContent = "Type the words to find.";
    return;
  }
  status.textContent = "Searching…";
  let res;
  let body = null;
  try {
    res = await fetch("/search", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify({ query, limit: 20 }),
    });
    body = await res.json().catch(() => null);
  } catch (err) {
    status.textContent = `The search did not reach the service (${err.message}).`;
    return;
  }
  if (!res.ok || !body || body.status !== "ok") {
    status.textContent = `The search failed: ${errorText(body, res.status)}`;
    return;
  }
  const hits = body.hits || [];
  status.textContent = hits.length
    ? `${hits.length} ${hits.length === 1 ? "hit" : "hits"} for “${query}”, best first: choose one to read it.`
    : `No hits for “${query}” in the files read so far.`;
  for (const h of hits) {
    const where = place(h);
    const b = el("button", { type: "button", class: "link hit", "data-file": h.file_id },
      el("span", { class: "hit-where", text: `${h.name}${where ? ` · ${where}` : ""}` }),
      el("span", { class: "snippet", text: h.snippet }));
    b.addEventListener("click", () => openHit(h));
    list.append(el("li", {}, b));
  }
}

// A hit chosen: its file selected, and the page (slide, sheet, chapter, or the lines from
// the hit's on) read with the form's other options; the hit's line marked in the text.
async function openHit(h) {
  let info = state.files.find((f) => f.file_id === h.file_id)
    || state.files.find((f) => (h.file_ids || []).includes(f.file_id));
  if (!info) {
    info = { file_id: h.file_id, name: h.name };
    try {
      const res = await fetch(`/files/${encodeURIComponent(h.file_id)}`, { headers: headers() });
      const j = res.ok ? await res.json() : null;
      if (j && j.file) Object.assign(info, { format: j.file.format, mime: j.file.mime });
    } catch (_) { /* read anyway: the read says what is wrong */ }
    addFile(info, { atEnd: true });
  }
  select(info);
  const allowed = allowedOptions(info);
  const body = { file_id: info.file_id, ...readOptions() };
  for (const k of [...POSITION, "query", "query_mode", "context_lines"]) delete body[k];
  const mark = { snippet: h.snippet, line: h.line, index: Math.max(0, (h.line || 1) - 1) };
  if (h.page != null && allowed.has("pages")) {
    body.pages = String(h.page);
    mark.page = h.page;
  } else if (h.slide != null && allowed.has("pages")) {
    body.pages = String(h.slide);
  } else if (h.sheet != null && allowed.has("sheet")) {
    body.sheet = h.sheet;
    mark.unit = { kind: "sheet", name: h.sheet };
  } else if (h.chapter != null && allowed.has("chapters")) {
    body.chapters = String(h.chapter);
  } else if (h.page != null) {
    mark.page = h.page; // an image's page: the whole file is read
  } else if (allowed.has("offset") && h.line > 1) {
    body.offset = h.line - 1;
    mark.index = 0;
  }
  read(body, { mark });
}

// ---------------------------------------------------------------- options

async function buildOptions() {
  let spec;
  try {
    spec = await (await fetch("/openapi.json")).json();
  } catch (err) {
    say(`The options could not be loaded (${err.message}); reads use the defaults.`);
    return;
  }
  const schemas = spec.components.schemas;
  const req = schemas.ReadRequest;
  const names = Object.keys(req.properties).filter((n) => !NEVER.has(n));
  state.options = new Set(names);
  const byType = req["x-options-by-media-type"];
  if (byType && typeof byType === "object") {
    state.byType = byType;
    const lists = Object.values(byType);
    state.universal = new Set(names.filter((n) => lists.every((l) => l.includes(n))));
  }
  names.sort((a, b) => {
    const ia = FIRST.indexOf(a), ib = FIRST.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  });
  const form = $("#options");
  // The common options in view; the rest behind "More options" (a phone's screen is short).
  const more = el("details", { class: "more" }, el("summary", { text: "More options" }));
  const moreFields = el("div", { class: "more-fields" });
  more.append(moreFields);
  for (const name of names) {
    let prop = req.properties[name];
    const ref = (prop.$ref || (prop.oneOf || prop.allOf || []).map((p) => p.$ref).find(Boolean) || "");
    // The option's own description: beside its `$ref` (in `oneOf`), else the type's.
    const description = prop.description
      || (prop.oneOf || prop.allOf || []).map((p) => p.description).find(Boolean);
    if (ref) {
      const target = schemas[ref.split("/").pop()] || {};
      prop = { ...target, description: description || target.description };
    }
    const types = [].concat(prop.type || []);
    const id = `opt-${name}`;
    const descId = `${id}-desc`;
    let input;
    const enums = prop.enum || (prop.oneOf || []).flatMap((o) => o.enum || []);
    if (enums.length) {
      input = el("select", { id, name, "aria-describedby": descId }, el("option", { value: "", text: "default" }));
      for (const v of enums) input.append(el("option", { value: v, text: v }));
    } else if (types.includes("boolean")) {
      input = el("select", { id, name, "data-type": "boolean", "aria-describedby": descId },
        el("option", { value: "", text: "default" }), el("option", { value: "true", text: "true" }),
        el("option", { value: "false", text: "false" }));
    } else if (types.includes("integer")) {
      input = el("input", { id, name, type: "number", inputmode: "numeric", "data-type": "integer",
        min: prop.minimum, max: prop.maximum, "aria-describedby": descId });
    } else {
      input = el("input", { id, name, type: "text", "aria-describedby": descId, spellcheck: "false" });
    }
    (FIRST.includes(name) ? form : moreFields).append(el("div", { class: "field", "data-option": name },
      el("label", { for: id, text: name }), input,
      richText(el("p", { class: "desc", id: descId }), prop.description || "")));
  }
  form.append(more);
  scopeOptions();
}

// The options a read of this file takes: its media type's, as the service lists them; with
// no file, those every format takes; a media type not listed, all of them.
function allowedOptions(info) {
  const all = state.options || new Set();
  if (!state.byType) return all;
  if (!info) return state.universal;
  const list = state.byType[info.mime];
  return list ? new Set(list.filter((n) => all.has(n))) : all;
}

function scopeOptions() {
  if (!state.options) return;
  const info = state.current;
  const allowed = allowedOptions(info);
  for (const f of document.querySelectorAll("#options .field[data-option]")) {
    f.hidden = !allowed.has(f.getAttribute("data-option"));
  }
  const more = $("#options .more");
  if (more) more.hidden = !more.querySelector(".field:not([hidden])");
  let scope;
  if (!info) scope = "No file chosen: the options every format takes.";
  else if (state.byType && !state.byType[info.mime]) scope = `Every option: the service lists none for ${info.mime || "this file's type"}.`;
  else scope = `The options of ${info.name}${info.mime ? ` (${info.mime})` : ""}.`;
  $("#options-scope").textContent = scope;
}

function readOptions() {
  const body = {};
  for (const input of document.querySelectorAll("#options [name]")) {
    // An option the chosen file's format does not take is not sent (its field is hidden).
    if (input.closest(".field[hidden]")) continue;
    const v = input.value.trim();
    if (v === "") continue;
    const type = input.getAttribute("data-type");
    body[input.name] = type === "integer" ? Number(v) : type === "boolean" ? v === "true" : v;
  }
  return body;
}

// ---------------------------------------------------------------- reading

async function read(body, { mark = null } = {}) {
  state.body = body;
  state.mark = mark;
  $("#read").disabled = true;
  $("#read-on").hidden = true;
  const box = $("#progress-box");
  const bar = $("#progress");
  box.hidden = false;
  bar.removeAttribute("value");
  $("#progress-label").textContent = "Reading…";
  let env = null;
  let failure = null; // the error body, or {error: {message}} when there is none
  try {
    const res = await fetch("/read", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      // The console pages through the text by its units, never by its marker lines.
      body: JSON.stringify({ ...body, include_units: true }),
    });
    if (!(res.headers.get("content-type") || "").includes("text/event-stream")) {
      const j = await res.json().catch(() => null);
      if (res.ok && j) env = j;
      else failure = j && j.error ? j : { error: { message: `The service answered HTTP ${res.status}.` } };
    } else {
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const chunk = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let event = "message";
          const data = [];
          for (const line of chunk.split("\n")) {
            if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (!data.length) continue;
          const payload = JSON.parse(data.join("\n"));
          if (event === "progress") {
            bar.max = Math.max(1, payload.total);
            bar.value = payload.done;
            $("#progress-label").textContent = `Reading: ${payload.done} of ${payload.total} pages (${payload.stage})`;
          } else if (event === "envelope") env = payload;
          else if (event === "error") failure = payload && payload.error ? payload : { error: { message: "The read failed." } };
        }
      }
    }
  } catch (err) {
    failure = { error: { message: `The read did not reach the service (${err.message}).` } };
  }
  box.hidden = true;
  $("#read").disabled = !state.current;
  if (failure || !env) {
    fail((failure || { error: { message: "The service gave no answer." } }).error);
    return;
  }
  show(env);
}

// A failed read: nothing of the last result stays (it would pass for this read's), and the
// error says what it is (its code), what went wrong and what to do.
function fail(e) {
  const name = state.current ? state.current.name : "Read";
  say(`${name}: ${e.message}${e.hint ? ` — ${e.hint}` : ""}${e.code ? ` (${e.code})` : ""}`);
  state.env = null;
  state.pages = [];
  state.mark = null;
  $("#summary").textContent = `Not read: ${name}`;
  const box = $("#read-error");
  box.replaceChildren(
    el("p", {}, ...(e.code ? [el("code", { class: "code", text: e.code }), " "] : []), e.message || "The read failed."),
    ...(e.hint ? [richText(el("p", { class: "hint" }), e.hint, { links: false })] : []));
  box.hidden = false;
  $("#warnings").replaceChildren();
  $("#details").replaceChildren();
  $("#text").replaceChildren();
  $("#boxes").replaceChildren();
  $("#page-img").removeAttribute("src");
  $("#page-img").alt = "";
  $("#figcaption").textContent = "";
  $("#figure").hidden = true;
  $(".view").classList.remove("with-page");
  $("#pager").hidden = true;
  $("#page-no").textContent = "";
  $("#read-on").hidden = true;
  $("#copy").disabled = true;
  $("#download").disabled = true;
  $("#copied").textContent = "";
}

function show(env) {
  state.env = env;
  $("#read-error").hidden = true;
  $("#read-error").replaceChildren();
  const parts = [`${env.file}: ${env.format}`, `${env.char_count} characters`];
  if (env.truncated) parts.push("cut (read on for the rest)");
  if (env.total_pages) parts.push(`${env.pages_read || 0} of ${env.total_pages} pages read`);
  if (env.ocr_engine) parts.push(`OCR: ${env.ocr_engine}`);
  $("#summary").textContent = parts.join(" · ");
  const warnings = $("#warnings");
  warnings.replaceChildren(...(env.warnings || []).map((w) => el("li", { text: w })),
    ...(env.note ? [el("li", { class: "note", text: `Note: ${env.note}` })] : []));
  $("#copy").disabled = false;
  $("#download").disabled = false;
  $("#copied").textContent = "";
  $("#read-on").hidden = !env.next;
  details(env);
  // The text page by page, where it has pages (from `units`: a line of the document
  // that reads like a page marker is text, not a page).
  state.pages = unitPages(env);
  const paged = ["pdf", "image"].includes(env.format);
  state.page = state.pages.length ? state.pages[0].page : 1;
  const mark = state.mark;
  if (mark && mark.page != null && state.pages.some((p) => p.page === mark.page)) state.page = mark.page;
  $("#figure").hidden = !paged;
  $(".view").classList.toggle("with-page", paged);
  $("#pager").hidden = !(paged && (env.total_pages || 0) > 1);
  $("#goto-page").max = String(env.total_pages || 1);
  render();
}

// ---------------------------------------------------------------- what the JSON holds

// Below the summary: what the envelope says besides its text, each part only when it is
// there — the document's own data, a table's profile, the sheets, OCR, hidden text.
function details(env) {
  const parts = [docPart(env), outlinePart(env.outline), chunksPart(env.chunks), profilePart(env.profile, "Table profile"),
    sheetsPart(env.sheets), ocrPart(env), hiddenPart(env.security)].filter(Boolean);
  $("#details").replaceChildren(...parts);
}

function section(name, title, open, ...content) {
  return el("details", { class: "part", "data-part": name, open }, el("summary", { text: title }), ...content);
}

function facts(rows) {
  const dl = el("dl", { class: "facts" });
  for (const [k, v] of rows) {
    if (v === undefined || v === null || v === "") continue;
    dl.append(el("dt", { text: k }), el("dd", { text: String(v) }));
  }
  return dl.childElementCount ? dl : null;
}

// A table of the details; `long` names the columns of running text (kept readable on a phone).
function table(label, head, rows, long = []) {
  const t = el("table", {}, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col", text: h })))));
  const tbody = el("tbody");
  for (const r of rows) {
    tbody.append(el("tr", {}, ...r.map((c, i) => el("td", { class: long.includes(i) ? "long" : null,
      text: c === undefined || c === null ? "" : String(c) }))));
  }
  t.append(tbody);
  return el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": label }, t);
}

const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const num = (x) => (typeof x === "number" ? (Number.isInteger(x) ? String(x) : String(+x.toPrecision(6))) : x);

function docPart(env) {
  const m = env.metadata || {};
  const ps = m.page_size;
  const rows = [
    ["Title", m.title || env.title], ["Author", m.author], ["Subject", m.subject || env.subject],
    ["Description", m.description], ["Creator", m.creator], ["Producer", m.producer],
    ["Created", m.created], ["Modified", m.modified], ["Language", m.language],
    ["Publisher", m.publisher], ["Identifier", m.identifier],
    ["Page size", ps ? `${num(ps.width_pt)} × ${num(ps.height_pt)} pt` : null],
    ["From", env.from], ["To", env.to], ["Cc", env.cc], ["Date", env.date],
    ["Attachments", (env.attachments || []).map((a) => a.name).join(", ")],
    ["Pages", env.total_pages], ["Pages read", env.page_range_read],
    ["Slides", env.total_slides], ["Slides read", env.slide_range_read],
    ["Chapters", env.total_chapters], ["Chapters read", env.chapter_range_read],
    ["Paragraphs", env.paragraphs], ["Tables", env.tables], ["Blocks", env.blocks],
    ["Lines", env.total_lines], ["Size", env.size != null ? size(env.size) : null],
    ["Encoding", env.encoding ? `${env.encoding}${env.encoding_confidence ? ` (${env.encoding_confidence})` : ""}` : null],
    ["Image", env.width ? `${env.width} × ${env.height} px` : null],
    ["Tokens", env.tokens],
  ];
  const dl = facts(rows);
  return dl && section("document", "Document", false, dl);
}

// The outline (`output: "json"` or `"chunks"` from the document's start, or a section read):
// each heading indented by its level, with its unit; its id a button that reads the section.
function outlinePart(outline) {
  if (!outline || !outline.length) return null;
  const unit = (u) => (u.kind === "document" ? "" : `${u.kind} ${u.number ?? u.name}`);
  const rows = outline.map((e) => [e.id, `${"\u2003".repeat(Math.max(0, e.level - 1))}${e.title}`, unit(e.unit)]);
  const wrap = table("Outline", ["Section", "Heading", "On"], rows, [1]);
  wrap.querySelectorAll("tbody tr").forEach((tr, i) => {
    const id = outline[i].id;
    const go = el("button", { type: "button", class: "link", text: id,
      "aria-label": `Read section ${id}: ${outline[i].title}` });
    go.addEventListener("click", () => {
      const field = $("#opt-section");
      if (!field) return;
      field.value = id;
      const block = $("#opt-section_block");
      if (block) block.value = "";
      $("#read").click();
    });
    tr.cells[0].replaceChildren(go);
  });
  return section("outline", `Outline: ${count(outline.length, "heading")}`, true, wrap);
}

// `output: "chunks"`: each chunk with its heading path, units, tokens and text, open (it is
// what the read asked for).
function chunksPart(chunks) {
  if (!chunks) return null;
  const unit = (u) => (u.kind === "document" ? "document" : `${u.kind} ${u.number ?? u.name}`);
  const rows = chunks.map((c, i) => [i + 1, (c.heading_path || []).join(" › "),
    (c.units || []).map(unit).join(", "), c.tokens, c.text]);
  return section("chunks", `Chunks: ${count(chunks.length, "chunk")}`, true,
    table("Chunks", ["#", "Heading path", "Units", "Tokens", "Text"], rows, [1, 4]));
}

function profilePart(p, title, name = "profile") {
  if (!p) return null;
  const what = `${count(p.rows, "row")} × ${count(p.column_count, "column")}${p.header ? ", with a header" : ""}`;
  const range = (c) => (c.min != null ? `${num(c.min)} … ${num(c.max)} (mean ${num(c.mean)})`
    : c.earliest != null ? `${c.earliest} … ${c.latest}` : "");
  return section(name, `${title}: ${what}`, false,
    ...(p.title ? [el("p", { class: "small", text: `Title: ${p.title}` })] : []),
    table(title, ["Column", "Type", "Empty", "Distinct", "Range"],
      (p.columns || []).map((c) => [c.name, c.type, c.nulls, `${c.distinct}${c.distinct_exact === false ? " (about)" : ""}`, range(c)])));
}

function sheetsPart(sheets) {
  if (!sheets || !sheets.length) return null;
  const rows = sheets.map((s) => [s.name, `${s.rows} × ${s.cols}`, (s.read || "").replace(/_/g, " "),
    [s.hidden ? "hidden" : "", s.kind || "", s.last_cell ? `to ${s.last_cell}` : ""].filter(Boolean).join(", ")]);
  const profiles = sheets.filter((s) => s.profile)
    .map((s) => profilePart(s.profile, `Profile of ${s.name}`, "sheet-profile"));
  return section("sheets", `Sheets: ${sheets.length}`, false,
    table("Sheets", ["Sheet", "Rows × columns", "Read", "Notes"], rows), ...profiles);
}

function ocrPart(env) {
  const q = env.ocr_quality;
  const pages = env.pages_ocr || [];
  if (!q && !env.ocr_engine && !pages.length) return null;
  const used = !!env.ocr_engine || (q && q.ocr_pages > 0);
  const flag = q && q.quality_flag;
  const langs = state.body && state.body.ocr_lang;
  const unread = (q && q.unsupported_script) || [];
  const dl = facts([
    ["OCR used", used ? `yes${q && q.ocr_pages ? `, ${count(q.ocr_pages, "page")}` : ""}` : "no"],
    ["Engine", env.ocr_engine], ["Languages asked for", langs], ["Quality", flag ? flag.replace(/_/g, " ") : null],
    ["Confidence", q && q.confidence != null ? `${Math.round(q.confidence * 100)}%` : null],
    ["Unsure lines", q && q.unsure_lines], ["Lines in another script", q && q.other_script_lines],
    ["Lines read again", q && q.reread_lines],
    ["Lines not read (script)", unread.length ? unread.map((u) => `${u.script}${u.page ? ` (page ${u.page})` : ""}`).join(", ") : null],
    ["Pages from memory", env.ocr_pages_from_memory],
    ["Pages not OCR'd", (env.skipped_pages || []).join(", ")],
    ["Characters per page", q && q.text_density != null ? num(q.text_density) : null],
  ]);
  const perPage = pages.length ? table("OCR by page", ["Page", "Status", "Why", "Confidence"],
    pages.map((p) => [p.page, p.status, (p.reason || "").replace(/_/g, " "),
      p.confidence != null ? `${Math.round(p.confidence * 100)}%` : ""])) : null;
  const title = `OCR: ${used ? `${env.ocr_engine || "used"}` : "not used"}${flag ? ` · ${flag.replace(/_/g, " ")}` : ""}`;
  return section("ocr", title, false, ...[dl, perPage].filter(Boolean));
}

function hiddenPart(sec) {
  const findings = (sec && sec.findings) || [];
  if (!findings.length) return null;
  const high = findings.filter((f) => f.severity === "high").length;
  const title = `Hidden text: ${count(findings.length, "finding")}${high ? `, ${high} high` : ""}`;
  const how = findings.some((f) => f.how);
  return section("hidden", title, high > 0,
    ...(sec.summary ? [el("p", { class: "small", text: sec.summary })] : []),
    table("Hidden text findings", ["Kind", "Severity", "Text", "Where", ...(how ? ["How"] : [])],
      findings.map((f) => [f.kind.replace(/_/g, " "), f.severity, f.snippet, place(f), ...(how ? [f.how || ""] : [])]), [2]));
}

function unitPages(env) {
  const units = (env.units || []).filter((u) => u.kind === "page");
  if (!units.length) return [];
  // `start` and `end` count characters (code points), as `char_count` does.
  const chars = Array.from(env.text || "");
  return units.map((u) => ({ page: u.number, text: chars.slice(u.start, u.end).join("") }));
}

// The text shown: the page's, or all of it; null for a page this read did not include.
function pageText() {
  if (!state.pages.length) return state.env.text || "";
  const p = state.pages.find((x) => x.page === state.page);
  return p ? p.text : null;
}

// The line of the shown text the search hit was on (-1: none).
function markedLine(lines) {
  const m = state.mark;
  if (!m || !m.snippet) return -1;
  if (state.pages.length && m.page != null && m.page !== state.page) return -1;
  let index = m.index;
  if (m.unit && !state.pages.length) {
    const u = (state.env.units || []).find((x) => x.kind === m.unit.kind && x.name === m.unit.name);
    if (u) index += Array.from(state.env.text || "").slice(0, u.start).join("").split("\n").length - 1;
  }
  const core = m.snippet.replace(/^[…\s]+|[…\s]+$/g, "").slice(0, 60);
  if (!core) return -1;
  if (lines[index] !== undefined && lines[index].includes(core)) return index;
  return lines.findIndex((l) => l.includes(core));
}

// A page the last read did not include: read it, with that read's options.
function readPage(n) {
  const body = { ...state.body };
  for (const k of POSITION) delete body[k];
  body.pages = String(n);
  read(body);
}

function ocrLines() {
  const b = state.env && state.env.boxes;
  if (!b) return [];
  if (state.env.format === "image") return b;
  const p = b.find((x) => x.page === state.page);
  return (p && p.lines) || [];
}

function render() {
  const env = state.env;
  const markdown = state.body && state.body.output === "markdown";
  const target = $("#text");
  const lines = ocrLines();
  const text = pageText();
  if (text === null) {
    // A page the read did not include: offered, where the format reads by pages.
    const p = el("p", { class: "not-read" }, `Page ${state.page} was not part of this read.`);
    if (allowedOptions({ mime: env.mime }).has("pages")) {
      const n = state.page;
      const b = el("button", { type: "button", id: "read-page", text: `Read page ${n}` });
      b.addEventListener("click", () => readPage(n));
      p.append(" ", b);
    }
    target.replaceChildren(p);
  } else if (markdown) {
    target.replaceChildren(renderMarkdown(text));
  } else {
    const pre = el("pre");
    const textLines = text.split("\n");
    const hit = markedLine(textLines);
    textLines.forEach((line, n) => {
      const i = lines.findIndex((l) => l.text && l.text.trim() === line.trim());
      const span = el("span", { class: i >= 0 ? "line ocr" : "line", text: line || "\u00a0" });
      if (n === hit) {
        span.classList.add("hit");
        span.id = "hit-line";
      }
      if (i >= 0) {
        span.tabIndex = 0;
        span.setAttribute("role", "button");
        span.setAttribute("aria-label", `Show on the page: ${line}`);
        span.dataset.box = String(i);
        const pick = () => highlight(i);
        span.addEventListener("click", pick);
        span.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(); } });
      }
      pre.append(span);
    });
    target.replaceChildren(pre);
    const hitLine = $("#hit-line");
    if (hitLine) hitLine.scrollIntoView({ block: "nearest" });
  }
  $("#page-no").textContent = env.total_pages ? `Page ${state.page} of ${env.total_pages}` : "";
  $("#prev").disabled = state.page <= 1;
  $("#next").disabled = !env.total_pages || state.page >= env.total_pages;
  if (["pdf", "image"].includes(env.format)) loadPage();
}

async function loadPage() {
  const env = state.env;
  const img = $("#page-img");
  const width = Math.min(1400, Math.round(($(".view").clientWidth || 600) * (window.devicePixelRatio || 1)));
  const page = state.page;
  const url = `/files/${encodeURIComponent(env.file_id)}/pages/${page}?width=${width}`;
  $("#figcaption").textContent = "Loading the page…";
  $("#boxes").replaceChildren();
  try {
    const res = await fetch(url, { headers: headers() });
    if (state.env !== env || state.page !== page) return; // another read or page since
    if (!res.ok) {
      const j = await res.json().catch(() => null);
      $("#figcaption").textContent = `The page cannot be shown: ${errorText(j, res.status)}`;
      img.removeAttribute("src");
      return;
    }
    const blob = await res.blob();
    if (state.env !== env || state.page !== page) return;
    if (state.imageUrl) URL.revokeObjectURL(state.imageUrl);
    state.imageUrl = URL.createObjectURL(blob);
    img.alt = `Page ${state.page} of ${env.file}`;
    img.onload = drawBoxes;
    img.src = state.imageUrl;
    const n = ocrLines().length;
    $("#figcaption").textContent = `Page ${state.page}${n ? ` · ${n} OCR lines: choose one in the text or on the page` : ""}`;
  } catch (err) {
    $("#figcaption").textContent = `The page cannot be shown (${err.message}).`;
  }
}

// OCR boxes over the page: measured in the pixels OCR saw — the image's own for an image,
// the page at 300 dpi for a PDF — and scaled to the picture as shown.
function drawBoxes() {
  const env = state.env;
  if (!env) return;
  const img = $("#page-img");
  const lines = ocrLines();
  const layer = $("#boxes");
  layer.replaceChildren();
  if (!lines.length || !img.naturalWidth) return;
  let ocrWidth = env.width;
  if (env.format === "pdf") {
    const size = env.metadata && env.metadata.page_size;
    ocrWidth = size ? size.width_pt * OCR_DPI / 72 : img.naturalWidth;
  }
  const k = 100 / (ocrWidth || img.naturalWidth);
  const ky = k * img.naturalWidth / img.naturalHeight;
  lines.forEach((l, i) => {
    const [x0, y0, x1, y1] = l.box;
    const b = el("button", { type: "button", class: "box", "data-box": String(i),
      "aria-label": `OCR line: ${l.text || "(not read)"}`, title: l.text || "" });
    b.style.left = `${x0 * k}%`;
    b.style.top = `${y0 * ky}%`;
    b.style.width = `${(x1 - x0) * k}%`;
    b.style.height = `${(y1 - y0) * ky}%`;
    b.addEventListener("click", () => highlight(i));
    layer.append(b);
  });
}

function highlight(i) {
  for (const e of document.querySelectorAll(".hl")) e.classList.remove("hl");
  for (const e of document.querySelectorAll(`[data-box="${i}"]`)) e.classList.add("hl");
  const line = document.querySelector(`.line[data-box="${i}"]`);
  if (line) line.scrollIntoView({ block: "nearest" });
}

// ---------------------------------------------------------------- Markdown

// What the service writes: headings, paragraphs, lists, GFM pipe tables (HTML tables where
// cells span), `--- X ---` markers, **bold**, *italic* and [links](href). Built as DOM
// nodes from text: nothing in a document becomes markup.
function renderMarkdown(md) {
  const root = el("div", { class: "md" });
  const lines = md.split("\n");
  let para = [];
  let list = null;
  const flush = () => {
    if (para.length) root.append(inline(el("p"), para.join(" ")));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const cells = (s) => s.trim().replace(/^\|/, "").replace(/\|$/, "").split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
    if (/^\s*\|.*\|\s*$/.test(line) && /^\s*\|(\s*:?-+:?\s*\|)+\s*$/.test(lines[i + 1] || "")) {
      flush(); list = null;
      const table = el("table");
      const head = el("tr");
      for (const c of cells(line)) head.append(inline(el("th", { scope: "col" }), c));
      table.append(el("thead", {}, head));
      const tbody = el("tbody");
      i += 2;
      while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i])) {
        const tr = el("tr");
        for (const c of cells(lines[i])) tr.append(inline(el("td"), c));
        tbody.append(tr);
        i++;
      }
      i--;
      table.append(tbody);
      root.append(el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Table" }, table));
      continue;
    }
    // A table whose cells span rows or columns, as the service writes it (one row a line:
    // `<tr><th rowspan="2">…</th>…</tr>`; cell text never holds `<`, escaped): rebuilt cell
    // by cell, its text as text.
    if (line === "<table>") {
      let j = i + 1;
      const rows = [];
      while (j < lines.length && /^<tr>.*<\/tr>$/.test(lines[j])) rows.push(lines[j++]);
      if (rows.length && lines[j] === "</table>") {
        flush(); list = null;
        const table = el("table");
        const thead = el("thead");
        const tbody = el("tbody");
        for (const row of rows) {
          const tr = el("tr");
          let head = false;
          for (const c of row.matchAll(/<(th|td)(?: rowspan="(\d+)")?(?: colspan="(\d+)")?>([^<]*)<\/\1>/g)) {
            const text = c[4].replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
            const cell = inline(el(c[1], c[1] === "th" ? { scope: "col" } : {}), text);
            if (c[2]) cell.rowSpan = Math.min(1000, Number(c[2]));
            if (c[3]) cell.colSpan = Math.min(1000, Number(c[3]));
            head = c[1] === "th";
            tr.append(cell);
          }
          (head ? thead : tbody).append(tr);
        }
        table.append(thead, tbody);
        root.append(el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Table" }, table));
        i = j;
        continue;
      }
    }
    let m;
    if ((m = /^(#{1,6}) (.*)$/.exec(line))) {
      flush(); list = null;
      root.append(inline(el(`h${Math.min(6, m[1].length + 2)}`), m[2]));
    } else if ((m = /^--- (.+) ---$/.exec(line))) {
      flush(); list = null;
      root.append(el("p", { class: "marker", text: m[1] }));
    } else if ((m = /^(\s*)(?:([-*])|(\d+)\.) (.*)$/.exec(line))) {
      flush();
      const ordered = !m[2];
      if (!list || list.ordered !== ordered) {
        list = { ordered, node: el(ordered ? "ol" : "ul") };
        if (ordered && m[3] !== "1") list.node.setAttribute("start", m[3]);
        root.append(list.node);
      }
      const li = inline(el("li"), m[4]);
      if (m[1].length) li.style.marginLeft = `${m[1].length / 4 * 1.5}rem`;
      list.node.append(li);
    } else if (!line.trim()) {
      flush(); list = null;
    } else {
      list = null;
      para.push(line.trim());
    }
  }
  flush();
  return root;
}

// A link a document may carry: http(s) or mail, as the browser itself resolves it (no
// control characters, which browsers strip before the scheme).
function safeUrl(href) {
  if (/[\u0000-\u0020\u007f]/.test(href)) return false;
  try {
    return ["http:", "https:", "mailto:"].includes(new URL(href, location.href).protocol);
  } catch (_) {
    return false;
  }
}

function inline(node, text) {
  const re = /\*\*([^*]+)\*\*|\*([^*]+)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let at = 0;
  let m;
  while ((m = re.exec(text))) {
    node.append(text.slice(at, m.index));
    if (m[1]) node.append(el("strong", { text: m[1] }));
    else if (m[2]) node.append(el("em", { text: m[2] }));
    else {
      node.append(safeUrl(m[4]) ? el("a", { href: m[4], rel: "noopener noreferrer", target: "_blank", text: m[3] }) : m[3]);
    }
    at = re.lastIndex;
  }
  node.append(text.slice(at));
  return node;
}

// ---------------------------------------------------------------- wiring

async function start() {
  // Keys: asked for only when the service wants one.
  try {
    const probe = await fetch("/files", { headers: headers() });
    // Shown while a key is kept too, so that it can be changed.
    if (probe.status === 401 || sessionStorage.getItem("docreader-key")) $("#key-field").hidden = false;
  } catch (_) { /* the first upload will say */ }
  $("#key").value = sessionStorage.getItem("docreader-key") || "";
  $("#key").addEventListener("change", () => {
    sessionStorage.setItem("docreader-key", $("#key").value.trim());
    listFiles();
  });
  await listFiles();
  const pick = $("#pick");
  pick.addEventListener("change", () => { upload([...pick.files]); pick.value = ""; });
  const drop = $("#drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => { e.preventDefault(); drop.classList.remove("over"); upload([...e.dataTransfer.files]); });
  $("#read").addEventListener("click", () => {
    if (state.current) read({ file_id: state.current.file_id, ...readOptions() });
  });
  $("#options").addEventListener("submit", (e) => e.preventDefault());
  $("#search").addEventListener("submit", (e) => {
    e.preventDefault();
    search($("#search-q").value.trim());
  });
  $("#goto").addEventListener("submit", (e) => {
    e.preventDefault();
    const n = Number($("#goto-page").value);
    const total = (state.env && state.env.total_pages) || 0;
    if (!Number.isInteger(n) || n < 1 || n > total) {
      $("#page-no").textContent = `Page ${state.page} of ${total}: there is no page ${$("#goto-page").value || "(none given)"}`;
      return;
    }
    state.page = n;
    render();
  });
  $("#read-on").addEventListener("click", () => {
    const env = state.env;
    if (!env || !env.next) return;
    // What the last read asked for (its budgets and choices), with `next`'s position in
    // place of the last one's.
    const body = { ...state.body, file_id: env.file_id || state.body.file_id };
    for (const k of POSITION) delete body[k];
    read(Object.assign(body, env.next));
  });
  $("#prev").addEventListener("click", () => { state.page = Math.max(1, state.page - 1); render(); });
  $("#next").addEventListener("click", () => { state.page += 1; render(); });
  $("#copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(state.env.text || "");
      $("#copied").textContent = "Copied.";
    } catch (_) {
      $("#copied").textContent = "The browser did not allow copying.";
    }
  });
  $("#download").addEventListener("click", () => {
    const blob = new Blob([JSON.stringify(state.env, null, 2)], { type: "application/json" });
    const a = el("a", { href: URL.createObjectURL(blob), download: `${state.env.file || "read"}.json` });
    document.body.append(a);
    a.click();
    a.remove();
  });
  window.addEventListener("resize", () => { if (state.env) drawBoxes(); });
  await buildOptions();
}

start();
