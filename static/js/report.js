// The shared report's charts: throughput (the geometric mean of the repeats of each cell)
// and the plan's latency percentile (the median of the repeats) against threads, the runs
// over time (throughput and latency each second, as the results page draws them for its
// default choice of runs), the batch timeline, the latency CDF and histogram, and the rate
// charts (batch_results_rate.js). Everything it draws is in the file (report-data).
import { Chart, axis, cdfChart, histogramChart, lineDataset, overTimeChart, readJson, threadsAxis, timelineChart } from "benchdash/charts.js";
import { drawRateCharts } from "benchdash/batch_results_rate.js";

drawRateCharts();

const data = readJson("report-data");
if (data) drawReport(data);

function drawReport(data) {
  const threads = [...new Set(data.series.flatMap((s) => s.points.map((p) => p.x)))];

  function scaling(canvasId, key, yTitle) {
    const canvas = /** @type {HTMLCanvasElement} */ (document.getElementById(canvasId));
    if (!canvas || !threads.length) return;
    new Chart(canvas, {
      type: "line",
      data: { datasets: data.series.map((s) => lineDataset(
        s.label, s.colour, s.points.filter((p) => p[key] !== null).map((p) => [p.x, p[key]]),
        { pointRadius: 3.5, borderWidth: 2 })) },
      options: {
        interaction: { mode: "nearest", intersect: false },
        scales: { x: threadsAxis(threads, null), y: axis(yTitle, { beginAtZero: true }) },
      },
    });
  }
  scaling("report-scaling-chart", "y", data.unit);
  scaling("report-latency-chart", "p95", `${data.latency_label || "p95"} (ms)`);

  const canvas = (id) => /** @type {HTMLCanvasElement} */ (document.getElementById(id));
  const series = data.timeseries || [];
  if (canvas("timeseries-chart")) overTimeChart(canvas("timeseries-chart"), series, "tps", data.unit, null);
  if (canvas("timeseries-latency-chart")) overTimeChart(canvas("timeseries-latency-chart"), series, "latency", "ms", null);
  if (canvas("timeline-chart")) timelineChart(canvas("timeline-chart"), data.timeline || [], data.unit);
  if (canvas("cdf-chart")) cdfChart(canvas("cdf-chart"), data.cdf || []);
  if (canvas("histogram-chart")) histogramChart(canvas("histogram-chart"), data.histogram || []);
}
