// docreader console: upload, read (with SSE progress), and show the text or Markdown
// beside the page it came from. Plain JS, no dependencies, no inline script (it runs
// under the strict Content-Security-Policy the service sends). The read options are built
// from the service's own OpenAPI schema, so they cannot drift from the API.
"use strict";

const $ = (sel) => document.querySelector(sel);
const IDENTITY = new Set(["file_id", "file_ids", "path", "url", "include_units"]);
const FIRST = ["output", "max_chars", "pages", "sheet", "range", "query"];
// Where a read starts and ends: `next` says these anew.
const POSITION = ["pages", "chapters", "offset", "limit", "byte_offset", "byte_length", "sheet",
  "sheets_after", "range", "paragraph_offset"];
const OCR_DPI = 300; // what OCR boxes of PDF pages are measured in (src/extract/pdf/render.rs)

const state = {
  files: [],       // {file_id, name, format}
  current: null,   // the selected file
  env: null,       // the last envelope
  body: null,      // the last read's body
  page: 1,         // the page shown
  pages: [],       // [{page, text}] of the text, by `--- Page N ---` markers
  imageUrl: null,
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

// ---------------------------------------------------------------- files

async function upload(files) {
  for (const f of files) {
    const form = new FormData();
    form.append("file", f, f.name);
    let res;
    let body = null;
    try {
      res = await fetch("/upload", { method: "POST", body: form, headers: headers() });
      body = await res.json().catch(() => null);
    } catch (err) {
      say(`${f.name}: the upload did not reach the service (${err.message}).`);
      continue;
    }
    if (!res.ok || !body || body.status !== "ok") {
      say(`${f.name} was refused: ${errorText(body, res.status)}`);
      continue;
    }
    for (const info of body.files || []) {
      addFile({ file_id: info.file_id, name: info.name || f.name, format: info.format });
      say(`${f.name} uploaded.`, true);
    }
  }
}

function addFile(info, { atEnd = false } = {}) {
  if (state.files.some((f) => f.file_id === info.file_id)) return;
  state.files.push(info);
  const b = el("button", { type: "button", class: "link", "aria-pressed": "false", "data-id": info.file_id },
    `${info.name}${info.format ? ` (${info.format})` : ""}`);
  b.addEventListener("click", () => select(info, b));
  const del = el("button", { type: "button", class: "delete", "aria-label": `Delete ${info.name}`, text: "Delete" });
  del.addEventListener("click", () => removeFile(info, li));
  const li = el("li", {}, b, " ", del);
  // Uploaded now: on top (the list is newest first, as GET /files gives it).
  if (atEnd) $("#files").append(li); else $("#files").prepend(li);
  // A file just uploaded is the one to read; a listed one only when none is chosen.
  if (!state.current || !atEnd) select(info, b);
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
    addFile({ file_id: f.file_id, name: f.name, format: f.format }, { atEnd: true });
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
  }
  say(`${info.name} deleted.`, true);
}

function select(info, button) {
  state.current = info;
  for (const b of document.querySelectorAll("#files button")) b.setAttribute("aria-pressed", "false");
  button.setAttribute("aria-pressed", "true");
  $("#read").disabled = false;
  $("#read").textContent = `Read ${info.name}`;
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
  const names = Object.keys(req.properties).filter((n) => !IDENTITY.has(n));
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
    if (ref) prop = { ...schemas[ref.split("/").pop()], description: prop.description };
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
    const desc = (prop.description || "").split("\n")[0];
    (FIRST.includes(name) ? form : moreFields).append(el("div", { class: "field" },
      el("label", { for: id, text: name }), input, el("span", { class: "desc", id: descId, text: desc })));
  }
  form.append(more);
}

function readOptions() {
  const body = {};
  for (const input of document.querySelectorAll("#options [name]")) {
    const v = input.value.trim();
    if (v === "") continue;
    const type = input.getAttribute("data-type");
    body[input.name] = type === "integer" ? Number(v) : type === "boolean" ? v === "true" : v;
  }
  return body;
}

