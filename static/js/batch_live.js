// The live batch page: polls the batch's progress, follows the current run with the shared
// follower (live_follow.js: chart, lines, status, resuming after the last sample), and moves
// on to the next run when one ends.
import { num } from "benchdash/charts.js";
import { FINISHED, liveRun } from "benchdash/live_follow.js";

const root = document.getElementById("live-batch");
if (root && root.dataset.active === "true") followBatch(root);

function followBatch(root) {
  const POLL_MS = 2000;
  const el = (id) => document.getElementById(id);
  // The progress of the runs of the page shown (a batch of thousands shows a page of them).
  const table = el("runs-table");
  const progressUrl = root.dataset.progressUrl + "?page=" + ((table && table.dataset.page) || "1");
  let current = null; // the run followed
  let pollTimer = null;
  let seen = 0; // samples received in all, across runs (the page's tests read it)

  const live = liveRun(el("live-chart"), {
    onSample: function () { root.dataset.samplesSeen = String(++seen); },
    onStatus: function (s) { if (current) setDot(current.id, s.status); },
    onEnd: function () { poll(); }, // on to the next run at once
  });

  function setDot(runId, status) {
    const dot = document.querySelector('.dot[data-run="' + runId + '"]');
    if (dot) dot.className = "dot " + status + (current && current.id === runId ? " current" : "");
  }

  function follow(run) {
    current = run;
    el("run-lines").textContent = "waiting for sysbench's output…";
    el("run-label").textContent = "#" + run.number + " " + run.label;
    document.querySelectorAll(".dot.current").forEach((d) => d.classList.remove("current"));
    const dot = document.querySelector('.dot[data-run="' + run.id + '"]');
    if (dot) dot.classList.add("current");
    live.follow(run, root.dataset.progressUrl);
  }

  function showProgress(p) {
    el("batch-status").textContent = p.status;
    el("batch-status").className = "status " + p.status;
    el("batch-waiting").textContent = p.waiting_for ? "waiting for " + p.waiting_for : "";
    el("batch-finished").textContent = String(p.finished);
    el("batch-total").textContent = String(p.total);
    el("batch-counts").textContent = p.counts_text || "";
    el("batch-remaining").textContent = p.remaining_s === null ? "–" : Math.round(p.remaining_s) + " s";
    // The running cell counts for the share of its expected time it has run.
    const done = p.finished + (p.running_share || 0);
    el("batch-bar").style.width = (p.total ? (100 * done / p.total) : 0) + "%";
    showGrid(p.grid || []);
    Object.entries(p.figures || {}).forEach(([id, figures]) => fillRow(id, figures));
    Object.entries(p.runs).forEach(function ([id, status]) {
      setDot(Number(id), status);
      const cell = document.querySelector('[data-status-of="' + id + '"]');
      // A finished run's status says its outcome: "done (forced shutdown, 200 unfinished)".
      const text = ((p.figures || {})[id] || {}).status_text || status;
      if (cell && cell.textContent !== text) {
        cell.textContent = text;
        cell.className = "status " + status;
      }
    });
    if (p.current && current && p.current.id === current.id) live.setStartedAt(p.current.started_at);
  }

  // The grid's cells, each its runs counted by status (a cell of one run: its dot, a link).
  function showGrid(cells) {
    const shown = /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#matrix-grid td[data-cell]"));
    if (shown.length !== cells.filter((c) => c).length) return; // runs added: on reload
    let i = 0;
    cells.forEach(function (cell) {
      if (!cell) return;
      const td = shown[i++];
      const key = JSON.stringify(cell);
      if (td.dataset.shown === key) return;
      td.dataset.shown = key;
      if (cell.run !== null && td.querySelector('.dot[data-run="' + cell.run + '"]')) return; // setDot's
      td.replaceChildren(...Object.entries(cell.counts).flatMap(function ([status, n]) {
        const dot = document.createElement("span");
        dot.className = "dot " + status;
        dot.title = n + " " + status;
        return [dot, document.createTextNode(n + " ")];
      }));
    });
  }

  // A run that finished while the page was open gets its figures in its row.
  function fillRow(runId, figures) {
    document.querySelectorAll('tr[data-run="' + runId + '"] [data-figure]').forEach(function (/** @type {HTMLElement} */ cell) {
      const value = figures[cell.dataset.figure];
      const text = value === null || value === undefined ? "" : num(value);
      if (cell.textContent !== text) cell.textContent = text;
    });
  }

  function poll() {
    clearTimeout(pollTimer);
    fetch(progressUrl, { credentials: "same-origin" })
      .then((r) => r.json())
      .then(function (p) {
        showProgress(p);
        if (p.current && (!current || current.id !== p.current.id)) follow(p.current);
        if (FINISHED.has(p.status)) {
          const link = el("results-link");
          link.classList.add("primary");
          link.textContent = "Results are ready";
          const cancel = el("cancel-form");
          if (cancel) cancel.remove(); // a finished batch has nothing to cancel
          return; // nothing more will change
        }
        pollTimer = setTimeout(poll, POLL_MS);
      })
      .catch(function () { pollTimer = setTimeout(poll, POLL_MS * 2); });
  }

  poll();
}
