// Writing telemetry: how each written reply came about, sent with it in `telemetry-<item>` (a JSON
// object of counts; the server checks it and the integrity flags read it). Counts only, never the
// keys themselves. Runs on the task page alone (the annotator has started the task; the start page
// says what is recorded), and not in a preview.
//   first_key_ms      from the page being shown to the box's first key press or paste
//   active_typing_ms  the sum of gaps between key presses in the box, a gap over 2 s counted as a pause
//   keystrokes        key presses that insert a character, and input-method key presses (a phone's
//                     keyboard and desktop IMEs report "Unidentified"/"Process"); deletions: Backspace/Delete
//   typed_chars       characters inserted by typing input (a phone's word suggestion counts whole; an
//                     input method's composition once, when it is committed, not at every update)
//   inserted_chars    characters of single insertions of several words (20 characters or more) that no
//                     paste event announced: a phone keyboard's clipboard chip, a text expander, autofill
//   paste_events      pastes and drops into the box; pasted_chars: the characters they carried
//   focus_changes     times the page lost focus or was hidden while the box was the one being answered
//   final_length      characters in the box (the server counts the stored text again)
//   restored_chars    characters already in the box when the page opened with no counts kept for them
// The counts are kept in this browser beside the answers (task.js), so a reload continues them.
(function () {
  "use strict";
  var form = document.getElementById("task-form");
  if (!form || form.dataset.preview) { return; }
  var PAUSE_MS = 2000;
  // One insertion this long, of more than one word, is not a key press or a word suggestion.
  var AT_ONCE_MIN_CHARS = 20;
  var shownAt = performance.now();
  var storeKey = form.dataset.saveKey ? "ratelab-task:" + form.dataset.saveKey + ":telemetry" : null;
  var boxes = Array.prototype.slice.call(form.querySelectorAll(".task-item textarea"));
  var records = {};
  var current = null;  // the box being answered: the one focused last
  var away = false;

  function storage() {
    try { return window.localStorage; } catch (e) { return null; }
  }
  function kept() {
    var store = storage();
    if (!store || !storeKey) { return {}; }
    try { return (JSON.parse(store.getItem(storeKey) || "null") || {}).records || {}; } catch (e) { return {}; }
  }
  function keep() {
    var store = storage();
    if (!store || !storeKey) { return; }
    var counts = {};
    Object.keys(records).forEach(function (name) { counts[name] = records[name].counts; });
    try { store.setItem(storeKey, JSON.stringify({ savedAt: Date.now(), records: counts })); } catch (e) { /* full */ }
  }
  function hiddenFor(box) {
    var item = box.closest(".task-item");
    return item ? item.querySelector("input.telemetry") : null;
  }
  function write(box) {
    var record = records[box.name];
    var hidden = hiddenFor(box);
    if (!record || !hidden) { return; }
    record.counts.final_length = box.value.length;
    var sent = {};
    Object.keys(record.counts).forEach(function (key) {
      if (record.counts[key] !== null) { sent[key] = Math.max(0, Math.round(record.counts[key])); }
    });
    hidden.value = JSON.stringify(sent);
  }
  function touched(box) {
    write(box);
    keep();
  }
  function firstKey(record) {
    if (record.counts.first_key_ms === null) { record.counts.first_key_ms = performance.now() - shownAt; }
  }
  function timeKey(record) {
    var now = performance.now();
    if (record.lastKeyAt !== null && now - record.lastKeyAt <= PAUSE_MS) {
      record.counts.active_typing_ms += now - record.lastKeyAt;
    }
    record.lastKeyAt = now;
  }

  var before = kept();
  boxes.forEach(function (box) {
    var counts = before[box.name];
    if (!counts) {
      counts = {
        first_key_ms: null, active_typing_ms: 0, keystrokes: 0, typed_chars: 0, deletions: 0, final_length: 0,
        paste_events: 0, pasted_chars: 0, inserted_chars: 0, focus_changes: 0, restored_chars: box.value.length
      };
    }
    if (counts.inserted_chars === undefined) { counts.inserted_chars = 0; }  // kept by an older page
    records[box.name] = { counts: counts, lastKeyAt: null };
    write(box);

    box.addEventListener("focus", function () { current = box; });
    box.addEventListener("keydown", function (event) {
      var record = records[box.name];
      if (event.ctrlKey || event.metaKey || event.altKey) { return; }  // shortcuts (a paste counts below)
      if (event.key === "Backspace" || event.key === "Delete") {
        record.counts.deletions += 1;
      } else if (event.key === "Unidentified" || event.key === "Process" || event.keyCode === 229) {
        record.counts.keystrokes += 1;  // a key of an input method: a phone keyboard's tap, an IME's key
      } else if (event.key && event.key.length === 1) {
        record.counts.keystrokes += 1;
      } else if (event.key !== "Enter") {
        return;  // arrows, Shift, Tab: no text
      } else {
        record.counts.keystrokes += 1;
      }
      firstKey(record);
      timeKey(record);
      touched(box);
    });
    box.addEventListener("input", function (event) {
      var record = records[box.name];
      var type = event.inputType || "";
      var data = event.data || "";
      if (type === "insertText" || type === "insertReplacementText") {
        if (data.length >= AT_ONCE_MIN_CHARS && /\S\s+\S/.test(data)) {
          record.counts.inserted_chars += data.length;
        } else {
          record.counts.typed_chars += data.length;
        }
      } else if (type === "insertCompositionText") {
        // Each update repeats the whole word being composed ("h", "he", "hel"...): counted at its end.
      } else if (type === "insertLineBreak" || type === "insertParagraph") {
        record.counts.typed_chars += 1;
      }
      touched(box);
    });
    box.addEventListener("compositionend", function (event) {
      records[box.name].counts.typed_chars += (event.data || "").length;
      touched(box);
    });
    box.addEventListener("paste", function (event) {
      var record = records[box.name];
      var text = event.clipboardData ? event.clipboardData.getData("text") : "";
      record.counts.paste_events += 1;
      record.counts.pasted_chars += text.length;
      firstKey(record);
      touched(box);
    });
    box.addEventListener("drop", function (event) {
      var record = records[box.name];
      var text = event.dataTransfer ? event.dataTransfer.getData("text") : "";
      record.counts.paste_events += 1;
      record.counts.pasted_chars += text.length;
      firstKey(record);
      touched(box);
    });
  });

  // Leaving the page (another tab or window) while a reply is open: counted once per absence.
  function left() {
    if (away || !current) { return; }
    away = true;
    records[current.name].counts.focus_changes += 1;
    touched(current);
  }
  function back() { away = false; }
  window.addEventListener("blur", left);
  window.addEventListener("focus", back);
  document.addEventListener("visibilitychange", function () { if (document.hidden) { left(); } else { back(); } });
  form.addEventListener("submit", function () { boxes.forEach(write); });
})();
