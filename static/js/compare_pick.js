// @ts-check
// The batch list's "Compare selected": the sides go to the compare page in the order they
// were ticked, so that the first batch picked is the baseline, not the newest one (the
// list reads newest first and a form posts its boxes in page order).
const form = document.getElementById("compare-pick");
if (form instanceof HTMLFormElement) pickInOrder(form);

/** @param {HTMLFormElement} form */
function pickInOrder(form) {
  /** @type {string[]} */
  let picked = [];
  const boxes = () => /** @type {HTMLInputElement[]} */ ([...form.querySelectorAll("input[type=checkbox][data-side]")]);
  const note = document.getElementById("compare-baseline");
  // Boxes already ticked (the browser keeps them on "back") count in page order.
  boxes().forEach(function (box) { if (box.checked) picked.push(box.value); });

  function show() {
    boxes().forEach(function (box) {
      const rank = picked.indexOf(box.value);
      box.title = rank === 0 ? "the baseline" : rank > 0 ? "side " + (rank + 1) : "";
    });
    if (note) note.textContent = picked.length ? "baseline: batch " + picked[0].slice(1) : "";
  }

  form.addEventListener("change", function (event) {
    const box = event.target;
    if (!(box instanceof HTMLInputElement) || !box.hasAttribute("data-side")) return;
    picked = picked.filter((value) => value !== box.value);
    if (box.checked) picked.push(box.value);
    show();
  });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const params = new URLSearchParams();
    picked.forEach((value) => params.append("s", value));
    window.location.href = form.action + "?" + params.toString();
  });
  show();
}
