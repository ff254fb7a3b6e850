// The survey page: refresh the progress numbers every 10 s while the page is open.
(function () {
  "use strict";
  var box = document.getElementById("progress");
  if (!box || !box.dataset.url) { return; }
  function refresh() {
    fetch(box.dataset.url, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (p) {
        if (!p) { return; }
        var set = function (key, text) { var el = box.querySelector('[data-key="' + key + '"]'); if (el) { el.textContent = text; } };
        set("hits", p.hits_done + " of " + p.hits_total);
        set("assignments", p.assignments_done + " of " + p.assignments_total + " (" + p.assignments.active + " in progress)");
        set("annotators", String(p.annotators));
        set("ratings", String(p.ratings));
        set("flagged", String(p.flagged));
        set("excluded", String(p.excluded) + (p.exclusions_current === false ? " (being checked…)" : ""));
      })
      .catch(function () {});
  }
  setInterval(refresh, 10000);
})();
