// The live page of one run: the shared follower (live_follow.js) on the run's events, from
// its first sample, with the lines it printed before the page was opened.
import { liveRun } from "benchdash/live_follow.js";
import { refresh } from "benchdash/run_facts.js";

const root = document.getElementById("live-run");
if (root) followRun(root);

function followRun(root) {
  const live = liveRun(document.getElementById("run-chart"), {
    // The run's summary, histogram and log (run_facts.js) come once it has ended.
    onEnd: refresh,
  });
  live.follow({
    id: Number(root.dataset.runId),
    events_url: root.dataset.eventsUrl,
    expected_s: parseFloat(root.dataset.expectedS) || null,
    started_at: root.dataset.startedAt || null,
    error: !document.getElementById("run-error").hidden, // the page shows it already
  }, root.dataset.progressUrl);
}
