// Start page: the identifier field says what it expects, and one press of Start takes one task
// (a double click must not make two identities).
(function () {
  "use strict";
  var worker = document.getElementById("worker");
  if (worker) {
    // The browser's own "Please match the requested format." does not say which format.
    var expected = "Please use " + worker.title + ", or leave the field empty.";
    var check = function () {
      worker.setCustomValidity("");
      if (worker.validity.patternMismatch) { worker.setCustomValidity(expected); }
    };
    worker.addEventListener("input", check);
    check();
  }
  document.querySelectorAll("form.start-form").forEach(function (form) {
    form.addEventListener("submit", function () { form.querySelector("button[type=submit]").disabled = true; });
  });
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form.start-form button[type=submit]").forEach(function (button) { button.disabled = false; });
  });
})();
