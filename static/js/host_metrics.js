// The run page's host metrics: CPU (user, system, iowait stacked), context switches and
// disk IOPS / MB/s of the server host and the load host side by side, from the stored
// rows, then live from the run's events (live_follow.js passes them on as
// "benchdash:host_metrics").
import { Chart } from "benchdash/charts.js";

const root = document.getElementById("host-metrics");
if (root) drawHostMetrics(root);

function drawHostMetrics(root) {
  const seen = new Set();
  const charts = {};

  function sum(obj, names) {
    let total = 0;
    for (const dev of Object.values(obj || {})) for (const n of names) total += dev[n] || 0;
    return total;
  }

  function makeCharts(side) {
    const canvas = (name) => side.querySelector('canvas[data-chart="' + name + '"]');
    const line = (label, stack, fill) => ({ label, data: [], stack, fill, pointRadius: 0, borderWidth: 1 });
    const stacked = { x: { type: "linear", title: { display: true, text: "s" } }, y: { stacked: true, min: 0, max: 100 } };
    const plain = { x: { type: "linear", title: { display: true, text: "s" } }, y: { min: 0 } };
    const make = (el, datasets, scales) => new Chart(el, {
      type: "line", data: { datasets }, options: { animation: false, parsing: false, scales, maintainAspectRatio: false },
    });
    return {
      cpu: make(canvas("cpu"), [line("user %", "cpu", true), line("system %", "cpu", true), line("iowait %", "cpu", true)], stacked),
      ctxt: make(canvas("ctxt"), [line("context switches/s"), line("db process csw/s")], plain),
      disk: make(canvas("disk"), [line("IOPS"), line("MB/s")], plain),
    };
  }

  function add(row) {
    const key = row.role + "/" + row.host + "/" + row.seq;
    if (seen.has(key)) return;
    seen.add(key);
    const side = root.querySelector('.host-side[data-role="' + row.role + '"]');
    if (!side) return;
    side.querySelector(".host-name").textContent = row.host;
    const c = charts[row.role] || (charts[row.role] = makeCharts(side));
    const v = row.values, t = row.time_s, cpu = v.cpu || {};
    const db = v.db || {};
    const points = {
      cpu: [cpu.user, cpu.system, cpu.iowait],
      ctxt: [v.ctxt_s, v.db ? (db.vcsw_s || 0) + (db.nvcsw_s || 0) : null],
      disk: [sum(v.disks, ["r_iops", "w_iops"]), sum(v.disks, ["r_mbs", "w_mbs"])],
    };
    for (const [name, values] of Object.entries(points)) {
      values.forEach((y, i) => { if (y != null) c[name].data.datasets[i].data.push({ x: t, y }); });
    }
  }

  function redraw() { for (const c of Object.values(charts)) for (const ch of Object.values(c)) ch.update("none"); }

  fetch(root.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : { results: [] }))
    .then((page) => { page.results.forEach(add); redraw(); })
    .catch(() => {});
  document.addEventListener("benchdash:host_metrics", (/** @type {CustomEvent} */ e) => { e.detail.rows.forEach(add); redraw(); });
}
