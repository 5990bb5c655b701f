// The open-loop charts of a batch's results: achieved rate and p95 against the offered
// rate (--rate), one line per series and thread count; the dashed diagonal is "achieved =
// offered". Used by the results page and, inlined, by the shared HTML report.
//
// Drawn when the page's script calls it, not on import: an imported module runs before
// the importer's body, and a chart made before the results page registers its plugins
// is one the annotation plugin never saw start (its next resize threw in the console).
import { Chart, axis, decadeTicks, lineDataset, readJson } from "benchdash/charts.js";

export function drawRateCharts() {
  const data = readJson("results-rate-data");
  if (data && data.rate && data.rate.length) drawRate(data);
}

function drawRate(data) {
  const decades = { callback: decadeTicks, autoSkip: false, maxRotation: 0 }; // 1-2-5 only

  function line(canvasId, key, yTitle, withDiagonal) {
    const canvas = /** @type {HTMLCanvasElement} */ (document.getElementById(canvasId));
    if (!canvas) return;
    const datasets = data.rate.map((s) => lineDataset(
      s.label, s.colour, s.points.filter((p) => p[key] !== null).map((p) => [p.offered, p[key]]),
      { pointRadius: 3.5, borderWidth: 2 }));
    if (withDiagonal) {
      const offered = data.rate.flatMap((s) => s.points.map((p) => p.offered));
      const lo = Math.min(...offered), hi = Math.max(...offered);
      // y = x sampled along the range, so that it is the diagonal on the chart's own scales
      // (a log x axis against a linear y: two end points joined straight would bend it)
      const samples = 64, diagonal = [];
      for (let i = 0; i <= samples; i++) {
        const x = lo * Math.pow(hi / lo, i / samples);
        diagonal.push([x, x]);
      }
      datasets.push(lineDataset("offered", "#7f7f7f", diagonal,
        { borderDash: [6, 4], borderWidth: 1, pointRadius: 0 }));
    }
    new Chart(canvas, {
      type: "line",
      data: { datasets: datasets },
      options: {
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: axis("offered rate (tps)", { type: "logarithmic", ticks: decades }),
          y: key === "p95" ? axis(yTitle, { type: "logarithmic", ticks: decades })
            : axis(yTitle, { beginAtZero: true }),
        },
      },
    });
  }
  line("rate-achieved-chart", "achieved", "achieved (tps)", true);
  line("rate-p95-chart", "p95", `${data.latency_label || "p95"} (ms)`, false);
}
