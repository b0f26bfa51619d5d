// The playground in a real browser: Debian's chromium driven by playwright-core (npm).
//   node ports/three/test/playground.test.mjs build/playground SCREENSHOT.png
// Serves the assembled folder (scripts/playground.sh) from a small static server and loads
// the page: no console errors, the kernel is WebAssembly SIMD, Godette's hair (her spring
// joints) has swung away from rest after some frames, a scripted mouse drag grabs a
// standing avatar by the chest and throws it, and within a few seconds it is a ragdoll and
// then back on its feet, walking; hard impacts count, the debug draw draws, and the replay
// slider pauses on a recorded pose and goes live again. Then the same folder from file:// (with
// --allow-file-access-from-files) must load too. Saves a screenshot.
import { chromium } from "playwright-core";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { existsSync, statSync } from "node:fs";
import { extname, join, resolve, normalize } from "node:path";

const [folderArg, screenshotArg] = process.argv.slice(2);
if (!folderArg || !screenshotArg) {
  console.error("usage: node playground.test.mjs PLAYGROUND_FOLDER SCREENSHOT.png");
  process.exit(2);
}
const folder = resolve(folderArg);
const screenshot = resolve(screenshotArg);
const executablePath = process.env.CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
if (!executablePath) {
  console.error("no chromium: apt-get install chromium (or set CHROMIUM)");
  process.exit(2);
}

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures += 1;
}

// A static server: .wasm must be application/wasm for instantiateStreaming.
const types = { ".html": "text/html", ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
  ".vrm": "application/octet-stream", ".json": "application/json" };
const server = createServer(async (request, response) => {
  const path = normalize(decodeURIComponent(new URL(request.url, "http://x").pathname));
  const file = join(folder, path.endsWith("/") ? path + "index.html" : path);
  if (!file.startsWith(folder) || !existsSync(file) || !statSync(file).isFile()) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
  response.end(await readFile(file));
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const base = `http://127.0.0.1:${server.address().port}`;

// SwiftShader's WebGL (no GPU here): --enable-unsafe-swiftshader keeps WebGL on without one.
const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist",
    "--allow-file-access-from-files"],
});
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
async function waitFor(page, predicate, what, seconds) {
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    if (await page.evaluate(predicate)) return true;
    await sleep(100);
  }
  console.log(`  (gave up waiting for ${what} after ${seconds} s)`);
  return false;
}
function watch(page) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  return errors;
}

