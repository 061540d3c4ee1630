// The web console in Debian's Chromium (run by tests/console/run.sh, which starts docreader
// with an API key and passes BASE, KEY, CHROMIUM, SHOTS, ROOT). What a person does: give
// the key, pick several files (one refused), read a scanned PDF (tests/corpus) with boxes, page through
// it, pick an OCR line, read a Word file as Markdown, read on with `next`, copy and
// download. Checked on the way: no Content-Security-Policy violation, no horizontal
// scroll at 375 px, keyboard focus visible, and axe-core's serious or critical violations
// (none allowed) at both widths.
import { launch, step, failed } from "./browser.mjs";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import assert from "node:assert/strict";

const require = createRequire(import.meta.url);
const { BASE, KEY, CHROMIUM, SHOTS, ROOT } = process.env;
const fixture = (rel) => path.join(ROOT, "fixtures", rel);
const corpus = (rel) => path.join(ROOT, "tests", "corpus", rel);
const axeSource = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

const browser = await launch(CHROMIUM);

async function axe(page, label) {
  // Injected through the DevTools protocol (not a <script> tag, which the CSP refuses).
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => await window.axe.run(document, {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
  }));
  const bad = result.violations.filter((v) => ["serious", "critical"].includes(v.impact));
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`), [],
    `axe at ${label}`);
  return result.violations.length;
}

try {
  const context = await browser.newContext({ viewport: { width: 375, height: 800 }, acceptDownloads: true });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE });
  const page = await context.newPage();
  const cspErrors = [];
  page.on("console", (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text()); });
  page.on("pageerror", (e) => cspErrors.push(`page error: ${e.message}`));

  await step("the console loads from the binary, with its CSP", async () => {
    const res = await page.goto(`${BASE}/`);
    assert.equal(res.status(), 200);
    const csp = res.headers()["content-security-policy"];
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    await page.waitForSelector("#opt-output");
    // Options come from the OpenAPI schema: every read option is a field (the console
    // itself always asks for `include_units`, to page by).
    const spec = await (await fetch(`${BASE}/openapi.json`)).json();
    const names = Object.keys(spec.components.schemas.ReadRequest.properties)
      .filter((n) => !["file_id", "file_ids", "path", "url", "include_units"].includes(n));
    for (const n of names) assert.equal(await page.locator(`#opt-${n}`).count(), 1, `option ${n}`);
  });

  await step("the key is asked for, and several files upload (a refusal says why)", async () => {
    await page.waitForSelector("#key-field:not([hidden])");
    await page.fill("#key", KEY);
    await page.locator("#key").dispatchEvent("change");
    await page.setInputFiles("#pick", [corpus("pdf/image_only_german_pdf.pdf"), fixture("office/report.docx"),
      "/bin/true"]);
    await page.waitForSelector("#files li >> nth=1");
    await page.waitForSelector("#messages li:has-text('true was refused')");
    const refusal = await page.textContent("#messages li:has-text('true was refused')");
    assert.match(refusal, /blocked_type/);
    assert.equal(await page.locator("#files li").count(), 2);
  });

  await step("a scanned PDF: progress, text beside the page image, OCR boxes", async () => {
    await page.click("#files button:has-text('image_only_german_pdf.pdf')");
    await page.click("summary:has-text('More options')");
    await page.selectOption("#opt-include_boxes", "true");
    // Every label the progress bar gets, as the page's events come.
    await page.evaluate(() => {
      window.progressSeen = [];
      new MutationObserver(() => window.progressSeen.push(document.querySelector("#progress-label").textContent))
        .observe(document.querySelector("#progress-label"), { childList: true, characterData: true, subtree: true });
    });
    await page.click("#read");
    await page.waitForFunction(() => document.querySelector("#summary").textContent.includes("pdf"));
    const seen = await page.evaluate(() => window.progressSeen);
    assert.ok(seen.some((t) => /^Reading: [1-3] of 3 pages \(ocr\)$/.test(t)), `progress: ${JSON.stringify(seen)}`);
    const summary = await page.textContent("#summary");
    assert.match(summary, /3 of 3 pages read/);
    assert.match(await page.textContent("#text"), /Heimat Bayern/);
    await page.waitForFunction(() => document.querySelector("#page-img").naturalWidth > 0);
    await page.click("#next");
    await page.waitForFunction(() => document.querySelector("#page-no").textContent === "Page 2 of 3");
    await page.waitForFunction(() => document.querySelectorAll("#boxes .box").length > 0);
    // A line of the text picked: its box is marked on the page.
    await page.locator(".line.ocr").first().click();
    assert.equal(await page.locator(".box.hl").count(), 1);
    assert.equal(await page.locator(".line.hl").count(), 1);
    // Keyboard: the picked line's neighbour is reachable and its focus is visible.
    const line = page.locator(".line.ocr").nth(1);
    await line.focus();
    await page.keyboard.press("Enter");
    const outline = await line.evaluate((e) => getComputedStyle(e).outlineStyle);
    assert.notEqual(outline, "none");
  });

  await step("375 px wide: no horizontal scroll; axe", async () => {
    const [sw, cw] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(sw <= cw, `scrollWidth ${sw} > ${cw}`);
    await page.screenshot({ path: path.join(SHOTS, "console-375-pdf.png"), fullPage: true });
    await axe(page, "375 px, PDF read");
  });

  await step("Word as Markdown: headings, lists and a table rendered; read on follows next", async () => {
    await page.click("#files button:has-text('report.docx')");
    await page.selectOption("#opt-include_boxes", "");
    await page.selectOption("#opt-output", "markdown");
    await page.fill("#opt-max_paragraphs", "4");
    await page.click("#read");
    await page.waitForFunction(() => document.querySelector("#summary").textContent.includes("docx"));
    assert.ok(await page.locator("#text .md li").count() >= 2);
    assert.equal(await page.isVisible("#read-on"), true);
    await page.click("#read-on");
    await page.waitForSelector("#text .md table");
    // The budget is kept: four more blocks, and `next` again.
    assert.equal(await page.isVisible("#read-on"), true);
    assert.equal(await page.textContent("#text .md th >> nth=0"), "Name");
    assert.match(await page.textContent("#text"), /inner a \| inner b/);
  });

  await step("copy the text, download the envelope", async () => {
    await page.click("#copy");
    await page.waitForFunction(() => document.querySelector("#copied").textContent === "Copied.");
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(copied, /\| Name \| Amount \|/);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download")]);
    const saved = path.join(SHOTS, "envelope.json");
    await download.saveAs(saved);
    const env = JSON.parse(fs.readFileSync(saved, "utf8"));
    assert.equal(env.status, "ok");
    assert.equal(env.format, "docx");
  });

  await step("keyboard only: Tab reaches the file picker with a visible focus", async () => {
    await page.goto(`${BASE}/`);
    await page.waitForSelector("#opt-output");
    let reached = false;
    for (let i = 0; i < 10 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(() => document.activeElement && document.activeElement.id === "pick");
    }
    assert.ok(reached, "Tab never reached the file picker");
    const ring = await page.evaluate(() => getComputedStyle(document.querySelector(".drop .button")).outlineStyle);
    assert.notEqual(ring, "none");
  });

  await step("a reload lists the tenant's files again; one is deleted", async () => {
    // The keyboard step reloaded the page: the files uploaded before are listed.
    await page.waitForSelector("#files li:has-text('report.docx')");
    assert.equal(await page.locator("#files li:has-text('image_only_german_pdf.pdf')").count(), 1);
    await page.click("#files li:has-text('report.docx') button.delete");
    await page.waitForSelector("#messages li:has-text('report.docx deleted')");
    assert.equal(await page.locator("#files li:has-text('report.docx')").count(), 0);
    const listed = await page.evaluate(async (key) => {
      const r = await fetch("/files", { headers: { Authorization: `Bearer ${key}` } });
      return (await r.json()).files.map((f) => f.name);
    }, KEY);
    assert.ok(!listed.includes("report.docx"), `still listed: ${listed}`);
  });

  await step("1280 px wide: axe; screenshot", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.fill("#key", KEY);
    await page.locator("#key").dispatchEvent("change");
    await page.setInputFiles("#pick", [fixture("office/book.xlsx")]);
    await page.waitForSelector("#files li");
    await page.selectOption("#opt-output", "markdown");
    await page.click("#read");
    await page.waitForSelector("#text .md table");
    await page.screenshot({ path: path.join(SHOTS, "console-1280-xlsx.png"), fullPage: true });
    await axe(page, "1280 px, workbook read");
  });

  await step("no Content-Security-Policy violation or script error", async () => {
    assert.deepEqual(cspErrors, []);
  });
  await context.close();
} finally {
  await browser.close();
}
process.exit(failed() ? 1 : 0);
