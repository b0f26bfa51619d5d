// The playground's bench modes in Chromium (bench/springs_vs_three_vrm_browser.sh runs it).
//   node ports/three/test/bench_browser.mjs PLAYGROUND_FOLDER [springs:10 ...] [frame:50 ...]
// Each argument is MODE:AVATARS; each runs in a fresh page (index.html?bench=MODE&avatars=N)
// and prints the page's result as one JSON line. With BENCH_CPU_PROFILE=FOLDER, each run's
// page is also profiled through the DevTools protocol (FOLDER/MODE-AVATARS-KERNEL.cpuprofile:
// open it in Chromium's DevTools, or sum its self times per function): the same page, the
// same frames, so the profile shows where a bench's milliseconds go.
import { chromium } from "playwright-core";
import { createServer } from "node:http";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { existsSync, statSync } from "node:fs";
import { extname, join, resolve, normalize } from "node:path";

const [folderArg, ...runs] = process.argv.slice(2);
if (!folderArg || !runs.length) {
  console.error("usage: node bench_browser.mjs PLAYGROUND_FOLDER springs:10 frame:50 ...");
  process.exit(2);
}
const folder = resolve(folderArg);
const executablePath = process.env.CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
const types = { ".html": "text/html", ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm" };
const server = createServer(async (request, response) => {
  const path = normalize(decodeURIComponent(new URL(request.url, "http://x").pathname));
  const file = join(folder, path);
  if (!file.startsWith(folder) || !existsSync(file) || !statSync(file).isFile()) { response.writeHead(404).end(); return; }
  // Cross-origin isolated (every file is same-origin): Chromium then coarsens
  // performance.now() to 5 us instead of 100 us, so the bench's per-part sums are fine-grained.
  response.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream",
    "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" });
  response.end(await readFile(file));
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const browser = await chromium.launch({
  executablePath, args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"],
});
let failed = 0;
try {
  for (const run of runs) {
    const [mode, avatars = "10", kernel = "simd"] = run.split(":");
    const page = await browser.newPage({ viewport: { width: 960, height: 600 } });
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const profileDir = process.env.BENCH_CPU_PROFILE;
    let cdp = null;
    if (profileDir) {
      cdp = await page.context().newCDPSession(page);
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
      await cdp.send("Profiler.start");
    }
    await page.goto(`http://127.0.0.1:${server.address().port}/index.html?bench=${mode}&avatars=${avatars}&kernel=${kernel}`);
    await page.waitForFunction(() => window.__playground?.ready || window.__playground?.errors.length, null,
      { timeout: 600000, polling: 500 });
    const result = await page.evaluate(() => window.__playground.bench ?? { errors: window.__playground.errors });
    if (cdp) {
      const { profile } = await cdp.send("Profiler.stop");
      await mkdir(profileDir, { recursive: true });
      await writeFile(join(profileDir, `${mode}-${avatars}-${kernel}.cpuprofile`), JSON.stringify(profile));
    }
    if (errors.length || !result || result.errors) { failed += 1; console.error(run, errors, result); }
    console.log(JSON.stringify({ run, chromium: browser.version(), ...result }));
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
process.exit(failed ? 1 : 0);
