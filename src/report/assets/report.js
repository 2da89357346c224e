// The report page: its charts (Chart.js, inlined above) drawn from the report's own numbers (the JSON embedded
// in the page, the same as report.json), and the trajectory viewer. window.ptxbenchReport says what was drawn,
// for the browser test (tests/browser/check_report.py).
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
    numerical: "#1971c2", instruction: "#0c8599", extraction: "#868e96", verified: "#2f9e44", undecided: "#ced4da",
  };
  const colour = (i) => PALETTE[i % PALETTE.length];
  const alpha = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, "0");

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

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
    const canvas = el("canvas", { id, class: "chart", width: 640, height: 340 });
    box.append(canvas);
    const options = Object.assign({ animation: false, responsive: false, maintainAspectRatio: false },
                                  built.config.options || {});
    options.plugins = Object.assign({ legend: { position: "bottom" } }, options.plugins || {});
    new Chart(canvas, Object.assign({}, built.config, { options }));
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
  const uniformMax = (row) => /^\d+$/.test(row.max_turns) ? Number(row.max_turns) : null;
  const limitValue = (row) => row.turn_limit === "max" ? uniformMax(row) : Number(row.turn_limit);

  // 1. Verified rate against turn limit, per architecture and family: a line per model and knowledge level,
  //    its band the 95% Wilson interval.
  const familyRows = report.metrics.filter((r) => r.task === "all" && r.family !== "all");
  for (const [key, rows] of byKey(familyRows, (r) => r.arch + " " + r.family)) {
    const id = "verified-" + key.replace(/[^a-z0-9]+/gi, "-");
    addChart(id, "Verified rate by turn limit: " + key, "Band: 95% Wilson interval. Undecided trajectories " +
             "(no GPU judged them) are left out.", () => {
      const datasets = [];
      let points = 0;
      [...byKey(rows, series)].forEach(([name, srows], i) => {
        const decided = srows.filter((r) => r.verified_n > 0 && limitValue(r) !== null)
                             .sort((a, b) => limitValue(a) - limitValue(b));
        if (!decided.length) return;
        points += decided.length;
        const c = colour(i);
        datasets.push({ label: name + " (95% CI)", data: decided.map((r) => ({ x: limitValue(r), y: r.verified_hi })),
                        borderWidth: 0, pointRadius: 0, fill: "+1", backgroundColor: alpha(c, 0.15), band: true });
        datasets.push({ label: name + " lo", data: decided.map((r) => ({ x: limitValue(r), y: r.verified_lo })),
                        borderWidth: 0, pointRadius: 0, fill: false, band: true });
        datasets.push({ label: name, data: decided.map((r) => ({ x: limitValue(r), y: r.verified_rate })),
                        borderColor: c, backgroundColor: c, pointRadius: 4, fill: false, marks: true });
      });
      if (!points) return { empty: "No trajectory's verified result is decided: none was judged on a GPU of its " +
                                   "architecture." };
      return { points, config: { type: "line", data: { datasets }, options: {
        scales: { x: { type: "linear", title: { display: true, text: "turn limit" }, ticks: { stepSize: 1 } },
                  y: { min: 0, max: 1, title: { display: true, text: "verified rate" },
                       ticks: { callback: (v) => Math.round(v * 100) + "%" } } },
        plugins: { legend: { labels: { filter: (item, chart) => !chart.datasets[item.datasetIndex].band } } } } } };
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
