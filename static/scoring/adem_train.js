// Train ADEM page: show the metric name as it is typed (busy_forms.js marks a form busy once sent).
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
})();
