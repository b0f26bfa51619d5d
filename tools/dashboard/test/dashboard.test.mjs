// The dashboard in a real browser: Debian's chromium driven by playwright-core (npm).
//   node test/dashboard.test.mjs TRACE.json BENCH_A.json BENCH_B.json SCREENSHOT.png
// Loads the page from disk, hands it the files through its file picker, and checks that
// every phase the trace has is in the chart's legend, that the numbers the page shows are
// the ones this test computes from the same JSON by its own route, that no canvas is
// blank, and that a bad file is refused on the page; then saves a screenshot.
import { chromium } from "playwright-core";
import { readFileSync, existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [tracePath, benchA, benchB, screenshot] = process.argv.slice(2).map((p) => resolve(p));
if (!tracePath || !benchA || !benchB || !screenshot) {
  console.error("usage: node test/dashboard.test.mjs TRACE.json BENCH_A.json BENCH_B.json SCREENSHOT.png");
  process.exit(2);
}
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
const near = (a, b, tol) => Math.abs(a - b) <= tol;

// ---- what the page should show, computed here from the files ----
// Frames: each "frame" zone on the caller's track; its phases are the phase zones that
// begin inside it (summed per name); quantiles by nearest rank.
const PHASES = ["gather", "budget", "ragdolls", "pose", "solve", "writeback", "pendulums"];
const traceDoc = JSON.parse(readFileSync(tracePath, "utf8"));
const events = Array.isArray(traceDoc) ? traceDoc : traceDoc.traceEvents;
const zones = [];
const open = new Map();
for (const e of events) {
  if (e.ph === "B") (open.get(e.tid) ?? open.set(e.tid, []).get(e.tid)).push(e);
  if (e.ph === "E") {
    const b = open.get(e.tid)?.pop();
    if (b) zones.push({ name: b.name, start: b.ts, end: e.ts });
  }
}
const frames = zones.filter((z) => z.name === "frame").sort((a, b) => a.start - b.start);
const perPhase = Object.fromEntries(PHASES.map((p) => [p, frames.map(() => 0)]));
for (const z of zones) {
  if (!PHASES.includes(z.name)) continue;
  const f = frames.findIndex((fr) => z.start >= fr.start && z.start <= fr.end);
  if (f >= 0) perPhase[z.name][f] += (z.end - z.start) / 1000;
}
const totals = frames.map((f) => (f.end - f.start) / 1000);
const rank = (values, q) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
const present = PHASES.filter((p) => perPhase[p].some((v) => v > 0));

const benchDocs = [benchA, benchB].map((p) => ({ path: p, doc: JSON.parse(readFileSync(p, "utf8")) }));

// ---- the page ----
// --allow-file-access-from-files: the URL-parameter route reads files from disk (as the
// command the demo prints does).
const browser = await chromium.launch({
  executablePath, args: ["--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto("file://" + resolve(here, "..", "index.html"));
  await page.setInputFiles("#files", [tracePath, benchA, benchB]);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });

  check(frames.length > 10, `the trace has ${frames.length} frames`);
  check((await page.textContent('[data-stat="frames"]')) === String(frames.length), "the page counts the same frames");
  for (const [name, q] of [["p50", 0.5], ["p95", 0.95], ["p99", 0.99], ["worst", 1.0]]) {
    const shown = parseFloat(await page.textContent(`#frame-stats [data-stat="${name}"]`));
    const expected = rank(totals, q);
    check(near(shown, expected, 0.0015), `frame ${name}: the page shows ${shown} ms, the trace says ${expected.toFixed(4)}`);
  }
  const worstIndex = totals.indexOf(Math.max(...totals)) + 1;
  check((await page.textContent('[data-stat="worst-frame"]')) === String(worstIndex), `the worst frame is ${worstIndex}`);

  // Every phase the trace has is in the stacked chart's legend, and in the phase table
  // with its own quantiles.
  const legend = await page.$$eval("#frames-chart .u-legend .u-series .u-label", (els) => els.map((e) => e.textContent));
  for (const p of present) check(legend.includes(p), `phase ${p} is in the legend`);
  check(present.length >= 5, `the trace has ${present.length} phases: ${present.join(", ")}`);
  for (const p of PHASES) {
    for (const [stat, q] of [["p50", 0.5], ["p99", 0.99]]) {
      const shown = parseFloat(await page.textContent(`#phase-table tr[data-phase="${p}"] td[data-stat="${stat}"]`));
      const expected = rank(perPhase[p], q);
      check(near(shown, expected, 0.0015), `${p} ${stat}: page ${shown}, trace ${expected.toFixed(4)}`);
    }
  }

  // Benchmarks: a ChainStep row's value per file and its speed-up over 1 worker.
  for (const { path, doc } of benchDocs) {
    const ctx = doc.context;
    const label = [ctx.machine, ctx.tier, ctx.isa].filter(Boolean).join(" · ");
    const runs = Object.fromEntries(doc.benchmarks.map((b) => [b.name, b]));
    const one = runs["BM_ChainStep/simd/nodes:8/chains:8192/workers:1/real_time"];
    const two = runs["BM_ChainStep/simd/nodes:8/chains:8192/workers:2/real_time"];
    check(one && two, `${path}: has ChainStep on 1 and 2 workers`);
    if (!one || !two) continue;
    const cell = `#bench-table tr[data-bench="ChainStep/simd/nodes:8/chains:8192"][data-workers="2"] td[data-config="${label}"]`;
    const shown = parseFloat(await page.textContent(`${cell} .num`));
    const expected = two.items_per_second / 1e6;
    check(near(shown, expected, 0.6), `${ctx.isa} ChainStep 8192 on 2 workers: page ${shown}, file ${expected.toFixed(2)} M/s`);
    const speedup = parseFloat((await page.textContent(`${cell} .speedup`)).replace(/[^0-9.]/g, ""));
    const expectedSpeedup = two.items_per_second / one.items_per_second;
    check(near(speedup, expectedSpeedup, 0.006), `${ctx.isa} speed-up: page ${speedup}, file ${expectedSpeedup.toFixed(3)}`);
  }

  // No canvas is blank: each has drawn pixels in at least 2% of its area.
  const inked = await page.$$eval(".chart canvas", (canvases) =>
    canvases.map((c) => {
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && !(d[i] > 245 && d[i + 1] > 245 && d[i + 2] > 245)) ++n;
      return n / (c.width * c.height);
    }));
  check(inked.length === 4, `4 charts drawn (${inked.length})`);
  inked.forEach((share, i) => check(share > 0.02, `chart ${i + 1} is not blank (${(100 * share).toFixed(1)}% inked)`));

  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot}`);

  // A file that is not JSON is refused on the page, by name.
  await page.setInputFiles("#files", { name: "broken.json", mimeType: "application/json", buffer: Buffer.from("{ no") });
  await page.waitForSelector('body[data-ready="error"]', { timeout: 10000 });
  const message = await page.textContent("#status");
  check(message.includes("broken.json") && message.includes("not JSON"), `a broken file is refused: "${message}"`);
  // The same files named in the URL instead.
  const byUrl = await browser.newPage();
  byUrl.on("pageerror", (e) => errors.push(e.message));
  await byUrl.goto("file://" + resolve(here, "..", "index.html") + "?trace=" + encodeURI("file://" + tracePath) +
                   "&bench=" + [benchA, benchB].map((b) => encodeURI("file://" + b)).join(","));
  await byUrl.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  check((await byUrl.textContent('[data-stat="frames"]')) === String(frames.length), "?trace=&bench= loads the same files");
  check((await byUrl.$$("#bench-table tr")).length === (await page.$$("#bench-table tr")).length,
        "and the same benchmark rows");
  check(errors.length === 0, `no errors in the page${errors.length ? ": " + errors.join("; ") : ""}`);
} finally {
  await browser.close();
}
if (failures) {
  console.error(`${failures} check(s) failed`);
  process.exit(1);
}
console.log("dashboard: every check passed");
