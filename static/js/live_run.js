// Live view of one run: follows its Server-Sent Events and draws tps and latency as the
// samples arrive. The browser's EventSource reconnects by itself with Last-Event-ID, and
// the server resumes right after the last sample received.
(function () {
  "use strict";
  const root = document.getElementById("live-run");
  if (!root) return;
  const MAX_LINES = 40;
  const finished = new Set(["done", "failed", "cancelled", "interrupted", "skipped"]);
  const statusEl = document.getElementById("run-status");
  const errorEl = document.getElementById("run-error");
  const linesEl = document.getElementById("run-lines");
  const samplesEl = document.getElementById("run-samples");
  let startedAt = root.dataset.startedAt ? new Date(root.dataset.startedAt) : null;
  let ended = false;
  const expectedS = parseFloat(root.dataset.expectedS) || null;
  const lines = [];

  const chart = new Chart(document.getElementById("run-chart"), {
    type: "line",
    data: {
      datasets: [
        { label: "tps", data: [], yAxisID: "y", borderColor: "#2f6fdb", pointRadius: 0 },
        { label: "latency p95 (ms)", data: [], yAxisID: "y1", borderColor: "#c0392b", pointRadius: 0 },
      ],
    },
    options: {
      animation: false,
      parsing: false,
      scales: {
        x: { type: "linear", title: { display: true, text: "seconds" } },
        y: { position: "left", title: { display: true, text: "tps" }, beginAtZero: true },
        y1: { position: "right", title: { display: true, text: "ms" }, beginAtZero: true, grid: { drawOnChartArea: false } },
      },
    },
  });

  function addSample(s) {
    chart.data.datasets[0].data.push({ x: s.time_s, y: s.tps });
    chart.data.datasets[1].data.push({ x: s.time_s, y: s.latency_ms });
    if (s.latency_pct !== null && s.latency_pct !== undefined) {
      chart.data.datasets[1].label = "latency p" + s.latency_pct + " (ms)";
    }
    samplesEl.textContent = chart.data.datasets[0].data.length;
    chart.update("none");
  }

  function addLines(newLines) {
    lines.push(...newLines);
    lines.splice(0, Math.max(0, lines.length - MAX_LINES));
    linesEl.replaceChildren(...lines.map(function (text) {
      const span = document.createElement("span");
      span.textContent = text + "\n";
      if (/^(FATAL|ALERT):/.test(text)) span.className = "error";
      return span;
    }));
  }

  function setStatus(s) {
    statusEl.textContent = s.status;
    statusEl.className = "status " + s.status;
    if (s.started_at) startedAt = new Date(s.started_at);
    if (s.error) {
      errorEl.hidden = false;
      errorEl.querySelector("pre").textContent = s.error;
      errorEl.querySelector("p").textContent = s.hint || "";
    }
    if (finished.has(s.status)) ended = true;
  }

  function tick() {
    if (!startedAt || ended) return;
    const elapsed = (Date.now() - startedAt.getTime()) / 1000;
    document.getElementById("run-elapsed").textContent = elapsed.toFixed(0) + " s";
    if (expectedS) {
      document.getElementById("run-remaining").textContent = Math.max(0, expectedS - elapsed).toFixed(0) + " s";
    }
  }
  setInterval(tick, 1000);

  const source = new EventSource(root.dataset.eventsUrl);
  source.addEventListener("sample", function (e) { addSample(JSON.parse(e.data)); });
  source.addEventListener("lines", function (e) { addLines(JSON.parse(e.data).lines); });
  source.addEventListener("host_sample", function (e) { Benchdash.addHostSample(chart, JSON.parse(e.data)); });
  source.addEventListener("status", function (e) { setStatus(JSON.parse(e.data)); });
  source.addEventListener("end", function () { ended = true; source.close(); });
})();
