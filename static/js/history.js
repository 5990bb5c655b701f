// The history page: one small chart per matrix cell, night after night; throughput on the
// left axis, latency (dashed) on the right, the nights that regressed in red, the first
// night after each step of the series (a change point) as a triangle, a batch that failed
// as a grey cross at the foot of the chart (never as a measured night), and the plan's
// annotations as dotted vertical lines with their text.
import { Chart, axis, num, readJson } from "benchdash/charts.js";

const data = readJson("history-data");
if (data) drawHistory(data);

function drawHistory(data) {
  const labels = data.nights.map((n) => n.date);
  const BAD = "#c0392b";
  const FAILED = "#7f7f7f";
  const marks = data.annotations || [];

  // The annotations: a dotted line at the night each one stands before, and its text.
  const annotationLines = {
    id: "historyAnnotations",
    afterDatasetsDraw: function (chart) {
      const x = chart.scales.x;
      const area = chart.chartArea;
      const ctx = chart.ctx;
      marks.forEach(function (mark) {
        const at = x.getPixelForValue(mark.index);
        ctx.save();
        ctx.strokeStyle = "#555";
        ctx.setLineDash([2, 3]);
        ctx.beginPath();
        ctx.moveTo(at, area.top);
        ctx.lineTo(at, area.bottom);
        ctx.stroke();
        ctx.fillStyle = "#333";
        ctx.font = "11px sans-serif";
        ctx.textAlign = at > (area.left + area.right) / 2 ? "right" : "left";
        const text = mark.text.length > 40 ? mark.text.slice(0, 39) + "…" : mark.text;
        ctx.fillText(text, at + (ctx.textAlign === "left" ? 3 : -3), area.top + 10);
        ctx.restore();
      });
    },
  };

  // The failed batches: a point at the foot of the chart, not a measured figure.
  function failedDataset() {
    return {
      label: "failed batch",
      data: data.nights.map((n) => (n.failed ? 0 : null)),
      yAxisID: "y",
      showLine: false,
      pointStyle: "crossRot",
      pointRadius: 7,
      pointBorderWidth: 2,
      borderColor: FAILED,
      backgroundColor: FAILED,
      pointBorderColor: FAILED,
    };
  }
  const colours = { throughput: "#0072b2", latency: "#d55e00" };

  // The steps of one metric of a cell, by the index of their night.
  function stepsAt(cell, key) {
    const at = {};
    (cell.steps || []).forEach(function (step) {
      if (step.metric === key) at[step.index] = step;
    });
    return at;
  }

  function dataset(cell, key, axisId, extra) {
    const flagged = (ctx) => Boolean(cell.flags[ctx.dataIndex]);
    const steps = stepsAt(cell, key);
    const stepped = (ctx) => ctx.dataIndex in steps;
    return Object.assign({
      label: key === "throughput" ? data.unit : data.latency + " ms",
      data: cell[key],
      yAxisID: axisId,
      borderColor: colours[key],
      backgroundColor: (ctx) => (flagged(ctx) ? BAD : colours[key]),
      pointBorderColor: (ctx) => (flagged(ctx) ? BAD : colours[key]),
      pointRadius: (ctx) => (stepped(ctx) ? 7 : flagged(ctx) ? 5 : 2),
      pointStyle: (ctx) => (stepped(ctx) ? "triangle" : "circle"),
      pointHoverRadius: 6,
      borderWidth: 1.6,
      spanGaps: true,
      tension: 0,
    }, extra || {});
  }

  document.querySelectorAll("#history-charts canvas[data-cell]").forEach(function (/** @type {HTMLCanvasElement} */ canvas) {
    const cell = data.cells[Number(canvas.dataset.cell)];
    if (!cell) return;
    new Chart(canvas, {
      type: "line",
      data: {
        labels: labels,
        datasets: [
          dataset(cell, "throughput", "y"),
          dataset(cell, "latency", "y2", { borderDash: [5, 3] }),
          ...(data.nights.some((n) => n.failed) ? [failedDataset()] : []),
        ],
      },
      plugins: [annotationLines],
      options: {
        interaction: { mode: "index", intersect: false },
        plugins: {
          legend: { display: true, position: "bottom" },
          tooltip: {
            callbacks: {
              label: (item) => (item.dataset.label === "failed batch" ? "failed batch" : item.dataset.label + ": " + num(item.parsed.y)),
              footer: function (items) {
                const i = items.length ? items[0].dataIndex : -1;
                const night = data.nights[i];
                if (!night) return "";
                const lines = ["batch " + night.batch + " · " + night.status + " · launched " + night.launched_by];
                if (night.failed && night.error) lines.push(night.error);
                marks.forEach(function (mark) {
                  if (mark.index === i) lines.push("annotation " + mark.at + ": " + mark.text);
                });
                if (cell.flags[i]) lines.push("flagged: " + cell.flags[i]);
                (cell.steps || []).forEach(function (step) {
                  if (step.index === i) lines.push("step: " + step.text);
                });
                return lines;
              },
            },
          },
        },
        onClick: function (event, elements) {
          if (!elements.length) return;
          const night = data.nights[elements[0].index];
          if (night && night.url) window.location.href = night.url;
        },
        scales: {
          x: { ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 6 } },
          y: axis(data.unit, { beginAtZero: true, position: "left" }),
          y2: axis(data.latency + " ms", { beginAtZero: true, position: "right", grid: { drawOnChartArea: false } }),
        },
      },
    });
  });
}
