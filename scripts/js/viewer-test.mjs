// Opens motion-stream's viewer page in headless Chromium (Debian's, driven
// by playwright-core), waits until the page has counted enough frames, saves
// a screenshot and prints what the page counted as one JSON line.
//
//   node viewer-test.mjs URL SCREENSHOT.png [MIN_FRAMES]
import { chromium } from "playwright-core";

const [url, shot, min = "20"] = process.argv.slice(2);
// A hung browser must not hang the test run.
setTimeout(() => { console.error("viewer test: no result within 60 s"); process.exit(2); }, 60000).unref();
const browser = await chromium.launch({
  timeout: 30000,
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 600 } });
  const console_errors = [];
  page.on("pageerror", e => console_errors.push(String(e)));
  await page.goto(url);
  try {
    await page.waitForFunction(
      n => window.motionStream && window.motionStream.motionFrames >= n && window.motionStream.faceFrames >= n,
      Number(min), { timeout: 20000 });
  } catch (e) {
    const seen = await page.evaluate(() => window.motionStream);
    console.error(`the page did not count ${min} frames: ${JSON.stringify(seen)}; page errors: ${console_errors.join("; ")}`);
    await page.screenshot({ path: shot });
    process.exitCode = 1;
    throw e;
  }
  await page.screenshot({ path: shot });
  const stats = await page.evaluate(() => ({ ...window.motionStream, state_text: document.getElementById("state").textContent }));
  console.log(JSON.stringify({ ...stats, page_errors: console_errors }));
} finally {
  await browser.close();
}
