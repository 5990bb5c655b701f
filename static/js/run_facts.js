// What sysbench printed for one run, on the run page: the latency histogram, the raw log
// with its filter, and all of it read again when the run ends while the page is open.
import { histogramChart, readJson } from "benchdash/charts.js";

const REFRESHED = ["run-outcome", "run-summary", "run-histogram", "run-log"];
const FILTER_MS = 250;
let histogram = null;

function drawHistogram() {
  const data = readJson("run-histogram-data");
  const canvas = document.getElementById("run-histogram-chart");
  if (histogram) histogram.destroy();
  histogram = null;
  if (!data || !canvas) return;
  histogram = histogramChart(canvas, [
    { label: "share of requests", colour: "#0072b2", points: data.map((b) => [b[0], b[2]]) },
  ]);
}

function lineSpan(text) {
  const span = document.createElement("span");
  span.textContent = text + "\n";
  return span;
}

// A log held whole filters in the browser; a longer one asks the server for its matches.
function setUpLog() {
  const root = document.getElementById("run-log");
  const box = document.getElementById("run-log-lines");
  const input = /** @type {HTMLInputElement} */ (document.getElementById("run-log-filter"));
  if (!root || !box || !input) return;
  const shown = /** @type {HTMLElement[]} */ (Array.from(box.children));
  const count = document.getElementById("run-log-count");
  let timer = null;
  box.scrollTop = box.scrollHeight; // tail first
  function filterHere(text) {
    let n = 0;
    shown.forEach(function (span) {
      const hit = !text || span.textContent.toLowerCase().includes(text);
      span.hidden = !hit;
      if (hit) n++;
    });
    count.textContent = text ? n + " matching lines" : "";
  }
  function filterThere(text) {
    if (!text) { box.replaceChildren(...shown); count.textContent = ""; return; }
    fetch(root.dataset.logUrl + "?match=" + encodeURIComponent(text), { credentials: "same-origin" })
      .then((r) => r.json())
      .then(function (found) {
        box.replaceChildren(...found.lines.map((l) => lineSpan(l[0] + ": " + l[1])));
        count.textContent = found.lines.length + (found.complete ? "" : "+") + " matching lines";
      });
  }
  input.addEventListener("input", function () {
    clearTimeout(timer);
    const text = input.value.trim().toLowerCase();
    timer = setTimeout(() => (root.dataset.complete === "true" ? filterHere : filterThere)(text), FILTER_MS);
  });
}

// The run ended while the page was open: its summary, histogram and log are stored now.
export function refresh() {
  const last = document.getElementById("run-last-lines");
  if (!last || last.hidden) return; // the page was drawn after the end: nothing is new
  fetch(window.location.href, { credentials: "same-origin" })
    .then((r) => r.text())
    .then(function (html) {
      const page = new DOMParser().parseFromString(html, "text/html");
      REFRESHED.forEach(function (id) {
        const now = document.getElementById(id), then = page.getElementById(id);
        if (now && then) now.replaceWith(document.importNode(then, true));
      });
      last.hidden = true;
      drawHistogram();
      setUpLog();
    });
}

drawHistogram();
setUpLog();