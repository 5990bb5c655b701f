// The plan editor: shows only the options of the chosen test and the settings of the
// target's engine, and asks the server what the plan would run as the user types
// (cells, runs, estimated time, warnings, errors naming the field). Preflight runs on the
// plan as it stands in the form, saved or not.
import "benchdash/plan_auto.js";

const form = document.getElementById("plan-editor");
if (form) editPlan(form);

function editPlan(form) {
  const engines = JSON.parse(document.getElementById("target-engines").textContent);
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const $ = (sel) => form.querySelector(sel);
  const figures = document.getElementById("summary-figures");
  const warningsEl = document.getElementById("summary-warnings");
  const errorsEl = document.getElementById("summary-errors");

  // --- threads presets -------------------------------------------------------------------
  const threadsInput = $("#id_threads");
  function threadList() {
    return threadsInput.value.split(/[\s,]+/).filter(Boolean);
  }
  function markPresets() {
    const chosen = new Set(threadList());
    form.querySelectorAll("#thread-presets button").forEach(function (b) {
      b.classList.toggle("on", chosen.has(b.dataset.threads));
      b.setAttribute("aria-pressed", chosen.has(b.dataset.threads) ? "true" : "false");
    });
  }
  form.querySelectorAll("#thread-presets button").forEach(function (b) {
    b.addEventListener("click", function () {
      let list = threadList();
      if (list.includes(b.dataset.threads)) list = list.filter((t) => t !== b.dataset.threads);
      else list.push(b.dataset.threads);
      list.sort((a, c) => Number(a) - Number(c));
      threadsInput.value = list.join(",");
      markPresets();
      scheduleCheck();
    });
  });
  threadsInput.addEventListener("input", markPresets);

  // --- what the test and the engine allow --------------------------------------------------
  function showFor(el, visible) {
    el.hidden = !visible;
    // Hidden inputs are disabled so they are not sent: an option of another test is refused.
    el.querySelectorAll("input, select").forEach((i) => { i.disabled = !visible; });
  }
  function applyTest() {
    const test = $("#id_test").value;
    form.querySelectorAll(".field.option").forEach(function (f) {
      showFor(f, f.dataset.tests.split(" ").includes(test));
    });
    form.querySelectorAll("select.axis-name option[data-tests]").forEach(function (o) {
      o.hidden = !o.dataset.tests.split(" ").includes(test);
    });
  }
  function engineFamily() {
    const engine = engines[$("#id_target").value];
    if (!engine) return null;
    return engine === "postgresql" ? "postgresql" : "mysql";
  }
  function applyEngine() {
    const family = engineFamily();
    form.querySelectorAll(".engine-settings").forEach(function (block) {
      showFor(block, block.dataset.engine === family);
    });
    form.querySelectorAll(".setting-row").forEach(function (row) { showFor(row, family !== null); });
    // Free text (a restart-only name is kept too), suggesting the engine's run-time names.
    form.querySelectorAll("input.setting-name").forEach(function (input) {
      input.setAttribute("list", "settings-" + (family || "mysql"));
    });
    showInstalls();
  }

  // --- the servers axis: the target's installs to pick from, configs as rows ---------------
  const installs = JSON.parse(document.getElementById("target-installs").textContent);
  const installsInput = $("#id_installs");
  const installPresets = document.getElementById("install-presets");
  function installList() {
    return installsInput.value.split(/[\s,]+/).filter(Boolean);
  }
  function showInstalls() {
    const labels = installs[$("#id_target").value] || [];
    const chosen = new Set(installList());
    installPresets.replaceChildren(...labels.map(function (label) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.classList.toggle("on", chosen.has(label));
      b.setAttribute("aria-pressed", chosen.has(label) ? "true" : "false");
      b.addEventListener("click", function () {
        const list = installList();
        installsInput.value = (list.includes(label) ? list.filter((l) => l !== label) : list.concat(label)).join(",");
        showInstalls();
        scheduleCheck();
      });
      return b;
    }));
  }
  installsInput.addEventListener("input", showInstalls);
  const configRows = document.getElementById("config-rows");
  function removable(row) {
    row.querySelector(".remove-config").addEventListener("click", function () {
      if (configRows.children.length > 1) row.remove();
      else row.querySelectorAll("input, textarea").forEach((i) => { i.value = ""; });
      scheduleCheck();
    });
  }
  configRows.querySelectorAll(".config-row").forEach(removable);
  document.getElementById("add-config").addEventListener("click", function () {
    // A new row after the last: its index one past the highest, so no two rows share one.
    const rows = [...configRows.querySelectorAll(".config-row")];
    const next = 1 + Math.max(...rows.map((r) => Number(r.querySelector("input").name.split("_").pop())));
    const row = /** @type {HTMLElement} */ (rows[rows.length - 1].cloneNode(true));
    row.querySelectorAll("input, textarea, label").forEach(function (el) {
      for (const attr of ["name", "id", "for"]) {
        const value = el.getAttribute(attr);
        if (value) el.setAttribute(attr, value.replace(/_\d+$/, "_" + next));
      }
      if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) el.value = "";
    });
    configRows.append(row);
    removable(row);
    row.querySelector("input").focus();
  });
  function applySchedule() {
    const kind = $("#id_schedule_kind").value;
    showFor(form.querySelector('[data-field="schedule_cron"]'), kind === "cron");
    showFor(form.querySelector('[data-field="schedule_interval_min"]'), kind === "interval");
    showFor(form.querySelector('[data-field="schedule_clocked_at"]'), kind === "clocked");
    showFor(form.querySelector('[data-field="schedule_run_now"]'), kind === "clocked");
    showFor(form.querySelector('[data-field="schedule_timezone"]'), kind === "cron" || kind === "clocked");
    showFor(form.querySelector('[data-field="schedule_enabled"]'), kind !== "");
  }

  // --- the server's check ------------------------------------------------------------------
  let timer = null;
  let sequence = 0;
  function scheduleCheck() {
    clearTimeout(timer);
    timer = setTimeout(check, 350);
  }
  function post(url) {
    return fetch(url, {
      method: "POST",
      body: new FormData(form),
      headers: { "X-CSRFToken": csrf },
      credentials: "same-origin",
    }).then(function (r) {
      // A 400 says what is wrong in its JSON: shown like the other errors.
      if (!r.ok && r.status !== 400) throw new Error("the server answered " + r.status);
      return r.json();
    });
  }
  function item(text, cls) {
    const li = document.createElement("li");
    li.textContent = text;
    if (cls) li.className = cls;
    return li;
  }
  function showErrors(errors) {
    form.querySelectorAll(".field.has-error, .row.has-error").forEach((f) => f.classList.remove("has-error"));
    errorsEl.replaceChildren(...errors.map((e) => item(e.message)));
    errors.forEach(function (e) {
      form.querySelectorAll('[data-field="' + CSS.escape(e.field) + '"]').forEach((f) => f.classList.add("has-error"));
    });
  }
  // The tests axis: the microbenchmark suite loaded for the user to edit.
  const suiteButton = form.querySelector("#suite-microbenchmarks");
  const testsField = form.querySelector("textarea[name=tests]");
  if (suiteButton && testsField) {
    suiteButton.addEventListener("click", function () {
      testsField.value = testsField.dataset.suite || "";
      testsField.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }
  function check() {
    const mine = ++sequence;
    post(form.dataset.checkUrl).then(function (answer) {
      if (mine !== sequence) return; // a newer check is on its way
      if (!answer.ok) {
        figures.textContent = "Fix the errors below to see what the plan runs.";
        warningsEl.replaceChildren();
        showErrors(answer.errors || []);
        return;
      }
      showErrors([]);
      const e = answer.estimate;
      figures.replaceChildren();
      const strong = (text) => { const s = document.createElement("strong"); s.textContent = text; return s; };
      figures.append(strong(String(e.cells)), " cells, ", strong(String(e.runs)), " runs", document.createElement("br"),
        "≈ ", strong(e.total_text), " in all");
      if (e.prepares) {
        figures.append(document.createElement("br"), strong(String(e.prepares)),
          e.prepares === 1 ? " data set prepared" : " data sets prepared", " (≈ ", strong(e.prepare_text), ")");
      }
      if (e.restarts) {
        const warmups = e.warmups ? " and " + e.warmups + " warm-ups of " + e.warm_s + " s" : "";
        figures.append(document.createElement("br"), e.restarts_exact ? "" : "about ", strong(String(e.restarts)),
          " server restarts (the put-back at the end included)", warmups, ", ≈ ", strong(e.restart_text),
          " (", String(e.restart_each_s), " s a restart: ", e.restart_source, ")");
        if (!e.restarts_exact) {
          figures.append(document.createElement("br"), "the order, so the restarts, depends on the seed drawn at launch: give the plan a seed for an exact count");
        }
      }
      if (e.most_runs > e.runs) {
        figures.append(document.createElement("br"), "up to ", strong(e.most_text), " (",
          strong(String(e.most_runs)), " runs) as the auto modes add runs");
      }
      warningsEl.replaceChildren(...answer.warnings.map((w) => item("⚠ " + w)));
    }).catch(function (err) {
      if (mine === sequence) figures.textContent = "Could not check the plan: " + err.message;
    });
  }

  // --- preflight ------------------------------------------------------------------------------
  const preflightButton = /** @type {HTMLButtonElement} */ (document.getElementById("preflight-button"));
  preflightButton.addEventListener("click", function () {
    const box = document.getElementById("preflight-result");
    const checks = document.getElementById("preflight-checks");
    preflightButton.disabled = true;
    preflightButton.textContent = "Preflight running…";
    box.hidden = false;
    checks.replaceChildren(item("checking the load host and the target…", "muted"));
    post(form.dataset.preflightUrl).then(function (report) {
      const rows = (report.checks || []).map(function (c) {
        const mark = c.status === "ok" ? "✓" : c.status === "warning" ? "⚠" : "✗";
        return item(mark + " " + c.check + " on " + c.host + ": " + c.message, c.status);
      });
      (report.errors || []).forEach((e) => rows.push(item("✗ " + e.message, "failed")));
      rows.unshift(item(report.ok ? "Preflight passed." : "Preflight failed.", report.ok ? "ok" : "failed"));
      checks.replaceChildren(...rows);
      box.dataset.ok = report.ok ? "true" : "false";
    }).catch(function (err) {
      checks.replaceChildren(item("Preflight could not run: " + err.message, "failed"));
    }).finally(function () {
      preflightButton.disabled = false;
      preflightButton.textContent = "Preflight";
    });
  });

  $("#id_test").addEventListener("change", applyTest);
  $("#id_target").addEventListener("change", applyEngine);
  $("#id_schedule_kind").addEventListener("change", applySchedule);
  form.addEventListener("input", scheduleCheck);
  form.addEventListener("change", scheduleCheck);
  applyTest();
  applyEngine();
  applySchedule();
  markPresets();
  check();
}
