// Thank-you page: the task is stored, so the copy of its answers kept in this browser can go.
(function () {
  "use strict";
  var done = document.getElementById("task-done");
  if (done && done.dataset.saveKey) {
    try {
      window.localStorage.removeItem("ratelab-task:" + done.dataset.saveKey);
      window.localStorage.removeItem("ratelab-task:" + done.dataset.saveKey + ":telemetry");  // writing counts
    } catch (e) { /* no storage */ }
  }
  document.querySelectorAll("form.start-form").forEach(function (form) {
    form.addEventListener("submit", function () { form.querySelector("button").disabled = true; });
  });
})();