// ---------------------------------------------------------------- reading

async function read(body) {
  state.body = body;
  $("#read").disabled = true;
  $("#read-on").hidden = true;
  const box = $("#progress-box");
  const bar = $("#progress");
  box.hidden = false;
  bar.removeAttribute("value");
  $("#progress-label").textContent = "Reading…";
  let env = null;
  let failure = null;
  try {
    const res = await fetch("/read", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      // The console pages through the text by its units, never by its marker lines.
      body: JSON.stringify({ ...body, include_units: true }),
    });
    if (!(res.headers.get("content-type") || "").includes("text/event-stream")) {
      const j = await res.json().catch(() => null);
      if (res.ok) env = j; else failure = errorText(j, res.status);
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
          else if (event === "error") failure = errorText(payload, 0);
        }
      }
    }
  } catch (err) {
    failure = `The read did not reach the service (${err.message}).`;
  }
  box.hidden = true;
  $("#read").disabled = !state.current;
  if (failure || !env) {
    say(`${state.current ? state.current.name : "Read"}: ${failure || "no answer"}`);
    $("#summary").textContent = `Not read: ${failure || "no answer"}`;
    return;
  }
  show(env);
}

function show(env) {
  state.env = env;
  const parts = [`${env.file}: ${env.format}`, `${env.char_count} characters`];
  if (env.truncated) parts.push("cut (read on for the rest)");
  if (env.total_pages) parts.push(`${env.pages_read || 0} of ${env.total_pages} pages read`);
  if (env.ocr_engine) parts.push(`OCR: ${env.ocr_engine}`);
  $("#summary").textContent = parts.join(" · ");
  const warnings = $("#warnings");
  warnings.replaceChildren(...(env.warnings || []).map((w) => el("li", { text: w })));
  $("#copy").disabled = false;
  $("#download").disabled = false;
  $("#read-on").hidden = !env.next;
  // The text page by page, where it has pages (from `units`: a line of the document
  // that reads like a page marker is text, not a page).
  state.pages = unitPages(env);
  const paged = ["pdf", "image"].includes(env.format);
  state.page = state.pages.length ? state.pages[0].page : 1;
  $("#figure").hidden = !paged;
  $(".view").classList.toggle("with-page", paged);
  $("#pager").hidden = !(paged && (env.total_pages || 0) > 1);
  render();
}

function unitPages(env) {
  const units = (env.units || []).filter((u) => u.kind === "page");
  if (!units.length) return [];
  // `start` and `end` count characters (code points), as `char_count` does.
  const chars = Array.from(env.text || "");
  return units.map((u) => ({ page: u.number, text: chars.slice(u.start, u.end).join("") }));
}

function pageText() {
  if (!state.pages.length) return state.env.text || "";
  const p = state.pages.find((x) => x.page === state.page);
  return p ? p.text : `Page ${state.page} was not part of this read.`;
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
  if (markdown) {
    target.replaceChildren(renderMarkdown(pageText()));
  } else {
    const pre = el("pre");
    for (const line of pageText().split("\n")) {
      const i = lines.findIndex((l) => l.text && l.text.trim() === line.trim());
      const span = el("span", { class: i >= 0 ? "line ocr" : "line", text: line || "\u00a0" });
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
    }
    target.replaceChildren(pre);
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
  const url = `/files/${encodeURIComponent(env.file_id)}/pages/${state.page}?width=${width}`;
  $("#figcaption").textContent = "Loading the page…";
  $("#boxes").replaceChildren();
  try {
    const res = await fetch(url, { headers: headers() });
    if (!res.ok) {
      const j = await res.json().catch(() => null);
      $("#figcaption").textContent = `The page cannot be shown: ${errorText(j, res.status)}`;
      img.removeAttribute("src");
      return;
    }
    const blob = await res.blob();
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

// What the service writes: headings, paragraphs, lists, GFM pipe tables, `--- X ---`
// markers, **bold**, *italic* and [links](href). Built as DOM nodes from text: nothing in
// a document becomes markup.
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
