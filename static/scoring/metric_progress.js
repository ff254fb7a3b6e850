// Metrics page: poll the latest run and move its progress bar until it ends; mark the Compute form
// busy once it is sent (a second click would queue the same work twice).
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
  var box = document.getElementById("metric-run");
  if (!box) { return; }
  var bar = document.getElementById("run-progress");
  var label = document.getElementById("run-status");
  var finished = function (status) { return status === "done" || status === "failed"; };
  if (finished(box.dataset.status)) { return; }
  var poll = function () {
    fetch(box.dataset.progressUrl, { credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (run) {
        bar.max = Math.max(run.total_chunks, 1);
        bar.value = run.done_chunks;
        label.textContent = run.status + ": " + run.done_chunks + "/" + run.total_chunks + " chunks";
        if (finished(run.status)) {
          window.location.reload();  // show the new scores and give the button back
        } else {
          window.setTimeout(poll, 1500);
        }
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  };
  window.setTimeout(poll, 1000);
})();
