// Following one run live, for the batch page (batch_live.js) and the run page (live_run.js):
// its Server-Sent Events drawn as tps, qps and latency, its last lines, status, error,
// elapsed and remaining time. Both pages hold the same elements (run-status, run-error,
// run-lines, run-samples, run-elapsed, and run-remaining on the run page).
//
// The browser's EventSource reconnects by itself with Last-Event-ID after a dropped
// connection; after an answer that is not a stream (a 502 while the web server restarts)
// it gives up, so the follower opens the stream again with ?after=<last seq>: either way
// the server resumes right after the last sample received, and no sample comes twice.
// Samples Redis lost are filled in from the database by the server; when it cannot, it
// sends a `gap` event, shown among the lines: a viewer is never silently short of samples.
import { Chart, addHostSample, axis, lineDataset } from "benchdash/charts.js";

const MAX_LINES = 60;
const NOTICE = "benchdash: ";
const RETRY_MS = 2000;
export const FINISHED = new Set(["done", "failed", "cancelled", "interrupted", "skipped"]);
const el = (id) => document.getElementById(id);

function chartOn(canvas) {
  // The plan's percentile (p99 when it asks --percentile=99), as the page heads its tables.
  const latency = canvas.dataset.latencyLabel || "p95";
  return new Chart(canvas, {
    type: "line",
    data: { datasets: [
      lineDataset("tps", "#0072b2", [], { yAxisID: "y" }),
      lineDataset("qps", "#56b4e9", [], { yAxisID: "yq", borderDash: [4, 3] }),
      lineDataset(`latency ${latency} (ms)`, "#d55e00", [], { yAxisID: "y1" }),
      // The errors the run ignored and retried (deadlocks, in TPC-C), not its failures.
      lineDataset("ignored errors/s", "#cc79a7", [], { yAxisID: "ye", borderDash: [2, 2] }),
    ] },
    options: {
      interaction: { mode: "nearest", intersect: false, axis: "x" },
      // tps and qps each on an axis of their own: a statement count of tens of times the
      // transactions would flatten tps on a shared one.
      scales: {
        x: axis("seconds", { type: "linear", beginAtZero: true }),
        y: axis("tps", { beginAtZero: true }),
        yq: axis("qps", { beginAtZero: true, grid: { drawOnChartArea: false } }),
        y1: axis("ms", { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } }),
        ye: axis("err/s", { position: "right", beginAtZero: true, suggestedMax: 1,
                            grid: { drawOnChartArea: false } }),
      },
    },
  });
}

