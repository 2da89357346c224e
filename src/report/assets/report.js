// The report page: its charts (Chart.js, inlined above) drawn from the report's own numbers (the JSON embedded
// in the page, the same as report.json), and the trajectory viewer. Each chart can be saved as SVG (drawn again
// onto a recording context that writes SVG: vectors and text, for papers) and as PNG. window.ptxbenchReport says
// what was drawn, and exportSvg(id) gives a chart's SVG, for the browser test (tests/browser/check_report.py).
"use strict";
(function () {
  const status = { charts: [], errors: [], ready: false };
  window.ptxbenchReport = status;
  window.addEventListener("error", (e) => status.errors.push(String(e.message || e)));

  const report = JSON.parse(document.getElementById("report-data").textContent);
  const viewer = JSON.parse(document.getElementById("viewer-data").textContent);
  const grid = document.getElementById("chart-grid");

  const PALETTE = ["#2456c7", "#d9480f", "#2b8a3e", "#862e9c", "#c92a2a", "#1098ad", "#e67700", "#5c7cfa",
                   "#a61e4d", "#087f5b"];
  const OUTCOME_COLOURS = {
    compile: "#e03131", forbidden: "#862e9c", memory_safety: "#f76707", timeout: "#f59f00", runtime: "#a61e4d",
    numerical: "#1971c2", instruction: "#0c8599", timing: "#5c940d", extraction: "#868e96", verified: "#2f9e44", undecided: "#ced4da",
  };
  const colour = (i) => PALETTE[i % PALETTE.length];
  const alpha = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, "0");

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // ---- SVG export: the chart drawn again onto a context that records Chart.js's canvas calls as SVG ----

  const fmtNumber = (v) => String(Math.round(v * 100) / 100);
  const escapeXml = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
                                    .replace(/"/g, "&quot;");
  // A canvas colour as SVG's colour and opacity: hex with alpha and rgba() become a colour and an opacity.
  function paint(style) {
    if (typeof style !== "string") return ["none", 1];  // gradients and patterns: none drawn here
    let m = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.exec(style.trim());
    if (m) {
      let hex = m[1];
      if (hex.length <= 4) hex = [...hex].map((c) => c + c).join("");
      return ["#" + hex.slice(0, 6), hex.length === 8 ? parseInt(hex.slice(6), 16) / 255 : 1];
    }
    m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+%?))?\s*\)$/i.exec(style.trim());
    if (m) {
      const a = m[4] === undefined ? 1 : m[4].endsWith("%") ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
      return [`rgb(${m[1]},${m[2]},${m[3]})`, a];
    }
    return [style, 1];
  }
  const multiply = (m, n) => [m[0] * n[0] + m[2] * n[1], m[1] * n[0] + m[3] * n[1], m[0] * n[2] + m[2] * n[3],
                              m[1] * n[2] + m[3] * n[3], m[0] * n[4] + m[2] * n[5] + m[4],
                              m[1] * n[4] + m[3] * n[5] + m[5]];

  // A Path2D stand-in while the chart draws onto SvgContext: its calls, replayed by fill() and stroke().
  class RecordedPath {
    constructor() { this.calls = []; }
  }
  for (const name of ["moveTo", "lineTo", "bezierCurveTo", "quadraticCurveTo", "arc", "ellipse", "rect",
                      "closePath"])
    RecordedPath.prototype[name] = function (...args) { this.calls.push([name, args]); };

  class SvgContext {
    constructor(canvas, width, height) {
      this.canvas = canvas;
      this.width = width;
      this.height = height;
      this.measurer = document.createElement("canvas").getContext("2d");
      this.parts = [];
      this.clips = [];
      this.stack = [];
      this.state = { fillStyle: "#000000", strokeStyle: "#000000", lineWidth: 1, font: "10px sans-serif",
                     textAlign: "start", textBaseline: "alphabetic", globalAlpha: 1, lineCap: "butt",
                     lineJoin: "miter", miterLimit: 10, lineDashOffset: 0, dash: [], m: [1, 0, 0, 1, 0, 0],
                     clip: null };
      this.d = [];
    }
    save() { this.stack.push(Object.assign({}, this.state, { dash: this.state.dash.slice() })); }
    restore() { if (this.stack.length) this.state = this.stack.pop(); }
    setTransform(a, b, c, d, e, f) {
      this.state.m = typeof a === "object" ? [a.a, a.b, a.c, a.d, a.e, a.f] : [a, b, c, d, e, f];
    }
    resetTransform() { this.state.m = [1, 0, 0, 1, 0, 0]; }
    transform(a, b, c, d, e, f) { this.state.m = multiply(this.state.m, [a, b, c, d, e, f]); }
    translate(x, y) { this.transform(1, 0, 0, 1, x, y); }
    scale(x, y) { this.transform(x, 0, 0, y, 0, 0); }
    rotate(r) { this.transform(Math.cos(r), Math.sin(r), -Math.sin(r), Math.cos(r), 0, 0); }
    setLineDash(dash) { this.state.dash = (dash || []).slice(); }
    getLineDash() { return this.state.dash.slice(); }
    measureText(text) { this.measurer.font = this.state.font; return this.measurer.measureText(text); }
    point(x, y) {
      const m = this.state.m;
      return fmtNumber(m[0] * x + m[2] * y + m[4]) + " " + fmtNumber(m[1] * x + m[3] * y + m[5]);
    }
    beginPath() { this.d = []; }
    moveTo(x, y) { this.d.push("M" + this.point(x, y)); }
    lineTo(x, y) { this.d.push((this.d.length ? "L" : "M") + this.point(x, y)); }
    bezierCurveTo(a, b, c, d, x, y) { this.d.push("C" + [this.point(a, b), this.point(c, d), this.point(x, y)].join(" ")); }
    quadraticCurveTo(a, b, x, y) { this.d.push("Q" + this.point(a, b) + " " + this.point(x, y)); }
    closePath() { if (this.d.length) this.d.push("Z"); }
    rect(x, y, w, h) {
      this.d.push("M" + this.point(x, y), "L" + this.point(x + w, y), "L" + this.point(x + w, y + h),
                  "L" + this.point(x, y + h), "Z");
    }
    ellipse(x, y, rx, ry, rotation, a0, a1, ccw) { this.arc(x, y, rx, a0, a1, ccw); }
    arc(x, y, r, a0, a1, ccw) {
      const m = this.state.m, scale = Math.sqrt(Math.abs(m[0] * m[3] - m[1] * m[2]));
      const at = (a) => this.point(x + r * Math.cos(a), y + r * Math.sin(a));
      const rr = fmtNumber(r * scale);
      let sweep = ccw ? a0 - a1 : a1 - a0;
      this.d.push((this.d.length ? "L" : "M") + at(a0));
      if (sweep >= 2 * Math.PI - 1e-9 || sweep <= -2 * Math.PI + 1e-9) {  // a whole circle: two halves
        const mid = a0 + (ccw ? -Math.PI : Math.PI);
        this.d.push(`A${rr} ${rr} 0 0 ${ccw ? 0 : 1} ${at(mid)}`, `A${rr} ${rr} 0 0 ${ccw ? 0 : 1} ${at(a0)}`);
        return;
      }
      sweep = ((sweep % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);
      this.d.push(`A${rr} ${rr} 0 ${sweep > Math.PI ? 1 : 0} ${ccw ? 0 : 1} ${at(a1)}`);
    }
    pathOf(path) {
      if (!(path instanceof RecordedPath)) return this.d.join("");
      const saved = this.d;
      this.d = [];
      for (const [name, args] of path.calls) this[name](...args);
      const d = this.d.join("");
      this.d = saved;
      return d;
    }
    common() {
      const alpha = this.state.globalAlpha;
      return alpha < 1 ? ` opacity="${fmtNumber(alpha)}"` : "";
    }
    // An element inside its clip's group: the clip's path is in the page's coordinates, not the element's own.
    emit(element) {
      this.parts.push(this.state.clip ? `<g clip-path="url(#${this.state.clip})">${element}</g>` : element);
    }
    fill(path) {
      const d = this.pathOf(path);
      if (!d) return;
      const [colour, opacity] = paint(this.state.fillStyle);
      if (colour === "none" || opacity === 0) return;
      this.emit(`<path d="${d}" fill="${escapeXml(colour)}"` +
                      (opacity < 1 ? ` fill-opacity="${fmtNumber(opacity)}"` : "") + `${this.common()}/>`);
    }
    stroke(path) {
      const d = this.pathOf(path);
      const [colour, opacity] = paint(this.state.strokeStyle);
      if (!d || colour === "none" || opacity === 0 || !(this.state.lineWidth > 0)) return;
      const dash = this.state.dash.length ? ` stroke-dasharray="${this.state.dash.join(" ")}"` : "";
      this.emit(`<path d="${d}" fill="none" stroke="${escapeXml(colour)}"` +
                      (opacity < 1 ? ` stroke-opacity="${fmtNumber(opacity)}"` : "") +
                      ` stroke-width="${fmtNumber(this.state.lineWidth)}" stroke-linecap="${this.state.lineCap}"` +
                      ` stroke-linejoin="${this.state.lineJoin}"${dash}${this.common()}/>`);
    }
    clip(path) {
      const d = this.pathOf(path);
      const id = "clip" + this.clips.length;
      const within = this.state.clip ? ` clip-path="url(#${this.state.clip})"` : "";  // clips intersect
      this.clips.push(`<clipPath id="${id}"${within}><path d="${d}"/></clipPath>`);
      this.state.clip = id;
    }
    fillRect(x, y, w, h) {
      const saved = this.d;
      this.d = [];
      this.rect(x, y, w, h);
      this.fill();
      this.d = saved;
    }
    strokeRect(x, y, w, h) {
      const saved = this.d;
      this.d = [];
      this.rect(x, y, w, h);
      this.stroke();
      this.d = saved;
    }
    clearRect() {}
    fillText(text, x, y) {
      const [colour, opacity] = paint(this.state.fillStyle);
      const m = multiply(this.state.m, [1, 0, 0, 1, x, y]).map(fmtNumber).join(" ");
      const anchor = { center: "middle", right: "end", end: "end" }[this.state.textAlign] || "start";
      const baseline = { top: "hanging", hanging: "hanging", middle: "central", bottom: "text-after-edge",
                         ideographic: "text-after-edge" }[this.state.textBaseline];
      this.emit(`<text transform="matrix(${m})" style="font: ${escapeXml(this.state.font)}" ` +
                      `fill="${escapeXml(colour)}"` + (opacity < 1 ? ` fill-opacity="${fmtNumber(opacity)}"` : "") +
                      ` text-anchor="${anchor}"` + (baseline ? ` dominant-baseline="${baseline}"` : "") +
                      `${this.common()}>${escapeXml(text)}</text>`);
    }
    strokeText() {}
    drawImage() {}
    createLinearGradient() { return { addColorStop() {} }; }
    createRadialGradient() { return { addColorStop() {} }; }
    createPattern() { return null; }
    isPointInPath() { return false; }
    svg(title) {
      return `<svg xmlns="http://www.w3.org/2000/svg" width="${this.width}" height="${this.height}" ` +
             `viewBox="0 0 ${this.width} ${this.height}"><title>${escapeXml(title)}</title>` +
             `<defs>${this.clips.join("")}</defs><rect width="100%" height="100%" fill="#ffffff"/>` +
             this.parts.join("\n") + "</svg>\n";
    }
  }
  for (const name of ["fillStyle", "strokeStyle", "lineWidth", "font", "textAlign", "textBaseline", "globalAlpha",
                      "lineCap", "lineJoin", "miterLimit", "lineDashOffset"])
    Object.defineProperty(SvgContext.prototype, name, { get() { return this.state[name]; },
                                                        set(v) { this.state[name] = v; } });
  for (const name of ["shadowColor", "shadowBlur", "shadowOffsetX", "shadowOffsetY", "globalCompositeOperation",
                      "imageSmoothingEnabled", "direction", "filter"])
    Object.defineProperty(SvgContext.prototype, name, { get() { return undefined; }, set() {} });

  // A chart as SVG text: Chart.js draws it once more onto an SvgContext in place of its canvas's context (the
  // chart's, its layout boxes' and its dataset controllers'), with Path2D recorded; the canvas is left as it was.
  function chartSvg(chart, title) {
    const context = new SvgContext(chart.canvas, chart.width, chart.height);
    const holders = [chart, chart.tooltip, ...chart.boxes];
    chart.data.datasets.forEach((d, i) => holders.push(chart.getDatasetMeta(i).controller));
    const swapped = [];
    for (const h of holders)
      for (const key of ["ctx", "_ctx"])
        if (h && key in h && h[key]) swapped.push([h, key, h[key]]), h[key] = context;
    const lines = chart.data.datasets.map((d, i) => chart.getDatasetMeta(i).dataset).filter(Boolean);
    const realPath2D = window.Path2D;
    try {
      window.Path2D = RecordedPath;
      lines.forEach((l) => delete l._path);
      chart.draw();
    } finally {
      window.Path2D = realPath2D;
      lines.forEach((l) => delete l._path);
      for (const [h, key, value] of swapped) h[key] = value;
    }
    return context.svg(title);
  }
  // The chart as PNG, on white (the canvas itself is transparent).
  function chartPng(chart) {
    const canvas = document.createElement("canvas");
    canvas.width = chart.canvas.width;
    canvas.height = chart.canvas.height;
    const context = canvas.getContext("2d");
    context.fillStyle = "#ffffff";
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(chart.canvas, 0, 0);
    return canvas.toDataURL("image/png");
  }
  status.exportSvg = (id) => chartSvg(Chart.getChart(document.getElementById(id)), id);

  // Confidence intervals over bars: a whisker from each bar's `interval` [lo, hi] (datasets that have one).
  const whiskers = {
    id: "whiskers",
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx, y = chart.scales.y;
      chart.data.datasets.forEach((d, i) => {
        if (!d.interval || !chart.isDatasetVisible(i)) return;
        chart.getDatasetMeta(i).data.forEach((bar, j) => {
          const ci = d.interval[j];
          if (!ci) return;
          const top = y.getPixelForValue(ci[1]), bottom = y.getPixelForValue(ci[0]), half = 5;
          ctx.save();
          ctx.strokeStyle = "#343a40";
          ctx.lineWidth = 1;
          ctx.beginPath();
          ctx.moveTo(bar.x, top);
          ctx.lineTo(bar.x, bottom);
          ctx.moveTo(bar.x - half, top);
          ctx.lineTo(bar.x + half, top);
          ctx.moveTo(bar.x - half, bottom);
          ctx.lineTo(bar.x + half, bottom);
          ctx.stroke();
          ctx.restore();
        });
      });
    },
  };

  // One chart: build() gives {config, points} (points: the data marks it must draw) or {empty: why}.
  function addChart(id, title, note, build) {
    const box = el("div", { class: "chart-box", id: id + "-box" });
    box.append(el("h3", {}, title));
    if (note) box.append(el("p", { class: "note" }, note));
    grid.append(box);
    let built;
    try {
      built = build();
    } catch (e) {
      status.errors.push(id + ": " + e);
      console.error(id, e);
      return;
    }
    if (built.empty) {
      box.append(el("p", { class: "no-data" }, built.empty));
      status.charts.push({ id, title, empty: built.empty });
      return;
    }
    const canvas = el("canvas", { id, class: "chart", width: 640, height: built.height || 340 });
    box.append(canvas);
    const options = Object.assign({ animation: false, responsive: false, maintainAspectRatio: false },
                                  built.config.options || {});
    options.plugins = Object.assign({ legend: { position: "bottom" } }, options.plugins || {});
    const chart = new Chart(canvas, Object.assign({}, built.config, { options }));
    // Downloads for papers: the chart as SVG (vectors and text) and as PNG, made when clicked.
    const links = el("div", { class: "export" });
    const svgLink = el("a", { class: "export-svg", href: "#", download: id + ".svg" }, "SVG");
    svgLink.addEventListener("click", () => {
      if (svgLink.dataset.url) URL.revokeObjectURL(svgLink.dataset.url);
      svgLink.dataset.url = URL.createObjectURL(new Blob([chartSvg(chart, title)], { type: "image/svg+xml" }));
      svgLink.href = svgLink.dataset.url;
    });
    const pngLink = el("a", { class: "export-png", href: "#", download: id + ".png" }, "PNG");
    pngLink.addEventListener("click", () => { pngLink.href = chartPng(chart); });
    links.append("Download: ", svgLink, " ", pngLink);
    box.append(links);
    status.charts.push({ id, title, points: built.points });
  }

  // A line (or point set) per model and knowledge level, and per track when the runs have more than one.
  const series = (row) => [row.model, row.knowledge].concat(report.tracks.length > 1 ? [row.track] : []).join(" · ");
  const byKey = (rows, keyOf) => {
    const groups = new Map();
    for (const r of rows) {
      const k = keyOf(r);
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(r);
    }
    return groups;
  };

  // 1. Correct and verified rates against the turn limit, per architecture and family: a step curve per model and
  //    knowledge level over every limit from 1 to the run's turns (report.turn_curve), verified solid with its
  //    band the 95% Wilson interval (up to two lines: more bands hide one another), correct dashed beside it.
  const percentAxis = (text) => ({ min: 0, max: 1, title: { display: true, text },
                                   ticks: { callback: (v) => Math.round(v * 100) + "%" } });
  const noBands = { legend: { labels: { filter: (item, chart) => !chart.datasets[item.datasetIndex].band } } };
  const familyRows = report.turn_curve.filter((r) => r.family !== "all");
  for (const [key, rows] of byKey(familyRows, (r) => r.arch + " " + r.family)) {
    const id = "rates-" + key.replace(/[^a-z0-9]+/gi, "-");
    addChart(id, "Correct and verified rate by turn limit: " + key, "At every limit from 1 to the run's turns: " +
             "solid, verified (band: its 95% Wilson interval, with at most two lines); dashed, correct. Undecided trajectories (no GPU judged " +
             "them) are left out.", () => {
      const datasets = [], lines = [...byKey(rows, series)];
      const bands = lines.length <= 2;  // more bands than two hide one another: the tables hold the intervals
      let points = 0, largest = 1;
      lines.forEach(([name, srows], i) => {
        const sorted = srows.slice().sort((a, b) => a.turn - b.turn);
        const verified = sorted.filter((r) => r.verified_n > 0), correct = sorted.filter((r) => r.correct_n > 0);
        if (!verified.length && !correct.length) return;
        points += verified.length + correct.length;
        largest = Math.max(largest, ...sorted.map((r) => r.turn));
        const c = colour(i);
        const at = (rs, key) => rs.map((r) => ({ x: r.turn, y: r[key] }));
        if (bands) {
          datasets.push({ label: name + " (95% CI)", data: at(verified, "verified_hi"), borderWidth: 0,
                          pointRadius: 0, fill: "+1", backgroundColor: alpha(c, 0.12), stepped: true, band: true });
          datasets.push({ label: name + " lo", data: at(verified, "verified_lo"), borderWidth: 0, pointRadius: 0,
                          fill: false, stepped: true, band: true });
        }
        datasets.push({ label: name + " verified", data: at(verified, "verified_rate"), borderColor: c,
                        backgroundColor: c, pointRadius: 3, fill: false, stepped: true, marks: true });
        datasets.push({ label: name + " correct", data: at(correct, "correct_rate"), borderColor: c,
                        backgroundColor: "#ffffff", borderDash: [6, 4], pointRadius: 3, pointStyle: "rect",
                        fill: false, stepped: true, marks: true });
      });
      if (!points) return { empty: "No trajectory's result is decided: none was judged on a GPU of its " +
                                   "architecture." };
      return { points, height: 300 + 22 * Math.ceil(lines.length / 2), config: { type: "line", data: { datasets },
        options: {
          scales: { x: { type: "linear", min: 1, max: largest, offset: true, grid: { offset: false },
                         title: { display: true, text: "turn limit" }, ticks: { stepSize: 1 } },
                    y: percentAxis("rate") },
          plugins: { legend: { labels: { boxWidth: 24, font: { size: 11 },
                                         filter: noBands.legend.labels.filter } } } } } };
    });
  }

  // 1b. The side-by-side comparisons as bars: the knowledge ablation (its levels in their order: params,
  //     templates, contracts) and CUDA against Triton. Per view: the correct and verified rates of every family
  //     at the view's common turn limit, whiskers their 95% Wilson intervals.
  const viewCharts = { knowledge: ["ablation", "Knowledge ablation"], track: ["tracks", "Triton against CUDA"] };
  const counters = {};
  for (const view of report.side_by_side) {
    if (!viewCharts[view.view]) continue;
    const [prefix, heading] = viewCharts[view.view];
    counters[prefix] = (counters[prefix] || 0) + 1;
    const fixed = Object.entries(view.fixed).map(([k, v]) => k + " " + v).join(", ");
    const limit = view.turn_limit === "max" ? "each run's turns" : "the first " + view.turn_limit + " turn" +
                  (view.turn_limit === "1" ? "" : "s");
    addChart(prefix + "-" + counters[prefix], heading + ": " + fixed, "Every family's trajectories, within " + limit +
             ". Bars: correct (light) and verified rate; whiskers: 95% Wilson intervals.", () => {
      const row = view.rows.find((r) => r.family === "all" && r.task === "all") || view.rows[0];
      const cells = view.columns.map((c) => row && row.cells[c] ? row.cells[c] : null);
      const datasets = [["correct", 0.45], ["verified", 1]].map(([what, a]) => ({
        label: what, backgroundColor: alpha(colour(0), a), marks: true, zeroes: true,
        data: cells.map((c) => c && c[what + "_n"] > 0 ? c[what + "_rate"] : null),
        interval: cells.map((c) => c && c[what + "_n"] > 0 ? [c[what + "_lo"], c[what + "_hi"]] : null) }));
      // A rate of 0 is a mark too (`zeroes`): a bar of no height at the axis.
      const points = datasets.reduce((n, d) => n + d.data.filter((v) => v !== null).length, 0);
      if (!datasets.some((d) => d.data.some((v) => v !== null)))
        return { empty: "No trajectory's result is decided: none was judged on a GPU of its architecture." };
      return { points, config: { type: "bar", data: { labels: view.columns, datasets }, plugins: [whiskers],
                                 options: { scales: { y: percentAxis("rate") } } } };
    });
  }

  // 2. Best speedup per task: a point at each trajectory's best verified speedup's maximum, a bar over the
  //    trajectories' range, per model and knowledge level; at each group's largest turn limit.
  addChart("speedup-per-task", "Best speedup per task (vendor library = 1x)",
           "Point: the best trajectory's speedup; bar: the range of the trajectories' best verified speedups, " +
           "within each run's turns.", () => {
    const taskRows = report.metrics.filter((r) => r.task !== "all");
    const last = new Map();  // the last (largest) limit of each group
    for (const r of taskRows) last.set([r.model, r.knowledge, r.arch, r.track, r.task].join("|"), r);
    const rows = [...last.values()].filter((r) => r.speedup_n > 0);
    if (!rows.length) return { empty: "No verified turn was timed: no speedup to show." };
    const tasks = [...new Set(rows.map((r) => r.task))].sort();
    const datasets = [];
    [...byKey(rows, series)].forEach(([name, srows], i) => {
      const at = new Map(srows.map((r) => [r.task, r]));
      const c = colour(i);
      datasets.push({ type: "bar", label: name + " range", data: tasks.map((t) => at.has(t) ?
                      [at.get(t).speedup_min, at.get(t).speedup_max] : null), backgroundColor: alpha(c, 0.35),
                      barPercentage: 0.5, range: true });
      datasets.push({ type: "line", label: name, data: tasks.map((t) => at.has(t) ? at.get(t).speedup_max : null),
                      showLine: false, pointRadius: 6, pointStyle: "rectRot", borderColor: c, backgroundColor: c,
                      marks: true });
    });
    datasets.push({ type: "line", label: "vendor library (1x)", data: tasks.map(() => 1), borderColor: "#868e96",
                    borderDash: [6, 4], pointRadius: 0, borderWidth: 1 });
    return { points: rows.length, config: { type: "bar", data: { labels: tasks, datasets }, options: {
      scales: { y: { beginAtZero: true, title: { display: true, text: "speedup (x)" } } },
      plugins: { legend: { labels: { filter: (item, chart) => !chart.datasets[item.datasetIndex].range } } } } } };
  });

  // 3. Outcomes per turn as stacked bars, per model, knowledge level and architecture (every family).
  const outcomeRows = report.error_classes.filter((r) => r.family === "all");
  for (const [key, rows] of byKey(outcomeRows, (r) => series(r) + " · " + r.arch)) {
    addChart("outcomes-" + key.replace(/[^a-z0-9]+/gi, "-"), "Outcomes per turn: " + key,
             "Failed turns by error class; verified and undecided turns beside them.", () => {
      const turns = [...new Set(rows.map((r) => r.turn))].sort((a, b) => a - b);
      const outcomes = [...new Set(rows.map((r) => r.outcome))];
      const datasets = outcomes.map((o) => ({ label: o, backgroundColor: OUTCOME_COLOURS[o] || "#495057", marks: true,
        data: turns.map((t) => { const r = rows.find((x) => x.turn === t && x.outcome === o); return r ? r.turns : 0; }) }));
      return { points: rows.length, config: { type: "bar", data: { labels: turns.map((t) => "turn " + t), datasets },
        options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true,
                                                        title: { display: true, text: "turns" } } } } } };
    });
  }

  // 4. Speedup against reasoning tokens, one point per trajectory with a timed verified turn.
  addChart("speedup-vs-reasoning", "Best speedup against reasoning tokens",
           "One point per trajectory: the reasoning tokens of all its turns, and its best verified speedup.", () => {
    const rows = report.trajectories.filter((r) => r.best_speedup !== null && r.reasoning_tokens !== null);
    if (!rows.length) return { empty: "No trajectory has both a timed verified turn and reported reasoning tokens." };
    const datasets = [...byKey(rows, series)].map(([name, srows], i) => ({ label: name, backgroundColor: colour(i),
      data: srows.map((r) => ({ x: r.reasoning_tokens, y: r.best_speedup })), pointRadius: 5, marks: true }));
    return { points: rows.length, config: { type: "scatter", data: { datasets }, options: {
      scales: { x: { title: { display: true, text: "reasoning tokens (trajectory)" } },
                y: { beginAtZero: true, title: { display: true, text: "best speedup (x)" } } } } } };
  });

  // 5. Evaluation time per stage: the mean, per host.
  addChart("stage-times", "Evaluation time per stage (mean)", null, () => {
    const rows = report.stage_times;
    if (!rows.length) return { empty: "No evaluation in these runs." };
    const stages = [...new Set(rows.map((r) => r.stage))];
    const datasets = [...byKey(rows, (r) => r.host)].map(([host, hrows], i) => ({ label: host,
      backgroundColor: colour(i), marks: true, data: stages.map((s) => { const r = hrows.find((x) => x.stage === s);
                                                            return r ? r.mean_s : null; }) }));
    // A stage that took no measurable time has no bar to draw.
    return { points: rows.filter((r) => r.mean_s > 0).length, config: { type: "bar", data: { labels: stages,
      datasets }, options: { indexAxis: "y", scales: { x: { beginAtZero: true, title: { display: true, text: "seconds" } } } } } };
  });

  // The trajectory viewer.
  const select = document.getElementById("trajectory-select");
  const view = document.getElementById("trajectory-view");
  viewer.trajectories.forEach((t, i) => {
    select.append(el("option", { value: String(i) }, `run ${t.run} · ${t.model} · ${t.knowledge} · ${t.task} ` +
                                                     `#${t.sample} · ${t.status} · ${t.turns.length} turn(s)`));
  });
  function pane(title, cls) {
    const box = el("div", { class: "pane " + cls });
    box.append(el("h4", {}, title));
    const pre = el("pre");
    box.append(pre);
    return [box, pre];
  }
  function showTrajectory(index) {
    view.replaceChildren();
    const t = viewer.trajectories[index];
    if (!t) return;
    if (!t.turns.length) view.append(el("p", { class: "none" }, "No finished turn."));
    for (const turn of t.turns) {
      const details = el("details", { class: "turn", open: "" });
      details.dataset.turn = String(turn.turn);
      details.append(el("summary", {}, `Turn ${turn.turn}: ${turn.error_class || (turn.verified ? "verified" : "not failed")} — ${turn.outcome}`));
      const facts = [];
      if (turn.speedup !== null) facts.push("speedup " + turn.speedup.toFixed(3) + "x");
      for (const k of ["input_tokens", "output_tokens", "reasoning_tokens"])
        if (turn[k] !== null) facts.push(k.replace("_", " ") + " " + turn[k]);
      if (turn.latency_s !== null) facts.push("model latency " + turn.latency_s.toFixed(2) + " s");
      details.append(el("div", { class: "meta" }, facts.join(" · ") || "no usage reported"));
      const panes = el("div", { class: "panes" });
      const [codeBox, code] = pane("Code", "code");
      code.textContent = turn.code ? viewer.code[turn.code] : "(no code in the reply)";
      const [feedbackBox, feedback] = pane("Feedback shown to the model on the next turn", "feedback");
      feedback.textContent = turn.feedback || "(none)";
      const [diffBox, diff] = pane(turn.diff_against ? `Diff from turn ${turn.diff_against}` : "Diff", "diff");
      if (turn.diff === null) diff.textContent = turn.code ? "(the trajectory's first code)" : "(no code)";
      else if (turn.diff === "") diff.textContent = "(the same code as turn " + turn.diff_against + ")";
      else for (const line of turn.diff.split("\n")) {
        const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
        diff.append(cls ? el("span", { class: cls }, line) : document.createTextNode(line + "\n"));
      }
      panes.append(codeBox, feedbackBox, diffBox);
      // The model's reasoning, where its server returned it: folded, since it is often longer than the code.
      if (turn.reasoning !== null) {
        const reasoning = el("details", { class: "reasoning" });
        reasoning.append(el("summary", {}, `Reasoning the server returned (${turn.reasoning.length} characters)`));
        reasoning.append(el("pre", {}, turn.reasoning));
        details.append(reasoning);
      }
      details.append(panes);
      view.append(details);
    }
  }
  select.addEventListener("change", () => showTrajectory(Number(select.value)));
  // Open the first trajectory with more than one turn (its diffs say most), else the first.
  const first = Math.max(0, viewer.trajectories.findIndex((t) => t.turns.length > 1));
  select.value = String(first);
  showTrajectory(first);

  status.ready = true;
  document.body.dataset.report = status.errors.length ? "errors" : "ready";
})();
