// tools/dashboard/analysis.js: turns a Tendon trace and Google Benchmark files into the
// numbers the dashboard shows. No DOM here: dashboard.js draws, this counts.
//
// A trace is the Chrome Trace Event JSON that tendon::TraceWriter writes (an array, or an
// object with traceEvents): zones as B/E pairs per thread (tid), counters as C events, and
// one "frame end" instant per frame. A frame's phases are the zones named after
// FrameStats' phases whose begin lies after the previous frame's end mark and at or before
// its own; a phase that runs in both lanes (pose under BeginStep) is summed, as FrameStats
// sums it. A frame's total is its "frame" zone, or begin_step's start to finish_step's end.
/* exported TendonAnalysis */
var TendonAnalysis = (function () {
  "use strict";

  var PHASES = ["gather", "budget", "ragdolls", "pose", "solve", "writeback", "pendulums"];

  function events(doc) {
    if (Array.isArray(doc)) return doc;
    if (doc && Array.isArray(doc.traceEvents)) return doc.traceEvents;
    throw new Error("not a Chrome trace: expected an array of events or {traceEvents: [...]}");
  }

  // The value at quantile q (0..1) of sorted numbers: the nearest rank at or above.
  function quantile(sorted, q) {
    if (sorted.length === 0) return NaN;
    var i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
    return sorted[i];
  }

  function stats(values) {
    var sorted = values.slice().sort(function (a, b) { return a - b; });
    var sum = 0;
    for (var i = 0; i < values.length; ++i) sum += values[i];
    return {
      count: values.length,
      mean: values.length ? sum / values.length : NaN,
      p50: quantile(sorted, 0.5),
      p95: quantile(sorted, 0.95),
      p99: quantile(sorted, 0.99),
      max: sorted.length ? sorted[sorted.length - 1] : NaN,
    };
  }

  function analyseTrace(doc) {
    var ev = events(doc);
    var marks = [];
    for (var i = 0; i < ev.length; ++i) {
      var e = ev[i];
      if ((e.ph === "i" || e.ph === "I") && e.name === "frame end") marks.push(e.ts);
    }
    marks.sort(function (a, b) { return a - b; });
    if (marks.length === 0) throw new Error("the trace has no \"frame end\" marks: is it a Tendon trace?");
    // The frame a timestamp belongs to: the first mark at or after it.
    function frameOf(ts) {
      var lo = 0, hi = marks.length;
      while (lo < hi) {
        var mid = (lo + hi) >> 1;
        if (marks[mid] < ts) lo = mid + 1; else hi = mid;
      }
      return lo < marks.length ? lo : -1;
    }
    var n = marks.length;
    var phases = {};
    PHASES.forEach(function (p) { phases[p] = new Array(n).fill(0); });
    var total = new Array(n).fill(NaN);
    var beginStep = new Array(n).fill(NaN);
    var counters = {};
    var open = {};  // tid -> stack of B events
    for (i = 0; i < ev.length; ++i) {
      e = ev[i];
      if (e.ph === "B") {
        (open[e.tid] = open[e.tid] || []).push(e);
      } else if (e.ph === "E") {
        var stack = open[e.tid] || [];
        var b = stack.pop();
        if (!b) continue;
        var f = frameOf(b.ts);
        if (f < 0) continue;
        var ms = (e.ts - b.ts) / 1000;
        if (Object.prototype.hasOwnProperty.call(phases, b.name)) phases[b.name][f] += ms;
        else if (b.name === "frame") total[f] = ms;
        else if (b.name === "begin_step") beginStep[f] = b.ts;
        else if (b.name === "finish_step" && !isNaN(beginStep[f])) total[f] = (e.ts - beginStep[f]) / 1000;
      } else if (e.ph === "C" && e.args && typeof e.args.value === "number") {
        f = frameOf(e.ts);
        if (f < 0) continue;
        (counters[e.name] = counters[e.name] || new Array(n).fill(null))[f] = e.args.value;
      }
    }
    for (f = 0; f < n; ++f) {
      if (isNaN(total[f])) {  // no frame zone (a trace cut short): the phases' sum
        var s = 0;
        PHASES.forEach(function (p) { s += phases[p][f]; });
        total[f] = s;
      }
    }
    var worst = 0;
    for (f = 1; f < n; ++f) if (total[f] > total[worst]) worst = f;
    var phaseStats = {};
    var present = PHASES.filter(function (p) { return phases[p].some(function (v) { return v > 0; }); });
    PHASES.forEach(function (p) { phaseStats[p] = stats(phases[p]); });
    return {
      frames: n,
      phases: phases,
      phaseNames: PHASES.slice(),
      presentPhases: present,
      phaseStats: phaseStats,
      total: total,
      totalStats: stats(total),
      worstFrame: worst,
      counters: counters,
    };
  }

  // A benchmark run's headline: [value, unit, higher is better]. The same rule as
  // bench/matrix_tables.py.
  function headline(b) {
    var scale = { ns: 1e-6, us: 1e-3, ms: 1, s: 1e3 };
    if (b.name.indexOf("BM_RagdollStep/") === 0) return [b.real_time * scale[b.time_unit || "ns"], "ms/Step", false];
    if (typeof b.steps_per_s === "number") return [b.steps_per_s, "steps/s", true];
    if (typeof b.ms_per_frame === "number") return [b.ms_per_frame, "ms/frame", false];
    if (typeof b.ns_per_joint === "number") return [b.ns_per_joint, "ns/joint", false];
    if (typeof b.items_per_second === "number") return [b.items_per_second / 1e6, "M items/s", true];
    return [b.real_time, b.time_unit || "ns", false];
  }

  // One Google Benchmark JSON file: its configuration (from --benchmark_context, as
  // bench/run-matrix.sh writes it, or the file's name) and its runs by base name (the name
  // without /workers:N and the timing suffixes) and worker count.
  function analyseBenchmarks(doc, fileName) {
    if (!doc || !Array.isArray(doc.benchmarks)) throw new Error((fileName || "file") + ": not Google Benchmark JSON");
    var ctx = doc.context || {};
    var config = {
      machine: ctx.machine || ctx.host_name || "",
      tier: ctx.tier || "",
      isa: ctx.isa || "",
      commit: ctx.commit || "",
      file: fileName || "",
    };
    config.label = [config.machine, config.tier, config.isa].filter(Boolean).join(" · ") || config.file;
    var runs = [];
    doc.benchmarks.forEach(function (b) {
      if ((b.run_type && b.run_type !== "iteration") || b.error_occurred) return;
      var name = b.name.replace(/\/(manual_time|real_time|iterations:\d+)/g, "");
      var w = /\/workers:(\d+)/.exec(name);
      var h = headline(b);
      runs.push({
        base: name.replace(/\/workers:\d+/, "").replace(/^BM_/, ""),
        workers: w ? parseInt(w[1], 10) : 0,
        value: h[0],
        unit: h[1],
        higher: h[2],
      });
    });
    return { config: config, runs: runs };
  }

  // Every file's runs side by side: base name -> rows of {config, workers, value, unit,
  // speedup over the same config's 1 worker}.
  function compareBenchmarks(files) {
    var table = {};
    files.forEach(function (f) {
      var ones = {};
      f.runs.forEach(function (r) { if (r.workers === 1) ones[r.base] = r; });
      f.runs.forEach(function (r) {
        var one = ones[r.base];
        var speedup = null;
        if (r.workers > 1 && one) speedup = r.higher ? r.value / one.value : one.value / r.value;
        (table[r.base] = table[r.base] || []).push({
          config: f.config.label, workers: r.workers, value: r.value, unit: r.unit, higher: r.higher, speedup: speedup,
        });
      });
    });
    return table;
  }

  return {
    PHASES: PHASES,
    quantile: quantile,
    stats: stats,
    analyseTrace: analyseTrace,
    headline: headline,
    analyseBenchmarks: analyseBenchmarks,
    compareBenchmarks: compareBenchmarks,
  };
})();
