// What both browser scripts share: Debian's Chromium as this machine can run it, and named
// steps that each print ok/FAIL and go on (`failed()` says whether any failed).
import { chromium } from "playwright-core";

export const launch = (executablePath) => chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

let anyFailed = false;
export const failed = () => anyFailed;
export const step = async (name, fn) => {
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (err) {
    anyFailed = true;
    console.log(`FAIL ${name}: ${err.stack || err}`);
  }
};
