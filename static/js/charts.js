// Shared chart helpers of the pages: one look for every chart, numbers as people read them.
// Chart.js whole (chart.js/auto registers every chart type, scale and plugin of its own);
// a page that draws with a plugin registers it.
import Chart from "chart.js/auto";

export { Chart };

Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", sans-serif';
Chart.defaults.color = "#3b4452";
Chart.defaults.maintainAspectRatio = false;
Chart.defaults.animation = false;
Chart.defaults.plugins.legend.labels.boxWidth = 12;

export function num(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return "";
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString("en-US");
  if (a >= 100) return v.toFixed(1);
  return v.toFixed(2);
}

export function readJson(id) {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : null;
}

export function xy(points) {
  return (points || []).map((p) => ({ x: p[0], y: p[1] }));
}

export function alpha(hex, a) {
  const n = parseInt(hex.slice(1), 16);
  return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
}

export function lineDataset(label, colour, points, extra) {
  // A short series (a run of a few seconds) shows its points, or a single one would vanish.
  const short = (points || []).length < 30;
  return Object.assign({
    label: label, data: xy(points), borderColor: colour, backgroundColor: colour,
    pointRadius: short ? 2.5 : 0, borderWidth: 1.6, tension: 0, parsing: false,
  }, extra || {});
}

// A latency log axis labels only the round values, 1-2-5 in each decade; a threads axis
// has a tick at each measured thread count (and at the reference line).
export function decadeTicks(v) {
  const m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
  return [1, 2, 5].some((k) => Math.abs(m - k) < 1e-6) ? num(v).replace(/\.00$/, "") : "";
}
export function threadsAxis(values, reference) {
  const all = values.concat(reference ? [reference] : []);
  const lo = Math.min(...all), hi = Math.max(...all);
  return axis("threads", {
    type: "logarithmic", min: lo / 1.3, max: hi * 1.3,
    ticks: { callback: (v) => String(v), autoSkip: false, maxRotation: 0 },
    afterBuildTicks: (scale) => {
      scale.ticks = all.filter((v, i, a) => a.indexOf(v) === i).sort((a, b) => a - b).map((v) => ({ value: v }));
    },
  });
}

export function axis(title, extra) {
  return Object.assign({ title: { display: true, text: title }, ticks: { callback: (v) => num(v) } }, extra || {});
}

// A cell from several load hosts, live: each host's own tps beside the sum (the chart's
// first series), thin and dashed. `e` is a host_sample event.
const HOST_COLOURS = ["#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c564b", "#7f7f7f"];
export function addHostSample(chart, e) {
  const datasets = chart.data.datasets;
  const label = "tps on " + e.host;
  let dataset = datasets.find((d) => d.label === label);
  if (!dataset) {
    datasets[0].label = "tps (all load hosts)";
    dataset = { label: label, data: [], yAxisID: "y", parsing: false, pointRadius: 0,
                borderWidth: 1, borderDash: [3, 3],
                borderColor: HOST_COLOURS[e.index % HOST_COLOURS.length] };
    datasets.push(dataset);
  }
  dataset.data.push({ x: e.sample.time_s, y: e.sample.tps });
  chart.update("none");
}

// sysbench's latency histogram: its own buckets on a log-scaled axis, the share of the
// requests in each, one line per run (`lines`: [{label, colour, points: [[ms, %]]}]).
export function histogramChart(canvas, lines) {
  return new Chart(canvas, {
    type: "line",
    data: { datasets: lines.map((r) => lineDataset(r.label, r.colour, r.points, {
      stepped: "middle", pointRadius: 0, fill: lines.length === 1, backgroundColor: alpha(r.colour, 0.25),
    })) },
    options: {
      interaction: { mode: "nearest", intersect: false, axis: "x" },
      plugins: { tooltip: { callbacks: { label: (c) => c.dataset.label + ": " + num(c.parsed.y) + " % at " + num(c.parsed.x) + " ms" } } },
      scales: {
        x: axis("response time (ms)", { type: "logarithmic", ticks: { callback: decadeTicks, autoSkip: false, maxRotation: 0 } }),
        y: axis("share of requests (%)", { beginAtZero: true }),
      },
    },
  });
}

