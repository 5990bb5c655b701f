// The charts of a batch's results: scaling with min-max whiskers (threads on a log
// scale, the cores x 2 + disks reference line), latency against threads, the chosen runs
// over time (warmup shaded, a server counter on a second axis), the batch timeline, and
// the latency CDFs. The data comes with the page (json_script); the state is in the URL.
import { LineWithErrorBarsController, PointWithErrorBar } from "chartjs-chart-error-bars";
import annotationPlugin from "chartjs-plugin-annotation";
import { Chart, axis, cdfChart, histogramChart, num, overTimeChart, readJson, threadsAxis, timelineChart } from "benchdash/charts.js";
import { drawRateCharts } from "benchdash/batch_results_rate.js";

Chart.register(LineWithErrorBarsController, PointWithErrorBar, annotationPlugin);
drawRateCharts();

/** @typedef {import("chartjs-plugin-annotation").AnnotationOptions} Annotation */
/** @typedef {{ y: number, yMin: number, yMax: number, n: number }} Whisker a median and its range */

const data = readJson("results-data");
if (data) drawResults(data);

function drawResults(data) {
  const threads = [...new Set(data.series.flatMap((s) => s.points.map((p) => p.x)))];

  document.querySelectorAll("select[data-autosubmit]").forEach(function (/** @type {HTMLSelectElement} */ s) {
    s.addEventListener("change", () => s.form.submit());
  });
  const copy = document.getElementById("copy-table");
  if (copy) {
    copy.addEventListener("click", function () {
      const text = /** @type {HTMLTextAreaElement} */ (document.getElementById(copy.dataset.tsvTarget)).value;
      const done = () => { copy.textContent = "Copied"; setTimeout(() => { copy.textContent = "Copy as TSV"; }, 1500); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, () => { copy.textContent = "Copy failed: select the table"; });
      } else {
        copy.textContent = "Select the table to copy it";
      }
    });
  }

  /** @returns {Record<string, Annotation>} */
  function referenceLine() {
    if (!data.reference) return {};
    return { reference: {
      type: "line", scaleID: "x", value: data.reference.threads, borderColor: "#5b6573",
      borderDash: [6, 4], borderWidth: 1.5,
      label: { display: true, content: "cores×2+disks = " + data.reference.threads, position: "start",
               backgroundColor: "rgba(29,36,48,.75)", font: { size: 11 } },
    } };
  }

  function whiskerChart(canvasId, yKey, minKey, maxKey, yTitle) {
    const canvas = /** @type {HTMLCanvasElement} */ (document.getElementById(canvasId));
    if (!canvas) return;
    const datasets = data.series.map((s) => ({
      label: s.label,
      data: s.points.filter((p) => p[yKey] !== null).map((p) => ({ x: p.x, y: p[yKey], yMin: p[minKey], yMax: p[maxKey], n: p.n })),
      borderColor: s.colour, backgroundColor: s.colour, pointRadius: 3.5, borderWidth: 2,
      errorBarColor: s.colour, errorBarWhiskerColor: s.colour, errorBarWhiskerSize: 10,
    }));
    new Chart(canvas, {
      type: "lineWithErrorBars",
      data: { datasets: datasets },
      options: {
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: threadsAxis(threads, data.reference ? data.reference.threads : null),
          y: axis(yTitle, { beginAtZero: true }),
        },
        plugins: {
          annotation: { annotations: referenceLine() },
          tooltip: { callbacks: { label: (c) => whiskerLabel(c.dataset.label, /** @type {Whisker} */ (c.raw)) } },
        },
      },
    });
  }
  /** @param {string} label @param {Whisker} p */
  function whiskerLabel(label, p) {
    return label + ": " + num(p.y) + (p.n > 1 ? " (" + num(p.yMin) + "–" + num(p.yMax) + ", " + p.n + " repeats)" : "");
  }
  whiskerChart("scaling-chart", "y", "yMin", "yMax", data.unit);
  whiskerChart("latency-chart", "p95", "p95Min", "p95Max", "ms");

  // --- runs over time -------------------------------------------------------------------------
  const series = data.timeseries || [];
  const overTime = (/** @type {string} */ id, key, yTitle, counter) => {
    const canvas = /** @type {HTMLCanvasElement} */ (document.getElementById(id));
    if (canvas) overTimeChart(canvas, series, key, yTitle, counter);
  };
  overTime("timeseries-chart", "tps", data.unit, data.counter);
  overTime("timeseries-latency-chart", "latency", "ms", null);

  // --- the batch timeline ----------------------------------------------------------------------
  const timeline = /** @type {HTMLCanvasElement} */ (document.getElementById("timeline-chart"));
  if (timeline) timelineChart(timeline, data.timeline || [], data.unit);

  // --- latency histogram, in sysbench's own buckets ------------------------------------------
  const histogram = /** @type {HTMLCanvasElement} */ (document.getElementById("histogram-chart"));
  if (histogram) histogramChart(histogram, data.histogram || []);

  // --- latency CDF ---------------------------------------------------------------------------
  const cdf = /** @type {HTMLCanvasElement} */ (document.getElementById("cdf-chart"));
  if (cdf) cdfChart(cdf, data.cdf || []);
}
