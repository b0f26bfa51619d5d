// tools/dashboard/dashboard.js: the page. Files come by drag and drop, the file picker, or
// URL parameters (?trace=URL&bench=URL,URL); analysis.js counts, uPlot (npm) draws.
/* global uPlot, TendonAnalysis */
(function () {
  "use strict";

  var COLORS = {
    gather: "#2e9e5b", budget: "#7dcea0", ragdolls: "#e67e22", pose: "#1f77b4",
    solve: "#9467bd", writeback: "#17becf", pendulums: "#8c564b",
  };
  var COUNTERS = ["chains.simulated", "chains.sleeping", "chains.culled_by_budget", "ragdolls.simulated",
                  "ragdolls.sleeping", "characters.active", "budget.max_chains", "budget.ragdoll_substeps",
                  "budget.action"];
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                 "#bcbd22", "#17becf"];
  var state = { trace: null, traceName: "", benches: [] };
  var plots = [];

  function $(id) { return document.getElementById(id); }
  function fmt(v, digits) {
    if (v === null || v === undefined || isNaN(v)) return "";
    return v.toFixed(digits === undefined ? 3 : digits);
  }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function width(id) { return Math.max(320, $(id).clientWidth || 900); }
  function status(text, isError) {
    var s = $("status");
    s.textContent = text;
    s.className = isError ? "error" : "";
  }

  // ---- trace ----

  function drawTrace() {
    var a = state.trace;
    var x = [];
    for (var f = 0; f < a.frames; ++f) x.push(f + 1);
    var t = a.totalStats;
    $("trace-name").textContent = state.traceName;
    var summary = $("frame-stats");
    summary.innerHTML = "";
    [["frames", a.frames, 0], ["p50", t.p50], ["p95", t.p95], ["p99", t.p99], ["worst", t.max]].forEach(function (s) {
      var d = el("div", { class: "stat" });
      d.appendChild(el("span", { class: "label" }, s[0] === "frames" ? "frames" : s[0] + " ms"));
      d.appendChild(el("span", { class: "value", "data-stat": s[0] }, s[0] === "frames" ? String(s[1]) : fmt(s[1], s[2])));
      summary.appendChild(d);
    });
    var worst = el("div", { class: "stat" });
    worst.appendChild(el("span", { class: "label" }, "worst frame"));
    worst.appendChild(el("span", { class: "value", "data-stat": "worst-frame" }, String(a.worstFrame + 1)));
    summary.appendChild(worst);

    // Per-frame phase cost, stacked: each band is a phase, its top the sum so far.
    var phases = a.presentPhases;
    var data = [x];
    var running = new Array(a.frames).fill(0);
    var stacked = phases.map(function (p) {
      running = running.map(function (v, i) { return v + a.phases[p][i]; });
      return running.slice();
    });
    // uPlot fills each series down to the axis; drawing the tallest first makes bands.
    for (var k = stacked.length - 1; k >= 0; --k) data.push(stacked[k]);
    var series = [{ label: "frame" }];
    for (k = phases.length - 1; k >= 0; --k) {
      series.push({ label: phases[k], stroke: COLORS[phases[k]], fill: COLORS[phases[k]] + "cc", width: 1,
                    value: (function (p) { return function (u, v, si, i) { return i === null ? "" : fmt(a.phases[p][i]); }; })(phases[k]) });
    }
    var worstX = a.worstFrame + 1;
    var marks = [["p50", t.p50, "#333"], ["p95", t.p95, "#b8860b"], ["p99", t.p99, "#c0392b"]];
    plots.push(new uPlot({
      title: "Per-frame cost by phase (ms, stacked)",
      width: width("frames-chart"), height: 300,
      scales: { x: { time: false } },
      axes: [{ label: "frame" }, { label: "ms" }],
      series: series,
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          ctx.save();
          marks.forEach(function (m) {  // p50 / p95 / p99 of the frame total
            var y = u.valToPos(m[1], "y", true);
            ctx.strokeStyle = m[2];
            ctx.setLineDash([6, 4]);
            ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke();
            ctx.fillStyle = m[2];
            ctx.fillText(m[0], u.bbox.left + u.bbox.width - 28 * devicePixelRatio, y - 4);
          });
          var xw = u.valToPos(worstX, "x", true);  // the worst frame
          ctx.setLineDash([]);
          ctx.strokeStyle = "#c0392b";
          ctx.lineWidth = 2;
          ctx.beginPath(); ctx.moveTo(xw, u.bbox.top); ctx.lineTo(xw, u.bbox.top + u.bbox.height); ctx.stroke();
          ctx.fillStyle = "#c0392b";
          ctx.fillText("worst: frame " + worstX, xw + 4, u.bbox.top + 12 * devicePixelRatio);
          ctx.restore();
        }],
      },
    }, data, $("frames-chart")));

    // The distribution per phase: quantiles in a table, and each phase's cost by percentile.
    var table = $("phase-table");
    table.innerHTML = "";
    var head = el("tr");
    ["phase", "p50 ms", "p95 ms", "p99 ms", "max ms", "mean ms"].forEach(function (h) { head.appendChild(el("th", {}, h)); });
    table.appendChild(head);
    a.phaseNames.forEach(function (p) {
      var s = a.phaseStats[p];
      var row = el("tr", { "data-phase": p });
      var name = el("td");
      name.appendChild(el("span", { class: "swatch", style: "background:" + COLORS[p] }));
      name.appendChild(document.createTextNode(p));
      row.appendChild(name);
      [["p50", s.p50], ["p95", s.p95], ["p99", s.p99], ["max", s.max], ["mean", s.mean]].forEach(function (c) {
        row.appendChild(el("td", { "data-stat": c[0] }, fmt(c[1])));
      });
      table.appendChild(row);
    });
    var pct = [];
    for (var q = 0; q <= 100; ++q) pct.push(q);
    var dist = [pct];
    var distSeries = [{ label: "percentile" }];
    phases.forEach(function (p) {
      var sorted = a.phases[p].slice().sort(function (u, v) { return u - v; });
      dist.push(pct.map(function (q2) { return TendonAnalysis.quantile(sorted, q2 / 100); }));
      distSeries.push({ label: p, stroke: COLORS[p], width: 2 });
    });
    plots.push(new uPlot({
      title: "Distribution per phase (ms at each percentile of frames)",
      width: width("phase-chart"), height: 260,
      scales: { x: { time: false } },
      axes: [{ label: "percentile" }, { label: "ms" }],
      series: distSeries,
    }, dist, $("phase-chart")));

    // Counters against frames.
    var names = COUNTERS.filter(function (c) { return a.counters[c]; });
    Object.keys(a.counters).forEach(function (c) { if (names.indexOf(c) < 0 && /^(budget|ragdolls|chains)\./.test(c)) names.push(c); });
    names = names.slice(0, 10);
    var cdata = [x];
    var cseries = [{ label: "frame" }];
    names.forEach(function (c, i) {
      cdata.push(a.counters[c]);
      cseries.push({ label: c, stroke: PALETTE[i % PALETTE.length], width: 1.5, scale: /^budget\.(action|ragdoll)/.test(c) ? "small" : "y" });
    });
    plots.push(new uPlot({
      title: "Counters per frame",
      width: width("counters-chart"), height: 260,
      scales: { x: { time: false } },
      axes: [{ label: "frame" }, { label: "count" }, { side: 1, scale: "small", grid: { show: false } }],
      series: cseries,
    }, cdata, $("counters-chart")));
    $("trace-section").hidden = false;
  }

  // ---- benchmarks ----

  function drawBenches() {
    var table = TendonAnalysis.compareBenchmarks(state.benches);
    var names = Object.keys(table).sort();
    var configs = [];
    state.benches.forEach(function (b) { if (configs.indexOf(b.config.label) < 0) configs.push(b.config.label); });
    $("bench-files").textContent = state.benches.map(function (b) { return b.config.file + " (" + b.config.label + ")"; }).join(", ");
    var t = $("bench-table");
    t.innerHTML = "";
    var head = el("tr");
    head.appendChild(el("th", {}, "benchmark"));
    head.appendChild(el("th", {}, "workers"));
    configs.forEach(function (c) { head.appendChild(el("th", {}, c)); });
    head.appendChild(el("th", {}, "unit"));
    t.appendChild(head);
    names.forEach(function (name) {
      var rows = table[name];
      var workers = [];
      rows.forEach(function (r) { if (workers.indexOf(r.workers) < 0) workers.push(r.workers); });
      workers.sort(function (p, q) { return p - q; });
      workers.forEach(function (w) {
        var tr = el("tr", { "data-bench": name, "data-workers": String(w) });
        tr.appendChild(el("td", {}, name));
        tr.appendChild(el("td", {}, w ? String(w) : ""));
        var unit = "";
        configs.forEach(function (c) {
          var r = rows.filter(function (x) { return x.config === c && x.workers === w; })[0];
          var td = el("td", { "data-config": c });
          if (r) {
            unit = r.unit;
            td.appendChild(el("span", { class: "num" }, fmt(r.value, r.value >= 100 ? 0 : 2)));
            if (r.speedup !== null) td.appendChild(el("span", { class: "speedup", "data-speedup": "" }, " ×" + fmt(r.speedup, 2)));
          }
          tr.appendChild(td);
        });
        tr.appendChild(el("td", {}, unit));
        t.appendChild(tr);
      });
    });
    // One benchmark across every configuration and worker count, as bars.
    var select = $("bench-select");
    select.innerHTML = "";
    names.forEach(function (n) { select.appendChild(el("option", { value: n }, n)); });
    var preferred = names.filter(function (n) { return /workers|Piles|DemoFrame|ChainStep/.test(n) && table[n].some(function (r) { return r.workers > 1; }); })[0];
    select.value = preferred || names[0];
    select.onchange = function () { drawBenchChart(table, select.value, configs); };
    drawBenchChart(table, select.value, configs);
    $("bench-section").hidden = false;
  }

  function drawBenchChart(table, name, configs) {
    var target = $("bench-chart");
    target.innerHTML = "";
    var rows = table[name] || [];
    // One bar per configuration and worker count, configurations side by side.
    var cats = [];
    configs.forEach(function (c) {
      rows.filter(function (r) { return r.config === c; })
        .sort(function (p, q) { return p.workers - q.workers; })
        .forEach(function (r) { cats.push(r); });
    });
    var labels = cats.map(function (r) { return r.config + (r.workers ? " / " + r.workers + "w" : ""); });
    var unit = rows.length ? rows[0].unit : "";
    plots.push(new uPlot({
      title: name + " (" + unit + ") by configuration and workers",
      width: width("bench-chart"), height: 300,
      scales: { x: { time: false, range: [-0.6, Math.max(0.6, cats.length - 0.4)] },
                y: { range: function (u, lo, hi) { return [0, hi * 1.1]; } } },
      axes: [{ values: function (u, vals) { return vals.map(function (v) { return Number.isInteger(v) ? (labels[v] || "") : ""; }); },
               rotate: -20, size: 80, label: "" },
             { label: unit }],
      series: [{ label: "configuration", value: function (u, v) { return v === null ? "" : labels[v]; } },
               { label: unit, stroke: PALETTE[0], fill: PALETTE[0] + "bb", paths: uPlot.paths.bars({ size: [0.6, 80] }),
                 points: { show: false } }],
    }, [cats.map(function (_, i) { return i; }), cats.map(function (r) { return r.value; })], target));
  }

  // ---- loading ----

  function addFile(name, text) {
    var doc;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new Error(name + ": not JSON (" + e.message + ")");
    }
    if (doc && Array.isArray(doc.benchmarks)) {
      var bench = TendonAnalysis.analyseBenchmarks(doc, name);
      // Two files of one configuration (a before and an after) keep a column each.
      var taken = state.benches.map(function (b) { return b.config.label; });
      if (taken.indexOf(bench.config.label) >= 0) bench.config.label += " (" + name + ")";
      for (var k = 2; taken.indexOf(bench.config.label) >= 0; ++k) bench.config.label = bench.config.label.replace(/( #\d+)?$/, " #" + k);
      state.benches.push(bench);
      return "benchmark";
    }
    state.trace = TendonAnalysis.analyseTrace(doc);
    state.traceName = name;
    return "trace";
  }

  function redraw() {
    plots.forEach(function (p) { p.destroy(); });
    plots = [];
    ["frames-chart", "phase-chart", "counters-chart", "bench-chart"].forEach(function (id) { $(id).innerHTML = ""; });
    if (state.trace) drawTrace();
    if (state.benches.length) drawBenches();
    document.body.setAttribute("data-ready", "true");
  }

  function loadFiles(files) {
    var list = Array.prototype.slice.call(files);
    Promise.all(list.map(function (f) { return f.text().then(function (t) { return [f.name, t]; }); }))
      .then(function (pairs) {
        var kinds = pairs.map(function (p) { return addFile(p[0], p[1]); });
        status("loaded " + kinds.length + " file(s): " + kinds.join(", "));
        redraw();
      })
      .catch(function (e) { status(e.message, true); document.body.setAttribute("data-ready", "error"); });
  }

  function loadFromUrl() {
    var params = new URLSearchParams(location.search);
    var urls = [];
    if (params.get("trace")) urls.push(params.get("trace"));
    (params.get("bench") || "").split(",").filter(Boolean).forEach(function (u) { urls.push(u); });
    if (!urls.length) return;
    Promise.all(urls.map(function (u) {
      return fetch(u).then(function (r) {
        if (!r.ok) throw new Error(u + ": HTTP " + r.status);
        return r.text();
      }).then(function (t) { return [u.split("/").pop(), t]; });
    })).then(function (pairs) {
      pairs.forEach(function (p) { addFile(p[0], p[1]); });
      status("loaded " + pairs.length + " file(s) from the URL");
      redraw();
    }).catch(function (e) { status(e.message + " (file:// pages need Chromium's --allow-file-access-from-files, or drop the files here)", true); document.body.setAttribute("data-ready", "error"); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    $("files").addEventListener("change", function (e) { loadFiles(e.target.files); });
    $("clear").addEventListener("click", function () {
      state = { trace: null, traceName: "", benches: [] };
      $("trace-section").hidden = true;
      $("bench-section").hidden = true;
      redraw();
      status("cleared");
    });
    var drop = document.body;
    drop.addEventListener("dragover", function (e) { e.preventDefault(); document.body.classList.add("dragging"); });
    drop.addEventListener("dragleave", function () { document.body.classList.remove("dragging"); });
    drop.addEventListener("drop", function (e) {
      e.preventDefault();
      document.body.classList.remove("dragging");
      loadFiles(e.dataTransfer.files);
    });
    loadFromUrl();
  });
})();
