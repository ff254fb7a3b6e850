// Inside MTurk's frame. On the task page: the answers given so far (choices, reasons, written
// replies) go to the server as they are given, because a browser that blocks third-party storage
// refuses task.js its localStorage copy here; the server fills the page with them when the HIT is
// loaded again, and drops them once the assignment is stored. On the "answers saved" page: the
// browser's kept copy (where it was allowed) goes too, and the assignment is handed back to MTurk.
(function () {
  "use strict";
  var PREFIX = "ratelab-task:";
  var DELAY_MS = 800;  // one request per pause in answering, not one per keystroke

  var handBack = document.getElementById("mturk-external-submit");
  if (handBack) {
    if (handBack.dataset.saveKey) {
      try { window.localStorage.removeItem(PREFIX + handBack.dataset.saveKey); } catch (e) { /* no storage */ }
    }
    if (handBack.dataset.autosubmit === "1") { handBack.submit(); }
    return;
  }

  var form = document.getElementById("task-form");
  var draft = document.getElementById("mturk-draft");
  if (!form || !draft || !draft.dataset.url) { return; }
  var url = draft.dataset.url;
  var timer = null;
  var unsent = false;
  var submitting = false;

  function send(leaving) {
    clearTimeout(timer);
    if (!unsent || submitting) { return; }
    unsent = false;
    var body = new FormData(form);
    if (leaving && navigator.sendBeacon && navigator.sendBeacon(url, body)) { return; }
    fetch(url, { method: "POST", body: body, credentials: "same-origin", keepalive: true })
      .then(function (response) { if (!response.ok && response.status !== 409) { unsent = true; } })
      .catch(function () { unsent = true; });  // offline for a moment: the next answer sends it all again
  }
  function changed() {
    unsent = true;
    clearTimeout(timer);
    timer = setTimeout(function () { send(false); }, DELAY_MS);
  }
  form.addEventListener("change", changed);
  form.addEventListener("input", changed);
  // task.js's listener runs first: when it refuses an incomplete submission, the draft is still wanted.
  form.addEventListener("submit", function (event) { if (!event.defaultPrevented) { submitting = true; clearTimeout(timer); } });
  window.addEventListener("pageshow", function () { submitting = false; });
  window.addEventListener("pagehide", function () { send(true); });

  if (draft.dataset.restored === "1") {
    var note = document.getElementById("restored-note");
    if (note) {
      note.textContent = "Your earlier answers to this HIT were restored.";
      note.hidden = false;
    }
  }
})();
