// The run page's host metrics: for each machine (the server's host, the load host, or
// one machine that is both, drawn once) its CPU (user, system, iowait stacked), context
// switches, disk reads and writes per second, disk MB/s read and written (an axis of its
// own), network KB/s received and sent, and memory; from the stored rows, then live from
// the run's events (live_follow.js passes them on as "benchdash:host_metrics").
//
// Drawing them never holds up the run's own chart. Their rows come with a sample every
// other second: they are drawn after the frame that shows that sample (live_follow.js
// draws it in the next animation frame), one chart per task so that a sample coming
// meanwhile goes first, and a chart off the screen only once it comes into view. Drawn
// in the event's handler, the six charts of a machine held each such sample's frame back
// by 40-60 ms, and up to 600 ms on a loaded machine (bench/browser_latency.py).
import { Chart, axis } from "benchdash/charts.js";

const root = document.getElementById("host-metrics");
if (root) drawHostMetrics(root);

const ROLE_NAMES = { server: "Server host", load: "Load host" };

/** A chart to draw: made at its first draw, updated when it has new points and is seen. */
class Drawn {
  constructor(canvas, datasets, make) {
    this.canvas = canvas;
    this.datasets = datasets; // their points, filled as rows come
    this.make = make;
    this.chart = null;
    this.stale = true;
  }

  draw() {
    if (this.chart) this.chart.update("none");
    else this.chart = this.make();
    this.stale = false;
  }
}

function drawHostMetrics(root) {
  const seen = new Set();
  /** @type {Record<string, {roles: Set<string>, el: HTMLElement, charts: Record<string, Drawn>}>} */
  const machines = {};
  const grid = document.getElementById("host-sides");
  const template = /** @type {HTMLTemplateElement} */ (document.getElementById("host-side-template"));
  /** @type {Drawn[]} */
  const drawn = [];
  const inView = new Set();
  const watcher = new IntersectionObserver(function (entries) {
    for (const e of entries) {
      if (e.isIntersecting) inView.add(e.target);
      else inView.delete(e.target);
    }
    drawSoon();
  });
  let drawing = false;

  function drawSoon() {
    if (drawing) return;
    drawing = true;
    requestAnimationFrame(() => setTimeout(drawNext, 0));
  }

  // A chart is made when it first comes into view: off the screen it waits, and so does
  // the page's loading, during which a live sample waits its turn too.
  function drawNext() {
    const next = drawn.find((d) => (!d.chart || d.stale) && inView.has(d.canvas));
    if (!next) {
      drawing = false;
      return;
    }
    next.draw();
    setTimeout(drawNext, 0);
  }

  function sum(obj, names) {
    let total = 0;
    for (const dev of Object.values(obj || {})) for (const n of names) total += dev[n] || 0;
    return total;
  }

  function makeCharts(side) {
    const canvas = (name) => side.querySelector('canvas[data-chart="' + name + '"]');
    const line = (label, colour, extra) => Object.assign(
      { label, data: [], borderColor: colour, backgroundColor: colour, pointRadius: 0, borderWidth: 1.2 }, extra || {});
    const x = axis("s", { type: "linear" });
    const make = (el, datasets, yTitle, y) => {
      const d = new Drawn(el, datasets, () => new Chart(el, {
        type: "line", data: { datasets },
        options: { animation: false, parsing: false, maintainAspectRatio: false,
                   interaction: { mode: "nearest", intersect: false, axis: "x" },
                   scales: { x, y: axis(yTitle, Object.assign({ min: 0 }, y || {})) } },
      }));
      drawn.push(d);
      watcher.observe(el);
      return d;
    };
    const stack = (label, colour) => line(label, colour, { stack: "cpu", fill: true });
    return {
      cpu: make(canvas("cpu"), [stack("user %", "#0072b2"), stack("system %", "#d55e00"), stack("iowait %", "#e69f00")],
        "CPU %", { stacked: true, max: 100 }),
      ctxt: make(canvas("ctxt"), [line("context switches/s", "#009e73"), line("db process csw/s", "#cc79a7")], "per second"),
      iops: make(canvas("iops"), [line("disk reads/s", "#56b4e9"), line("disk writes/s", "#0072b2")], "IOPS"),
      mbs: make(canvas("mbs"), [line("disk read MB/s", "#009e73"), line("disk write MB/s", "#d55e00")], "MB/s"),
      net: make(canvas("net"), [line("received KB/s", "#56b4e9"), line("sent KB/s", "#e69f00")], "KB/s"),
      mem: make(canvas("mem"), [line("used MB", "#0072b2"), line("cache MB", "#7f7f7f"), line("dirty MB", "#d55e00")], "MB"),
    };
  }

  // The machine's side, made when its first row comes; its title names every role it has.
  function machineOf(host, role) {
    let m = machines[host];
    if (!m) {
      const el = /** @type {HTMLElement} */ (template.content.firstElementChild.cloneNode(true));
      el.querySelector(".host-name").textContent = host;
      grid.appendChild(el);
      m = machines[host] = { roles: new Set(), el, charts: makeCharts(el) };
    }
    if (!m.roles.has(role)) {
      m.roles.add(role);
      const roles = ["server", "load"].filter((r) => m.roles.has(r));
      m.el.dataset.role = roles.join(" ");
      m.el.querySelector(".host-roles").textContent = roles.length > 1
        ? "Server host and load host (one machine)" : ROLE_NAMES[roles[0]] || roles[0];
    }
    return m;
  }

  function add(row) {
    const m = machineOf(row.host, row.role);
    // One machine in both roles sends the same reading twice: drawn once, from the
    // server's row (it carries the database process's figures too).
    const key = row.host + "/" + row.seq;
    if (seen.has(key)) return;
    seen.add(key);
    const c = m.charts;
    const v = row.values, t = row.time_s, cpu = v.cpu || {}, mem = v.mem || {};
    const db = v.db || {};
    const points = {
      cpu: [cpu.user, cpu.system, cpu.iowait],
      ctxt: [v.ctxt_s, v.db ? (db.vcsw_s || 0) + (db.nvcsw_s || 0) : null],
      iops: [sum(v.disks, ["r_iops"]), sum(v.disks, ["w_iops"])],
      mbs: [sum(v.disks, ["r_mbs"]), sum(v.disks, ["w_mbs"])],
      net: [v.nets ? sum(v.nets, ["rx_kbs"]) : null, v.nets ? sum(v.nets, ["tx_kbs"]) : null],
      mem: [mem.used_mb, mem.cached_mb, mem.dirty_mb],
    };
    for (const [name, values] of Object.entries(points)) {
      values.forEach((y, i) => { if (y != null) c[name].datasets[i].data.push({ x: t, y }); });
      c[name].stale = true;
    }
  }

  // The server's rows first: a machine in both roles is then drawn from them.
  const serverFirst = (a, b) => (a.role === b.role ? 0 : a.role === "server" ? -1 : 1);

  fetch(root.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : { results: [] }))
    .then((page) => { page.results.slice().sort(serverFirst).forEach(add); drawSoon(); })
    .catch(() => {});
  document.addEventListener("benchdash:host_metrics", (/** @type {CustomEvent} */ e) => {
    e.detail.rows.slice().sort(serverFirst).forEach(add);
    drawSoon();
  });
}
