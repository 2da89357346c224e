#!/usr/bin/env python3
"""Opens a ptxbench report.html in headless Chromium (DevTools protocol over a pipe) and fails on:
- any console error, uncaught exception or failed load (a report is self-contained: it loads nothing);
- a chart that was not drawn: each chart the page made must hold as many data marks as its data has points,
  and its canvas must show more than a blank rectangle; `--expect-chart ID=N` and `--min-charts N` also hold
  the page to what its data should give;
- a blank page: the screenshot must show text, tables and charts, not one colour;
- a trajectory viewer that does not show each trajectory's turns, code, feedback and diffs;
- a chart without its download links, or whose SVG link does not give an SVG picture of it (vector marks for its
  data, its legend's text) or whose PNG link does not give a PNG.

Usage: check_report.py REPORT.html [--screenshot FILE] [--min-charts N] [--expect-chart ID=N ...]
                                   [--expect-empty ID ...] [--chromium PATH] [--svg-folder DIR]
(--svg-folder: where to keep each chart's SVG download, ID.svg; --screenshot-section ID: the screenshot shows that
section alone, e.g. "charts".)
Exit 0 when every check passed; 1 otherwise (each problem printed); 2 when the browser could not be run."""
import argparse
import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT_S = 60


class Browser:
    """Chromium driven through --remote-debugging-pipe: JSON messages ended by NUL on fds 3 (in) and 4 (out)."""

    def __init__(self, binary, profile):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # Above 4, so that moving them to 3 and 4 in the child cannot overwrite one with the other.
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def move_fds():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        args = [binary, "--headless", "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
                "--disable-gpu", "--disable-extensions", "--disable-background-networking", "--mute-audio",
                "--hide-scrollbars", f"--user-data-dir={profile}", "--window-size=1400,1000"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses root otherwise; the page is our own report
        self.process = subprocess.Popen(args, pass_fds=(3, 4), preexec_fn=move_fds, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(child_in)
        os.close(child_out)
        self.out = os.fdopen(to_browser_w, "wb", buffering=0)
        self.inp = os.fdopen(from_browser_r, "rb", buffering=0)
        self.next_id = 0
        self.replies = {}
        self.events = queue.Queue()
        self.lock = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.session = None

    def _read(self):
        buffer = b""
        while True:
            chunk = self.inp.read(65536)
            if not chunk:
                with self.lock:
                    self.replies[None] = "closed"
                    self.lock.notify_all()
                return
            buffer += chunk
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                doc = json.loads(message)
                if "id" in doc:
                    with self.lock:
                        self.replies[doc["id"]] = doc
                        self.lock.notify_all()
                else:
                    self.events.put(doc)

    def send(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        self.out.write(json.dumps(message).encode() + b"\0")
        deadline = time.time() + TIMEOUT_S
        with self.lock:
            while self.next_id not in self.replies:
                if None in self.replies:
                    raise RuntimeError("the browser closed its pipe: " + self.stderr_tail())
                if not self.lock.wait(timeout=deadline - time.time()):
                    raise RuntimeError(f"no reply to {method} within {TIMEOUT_S} s")
            reply = self.replies.pop(self.next_id)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluating a check threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def stderr_tail(self):
        try:
            self.process.kill()
            return self.process.stderr.read().decode(errors="replace")[-2000:]
        except Exception:  # noqa: BLE001 - only for a message
            return ""

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# Counted in the page: each chart's data marks actually laid out in its chart area (datasets flagged `marks`).
CHART_CHECK = r"""
(() => {
  const status = window.ptxbenchReport;
  return status.charts.map((c) => {
    if (c.empty) return { id: c.id, empty: c.empty };
    const canvas = document.getElementById(c.id);
    const chart = canvas && Chart.getChart(canvas);
    if (!chart) return { id: c.id, points: c.points, drawn: 0, problem: "no chart on its canvas" };
    const area = chart.chartArea;
    let drawn = 0;
    chart.data.datasets.forEach((d, i) => {
      if (!d.marks || !chart.isDatasetVisible(i)) return;
      chart.getDatasetMeta(i).data.forEach((e, j) => {
        const v = d.data[j];
        if (v === null || v === undefined || e.skip || (v === 0 && !d.zeroes)) return;
        const x = e.x, y = e.y;
        if (Number.isFinite(x) && Number.isFinite(y) && x >= area.left - 1 && x <= area.right + 1 &&
            y >= area.top - 1 && y <= area.bottom + 1) drawn++;
      });
    });
    const r = canvas.getBoundingClientRect();
    return { id: c.id, points: c.points, drawn, rect: [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height] };
  });
})()
"""

# Each drawn chart's download links clicked (the downloads themselves cancelled): what the SVG link's blob holds,
# parsed as SVG, and what the PNG link points to.
EXPORT_CHECK = r"""
(async () => {
  const cancel = (e) => e.preventDefault();
  window.addEventListener("click", cancel);
  const results = [];
  try {
    for (const c of window.ptxbenchReport.charts) {
      if (c.empty) continue;
      const box = document.getElementById(c.id + "-box");
      const svgLink = box.querySelector("a.export-svg"), pngLink = box.querySelector("a.export-png");
      if (!svgLink || !pngLink) { results.push({ id: c.id, problem: "no SVG and PNG download links" }); continue; }
      svgLink.click();
      pngLink.click();
      const text = await (await fetch(svgLink.href)).text();
      const doc = new DOMParser().parseFromString(text, "image/svg+xml");
      const root = doc.documentElement;
      const chart = Chart.getChart(document.getElementById(c.id));
      const legend = (chart.legend.legendItems || []).map((item) => item.text);
      const texts = [...doc.querySelectorAll("text")].map((t) => t.textContent);
      results.push({ id: c.id, download: svgLink.getAttribute("download"), type: root.nodeName,
                     parseError: !!doc.querySelector("parsererror"), paths: doc.querySelectorAll("path").length,
                     texts: texts.length, missing: legend.filter((l) => !texts.includes(l)),
                     svg: text, png: pngLink.href.startsWith("data:image/png;base64,") ? pngLink.href.length : 0 });
    }
  } finally {
    window.removeEventListener("click", cancel);
  }
  return results;
})()
"""

# Every trajectory of the viewer selected in turn: its turns shown, with code, feedback and diff panes.
VIEWER_CHECK = r"""
(() => {
  const data = JSON.parse(document.getElementById("viewer-data").textContent);
  const select = document.getElementById("trajectory-select");
  const problems = [];
  let diffs = 0, codes = 0, reasonings = 0;
  data.trajectories.forEach((t, i) => {
    select.value = String(i);
    select.dispatchEvent(new Event("change"));
    const turns = document.querySelectorAll("#trajectory-view details.turn");
    if (turns.length !== t.turns.length) problems.push(`${t.key}: ${turns.length} turns shown of ${t.turns.length}`);
    turns.forEach((node, j) => {
      const turn = t.turns[j];
      const code = node.querySelector(".code pre").textContent;
      if (turn.code && code !== data.code[turn.code]) problems.push(`${t.key} turn ${turn.turn}: code not shown`);
      if (turn.code) codes++;
      if (node.querySelector(".feedback pre").textContent !== (turn.feedback || "(none)"))
        problems.push(`${t.key} turn ${turn.turn}: feedback not shown`);
      const reasoning = node.querySelector("details.reasoning pre");
      if ((reasoning ? reasoning.textContent : null) !== turn.reasoning)
        problems.push(`${t.key} turn ${turn.turn}: reasoning ${turn.reasoning === null ? "shown without any" : "not shown"}`);
      if (turn.reasoning !== null) reasonings++;
      if (turn.diff) {
        diffs++;
        const lines = node.querySelectorAll(".diff pre .add, .diff pre .del").length;
        const expected = turn.diff.split("\n").filter((l) => /^[+-]/.test(l)).length;
        if (lines !== expected) problems.push(`${t.key} turn ${turn.turn}: ${lines} diff lines shown of ${expected}`);
      }
    });
  });
  select.value = "0";
  select.dispatchEvent(new Event("change"));
  return { trajectories: data.trajectories.length, codes, diffs, reasonings, problems };
})()
"""


# A PNG's colours counted by the browser itself (decoded into a canvas): how many, and the share of pixels
# unlike the commonest one.
PNG_STATS = r"""
(async () => {
  const image = new Image();
  image.src = "data:image/png;base64,%s";
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0);
  const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
  const counts = new Map();
  for (let i = 0; i < pixels.length; i += 4) {
    const key = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  const commonest = Math.max(...counts.values());
  return { colours: counts.size, ink: 1 - commonest / (pixels.length / 4), width: canvas.width, height: canvas.height };
})()
"""


def not_blank(browser, png, what, min_colours=3, min_ink=0.005):
    """A picture is not blank when it has a few colours and some share of pixels unlike its commonest one."""
    stats = browser.evaluate(PNG_STATS % base64.b64encode(png).decode())
    if stats["width"] == 0 or stats["height"] == 0:
        return f"{what} is empty (0 pixels)"
    if stats["colours"] < min_colours or stats["ink"] < min_ink:
        return (f"{what} is blank: {stats['colours']} colour(s), {stats['ink']:.2%} of its pixels differ from the "
                "background")
    return None


def check(args):
    problems = []
    profile = tempfile.mkdtemp(prefix="ptxbench-chromium-")
    browser = Browser(args.chromium, profile)
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"}, session=False)
        browser.session = browser.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                                       session=False)["sessionId"]
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            browser.send(domain)
        browser.send("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1,
                                                            "mobile": False})
        url = "file://" + os.path.abspath(args.report)
        browser.send("Page.navigate", {"url": url})
        deadline = time.time() + TIMEOUT_S
        while not browser.evaluate("document.readyState === 'complete' && !!(window.ptxbenchReport && "
                                   "window.ptxbenchReport.ready)"):
            if time.time() > deadline:
                problems.append("the page did not finish drawing within %d s" % TIMEOUT_S)
                break
            time.sleep(0.2)

        status = browser.evaluate("window.ptxbenchReport || null")
        if status is None:
            problems.append("the page's script did not run (no window.ptxbenchReport)")
            return problems
        problems += [f"the page reported an error: {e}" for e in status["errors"]]

        charts = browser.evaluate(CHART_CHECK)
        drawn = [c for c in charts if "empty" not in c]
        for c in charts:
            if "empty" in c:
                print(f"  chart {c['id']}: no data ({c['empty']})")
                continue
            print(f"  chart {c['id']}: {c['drawn']} of {c['points']} data marks drawn")
            if c.get("problem"):
                problems.append(f"chart {c['id']}: {c['problem']}")
            elif c["points"] < 1 or c["drawn"] != c["points"]:
                problems.append(f"chart {c['id']}: {c['drawn']} data marks drawn, its data has {c['points']}")
        by_id = {c["id"]: c for c in charts}
        for expectation in args.expect_chart:
            chart_id, points = expectation.rsplit("=", 1)
            c = by_id.get(chart_id)
            if c is None or "empty" in c:
                problems.append(f"chart {chart_id}: expected with {points} points, " +
                                ("absent" if c is None else "empty: " + c["empty"]))
            elif c["drawn"] != int(points):
                problems.append(f"chart {chart_id}: {c['drawn']} data marks drawn, expected {points}")
        for chart_id in args.expect_empty:
            if chart_id not in by_id or "empty" not in by_id[chart_id]:
                problems.append(f"chart {chart_id}: expected to say it has no data")
        if len(drawn) < args.min_charts:
            problems.append(f"{len(drawn)} chart(s) drawn, at least {args.min_charts} expected")

        for e in browser.evaluate(EXPORT_CHECK):
            if e.get("problem"):
                problems.append(f"chart {e['id']}: {e['problem']}")
                continue
            points = by_id[e["id"]]["points"]
            if args.svg_folder:
                os.makedirs(args.svg_folder, exist_ok=True)
                with open(os.path.join(args.svg_folder, e["id"] + ".svg"), "w", encoding="utf-8") as f:
                    f.write(e["svg"])
            print(f"  chart {e['id']}: SVG with {e['paths']} paths and {e['texts']} texts; PNG of {e['png']} chars")
            if e["type"] != "svg" or e["parseError"]:
                problems.append(f"chart {e['id']}: its SVG download is not an SVG document")
            elif e["paths"] < points or e["texts"] < 2:
                problems.append(f"chart {e['id']}: its SVG has {e['paths']} paths and {e['texts']} texts, fewer "
                                f"than its {points} data marks and its axes' labels")
            if e["missing"]:
                problems.append(f"chart {e['id']}: its SVG lacks the legend's {e['missing']}")
            if e["download"] != e["id"] + ".svg":
                problems.append(f"chart {e['id']}: its SVG downloads as {e['download']}")
            if e["png"] < 1000:
                problems.append(f"chart {e['id']}: its PNG link gives no picture")

        viewer = browser.evaluate(VIEWER_CHECK)
        print(f"  viewer: {viewer['trajectories']} trajectories, {viewer['codes']} turns with code, "
              f"{viewer['diffs']} diffs, {viewer['reasonings']} with reasoning text")
        problems += [f"trajectory viewer: {p}" for p in viewer["problems"]]
        if viewer["trajectories"] == 0 or viewer["codes"] == 0:
            problems.append("trajectory viewer: no trajectory with code to show")
        if viewer["reasonings"] < args.expect_reasoning:
            problems.append(f"trajectory viewer: {viewer['reasonings']} turns with reasoning text, expected at least "
                            f"{args.expect_reasoning}")

        # Pictures: every drawn chart's canvas, then the whole page.
        for c in drawn:
            if "rect" not in c:
                continue
            x, y, w, h = c["rect"]
            shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                           "clip": {"x": x, "y": y, "width": w, "height": h,
                                                                    "scale": 1}})
            problem = not_blank(browser, base64.b64decode(shot["data"]), f"chart {c['id']}'s picture", min_colours=4,
                                min_ink=0.01)
            if problem:
                problems.append(problem)
        size = browser.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        clip = {"x": 0, "y": 0, "width": size[0], "height": min(size[1], 6000), "scale": 1}
        if args.screenshot_section:
            rect = browser.evaluate(f"(() => {{ const r = document.getElementById({json.dumps(args.screenshot_section)})"
                                    ".getBoundingClientRect(); return [r.left + window.scrollX, r.top + window.scrollY, "
                                    "r.width, r.height]; })()")
            clip = {"x": 0, "y": max(0, rect[1] - 8), "width": size[0], "height": min(rect[3] + 16, 6000),
                    "scale": 1}
        shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                       "clip": clip})
        png = base64.b64decode(shot["data"])
        if args.screenshot:
            with open(args.screenshot, "wb") as f:
                f.write(png)
            print(f"  screenshot: {args.screenshot}")
        problem = not_blank(browser, png, "the page's screenshot", min_colours=8, min_ink=0.02)
        if problem:
            problems.append(problem)

        # Whatever the console said, after everything ran.
        while not browser.events.empty():
            event = browser.events.get()
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                problems.append(f"console {params['type']}: {text}")
            elif method == "Runtime.exceptionThrown":
                problems.append(f"uncaught exception: {params['exceptionDetails'].get('exception', {}).get('description', params['exceptionDetails'].get('text'))}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                entry = params["entry"]
                problems.append(f"browser log error ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}")
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--screenshot")
    parser.add_argument("--min-charts", type=int, default=1)
    parser.add_argument("--expect-chart", action="append", default=[], metavar="ID=N")
    parser.add_argument("--expect-empty", action="append", default=[], metavar="ID")
    parser.add_argument("--expect-reasoning", type=int, default=0, metavar="N",
                        help="at least N turns show the reasoning text their server returned")
    parser.add_argument("--svg-folder")
    parser.add_argument("--screenshot-section", metavar="ID")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    if not os.path.isfile(args.report):
        print(f"check_report: no report at {args.report}", file=sys.stderr)
        return 2
    if not shutil.which(args.chromium):
        print(f"check_report: no browser '{args.chromium}' (Debian: apt-get install chromium; scripts/deps installs "
              "it)", file=sys.stderr)
        return 2
    print(f"check_report: {args.report}")
    try:
        problems = check(args)
    except RuntimeError as e:
        print(f"check_report: the browser failed: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"FAIL: {p}")
    print("check_report: " + ("passed" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
