// Train ADEM page: show the metric name as it is typed, and mark a form busy once it is sent.
(function () {
  "use strict";
  var name = document.getElementById("id_name");
  var help = document.getElementById("id_name_helptext");
  if (name && help) {
    var show = function () {
      var typed = name.value.trim();
      help.textContent = typed
        ? "Its scores become the metric adem:" + typed + "."
        : "Its scores become the metric adem:NAME (NAME being what you type here).";
    };
    name.addEventListener("input", show);
    show();
  }
  // A second click while the first request runs would queue the same work twice.
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
