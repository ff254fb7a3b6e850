// The survey form: as the task type changes, the question and instructions follow it, unless the
// researcher has written their own (a field still holding one of the defaults is replaced), and the
// fields only another task type reads are hidden (one the server refused stays, with its message).
// Choosing Prolific raises a reward still at its default to Prolific's hourly floor (and choosing
// another platform puts it back), so a researcher who keeps the defaults is not refused at launch.
(function () {
  "use strict";
  const provider = document.getElementById("id_provider");
  const reward = document.getElementById("id_reward_cents");
  if (!provider || !reward || !reward.dataset.prolificMin) return;
  const floor = reward.dataset.prolificMin;
  const usual = reward.defaultValue;
  provider.addEventListener("change", () => {
    if (provider.value === "prolific" && (reward.value === usual || reward.value === "")) {
      reward.value = floor;
    } else if (provider.value !== "prolific" && reward.value === floor && usual !== "") {
      reward.value = usual;
    }
  });
})();

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
