// Metrics page: poll the latest run and move its progress bar until it ends (busy_forms.js marks the
// Compute form busy once it is sent).
(function () {
  "use strict";
  var box = document.getElementById("metric-run");
  if (!box) { return; }
  var bar = document.getElementById("run-progress");
  var label = document.getElementById("run-status");
  var phase = document.getElementById("run-phase");
  var finished = function (status) { return status === "done" || status === "failed"; };
  if (finished(box.dataset.status)) { return; }
  var poll = function () {
    fetch(box.dataset.progressUrl, { credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (run) {
        bar.max = 100;
        bar.value = Math.round(run.progress * 1000) / 10;
        label.textContent = run.status + ": " + run.done_chunks + "/" + run.total_chunks + " chunks";
        if (phase) {
          // the family being scored, a model being loaded first, the time so far
          phase.textContent = run.phase_text || "";
          phase.hidden = !run.phase_text;
        }
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
