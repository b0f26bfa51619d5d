// The playground's bench modes in Chromium (bench/springs_vs_three_vrm_browser.sh runs it).
//   node ports/three/test/bench_browser.mjs PLAYGROUND_FOLDER [springs:10 ...] [frame:50 ...]
// Each argument is MODE:AVATARS; each runs in a fresh page (index.html?bench=MODE&avatars=N)
// and prints the page's result as one JSON line.
import { chromium } from "playwright-core";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
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
  response.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
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
    await page.goto(`http://127.0.0.1:${server.address().port}/index.html?bench=${mode}&avatars=${avatars}&kernel=${kernel}`);
    await page.waitForFunction(() => window.__playground?.ready || window.__playground?.errors.length, null,
      { timeout: 600000, polling: 500 });
    const result = await page.evaluate(() => window.__playground.bench ?? { errors: window.__playground.errors });
    if (errors.length || !result || result.errors) { failed += 1; console.error(run, errors, result); }
    console.log(JSON.stringify({ run, chromium: browser.version(), ...result }));
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
process.exit(failed ? 1 : 0);