try {
  const page = await browser.newPage({ viewport: { width: 960, height: 600 } });
  const errors = watch(page);
  await page.goto(`${base}/index.html?avatars=5&quality=low`);
  const ready = await waitFor(page, () => window.__playground?.ready === true || window.__playground?.errors.length > 0,
    "the page to be ready", 60);
  check(ready && (await page.evaluate(() => window.__playground.ready)), "the page loads and binds its avatars");
  check((await page.evaluate(() => window.__playground.kernel)) === "simd128", "the kernel is WebAssembly SIMD");
  await waitFor(page, () => window.__playground.frames >= 60, "60 frames", 90);
  const frames = await page.evaluate(() => window.__playground.frames);
  check(frames >= 60, `the page stepped ${frames} frames`);
  const joints = await page.evaluate(() => window.__playground.springJoints(0));
  const hair = await page.evaluate(() => window.__playground.hairMotionDegrees(0));
  check(joints > 0, `Godette has ${joints} spring joints`);
  check(hair > 2, `her hair swung away from rest (largest joint angle ${hair.toFixed(1)} degrees)`);

  // The drag: press on avatar 0's chest, pull up and sideways over a few frames, let go fast.
  // The avatars walk on while the page reads where a chest is and the press arrives (a few
  // frames on a slow page): a press that lands beside the body grabs nothing, so try again
  // on another avatar's fresh position, up to five times.
  let at = null, grabs = 0;
  for (let attempt = 0; attempt < 5 && grabs === 0; ++attempt) {
    at = await page.evaluate((i) => window.__playground.screenOf(i, "chest"), attempt % 5);
    if (!at) continue;
    await page.mouse.move(at.x, at.y);
    await page.mouse.down();
    grabs = await page.evaluate(() => window.__playground.grabs);
    if (grabs === 0) await page.mouse.up();
  }
  check(grabs === 1, "pressing on a chest grabs a body");
  if (grabs !== 1) throw new Error("no body grabbed: the rest of the test needs one");
  // Another avatar may have walked in front: follow the one grabbed.
  const g = await page.evaluate(() => window.__playground.lastGrabbed);
  console.log(`  (grabbed avatar ${g})`);
  for (let i = 1; i <= 12; ++i) { await page.mouse.move(at.x + 8 * i, at.y - 12 * i); await sleep(30); }
  for (let i = 1; i <= 4; ++i) { await page.mouse.move(at.x + 96 + 40 * i, at.y - 144 - 20 * i); await sleep(16); }
  await page.mouse.up();
  const state = await page.evaluate((i) => ({ throws: window.__playground.throws, a: window.__playground.avatar(i) }), g);
  const thrown = await page.evaluate(() => window.__playground.lastThrow);
  check(state.throws === 1, `letting go fast throws it (${JSON.stringify(thrown)})`);
  check(state.a.mode === "ragdoll" && state.a.active, `the thrown avatar is a ragdoll (mode ${state.a.mode})`);
  // Godette's hips stand 0.65 m high: down is below 0.35 m, up again above 0.55 m.
  const down = await waitFor(page, `window.__playground.avatar(${g}).hips[1] < 0.35`, "the body to be down", 15);
  check(down, "within a few seconds it is down (hips below 0.35 m)");
  const up = await waitFor(page, `window.__playground.avatar(${g}).mode === "walk"`, "it to be up again", 20);
  const after = await page.evaluate((i) => window.__playground.avatar(i), g);
  check(up && !after.active, `then it gets up and walks again (hips at ${after.hips[1].toFixed(2)} m)`);
  await waitFor(page, `window.__playground.avatar(${g}).hips[1] > 0.55`, "the hips to be back up", 5);
  await page.evaluate((i) => window.__playground.avatar(i), g).then((a) =>
    check(a.hips[1] > 0.55, `standing: hips at ${a.hips[1].toFixed(2)} m`));
  // A second throw, left lying for the screenshot, with the debug draw on.
  const at2 = await page.evaluate((i) => window.__playground.screenOf(i, "chest"), g === 1 ? 2 : 1);
  await page.mouse.move(at2.x, at2.y);
  await page.mouse.down();
  for (let i = 1; i <= 3; ++i) { await page.mouse.move(at2.x + 4 * i, at2.y - 6 * i); await sleep(16); }
  await page.mouse.up(); // a gentle toss: it lands near where it stood, in the screenshot
  await waitFor(page, "window.__playground.frames > 0 && window.__playground.impacts > 0", "an impact", 10);
  await sleep(1200);
  const impacts = await page.evaluate(() => window.__playground.impacts);
  check(impacts > 0, `hard impacts flash and count (${impacts})`);
  await page.screenshot({ path: screenshot });
  // The debug draw: Tendon's lines in one LineSegments.
  await page.check("#debug");
  const framesBefore = await page.evaluate(() => window.__playground.frames);
  await waitFor(page, `window.__playground.frames >= ${framesBefore + 3}`, "frames with the debug draw", 15);
  const segments = await page.evaluate(() => window.__playground.debugSegments ?? 0);
  check(segments > 100, `the debug draw draws Tendon's lines (${segments} segments)`);
  // The replay: a second back pauses the page on a recorded pose; the end goes live again.
  const hipsLive = await page.evaluate(() => window.__playground.avatar(0).hips);
  await page.$eval("#replay", (el) => { el.value = String(Math.max(0, Number(el.max) - 60)); el.dispatchEvent(new Event("input")); });
  const pausedAt = await page.evaluate(() => window.__playground.frames);
  await sleep(800);
  const paused = await page.evaluate(() => ({ frames: window.__playground.frames, label: document.getElementById("replay-label").textContent,
    hips: window.__playground.avatar(0).hips }));
  check(paused.frames === pausedAt && /ago/.test(paused.label), `scrubbing back pauses on a recorded frame ("${paused.label}")`);
  check(paused.hips.some((v, k) => Math.abs(v - hipsLive[k]) > 1e-4), "and shows that frame's pose, not the live one");
  await page.$eval("#replay", (el) => { el.value = el.max; el.dispatchEvent(new Event("input")); });
  const resumed = await waitFor(page, `window.__playground.frames > ${pausedAt + 2}`, "the page to go live again", 15);
  check(resumed, "the end of the slider goes live again");
  check(errors.length === 0, `no console errors${errors.length ? ": " + errors.slice(0, 3).join(" | ") : ""}`);
  await page.close();

  // From file:// (Chromium allows it with --allow-file-access-from-files).
  const local = await browser.newPage({ viewport: { width: 640, height: 400 } });
  const localErrors = watch(local);
  await local.goto(`file://${folder}/index.html?avatars=1&quality=low`);
  const localReady = await waitFor(local, () => window.__playground?.ready === true || window.__playground?.errors.length > 0,
    "the file:// page", 60);
  check(localReady && localErrors.length === 0, `the page loads from file://${localErrors.length ? ": " + localErrors[0] : ""}`);
} finally {
  await browser.close();
  server.close();
}
if (failures) {
  console.error(`playground: ${failures} check(s) failed`);
  process.exit(1);
}
console.log(`playground: all checks passed; screenshot ${screenshot}`);
