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
  // A table box wider than its content column scrolls sideways: say so (browser walk F17). The
  // hint names what is hidden; the accent edge marks the side with more columns.
  function markOverflow(box) {
    var more = box.scrollWidth > box.clientWidth + 1;
    var hint = box.previousElementSibling;
    if (!hint || !hint.classList.contains("scroll-hint")) {
      hint = document.createElement("p");
      hint.className = "scroll-hint";
      hint.textContent = "More columns: scroll this table sideways →";
      box.parentNode.insertBefore(hint, box);
    }
    hint.hidden = !more;
    box.classList.toggle("overflowing", more);
    box.classList.toggle("scrolled", box.scrollLeft > 1);
    box.classList.toggle("at-end", box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
  }
  var boxes = Array.prototype.slice.call(document.querySelectorAll(".report-table"));
  boxes.forEach(function (box) {
    markOverflow(box);
    box.addEventListener("scroll", function () { markOverflow(box); }, { passive: true });
  });
  window.addEventListener("resize", function () { boxes.forEach(markOverflow); });
  // A table inside a closed <details> has no width until opened.
  document.addEventListener("toggle", function () { boxes.forEach(markOverflow); }, true);
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
