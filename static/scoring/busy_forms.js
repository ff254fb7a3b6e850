// Forms that start long work (Compute metrics, Train ADEM, pre-train VHRED, ADEM experiments) mark
// themselves busy once sent: a second click while the first request runs would queue the same work twice.
(function () {
  "use strict";
  document.querySelectorAll("form[data-busy-text]").forEach(function (form) {
    form.addEventListener("submit", function () {
      var button = form.querySelector("button[type=submit]");
      if (!button) { return; }
      window.setTimeout(function () {  // after the browser has taken the form's data
        button.disabled = true;
        // getAttribute, not form.dataset: a form control named "dataset" shadows the property
        button.textContent = form.getAttribute("data-busy-text");
      }, 0);
    });
  });
})();
