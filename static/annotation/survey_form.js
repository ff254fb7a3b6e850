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

// Prolific's note under the reward shows only while Prolific is chosen (without this script it
// shows always, headed "Prolific only:").
(function () {
  "use strict";
  const provider = document.getElementById("id_provider");
  const notes = document.querySelectorAll("[data-provider]");
  if (!provider || !notes.length) return;
  function show() {
    for (const note of notes) note.hidden = note.dataset.provider !== provider.value;
  }
  provider.addEventListener("change", show);
  show();
})();

// Choosing a dataset shows its systems as checkboxes at once (the server does the same after a
// round trip, or when the page is opened from the dataset's page). The names come from the
// dataset select's data-systems; no dataset chosen brings back the typed field.
(function () {
  "use strict";
  const dataset = document.getElementById("id_dataset");
  const current = document.querySelector("[data-field=systems]");
  if (!dataset || !current || !dataset.dataset.systems) return;
  const systems = JSON.parse(dataset.dataset.systems);
  const typed = current.querySelector("input[type=text]") ? current : null;
  let field = current;

  function checkboxes(names, datasetName) {
    const fieldset = document.createElement("fieldset");
    fieldset.className = "field checkboxes";
    fieldset.dataset.field = "systems";
    const legend = document.createElement("legend");
    legend.textContent = "Systems";
    const list = document.createElement("div");
    list.id = "id_systems";
    names.forEach((name, index) => {
      const row = document.createElement("div");
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.name = "systems";
      box.value = name;
      box.id = "id_systems_" + index;
      label.htmlFor = box.id;
      label.append(box, " " + name);
      row.append(label);
      list.append(row);
    });
    const help = document.createElement("small");
    help.className = "muted";
    help.textContent = "Systems of " + datasetName + " whose replies are shown; none ticked means all of them.";
    fieldset.append(legend, list, help);
    return fieldset;
  }

  dataset.addEventListener("change", () => {
    const names = systems[dataset.value];
    let next;
    if (names) {
      next = checkboxes(names, dataset.options[dataset.selectedIndex].text);
    } else if (typed) {
      next = typed;
    } else {
      return; // the page came with checkboxes and no typed field to go back to: keep them
    }
    field.replaceWith(next);
    field = next;
  });
})();
