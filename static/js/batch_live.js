// The live batch page: polls the batch's progress, follows the current run's
// Server-Sent Events (tps, qps, p95 latency, raw lines, status), and moves on to the next
// run when one ends. EventSource reconnects by itself with Last-Event-ID, and the server
// resumes right after the last sample received.
(function () {
  "use strict";
  const root = document.getElementById("live-batch");
  if (!root || root.dataset.active !== "true") return;
  const MAX_LINES = 60;
  const POLL_MS = 2000;
  const finished = new Set(["done", "failed", "cancelled", "interrupted", "skipped"]);
  const el = (id) => document.getElementById(id);
  let source = null;
  let current = null; // the run followed
  let startedAt = null;
  let lines = [];
  let pollTimer = null;

  const chart = new Chart(el("live-chart"), {
    type: "line",
    data: { datasets: [
      Benchdash.lineDataset("tps", "#0072b2", [], { yAxisID: "y" }),
      Benchdash.lineDataset("qps", "#56b4e9", [], { yAxisID: "y", borderDash: [4, 3] }),
      Benchdash.lineDataset("latency p95 (ms)", "#d55e00", [], { yAxisID: "y1" }),
    ] },
    options: {
      interaction: { mode: "nearest", intersect: false, axis: "x" },
      scales: {
        x: Benchdash.axis("seconds", { type: "linear", beginAtZero: true }),
        y: Benchdash.axis("per second", { beginAtZero: true }),
        y1: Benchdash.axis("ms", { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } }),
      },
    },
  });

  function resetRun(run) {
    chart.data.datasets.splice(3);  // the previous run's load hosts
    chart.data.datasets[0].label = "tps";
    chart.data.datasets.forEach((d) => { d.data = []; });
    // The x axis spans the run's expected time from the start, so the line grows into it.
    chart.options.scales.x.suggestedMax = run.expected_s || undefined;
    chart.update("none");
    lines = [];
    el("run-lines").textContent = "waiting for sysbench's output…";
    el("run-error").hidden = true;
    el("run-samples").textContent = "0";
    el("run-label").textContent = "#" + run.number + " " + run.label;
    startedAt = run.started_at ? new Date(run.started_at) : null;
    document.querySelectorAll(".dot.current").forEach((d) => d.classList.remove("current"));
    const dot = document.querySelector('.dot[data-run="' + run.id + '"]');
    if (dot) dot.classList.add("current");
  }

  let seen = 0; // samples received in all, across runs (the page's tests read it)
  function addSample(s) {
    root.dataset.samplesSeen = String(++seen);
    chart.data.datasets[0].data.push({ x: s.time_s, y: s.tps });
    chart.data.datasets[1].data.push({ x: s.time_s, y: s.qps });
    chart.data.datasets[2].data.push({ x: s.time_s, y: s.latency_ms });
    if (s.latency_pct !== null && s.latency_pct !== undefined) {
      chart.data.datasets[2].label = "latency p" + s.latency_pct + " (ms)";
    }
    el("run-samples").textContent = String(chart.data.datasets[0].data.length);
    chart.update("none");
  }

  function addLines(newLines) {
    lines.push(...newLines);
    lines = lines.slice(-MAX_LINES);
    const box = el("run-lines");
    box.replaceChildren(...lines.map(function (text) {
      const span = document.createElement("span");
      span.textContent = text + "\n";
      if (/^(FATAL|ALERT)\b/.test(text)) span.className = "error";
      return span;
    }));
    box.scrollTop = box.scrollHeight;
  }

  function setRunStatus(s) {
    const status = el("run-status");
    status.textContent = s.status;
    status.className = "status " + s.status;
    if (s.started_at) startedAt = new Date(s.started_at);
    if (s.error) {
      el("run-error").hidden = false;
      el("run-error").querySelector("pre").textContent = s.error;
      el("run-error").querySelector("p").textContent = s.hint || "";
    }
    if (current) setDot(current.id, s.status);
  }

  function setDot(runId, status) {
    const dot = document.querySelector('.dot[data-run="' + runId + '"]');
    if (dot) dot.className = "dot " + status + (current && current.id === runId ? " current" : "");
  }

  function follow(run) {
    if (source) source.close();
    current = run;
    resetRun(run);
    // The lines printed before now come from the stored log; the stream brings the rest.
    fetch(root.dataset.progressUrl + "?tail=" + run.id, { credentials: "same-origin" })
      .then((r) => r.json())
      .then(function (p) {
        if (current && current.id === run.id && p.tail && p.tail.length && !lines.length) addLines(p.tail);
      })
      .catch(function () { /* the live lines still come */ });
    source = new EventSource(run.events_url);
    source.addEventListener("sample", (e) => addSample(JSON.parse(e.data)));
    source.addEventListener("lines", (e) => addLines(JSON.parse(e.data).lines));
    source.addEventListener("host_sample", (e) => Benchdash.addHostSample(chart, JSON.parse(e.data)));
    source.addEventListener("status", (e) => setRunStatus(JSON.parse(e.data)));
    source.addEventListener("end", function () {
      source.close();
      source = null;
      poll(); // on to the next run at once
    });
  }

  function showProgress(p) {
    el("batch-status").textContent = p.status;
    el("batch-status").className = "status " + p.status;
    el("batch-waiting").textContent = p.waiting_for ? "waiting for " + p.waiting_for : "";
    el("batch-finished").textContent = String(p.finished);
    el("batch-total").textContent = String(p.total);
    el("batch-remaining").textContent = p.remaining_s === null ? "–" : Math.round(p.remaining_s) + " s";
    el("batch-bar").style.width = (p.total ? (100 * p.finished / p.total) : 0) + "%";
    Object.entries(p.runs).forEach(function ([id, status]) {
      setDot(Number(id), status);
      const cell = document.querySelector('[data-status-of="' + id + '"]');
      if (cell && cell.textContent !== status) {
        cell.textContent = status;
        cell.className = "status " + status;
      }
    });
    if (p.current && current && p.current.id === current.id && p.current.started_at && !startedAt) {
      startedAt = new Date(p.current.started_at);
    }
  }

  function poll() {
    clearTimeout(pollTimer);
    fetch(root.dataset.progressUrl, { credentials: "same-origin" })
      .then((r) => r.json())
      .then(function (p) {
        showProgress(p);
        if (p.current && (!current || current.id !== p.current.id)) follow(p.current);
        if (finished.has(p.status)) {
          const link = el("results-link");
          link.classList.add("primary");
          link.textContent = "Results are ready";
          const cancel = el("cancel-form");
          if (cancel) cancel.hidden = true;
          return; // nothing more will change
        }
        pollTimer = setTimeout(poll, POLL_MS);
      })
      .catch(function () { pollTimer = setTimeout(poll, POLL_MS * 2); });
  }

  setInterval(function () {
    if (!startedAt) return;
    el("run-elapsed").textContent = Math.max(0, (Date.now() - startedAt.getTime()) / 1000).toFixed(0) + " s";
  }, 1000);
  poll();
})();
