// Start page: one press of Start takes one task (a double click must not make two identities).
(function () {
  "use strict";
  document.querySelectorAll("form.start-form").forEach(function (form) {
    form.addEventListener("submit", function () { form.querySelector("button[type=submit]").disabled = true; });
  });
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form.start-form button[type=submit]").forEach(function (button) { button.disabled = false; });
  });
})();
