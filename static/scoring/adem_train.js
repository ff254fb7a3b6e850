// Train ADEM and learned-evaluator pages: show the metric name (adem: or learned:) as it is typed (busy_forms.js marks a form busy once sent).
(function () {
  "use strict";
  var name = document.getElementById("id_name");
  var help = document.getElementById("id_name_helptext");
  if (name && help) {
    var prefix = /learned:/.test(help.textContent) ? "learned:" : "adem:";
    var show = function () {
      var typed = name.value.trim();
      help.textContent = typed
        ? "Its scores become the metric " + prefix + typed + "."
        : "Its scores become the metric " + prefix + "NAME (NAME being what you type here).";
    };
    name.addEventListener("input", show);
    show();
  }
})();
