// The plan editor's auto modes: each mode's settings show when it is ticked; threads: auto
// starts at 1 thread, so the thread list is set to 1 while it is on; threads and rate are
// not searched together. plan_editor.js re-checks the plan on every change.
const box = document.getElementById("auto-modes");
const threads = /** @type {HTMLInputElement} */ (document.getElementById("id_threads"));
if (box && threads) followAutoModes(box, threads);

function followAutoModes(box, threads) {
  let listBefore = threads.value;

  function modeOn(mode) {
    const tick = /** @type {HTMLInputElement} */ (document.getElementById("id_" + mode + "_auto"));
    return Boolean(tick && tick.checked);
  }
  function apply() {
    box.querySelectorAll(".auto-mode").forEach(function (m) {
      m.querySelector(".auto-settings").hidden = !modeOn(m.dataset.mode);
    });
    const searching = modeOn("threads");
    if (searching && !threads.readOnly) {
      listBefore = threads.value;
      threads.value = "1";
    } else if (!searching && threads.readOnly) {
      threads.value = listBefore === "1" ? threads.value : listBefore;
    }
    threads.readOnly = searching;
    document.getElementById("thread-presets").hidden = searching;
    /** @type {HTMLInputElement} */ (document.getElementById("id_rate_auto")).disabled = searching;
    /** @type {HTMLInputElement} */ (document.getElementById("id_threads_auto")).disabled = modeOn("rate");
  }
  box.addEventListener("change", function () {
    apply();
    threads.dispatchEvent(new Event("input", { bubbles: true }));
  });
  apply();
}
