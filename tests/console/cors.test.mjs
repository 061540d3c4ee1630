// The browser flows of a frontend on another origin (issue #45 item 9), in Debian's
// Chromium (run by tests/console/run.sh, which starts docreader with an API key and
// `--cors-origins` naming ORIGIN): a page served from ORIGIN gets an upload URL and PUTs a
// file to it, reads it as a job with `Prefer: respond-async` and reads the job's `Location`,
// draws a page of an encrypted PDF with `X-Document-Password` and reads its `ETag` — each a
// real cross-origin request with its preflight, as a browser makes them. A page from an
// origin not in the list is refused by the browser (no CORS headers for it).
import { launch, step, failed } from "./browser.mjs";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import assert from "node:assert/strict";

const { BASE, KEY, CHROMIUM, ROOT, ORIGIN_PORT, OTHER_PORT } = process.env;
const pdf = fs.readFileSync(path.join(ROOT, "tests", "corpus", "pdf", "libreoffice-writer-password.pdf"));

// Two bare pages, each its own origin.
const serve = (port) => new Promise((ok) => {
  const s = http.createServer((_, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><title>frontend</title><p>a frontend</p>");
  });
  s.listen(Number(port), "127.0.0.1", () => ok(s));
});
const servers = [await serve(ORIGIN_PORT), await serve(OTHER_PORT)];

const browser = await launch(CHROMIUM);

// What the frontend does, in the page: every request cross-origin to BASE.
async function flows({ BASE, KEY, pdf }) {
  const auth = { Authorization: `Bearer ${KEY}` };
  const out = {};
  let res = await fetch(`${BASE}/uploads`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "locked.pdf" }),
  });
  out.uploads = res.status;
  const url = (await res.json()).upload_url;
  const bytes = Uint8Array.from(atob(pdf), (c) => c.charCodeAt(0));
  res = await fetch(url, { method: "PUT", body: bytes });
  out.put = res.status;
  const up = await res.json();
  const id = up.files[0].file_id;
  res = await fetch(`${BASE}/read`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json", Prefer: "respond-async" },
    body: JSON.stringify({ file_id: id, password: "openpassword" }),
  });
  out.async = res.status;
  out.location = res.headers.get("Location");
  // The job, followed where Location says, until it is done.
  for (let i = 0; i < 100 && out.location; i++) {
    const job = await (await fetch(new URL(out.location, BASE), { headers: auth })).json();
    out.state = job.state;
    if (job.state === "done" || job.state === "failed") break;
    await new Promise((r) => setTimeout(r, 200));
  }
  res = await fetch(`${BASE}/files/${id}/pages/1?dpi=48`, {
    headers: { ...auth, "X-Document-Password": "openpassword" },
  });
  out.image = res.status;
  out.type = res.headers.get("Content-Type");
  out.etag = res.headers.get("ETag");
  res = await fetch(`${BASE}/files/${id}/pages/1?dpi=48`, { headers: auth });
  out.noPassword = res.status;
  return out;
}

try {
  const context = await browser.newContext();
  const page = await context.newPage();
  await step("a frontend on an allowed origin: upload URL + PUT, Prefer: respond-async and its Location, a page image with X-Document-Password and its ETag", async () => {
    await page.goto(`http://127.0.0.1:${ORIGIN_PORT}/`);
    const out = await page.evaluate(flows, { BASE, KEY, pdf: pdf.toString("base64") });
    assert.equal(out.uploads, 200, JSON.stringify(out));
    assert.equal(out.put, 200, JSON.stringify(out));
    assert.equal(out.async, 202, JSON.stringify(out));
    assert.match(out.location ?? "", /^\/jobs\/./, JSON.stringify(out));
    assert.equal(out.state, "done", JSON.stringify(out));
    assert.equal(out.image, 200, JSON.stringify(out));
    assert.equal(out.type, "image/png", JSON.stringify(out));
    assert.ok(out.etag, JSON.stringify(out));
    // The error answer's status is readable too (CORS headers on errors).
    assert.equal(out.noPassword, 422, JSON.stringify(out));
  });
  await step("a page from an origin not in the list is refused by the browser", async () => {
    await page.goto(`http://127.0.0.1:${OTHER_PORT}/`);
    const got = await page.evaluate(async ({ BASE, KEY }) => {
      try {
        await fetch(`${BASE}/files`, { headers: { Authorization: `Bearer ${KEY}` } });
        return "answered";
      } catch (e) {
        return "refused";
      }
    }, { BASE, KEY });
    assert.equal(got, "refused");
  });
  await context.close();
} finally {
  await browser.close();
  for (const s of servers) s.close();
}
process.exit(failed() ? 1 : 0);
