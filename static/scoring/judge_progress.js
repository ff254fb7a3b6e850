// A judge's page: while one of its runs (or judgings of pairs) is queued or running, poll the
// judge's progress and show the counts; reload when none is active any more, to show the figures
// and, for a failure, why.
(function () {
  "use strict";
  var live = document.getElementById("judge-live");
  if (!live) { return; }
  var poll = function () {
    fetch(live.dataset.progressUrl, { credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (progress) {
        if (!progress.active) {
          window.location.reload();
          return;
        }
        progress.rows.forEach(function (row) {
          var cell = document.querySelector('.judge-state[data-row="' + row.id + '"]');
          if (cell) { cell.textContent = row.state; }
        });
        var active = ["queued", "running", "queued or running"];
        var running = progress.rows.filter(function (row) { return active.indexOf(row.state) >= 0; });
        var answered = running.reduce(function (sum, row) { return sum + row.prompts; }, 0);
        var requests = running.reduce(function (sum, row) { return sum + row.requests; }, 0);
        live.textContent = "Queued or running: " + answered + " prompt(s) answered so far (" + requests +
          " request(s)). This page updates itself and shows the figures when it ends.";
        window.setTimeout(poll, 2000);
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  };
  window.setTimeout(poll, 1500);
})();
