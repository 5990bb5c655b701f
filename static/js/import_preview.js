// The chart of a log being imported: tps and latency over time, before it is saved.
(function () {
  "use strict";
  const data = Benchdash.readJson("import-data");
  const canvas = document.getElementById("import-chart");
  if (!data || !canvas) return;
  new Chart(canvas, {
    type: "line",
    data: { datasets: [
      Benchdash.lineDataset("tps", "#0072b2", data.tps, { yAxisID: "y" }),
      Benchdash.lineDataset("latency (ms)", "#d55e00", data.latency, { yAxisID: "y1" }),
    ] },
    options: { scales: {
      x: Benchdash.axis("seconds", { type: "linear" }),
      y: Benchdash.axis("tps", { beginAtZero: true }),
      y1: Benchdash.axis("ms", { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } }),
    } },
  });
})();
