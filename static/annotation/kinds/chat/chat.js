// The live chat page (annotation/kinds/chat): loaded as the task page's script; no inline script (CSP).
// The server keeps the chat: this script shows its state (GET <task address>chat/) and sends each
// action (POST action=send|retry|end|flag). Every message carries a key made here, so sending it twice
// (a double click, a retried request after a lost connection) stores it once. One reply at a time:
// the server refuses a second message while one is awaited; this page says so before asking.
(function () {
  "use strict";
  var root = document.getElementById("chat");
  var form = document.getElementById("task-form");
  if (!root || !form) return;
  var preview = form.hasAttribute("data-preview");
  // The task's own address + "chat/": /a/<token>/chat/, or inside MTurk's frame (whose form posts to
  // the page's own address) /mturk/<survey>/chat/, where the assignment is named by the form's MTurk
  // fields on every request (the frame's cookies are third-party).
  var url = (form.getAttribute("action") || window.location.pathname).replace(/\/?$/, "/") + "chat/";
  // A page that answers a POST (Start, "Submit and next task") sits at the address that was posted
  // to: the address bar is made to name this task, so a reload shows it again and posts nothing.
  var own = form.getAttribute("action");
  if (!preview && own && window.history && own !== window.location.pathname) {
    window.history.replaceState(null, "", own);
  }
  var named = {};
  ["hitId", "assignmentId", "assignment_token"].forEach(function (name) {
    var field = form.querySelector('input[type=hidden][name="' + name + '"]');
    if (field && field.value) named[name] = field.value;
  });
  var query = Object.keys(named).length ? "?" + new URLSearchParams(named).toString() : "";
  var csrf = (form.querySelector("[name=csrfmiddlewaretoken]") || {}).value || "";
  var turnsBox = document.getElementById("chat-turns");
  var typing = document.getElementById("chat-typing");
  var problem = document.getElementById("chat-problem");
  var problemText = document.getElementById("chat-problem-text");
  var retryButton = document.getElementById("chat-retry");
  var input = document.getElementById("chat-input");
  var sendButton = document.getElementById("chat-send");
  var endButton = document.getElementById("chat-end");
  var count = document.getElementById("chat-count");
  var compose = document.getElementById("chat-compose");
  var finalBox = document.getElementById("chat-final");
  var submit = document.getElementById("submit-hit");
  // The submit buttons' row ("Submit and next task", "Submit and stop"): shown once the chat has ended.
  var submitRow = document.getElementById("submit-choices") || submit;
  var answered = document.getElementById("answered-count");
  var seconds = root.querySelector("input.seconds");
  var flagDefs = Array.prototype.map.call(document.querySelectorAll("#chat-flag-defs li"), function (li) {
    return { key: li.getAttribute("data-key"), label: li.textContent };
  });
  var scaleDefs = Array.prototype.map.call(document.querySelectorAll("#chat-scale-defs li"), function (li) {
    return { key: li.getAttribute("data-key"), label: li.textContent, min: +li.getAttribute("data-min"),
             max: +li.getAttribute("data-max"), low: li.getAttribute("data-low"), high: li.getAttribute("data-high") };
  });
  var shownAt = Date.now();
  var state = null;
  var busy = false; // a request of ours is on its way
  var outbox = null; // {key, text, pasted, idle}: the message being sent, kept until the server has it
  var pollTimer = null;
  var openingAsked = false;
  // How the message in the box is being written (the effort rule's evidence, sent with it): characters
  // pasted or dropped in, and the longest gap without typing since the box could take it (or the
  // last key) — reading the reply, thinking, or being away all count; the page being hidden too.
  var writing = { pasted: 0, since: null, longest: 0 };
  function active() {
    var now = Date.now();
    if (writing.since !== null) writing.longest = Math.max(writing.longest, now - writing.since);
    writing.since = now;
  }

  function newKey() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function flagBox(turn, ticked) {
    var box = el("fieldset", "flags");
    box.appendChild(el("legend", "", "Anything wrong with this reply?"));
    flagDefs.forEach(function (def) {
      var label = el("label");
      var check = document.createElement("input");
      check.type = "checkbox";
      check.checked = ticked.indexOf(def.key) >= 0;
      check.disabled = preview || (state && state.ended);
      check.addEventListener("change", function () {
        post({ action: "flag", turn: String(turn.index), key: def.key, on: check.checked ? "1" : "0" }, true);
      });
      label.appendChild(check);
      label.appendChild(document.createTextNode(def.label));
      box.appendChild(label);
    });
    return box;
  }

  // A per-turn rating under a bot message: one radio group per scale, kept by the server as given.
  function scaleBox(turn, given) {
    var box = el("div", "turn-scales");
    scaleDefs.forEach(function (def) {
      var set = el("fieldset", "turn-scale");
      set.appendChild(el("legend", "", def.label));
      var row = el("div", "choices");
      for (var v = def.min; v <= def.max; v += 1) {
        var label = el("label");
        var radio = document.createElement("input");
        radio.type = "radio";
        radio.name = "turn-" + turn.index + "-" + def.key; // not a field of the task form's answers
        radio.value = String(v);
        radio.checked = given[def.key] === v;
        radio.disabled = preview || (state && state.ended);
        radio.setAttribute("form", "chat-no-form");
        radio.addEventListener("change", function (event) {
          post({ action: "rate", turn: String(turn.index), key: def.key, score: event.target.value }, true);
        });
        label.appendChild(radio);
        label.appendChild(document.createTextNode(String(v)));
        row.appendChild(label);
      }
      set.appendChild(row);
      if (def.low || def.high) set.appendChild(el("p", "muted scale-ends", def.min + " = " + def.low + " · " + def.max + " = " + def.high));
      box.appendChild(set);
    });
    return box;
  }

  function renderTurns() {
    var atBottom = turnsBox.scrollHeight - turnsBox.scrollTop - turnsBox.clientHeight < 40;
    turnsBox.textContent = "";
    var botNumber = 0;
    state.turns.forEach(function (turn) {
      var li = el("li", "bubble " + (turn.bot ? "left bot-turn" : "right"));
      if (turn.bot) botNumber += 1;
      li.appendChild(el("span", "speaker", turn.bot ? "Bot: " : "You: "));
      var text = el("span", "text", turn.text);
      text.setAttribute("dir", "auto");
      li.appendChild(text);
      if (turn.bot && scaleDefs.length) li.appendChild(scaleBox(turn, (state.turn_scores || {})[String(turn.index)] || {}));
      if (turn.bot && flagDefs.length) li.appendChild(flagBox(turn, state.flags[String(turn.index)] || []));
      turnsBox.appendChild(li);
    });
    if (outbox && !state.turns.some(function (t) { return !t.bot && t.text === outbox.text; })) {
      var mine = el("li", "bubble right");
      mine.appendChild(el("span", "speaker", "You: "));
      mine.appendChild(el("span", "text", outbox.text));
      turnsBox.appendChild(mine);
    }
    if (atBottom || busy) turnsBox.scrollTop = turnsBox.scrollHeight;
  }

  function countAnswered() {
    if (!answered) return;
    var names = {};
    finalBox.querySelectorAll("input[type=radio]").forEach(function (r) { if (r.checked) names[r.name] = 1; });
    answered.textContent = String(Object.keys(names).length);
    var error = document.getElementById("error-" + root.getAttribute("data-item"));
    if (error && Object.keys(names).length >= finalBox.querySelectorAll("fieldset.scale").length) error.hidden = true;
  }

  function render(message) {
    renderTurns();
    var waiting = state.pending || (busy && !!outbox);
    typing.hidden = !waiting;
    var text = message || state.failure || "";
    var canRetry = (state.unanswered || !!outbox) && !busy && !state.ended;
    if (!text && canRetry && state.turns.length) text = "Your last message has no reply yet.";
    problemText.textContent = text;
    retryButton.hidden = !canRetry;
    problem.hidden = !text;
    var can = state.can_send && !busy && !preview;
    sendButton.disabled = !can;
    if (can && writing.since === null) writing.since = Date.now(); // the box can take a message now
    input.disabled = preview || state.ended || state.user_turns >= state.max_turns;
    endButton.disabled = !state.can_end || busy || preview;
    compose.hidden = state.ended;
    endButton.hidden = state.ended;
    finalBox.hidden = !state.ended;
    if (submitRow) submitRow.hidden = !state.ended;
    var left = state.min_turns - state.user_turns;
    count.textContent = state.ended
      ? "The conversation has ended. Answer the questions below, then submit."
      : "You have written " + state.user_turns + " of at most " + state.max_turns + " messages." +
        (left > 0 ? " Write at least " + left + " more before you can end the conversation." : "");
    countAnswered();
    clearTimeout(pollTimer);
    if (state.pending && !busy) pollTimer = setTimeout(load, 1500); // another tab, or a reload mid-reply
    if (state.unanswered && !state.turns.length && !openingAsked && !busy && !preview) {
      openingAsked = true; // the system writes first
      post({ action: "retry" });
    }
  }

  function handle(response) {
    return response.json().then(function (body) {
      if (body.state) state = body.state;
      if (body.done) { window.location.reload(); return; }
      return body.error || "";
    }, function () { return "The server sent no answer it could read (" + response.status + "). Try again."; });
  }

  function post(fields, quiet) {
    var data = new URLSearchParams(fields);
    Object.keys(named).forEach(function (name) { data.set(name, named[name]); });
    var lost = false;
    if (!quiet) busy = true;
    if (state && !quiet) render();
    return fetch(url, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf, "Accept": "application/json" }
    }).then(handle, function () {
      lost = true;
      return "The connection was lost. Check your connection and press “Try again”: nothing is sent twice.";
    }).then(function (error) {
      if (!quiet) busy = false;
      if (fields.action === "send" && !lost) {
        // The server answered: it holds the message, or refused it (the text goes back to the box).
        var sent = outbox;
        var text = sent ? sent.text : "";
        outbox = null;
        if (error && state && !state.turns.some(function (t) { return !t.bot && t.text === text; })) {
          input.value = text;
          if (sent) writing = { pasted: sent.pasted, since: Date.now(), longest: sent.idle }; // its measures go on
        }
      }
      if (state) render(error);
      if (fields.action === "send" && !error) input.focus();
    });
  }

  function load() {
    return fetch(url + query, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(handle, function () { return "The chat could not be loaded: check your connection and reload the page."; })
      .then(function (error) {
        if (state) render(error);
        else { problemText.textContent = error || "The chat could not be loaded: reload the page."; problem.hidden = false; }
      });
  }

  function send() {
    var text = input.value.trim();
    if (!text || busy || !state || !state.can_send) return;
    if (!outbox || outbox.text !== text) {
      active();
      outbox = { key: newKey(), text: text, pasted: writing.pasted, idle: writing.longest };
      writing = { pasted: 0, since: null, longest: 0 };
    }
    input.value = "";
    sendOutbox();
  }

  function sendOutbox() {
    post({ action: "send", text: outbox.text, key: outbox.key, pasted_chars: String(outbox.pasted),
           idle_ms: String(outbox.idle) });
  }

  sendButton.addEventListener("click", send);
  input.addEventListener("input", active);
  function pasted(text) { writing.pasted += (text || "").length; }
  input.addEventListener("paste", function (event) {
    pasted(event.clipboardData ? event.clipboardData.getData("text") : "");
  });
  input.addEventListener("drop", function (event) {
    pasted(event.dataTransfer ? event.dataTransfer.getData("text") : "");
  });
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); send(); }
  });
  retryButton.addEventListener("click", function () {
    if (outbox && state && !state.turns.some(function (t) { return !t.bot && t.text === outbox.text; })) {
      sendOutbox(); // the message never reached the server
    } else {
      post({ action: "retry" });
    }
  });
  endButton.addEventListener("click", function () { post({ action: "end" }); });
  // The final answers are kept in this browser until submitted (as the page says), like other tasks'.
  var saveKey = form.getAttribute("data-save-key");
  var store = null;
  try { store = window.localStorage; } catch (e) { store = null; }
  function saved() {
    try { return JSON.parse((store && saveKey && store.getItem("chat-final:" + saveKey)) || "{}"); } catch (e) { return {}; }
  }
  var kept = saved();
  finalBox.querySelectorAll("input[type=radio]").forEach(function (r) {
    if (kept[r.name] === r.value && !form.querySelector('input[name="' + r.name + '"]:checked')) r.checked = true;
  });
  finalBox.addEventListener("change", function (event) {
    if (store && saveKey && event.target.name) {
      var answers = saved();
      answers[event.target.name] = event.target.value;
      try { store.setItem("chat-final:" + saveKey, JSON.stringify(answers)); } catch (e) { /* full or off */ }
    }
    countAnswered();
  });
  form.addEventListener("submit", function (event) {
    if (seconds) seconds.value = ((Date.now() - shownAt) / 1000).toFixed(2);
    if (!state || !state.ended) { event.preventDefault(); return; }
    var missing = Array.prototype.some.call(finalBox.querySelectorAll("fieldset.scale"), function (set) {
      return !set.querySelector("input:checked");
    });
    var error = document.getElementById("error-" + root.getAttribute("data-item"));
    if (missing) {
      event.preventDefault();
      if (error) { error.hidden = false; error.scrollIntoView({ block: "center" }); }
      return;
    }
    if (submit) submit.disabled = true; // one submission (the server ignores a second anyway)
    // A refused submission comes back with its answers filled in by the server: nothing to keep here.
    try { if (store && saveKey) store.removeItem("chat-final:" + saveKey); } catch (e) { /* off */ }
  });
  if (submitRow) submitRow.hidden = true;
  if (preview) {
    problemText.textContent = "Preview: the chat is not started here.";
    problem.hidden = false;
    finalBox.hidden = false;
    return;
  }
  load();
})();
