// Report page: while a computation runs, poll the report's status and reload once it is done.
// The page marks the element to watch with data-status-url (no inline script: CSP).
(function () {
  "use strict";
  var status = document.querySelector("[data-status-url]");
  var refresh = document.querySelector("form.report-refresh");
  if (refresh) {
    refresh.addEventListener("submit", function () {
      var button = refresh.querySelector("button");
      button.disabled = true;
      button.textContent = "Queueing…";
    });
  }
  if (!status || !window.fetch) { return; }
  var delay = 2000;
  function poll() {
    fetch(status.getAttribute("data-status-url"), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (state) {
        if (state && !state.pending) {
          window.location.reload();
          return;
        }
        delay = Math.min(delay * 1.5, 15000);
        window.setTimeout(poll, delay);
      })
      .catch(function () { window.setTimeout(poll, 15000); });
  }
  window.setTimeout(poll, delay);
})();
