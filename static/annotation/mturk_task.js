// MTurk task page: record time on the page, and hand a stored assignment back to MTurk at once.
(function () {
  "use strict";
  var started = Date.now();
  var task = document.getElementById("mturk-task");
  if (task) {
    task.addEventListener("submit", function () {
      var elapsed = document.getElementById("elapsed");
      if (elapsed) { elapsed.value = String((Date.now() - started) / 1000); }
    });
  }
  var handBack = document.getElementById("mturk-external-submit");
  if (handBack && handBack.dataset.autosubmit === "1") { handBack.submit(); }
})();
