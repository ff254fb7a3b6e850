// The survey form: as the task type changes, the question and instructions follow it, unless the
// researcher has written their own (a field still holding one of the defaults is replaced), and the
// fields only another task type reads are hidden (one the server refused stays, with its message).
(function () {
  "use strict";
  const type = document.getElementById("id_task_type");
  if (!type) return;
  const fields = ["id_question", "id_instructions"]
    .map((id) => document.getElementById(id))
    .filter((field) => field && field.dataset.defaults);
  function follow() {
    for (const field of fields) {
      const defaults = JSON.parse(field.dataset.defaults);
      const known = Object.values(defaults);
      if (field.value.trim() === "" || known.includes(field.value)) {
        field.value = defaults[type.value] ?? field.value;
      }
    }
  }
  const specific = document.querySelectorAll("[data-task-type]");
  function showOwnFields() {
    for (const field of specific) {
      field.hidden = field.dataset.taskType !== type.value && !field.querySelector(".errorlist");
    }
  }
  type.addEventListener("change", () => {
    follow();
    showOwnFields();
  });
  showOwnFields();
})();
