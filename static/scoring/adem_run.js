// Poll a training run's progress and refresh the status line and learning curve until it ends.
(function () {
  "use strict";
  var root = document.getElementById("run");
  if (!root) { return; }
  var statusEl = document.getElementById("run-status");
  var latestEl = document.getElementById("run-latest");
  var errorEl = document.getElementById("run-error");
  var curve = document.getElementById("run-curve");
  var phaseEl = document.getElementById("run-phase");
  var phaseBar = document.getElementById("run-phase-bar");
  function tick() {
    fetch(root.dataset.progressUrl, { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        statusEl.textContent = data.status;
        errorEl.textContent = data.error || "";
        var last = data.progress[data.progress.length - 1];
        if (last) {
          var fit = last.stage === "fold" ? "Fold " + (last.fold + 1) + ", epoch " + last.epoch
            : last.stage === "final" ? "Final fit, epoch " + last.epoch : "Epoch " + last.epoch;
          var text = fit + (last.step ? ", step " + last.step : "") +
            ": training loss " + last.train_loss.toFixed(4);
          if (last.val_pearson !== undefined && last.val_pearson !== null) {
            text += ", validation r " + last.val_pearson.toFixed(3);
          }
          latestEl.textContent = text;
        }
        if (phaseEl) {
          // loading the encoder, encoding n of m texts, the epoch (hidden once the run has ended)
          phaseEl.textContent = data.phase_text || "";
          phaseEl.hidden = !data.phase_text;
        }
        if (phaseBar) {  // the encoding's share done; hidden outside it
          var fraction = data.phase_fraction;
          phaseBar.hidden = fraction === null || fraction === undefined;
          if (!phaseBar.hidden) { phaseBar.value = Math.round(fraction * 1000) / 10; }
        }
        if (curve && data.progress.length) {  // no empty axes before the first epoch
          curve.src = root.dataset.curveUrl + "?n=" + data.progress.length;
          curve.hidden = false;
        }
        if (data.status === "queued" || data.status === "running") { setTimeout(tick, 2000); }
        else if (data.status === "done") { setTimeout(function () { window.location.reload(); }, 500); }
      })
      .catch(function () { setTimeout(tick, 5000); });
  }
  var initial = statusEl.textContent.trim().toLowerCase();
  if (initial === "queued" || initial === "running") { setTimeout(tick, 1000); }
})();