// Every run of a batch on the batch's clock (`runs`: [{label, colour, points, level}]).
// Where the thread count changes, the level is named on an axis of its own above the plot,
// its grid line dashed down through it: a label inside the plot would hide the first
// run's points, which start at the top of it.
export function timelineChart(canvas, runs, unit) {
  const xs = runs.flatMap((r) => r.points.map((p) => p[0]));
  const range = xs.length ? { min: Math.min(0, ...xs), max: Math.max(...xs) } : {};
  const levels = runs.filter((r) => r.level && r.points.length).map((r) => ({ value: r.points[0][0], label: r.level }));
  return new Chart(canvas, {
    type: "line",
    data: { datasets: runs.map((r) => lineDataset(r.label, r.colour, r.points)) },
    options: {
      plugins: { legend: { display: false } },
      interaction: { mode: "nearest", intersect: false },
      scales: {
        x: axis("seconds since the batch started", Object.assign({ type: "linear" }, range)),
        levels: /** @type {any} */ (Object.assign({
          type: "linear", position: "top", axis: "x", display: levels.length > 0,
          grid: { drawOnChartArea: true, color: "rgba(0,0,0,.3)" }, border: { dash: [3, 3] },
          ticks: { autoSkip: false, maxRotation: 0, font: { size: 10 },
                   callback: (v) => (levels.find((l) => l.value === v) || { label: "" }).label },
          afterBuildTicks: (scale) => { scale.ticks = levels.map((l) => ({ value: l.value })); },
        }, range)),
        y: axis(unit, { beginAtZero: true }),
      },
    },
  });
}

// Chosen runs over time (`series`: [{label, colour, warmup_s, tps, latency, counter}]),
// `key` each one's points; the warmup shaded where the page registered the annotation
// plugin (the report has none: its charts go without the shading), and a server counter
// on a second axis when `counter` names one.
export function overTimeChart(canvas, series, key, yTitle, counter) {
  const warmup = series.length ? series[0].warmup_s : 0;
  const warmupBox = warmup > 0 ? { warmup: {
    type: "box", xMin: 0, xMax: warmup, backgroundColor: "rgba(154,103,0,.10)", borderWidth: 0,
    label: { display: true, content: "warmup", position: { x: "center", y: "start" }, color: "#9a6700", font: { size: 11 } },
  } } : {};
  const datasets = series.map((r) => lineDataset(r.label, r.colour, r[key], { yAxisID: "y" }));
  const scales = {
    x: axis("seconds", { type: "linear", beginAtZero: true }),
    y: axis(yTitle, { beginAtZero: true }),
  };
  if (counter) {
    series.forEach((r) => datasets.push(lineDataset(r.label + " · " + counter, r.colour, r.counter,
      { yAxisID: "y1", borderDash: [5, 4], borderWidth: 1.2 })));
    scales.y1 = axis(counter + " /s", { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } });
  }
  return new Chart(canvas, {
    type: "line", data: { datasets: datasets },
    options: { scales: scales, interaction: { mode: "nearest", intersect: false, axis: "x" },
               plugins: /** @type {any} */ ({ annotation: { annotations: warmupBox } }) },
  });
}

// The latency CDF of runs (`lines`: [{label, colour, points: [[ms, share]]}]), log ms.
export function cdfChart(canvas, lines) {
  return new Chart(canvas, {
    type: "line",
    data: { datasets: lines.map((r) => lineDataset(r.label, r.colour, r.points, { stepped: "after" })) },
    options: {
      interaction: { mode: "nearest", intersect: false },
      scales: {
        x: axis("latency (ms)", { type: "logarithmic", ticks: { callback: decadeTicks, autoSkip: false, maxRotation: 0 } }),
        y: { min: 0, max: 1, title: { display: true, text: "share of events" }, ticks: { callback: (v) => Math.round(Number(v) * 100) + " %" } },
      },
    },
  });
}
