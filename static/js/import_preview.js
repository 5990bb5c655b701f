// The chart of a log being imported: tps and latency over time, before it is saved.
import { Chart, axis, lineDataset, readJson } from "benchdash/charts.js";

const data = readJson("import-data");
const canvas = document.getElementById("import-chart");
if (data && canvas) drawPreview(data, canvas);

function drawPreview(data, canvas) {
  new Chart(canvas, {
    type: "line",
    data: { datasets: [
      lineDataset("tps", "#0072b2", data.tps, { yAxisID: "y" }),
      lineDataset("latency (ms)", "#d55e00", data.latency, { yAxisID: "y1" }),
    ] },
    options: { scales: {
      x: axis("seconds", { type: "linear" }),
      y: axis("tps", { beginAtZero: true }),
      y1: axis("ms", { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } }),
    } },
  });
}
