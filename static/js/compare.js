// The compare page's chart: each side's series against threads, one colour per side.
import { LineWithErrorBarsController, PointWithErrorBar } from "chartjs-chart-error-bars";
import { Chart, axis, readJson, threadsAxis } from "benchdash/charts.js";

Chart.register(LineWithErrorBarsController, PointWithErrorBar);

const data = readJson("compare-data");
const canvas = document.getElementById("compare-chart");
if (data && canvas) drawComparison(data, canvas);

function drawComparison(data, canvas) {
  const dashes = [[], [6, 3], [2, 3], [8, 3, 2, 3]];
  const seen = {};
  new Chart(canvas, {
    type: "lineWithErrorBars",
    data: { datasets: data.series.map(function (s) {
      seen[s.colour] = (seen[s.colour] || 0) + 1; // a side's second series gets a dash
      return {
        label: s.label,
        data: s.points.map((p) => ({ x: p.x, y: p.y, yMin: p.yMin, yMax: p.yMax })),
        borderColor: s.colour, backgroundColor: s.colour, errorBarColor: s.colour,
        errorBarWhiskerColor: s.colour, pointRadius: 3, borderWidth: 2,
        borderDash: dashes[(seen[s.colour] - 1) % dashes.length],
      };
    }) },
    options: {
      interaction: { mode: "nearest", intersect: false },
      scales: {
        x: threadsAxis([...new Set(data.series.flatMap((s) => s.points.map((p) => p.x)))], null),
        y: axis("tps", { beginAtZero: true }),
      },
    },
  });
}