// A follower draws on `canvas`; `hooks` may hold onSample(s), onStatus(s) and onEnd().
export function liveRun(canvas, hooks) {
  hooks = hooks || {};
  const chart = chartOn(canvas);
  let lines = [];
  let source = null;
  let retryTimer = null;
  let lastSeq = 0;
  let startedAt = null;
  let expectedS = null;
  let ended = false;

  function reset(run) {
    stop();
    chart.data.datasets.splice(4); // the previous run's load hosts
    chart.data.datasets[0].label = "tps";
    chart.data.datasets.forEach((d) => { d.data = []; });
    // The x axis spans the run's expected time from the start, so the line grows into it.
    chart.options.scales.x.suggestedMax = run.expected_s || undefined;
    chart.update("none");
    lines = [];
    lastSeq = 0;
    ended = false;
    expectedS = run.expected_s || null;
    startedAt = run.started_at ? new Date(run.started_at) : null;
    el("run-error").hidden = !run.error;
    el("run-samples").textContent = "0";
  }

  function addSample(s) {
    chart.data.datasets[0].data.push({ x: s.time_s, y: s.tps });
    chart.data.datasets[1].data.push({ x: s.time_s, y: s.qps });
    chart.data.datasets[2].data.push({ x: s.time_s, y: s.latency_ms });
    chart.data.datasets[3].data.push({ x: s.time_s, y: s.errors_per_s });
    if (s.latency_pct !== null && s.latency_pct !== undefined) {
      chart.data.datasets[2].label = "latency p" + s.latency_pct + " (ms)";
    }
    draw();
    if (hooks.onSample) hooks.onSample(s);
  }

  // The chart is drawn once a frame, whatever the samples that came in it: a finished run's
  // 3,600 samples arrive at once, and a live read brings several.
  let drawing = 0;
  function draw() {
    if (drawing) return;
    drawing = requestAnimationFrame(function () {
      drawing = 0;
      el("run-samples").textContent = String(chart.data.datasets[0].data.length);
      chart.update("none");
    });
  }

  let scrolling = 0;
  // The new lines are added and the oldest taken off (not all 60 made again each second),
  // and the box is scrolled to its end in the next frame: reading its height here would
  // lay the page out at once, in the handler, before the sample that comes next.
  function addLines(newLines) {
    const box = el("run-lines");
    const spans = newLines.slice(-MAX_LINES).map(lineSpan);
    if (lines.length) box.append(...spans);
    else box.replaceChildren(...spans); // the first since the run began: what the box said goes
    lines.push(...newLines);
    lines = lines.slice(-MAX_LINES);
    while (box.childElementCount > lines.length) box.firstElementChild.remove();
    if (!scrolling) scrolling = requestAnimationFrame(function () {
      scrolling = 0;
      box.scrollTop = box.scrollHeight;
    });
  }

  function lineSpan(text) {
    const span = document.createElement("span");
    span.textContent = text + "\n";
    if (/^(FATAL|ALERT)\b/.test(text) || text.startsWith(NOTICE)) span.className = "error";
    return span;
  }

  // The lines printed before the page followed the run come from its stored log (the
  // batch's progress with ?tail=<run id>); the stream brings the rest.
  function addTail(progressUrl, runId) {
    fetch(progressUrl + "?tail=" + runId, { credentials: "same-origin" })
      .then((r) => r.json())
      .then(function (p) { if (p.tail && p.tail.length && !lines.length) addLines(p.tail); })
      .catch(function () { /* the live lines still come */ });
  }

  function setStatus(s) {
    const status = el("run-status");
    status.textContent = s.status;
    status.className = "status " + s.status;
    if (s.started_at) startedAt = new Date(s.started_at);
    if (s.error) {
      el("run-error").hidden = false;
      el("run-error").querySelector("pre").textContent = s.error;
      el("run-error").querySelector("p").textContent = s.hint || "";
    }
    if (FINISHED.has(s.status)) ended = true;
    if (hooks.onStatus) hooks.onStatus(s);
  }

  function open(eventsUrl) {
    const url = lastSeq ? eventsUrl + "?after=" + lastSeq : eventsUrl;
    const stream = new EventSource(url);
    source = stream;
    stream.addEventListener("sample", function (e) {
      if (e.lastEventId) lastSeq = Number(e.lastEventId);
      addSample(JSON.parse(e.data));
    });
    stream.addEventListener("lines", (e) => addLines(JSON.parse(e.data).lines));
    stream.addEventListener("host_sample", (e) => addHostSample(chart, JSON.parse(e.data)));
    // The machines' seconds, for whoever draws them (host_metrics.js).
    stream.addEventListener("host_metrics", (e) => document.dispatchEvent(
      new CustomEvent("benchdash:host_metrics", { detail: JSON.parse(e.data) })));
    stream.addEventListener("status", (e) => setStatus(JSON.parse(e.data)));
    stream.addEventListener("gap", function (e) {
      const gap = JSON.parse(e.data);
      addLines([NOTICE + gap.missing + " samples (after #" + gap.after + ", before #" + gap.before +
        ") did not reach this page live and are not stored yet: reload the page once the run ends"]);
    });
    stream.addEventListener("end", function () {
      ended = true;
      stop();
      if (hooks.onEnd) hooks.onEnd();
    });
    stream.addEventListener("error", function () {
      if (stream === source && stream.readyState === EventSource.CLOSED) {
        retryTimer = setTimeout(() => open(eventsUrl), RETRY_MS);
      }
    });
  }

  function stop() {
    clearTimeout(retryTimer);
    if (source) source.close();
    source = null;
  }

  function tick() {
    if (!startedAt || ended) return;
    const elapsed = Math.max(0, (Date.now() - startedAt.getTime()) / 1000);
    el("run-elapsed").textContent = elapsed.toFixed(0) + " s";
    const remaining = el("run-remaining");
    if (remaining && expectedS) remaining.textContent = Math.max(0, expectedS - elapsed).toFixed(0) + " s";
  }
  setInterval(tick, 1000);

  // Follow `run` ({id, events_url, expected_s, started_at, error}) from its first sample.
  function follow(run, progressUrl) {
    reset(run);
    if (progressUrl) addTail(progressUrl, run.id);
    open(run.events_url);
  }

  function setStartedAt(when) { if (!startedAt && when) startedAt = new Date(when); }

  return { chart: chart, follow: follow, stop: stop, setStartedAt: setStartedAt };
}
