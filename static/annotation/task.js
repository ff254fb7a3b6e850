// The annotator page: answers kept in this browser as they are given (restored on reload, cleared
// by the thank-you page), a warning before leaving with answers not yet submitted, keyboard
// shortcuts, time per item, and no submission with an item unanswered (each marked, named on top).
(function () {
  "use strict";
  var form = document.getElementById("task-form");
  if (!form) { return; }
  var fieldsets = Array.prototype.slice.call(form.querySelectorAll("fieldset.scale"));
  var textareas = Array.prototype.slice.call(form.querySelectorAll("textarea"));
  var items = Array.prototype.slice.call(form.querySelectorAll(".task-item"));
  // Pairwise items' optional one-line reasons: kept like written replies, never required.
  var reasons = Array.prototype.slice.call(form.querySelectorAll("input.reason"));
  var counter = document.getElementById("answered-count");
  var summary = document.getElementById("error-summary");
  var restoredNote = document.getElementById("restored-note");
  // "Submit and next task" where the page offers it (the default, focused after the last answer), else "Submit".
  var submit = document.getElementById("submit-next") || document.getElementById("submit-hit");
  var submitButtons = Array.prototype.slice.call(form.querySelectorAll("#submit-choices button[type=submit]"));
  var last = performance.now();
  var submitting = false;
  var PREFIX = "ratelab-task:";
  var KEEP_DAYS = 30;
  var storeKey = form.dataset.saveKey ? PREFIX + form.dataset.saveKey : null;

  // --- kept answers (localStorage; a browser that refuses storage simply keeps nothing) ---
  function storage() {
    try { return window.localStorage; } catch (e) { return null; }
  }
  function readStored(key) {
    var store = storage();
    if (!store) { return null; }
    try { return JSON.parse(store.getItem(key) || "null"); } catch (e) { return null; }
  }
  function save() {
    var store = storage();
    if (!store || !storeKey) { return; }
    var data = { savedAt: Date.now(), scores: {}, texts: {}, seconds: {}, ticked: {} };
    form.querySelectorAll("input[type=radio]:checked").forEach(function (radio) { data.scores[radio.name] = radio.value; });
    // Yes/no flags (a conversation's bot turns): every box is kept, ticked or not, so an untick survives a reload.
    form.querySelectorAll("input[type=checkbox]").forEach(function (box) { data.ticked[box.name] = box.checked; });
    textareas.concat(reasons).forEach(function (area) { if (area.value) { data.texts[area.name] = area.value; } });
    form.querySelectorAll("input.seconds").forEach(function (hidden) { if (hidden.value) { data.seconds[hidden.name] = hidden.value; } });
    try { store.setItem(storeKey, JSON.stringify(data)); } catch (e) { /* full or refused: nothing to do */ }
  }
  function restore() {
    var data = storeKey ? readStored(storeKey) : null;
    if (!data) { return false; }
    var restored = false;
    Object.keys(data.scores || {}).forEach(function (name) {
      var group = form.querySelectorAll('input[type=radio][name="' + CSS.escape(name) + '"]');
      if (!group.length || Array.prototype.some.call(group, function (r) { return r.checked; })) { return; }
      Array.prototype.forEach.call(group, function (radio) {
        if (radio.value === data.scores[name]) { radio.checked = true; restored = true; }
      });
    });
    form.querySelectorAll("input[type=checkbox]").forEach(function (box) {
      if (data.ticked && Object.prototype.hasOwnProperty.call(data.ticked, box.name) && box.checked !== data.ticked[box.name]) {
        box.checked = data.ticked[box.name];
        restored = true;
      }
    });
    textareas.concat(reasons).forEach(function (area) {
      if (!area.value && data.texts && data.texts[area.name]) { area.value = data.texts[area.name]; restored = true; }
    });
    form.querySelectorAll("input.seconds").forEach(function (hidden) {
      if (!hidden.value && data.seconds && data.seconds[hidden.name]) { hidden.value = data.seconds[hidden.name]; }
    });
    return restored;
  }
  function pruneOld() {
    // Tasks submitted elsewhere (the Mechanical Turk frame has no thank-you page of ours) or abandoned.
    var store = storage();
    if (!store) { return; }
    var limit = Date.now() - KEEP_DAYS * 24 * 3600 * 1000;
    for (var i = store.length - 1; i >= 0; i--) {
      var key = store.key(i);
      if (key && key.indexOf(PREFIX) === 0 && key !== storeKey) {
        var data = readStored(key);
        if (!data || !(data.savedAt > limit)) { store.removeItem(key); }
      }
    }
  }

  // --- what is answered ---
  function answered(fieldset) { return !!fieldset.querySelector("input:checked"); }
  function unanswered() {
    return fieldsets.filter(function (f) { return !answered(f); })
      .concat(textareas.filter(function (t) { return !t.value.trim(); }));
  }
  function itemMissing(item) {
    var area = item.querySelector("textarea");
    if (area) { return !area.value.trim(); }
    return Array.prototype.some.call(item.querySelectorAll("fieldset.scale"), function (f) { return !answered(f); });
  }
  function update() {
    var total = fieldsets.length + textareas.length;
    counter.textContent = String(total - unanswered().length);
  }

  // --- marking missing items, and the summary on top that names them ---
  function describedBy(element, id, on) {
    var ids = (element.getAttribute("aria-describedby") || "").split(/\s+/).filter(function (x) { return x && x !== id; });
    if (on) { ids.push(id); }
    if (ids.length) { element.setAttribute("aria-describedby", ids.join(" ")); } else { element.removeAttribute("aria-describedby"); }
  }
  function mark(item, on) {
    var errorId = "error-" + item.dataset.item;
    var message = document.getElementById(errorId);
    item.classList.toggle("missing", on);
    if (message) { message.hidden = !on; }
    item.querySelectorAll("input[type=radio], textarea").forEach(function (input) {
      if (on) { input.setAttribute("aria-invalid", "true"); } else { input.removeAttribute("aria-invalid"); }
    });
    item.querySelectorAll("fieldset.scale, textarea").forEach(function (element) { describedBy(element, errorId, on); });
  }
  function numbersText(numbers) {
    return numbers.length === 1 ? numbers[0] : numbers.slice(0, -1).join(", ") + " and " + numbers[numbers.length - 1];
  }
  function showSummary(missingItems) {
    var numbers = missingItems.map(function (item) { return item.dataset.number; });
    summary.textContent = "";
    // Named as the server names them: a pairwise page's items are pairs (each of reply A and B).
    // A kind that names its items itself (a conversation survey's) says so on each item.
    var pairs = missingItems.some(function (item) { return !!item.querySelector(".pair"); });
    var sets = missingItems.some(function (item) { return !!item.querySelector(".bws-set"); });
    var noun = pairs ? (numbers.length === 1 ? "pair " : "pairs ") : (numbers.length === 1 ? "reply " : "replies ");
    if (sets) { noun = numbers.length === 1 ? "set " : "sets "; }
    if (missingItems[0].dataset.noun) { noun = (numbers.length === 1 ? missingItems[0].dataset.noun : missingItems[0].dataset.nouns) + " "; }
    summary.appendChild(document.createTextNode("Please answer every item: " + noun));
    missingItems.forEach(function (item, index) {
      if (index > 0) { summary.appendChild(document.createTextNode(index === missingItems.length - 1 ? " and " : ", ")); }
      var link = document.createElement("a");
      link.href = "#" + item.id;
      link.textContent = item.dataset.number;
      link.addEventListener("click", function (event) {
        event.preventDefault();
        // The first question left out (a conversation asks many), else the item's first.
        var open = Array.prototype.filter.call(item.querySelectorAll("fieldset.scale"), function (f) { return !answered(f); });
        var target = open[0] || item.querySelector("fieldset.scale") || item.querySelector("textarea");
        if (target && target.tagName === "FIELDSET") { focusFieldset(target); } else if (target) { target.focus(); }
      });
      summary.appendChild(link);
    });
    summary.appendChild(document.createTextNode((numbers.length === 1 ? " is" : " are") + " still unanswered (marked below)."));
    summary.hidden = false;
    summary.focus();
    summary.scrollIntoView({ block: "center" });
  }
  function refreshMarks(item) {
    if (item && item.classList.contains("missing") && !itemMissing(item)) { mark(item, false); }
    if (!summary.hidden && !items.some(function (i) { return i.classList.contains("missing"); }) && !unanswered().length) {
      summary.hidden = true;
    }
  }

  // --- "How much better?" belongs to a side: none while the main question says "About the same" ---
  // Disabled (so neither kept here, sent as a draft nor submitted) and cleared; a side chosen again
  // asks it afresh. The server drops a strength sent with a tie all the same (a page without script).
  function syncStrength(item) {
    var box = item ? item.querySelector("fieldset.strength") : null;
    if (!box) { return; }
    var tie = item.querySelector('input[type=radio][name="score-' + CSS.escape(item.dataset.item) + '-overall"][value="tie"]');
    var tied = !!(tie && tie.checked);
    box.disabled = tied;
    if (tied) { box.querySelectorAll("input[type=radio]").forEach(function (radio) { radio.checked = false; }); }
  }

  // --- best-worst sets: best and worst are two different replies ---
  // The reply picked in one question is disabled in the other (so neither a click nor a key can
  // pick it there); the server refuses one reply sent as both all the same (a page without script).
  function syncDistinct(item, changedFieldset) {
    var pair = item ? Array.prototype.slice.call(item.querySelectorAll("fieldset[data-distinct]")) : [];
    if (pair.length !== 2) { return; }
    function picked(fieldset) { var radio = fieldset.querySelector("input:checked"); return radio ? radio.value : null; }
    if (changedFieldset && pair.indexOf(changedFieldset) >= 0) {
      var other = pair[1 - pair.indexOf(changedFieldset)];
      var clash = other.querySelector("input:checked");
      if (clash && clash.value === picked(changedFieldset)) { clash.checked = false; }
    }
    pair.forEach(function (fieldset, index) {
      var taken = picked(pair[1 - index]);
      fieldset.querySelectorAll("input[type=radio]").forEach(function (radio) {
        radio.disabled = radio.value === taken;
        radio.closest("label").classList.toggle("taken", radio.disabled);
      });
    });
  }

  // --- time per item, keyboard ---
  // Time since the previous answer is charged to the item just answered (seconds, summed on changes).
  function charge(element) {
    var item = element.closest(".task-item");
    if (!item) { return; }
    var hidden = item.querySelector("input.seconds");
    var now = performance.now();
    hidden.value = ((parseFloat(hidden.value) || 0) + (now - last) / 1000).toFixed(2);
    last = now;
  }
  function highlight(fieldset) {
    fieldsets.forEach(function (f) { f.classList.toggle("current", f === fieldset); });
  }
  function focusFieldset(fieldset) {
    var radio = fieldset.querySelector("input:checked") || fieldset.querySelector("input[type=radio]");
    highlight(fieldset);
    radio.focus();
    fieldset.scrollIntoView({ block: "center" });
  }
  function current() {
    var active = document.activeElement && document.activeElement.closest ? document.activeElement.closest("fieldset.scale") : null;
    return active || fieldsets.filter(function (f) { return !answered(f); })[0] || null;
  }

  function changed(event) {
    if (event.type === "change") { charge(event.target); }
    syncStrength(event.target.closest ? event.target.closest(".task-item") : null);
    syncDistinct(event.target.closest ? event.target.closest(".task-item") : null,
      event.target.closest ? event.target.closest("fieldset.scale") : null);
    update();
    save();
    refreshMarks(event.target.closest ? event.target.closest(".task-item") : null);
  }
  form.addEventListener("change", changed);
  form.addEventListener("input", function (event) {
    if (event.target.tagName === "TEXTAREA" || event.target.classList.contains("reason")) { changed(event); }
  });
  form.addEventListener("focusin", function (event) {
    var fieldset = event.target.closest ? event.target.closest("fieldset.scale") : null;
    if (fieldset) { highlight(fieldset); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var tag = event.target.tagName;
    if (tag === "TEXTAREA" || (tag === "INPUT" && event.target.type !== "radio")) { return; }
    if (!/^[0-9]$/.test(event.key)) { return; }
    var fieldset = current();
    if (!fieldset) { return; }
    // Rating scales answer by value (1-5); a pairwise question by its shortcut (1 = A, 2 = B, 3 = tie).
    var radio = fieldset.querySelector('input[type=radio][value="' + event.key + '"], input[type=radio][data-key="' + event.key + '"]');
    if (!radio || radio.disabled) { return; }
    event.preventDefault();
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    var next = fieldsets.slice(fieldsets.indexOf(fieldset) + 1).filter(function (f) { return !answered(f); })[0]
      || fieldsets.filter(function (f) { return !answered(f); })[0];
    if (next) { focusFieldset(next); } else { submit.focus(); }
  });
  form.addEventListener("submit", function (event) {
    if (form.dataset.preview) { event.preventDefault(); return; }
    var missingItems = items.filter(itemMissing);
    if (missingItems.length) {
      event.preventDefault();
      items.forEach(function (item) { mark(item, missingItems.indexOf(item) >= 0); });
      showSummary(missingItems);
      return;
    }
    if (submitting) { event.preventDefault(); return; }  // one click, one submission (the server also stores a replay once)
    // Leaving for the submission is no loss: the page it leads to (the next task or the thank-you
    // page) clears the kept copy.
    submitting = true;
    // The other choice is disabled; the button pressed is not, as a disabled button's name and value
    // ("then=next") would not be sent.
    submitButtons.forEach(function (button) { if (button !== event.submitter) { button.disabled = true; } });
  });
  // A page shown again (Back) after a refused or interrupted submission can be submitted again.
  window.addEventListener("pageshow", function () {
    submitting = false;
    submitButtons.forEach(function (button) { button.disabled = !!form.dataset.preview; });
  });
  window.addEventListener("beforeunload", function (event) {
    if (submitting || form.dataset.preview || unanswered().length === fieldsets.length + textareas.length) { return; }
    save();
    event.preventDefault();
    event.returnValue = "";  // browsers show their own words: "Leave site? Changes you made may not be saved."
  });

  if (form.dataset.submittedKey) {
    // This page answers "Submit and next task": the task before is stored, so its kept copy goes.
    var store = storage();
    if (store) {
      store.removeItem(PREFIX + form.dataset.submittedKey);
      store.removeItem(PREFIX + form.dataset.submittedKey + ":telemetry");  // writing counts
    }
  }
  if (form.dataset.saveKey) {
    // A page that answers a POST (Start, "Submit and next task") sits at the address that was
    // posted to: the address bar is made to name this task, so a reload shows it again, posting nothing.
    var here = new URL(form.action, window.location.href);
    if (window.history && here.pathname !== window.location.pathname) {
      window.history.replaceState(null, "", here.pathname);
    }
  }
  pruneOld();
  if (restore() && restoredNote) {
    restoredNote.hidden = false;
    // Resumed with a code, but this browser kept answers after all: the note that they stayed elsewhere is wrong here.
    var resumedNote = document.getElementById("resumed-note");
    if (resumedNote) { resumedNote.hidden = true; }
  }
  items.forEach(syncStrength);
  items.forEach(function (item) { syncDistinct(item, null); });  // picks restored or filled in by the server  // a tie restored, or filled in by the server, with a strength from before
  update();
  save();
  if (fieldsets.length) { highlight(fieldsets[0]); }
  if (!summary.hidden && summary.textContent.trim()) {
    // The server refused the submission (or the session changed): say so where focus is.
    summary.focus();
  }
})();
