// The annotator page: keyboard shortcuts, time per item, and no submission with a question unanswered.
(function () {
  "use strict";
  var form = document.getElementById("task-form");
  if (!form) { return; }
  var fieldsets = Array.prototype.slice.call(form.querySelectorAll("fieldset.scale"));
  var textareas = Array.prototype.slice.call(form.querySelectorAll("textarea"));
  var counter = document.getElementById("answered-count");
  var message = document.getElementById("unanswered-message");
  var submit = document.getElementById("submit-hit");
  var last = performance.now();

  function answered(fieldset) { return !!fieldset.querySelector("input:checked"); }
  function unanswered() {
    return fieldsets.filter(function (f) { return !answered(f); })
      .concat(textareas.filter(function (t) { return !t.value.trim(); }));
  }
  function update() {
    var total = fieldsets.length + textareas.length;
    counter.textContent = String(total - unanswered().length);
  }
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

  form.addEventListener("change", function (event) { charge(event.target); update(); message.hidden = true; });
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
    var radio = fieldset.querySelector('input[type=radio][value="' + event.key + '"]');
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
    var missing = unanswered();
    if (missing.length) {
      event.preventDefault();
      message.hidden = false;
      var target = missing[0];
      if (target.tagName === "FIELDSET") { focusFieldset(target); } else { target.focus(); }
      return;
    }
    submit.disabled = true;  // one click, one submission (the server also stores a replay once)
  });
  update();
  if (fieldsets.length) { highlight(fieldsets[0]); }
})();
