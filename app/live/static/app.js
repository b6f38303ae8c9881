// Ridge live, the player page. It talks to the host's lobby API (DESIGN.md, "Live play") and
// listens to /api/events, where the host pushes the state when it changes. Nothing here grades:
// the host does. What this browser keeps (localStorage): its token, nickname and seat, so a
// reload, a phone that slept or a host restart puts the player back where they were; and the
// half-filled answer to the open question. Every text goes in through textContent, never as HTML.
"use strict";
(function () {
  var KEEP = "ridge-live";
  var DRAFT = "ridge-live-draft:";
  var VIEWS = ["join", "lobby", "question", "locked", "reveal", "done", "gone"];
  var PARTS = [["bottleneck", "bottleneck"], ["lever", "best lever"], ["gain", "its gain"], ["reason", "because"]];
  var $ = function (id) { return document.getElementById(id); };

  var me = load();
  var state = null;
  var stream = null;          // the AbortController of the open event stream
  var retry = 0;
  var lastHeard = 0;
  var clock = {deadline: null, left: null, paused: false};
  var built = null;           // "index|title" of the question form on the page
  var mine = {};              // what this browser locked in, by question index
  var expired = {};           // questions whose time ran out here before the host closed them
  var lateSent = {};
  var shownReveal = null;

  // -- keeping things in the browser ------------------------------------------------------------
  function load() {
    try {
      var kept = JSON.parse(localStorage.getItem(KEEP) || "{}");
      return kept && typeof kept === "object" ? kept : {};
    } catch (e) { return {}; }
  }
  function save() { try { localStorage.setItem(KEEP, JSON.stringify(me)); } catch (e) { /* private mode */ } }
  function seat() {
    if (!/^[0-9a-f]{32}$/.test(me.seat || "")) {
      var bytes = new Uint8Array(16);
      crypto.getRandomValues(bytes);
      me.seat = Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
      save();
    }
    return me.seat;
  }
  function draftKey(index) { return DRAFT + (me.token || "") + ":" + index; }
  function readDraft(index) {
    try { return JSON.parse(localStorage.getItem(draftKey(index)) || "null"); } catch (e) { return null; }
  }
  function writeDraft(index, draft) { try { localStorage.setItem(draftKey(index), JSON.stringify(draft)); } catch (e) { /* full */ } }
  function dropDraft(index) { try { localStorage.removeItem(draftKey(index)); } catch (e) { /* ignore */ } }

  // -- small helpers --------------------------------------------------------------------------
  function show(view) { VIEWS.forEach(function (v) { $(v).hidden = v !== view; }); }
  function say(node, text) { node.textContent = text == null ? "" : String(text); }
  function make(tag, text, cls) {
    var node = document.createElement(tag);
    if (text != null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function link(text) { say($("link"), text); }
  function words(kind, id) {
    var card = state && state.puzzle;
    var table = card && card.words && card.words[kind];
    return (table && table[id]) || id || "(blank)";
  }
  function mmss(seconds) {
    var whole = Math.max(0, Math.ceil(seconds - 1e-6));
    return Math.floor(whole / 60) + ":" + ("0" + (whole % 60)).slice(-2);
  }

  function api(method, path, body) {
    var headers = {"Content-Type": "application/json"};
    if (me.token) headers["X-Ridge-Token"] = me.token;
    return fetch(path, {method: method, headers: headers, cache: "no-store",
                        body: body === undefined ? undefined : JSON.stringify(body)})
      .then(function (response) {
        return response.json().catch(function () { return null; }).then(function (data) {
          if (!response.ok) {
            var error = new Error((data && data.error) || ("the host answered " + response.status));
            error.status = response.status;
            throw error;
          }
          return data;
        });
      });
  }

  // -- joining --------------------------------------------------------------------------------
  function showJoin(message) {
    show("join");
    say($("who"), "Ridge live");
    if (me.name && !$("name").value) $("name").value = me.name;
    say($("join-error"), message || "");
    ($("pin").value ? $("name") : $("pin")).focus();
  }

  $("join-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var pin = $("pin").value.trim(), name = $("name").value.trim();
    if (!pin) { say($("join-error"), "Type the pin from the host's screen."); $("pin").focus(); return; }
    if (!name) { say($("join-error"), "Type a nickname."); $("name").focus(); return; }
    $("join-button").disabled = true;
    me.token = null;
    api("POST", "/api/join", {pin: pin, name: name, seat: seat()}).then(function (joined) {
      me.token = joined.token;
      me.name = joined.name;
      save();
      say($("join-error"), "");
      connect();
    }, function (error) {
      say($("join-error"), error.status ? error.message
        : "Cannot reach the host: check the address and your network, then try again.");
    }).then(function () { $("join-button").disabled = false; });
  });

  function forget(message) {
    me.token = null;
    save();
    showJoin(message);
  }

  // -- the event stream -----------------------------------------------------------------------
  function connect() {
    if (stream) stream.abort();
    var control = new AbortController();
    stream = control;
    lastHeard = Date.now();
    fetch("/api/events", {headers: {"X-Ridge-Token": me.token || ""}, signal: control.signal, cache: "no-store"})
      .then(function (response) {
        if (response.status === 401) {
          return response.json().catch(function () { return {}; }).then(function () {
            stream = null;
            forget("The host does not know this browser any more (a new match?): join again.");
          });
        }
        if (response.status === 403) {
          return response.json().catch(function () { return {}; }).then(function (data) {
            stream = null;
            gone(data.error || "The host removed you from this match.");
          });
        }
        if (!response.ok || !response.body) { again(control); return; }
        retry = 0;
        link("● connected to the host");
        return read(response.body.getReader(), control);
      }, function () { again(control); });
  }

  function read(reader, control) {
    var decoder = new TextDecoder(), buffer = "";
    function next() {
      return reader.read().then(function (chunk) {
        if (chunk.done) { again(control); return; }
        lastHeard = Date.now();
        buffer += decoder.decode(chunk.value, {stream: true});
        var cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          var block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          event(block);
        }
        return next();
      });
    }
    return next().catch(function () { again(control); });
  }

  function again(control) {
    if (stream !== control) return;
    stream = null;
    link("○ reconnecting to the host…");
    var wait = Math.min(5000, 500 * Math.pow(2, retry));
    retry += 1;
    setTimeout(function () { if (!stream && me.token) connect(); }, wait);
  }

  // A phone that slept may hold a dead connection: the host writes at least every 15 s.
  setInterval(function () {
    if (stream && Date.now() - lastHeard > 40000) { var old = stream; old.abort(); again(old); }
  }, 5000);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible" && me.token && (!stream || Date.now() - lastHeard > 20000)) {
      connect();
    }
  });

  function event(block) {
    var kind = "message", data = "";
    block.split("\n").forEach(function (line) {
      if (line.indexOf("event:") === 0) kind = line.slice(6).trim();
      else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
    });
    if (!data) return;
    var message;
    try { message = JSON.parse(data); } catch (e) { return; }
    if (kind === "state") onState(message);
    else if (kind === "count") onCount(message);
    else if (kind === "gone") gone(message.error);
  }

  function gone(message) {
    show("gone");
    say($("gone-text"), message || "The host removed you from this match.");
    link("");
  }

  // -- following the host ---------------------------------------------------------------------
  function headline() {
    var s = state;
    var where = s.phase === "lobby" ? "lobby · " + s.players + " joined"
      : s.phase === "done" ? "the match is over"
      : "question " + (s.index + 1) + " of " + s.count + " · " + s.locked + " of " + s.players + " locked in";
    if (s.paused) where += " · paused by the host";
    say($("who"), (me.name ? me.name + " · " : "") + where);
  }

  function setClock(left, paused) {
    clock = {deadline: left == null ? null : performance.now() + left * 1000, left: left, paused: !!paused};
    drawClock();
  }

  function drawClock() {
    var face = $("clock");
    if (!state || clock.deadline == null || state.phase === "done") { say(face, ""); face.classList.remove("low"); return; }
    var left = clock.paused ? clock.left : Math.max(0, (clock.deadline - performance.now()) / 1000);
    var text = clock.paused ? "paused · " + mmss(left) + " left" : state.phase === "question" ? mmss(left) + " left"
      : (state.phase === "lobby" ? "starts in " : "next in ") + mmss(left);
    say(face, text);
    var low = state.phase === "question" && left <= 10;
    face.classList.toggle("low", low);
    if (low && !clock.paused && left <= 0 && state.phase === "question") timeUp(state.index);
  }
  setInterval(drawClock, 250);

  function onState(s) {
    state = s;
    var you = s.you || {};
    if (you.name && you.name !== me.name) { me.name = you.name; save(); }
    setClock(s.seconds_left, s.paused);
    headline();
    if (s.phase === "lobby") {
      show("lobby");
      say($("lobby-title"), "You're in, " + (me.name || "player"));
      say($("lobby-text"), "Waiting for the host to start the match: " + s.players + " joined so far." +
        (s.room_locked ? " The host has locked the room." : ""));
    } else if (s.phase === "question") {
      if (you.locked) showLocked(s.index, you.answer, you.late ? "⊘ Late: it arrived after the close and scores nothing." : "");
      else if (mine[s.index]) showLocked(s.index, mine[s.index], "");
      else showQuestion(s);
    } else if (s.phase === "closed") {
      showReveal(s);
    } else if (s.phase === "done") {
      showDone();
    }
  }

  function onCount(c) {
    if (!state) return;
    state.players = c.players;
    state.locked = c.locked;
    state.paused = c.paused;
    setClock(c.seconds_left, c.paused);
    headline();
    if (state.phase === "lobby") {
      say($("lobby-text"), "Waiting for the host to start the match: " + c.players + " joined so far.");
    }
  }

  // -- a question -----------------------------------------------------------------------------
  function choices(name, title, ids, note) {
    var set = make("fieldset");
    set.id = "part-" + name;
    set.appendChild(make("legend", title));
    if (note) set.appendChild(make("p", note, "note"));
    (ids || []).forEach(function (id, i) {
      var label = make("label", null, "choice");
      var input = document.createElement("input");
      input.type = "radio";
      input.name = name;
      input.value = id;
      input.id = name + "-" + i;
      label.appendChild(input);
      label.appendChild(make("span", words(name, id)));
      set.appendChild(label);
    });
    return set;
  }

  function buildQuestion(s) {
    var card = s.puzzle, ask = card.ask || {};
    built = s.index + "|" + card.title;
    say($("q-meta"), "Question " + (s.index + 1) + " of " + s.count + " · difficulty " + card.difficulty +
      "/5 · goal: " + ((card.words && card.words.objective) || card.objective));
    say($("q-title"), card.title);
    say($("q-scenario"), card.scenario);
    var rows = $("q-card");
    rows.replaceChildren();
    (card.card || []).forEach(function (row) { rows.appendChild(make("dt", row.field)); rows.appendChild(make("dd", row.value)); });
    var ruled = Object.keys(card.ruled_out || {}).map(function (lever) {
      return words("lever", lever) + ": " + card.ruled_out[lever];
    });
    say($("q-ruled"), ruled.length ? "Ruled out here: " + ruled.join("; ") : "");
    say($("q-asked"), "Every part is needed; the certainty changes how many points a right or wrong answer is worth.");
    var parts = $("parts");
    parts.replaceChildren(
      choices("bottleneck", ask.bottleneck_question || "What bounds it?", ask.bottleneck),
      choices("lever", "The best lever", ask.lever),
      choices("gain", "Its gain", ask.gain_band, ask.gain_band_rule),
      choices("reason", "Because", ask.reason));
    (ask.estimates || []).forEach(function (name) {
      var label = make("label", "Estimate: " + words("estimate", name));
      label.htmlFor = "est-" + name;
      var input = document.createElement("input");
      input.id = "est-" + name;
      input.name = "est-" + name;
      input.setAttribute("inputmode", "decimal");
      input.autocomplete = "off";
      input.maxLength = 40;
      parts.appendChild(label);
      parts.appendChild(input);
    });
    var sure = (card.words && card.words.certainty) || {low: "low", medium: "medium", high: "high"};
    parts.appendChild(choices("certainty", "How sure are you?", Object.keys(sure)));
    $("confirm").hidden = true;
    $("lock").disabled = false;
    say($("form-error"), "");
    restore(s.index);
  }

  function showQuestion(s) {
    if (built !== s.index + "|" + s.puzzle.title) buildQuestion(s);
    show("question");
    if (expired[s.index]) freeze();
  }

  function current() {
    var form = $("answer-form"), out = {estimates: {}};
    ["bottleneck", "lever", "gain", "reason", "certainty"].forEach(function (name) {
      var picked = form.querySelector("input[name='" + name + "']:checked");
      out[name] = picked ? picked.value : "";
    });
    form.querySelectorAll("input[id^='est-']").forEach(function (input) { out.estimates[input.id.slice(4)] = input.value; });
    return out;
  }

  function restore(index) {
    var draft = readDraft(index);
    if (!draft) return;
    var form = $("answer-form");
    ["bottleneck", "lever", "gain", "reason", "certainty"].forEach(function (name) {
      form.querySelectorAll("input[name='" + name + "']").forEach(function (input) { input.checked = input.value === draft[name]; });
    });
    Object.keys(draft.estimates || {}).forEach(function (name) {
      var input = document.getElementById("est-" + name);
      if (input) input.value = draft.estimates[name];
    });
  }

  function dirty(draft) {
    return ["bottleneck", "lever", "gain", "reason", "certainty"].some(function (n) { return draft[n]; }) ||
      Object.keys(draft.estimates).some(function (n) { return draft.estimates[n].trim(); });
  }

  $("answer-form").addEventListener("input", function () {
    if (state && state.phase === "question") writeDraft(state.index, current());
    $("confirm").hidden = true;
  });

  function number(text) {
    var clean = String(text).replace(/[,_\s]/g, "");
    if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(clean)) return null;
    var value = Number(clean);
    return isFinite(value) ? value : null;
  }

  function body(index, draft, complete) {
    var estimates = {}, wrong = null;
    Object.keys(draft.estimates).forEach(function (name) {
      var text = draft.estimates[name].trim();
      if (!text) { if (complete && !wrong) wrong = "Estimate " + words("estimate", name) + " is empty."; return; }
      var value = number(text);
      if (value === null) { if (!wrong) wrong = "Estimate " + words("estimate", name) + ": type a number such as 1.5e9."; return; }
      estimates[name] = value;
    });
    return {wrong: wrong, body: {index: index, bottleneck: draft.bottleneck, lever: draft.lever, gain: draft.gain,
                                 reason: draft.reason, certainty: draft.certainty, estimates: estimates}};
  }

  $("answer-form").addEventListener("submit", function (event) {
    event.preventDefault();
    if (!state || state.phase !== "question" || expired[state.index]) return;
    var draft = current();
    var missing = PARTS.concat([["certainty", "how sure"]]).filter(function (p) { return !draft[p[0]]; });
    if (missing.length) {
      say($("form-error"), "Still to answer: " + missing.map(function (p) { return p[1]; }).join(", ") + ".");
      var first = document.querySelector("#part-" + missing[0][0] + " input");
      if (first) first.focus();
      return;
    }
    var made = body(state.index, draft, true);
    if (made.wrong) { say($("form-error"), made.wrong); return; }
    say($("form-error"), "");
    $("confirm").hidden = false;
    $("confirm-yes").focus();
  });

  $("confirm-no").addEventListener("click", function () { $("confirm").hidden = true; $("lock").focus(); });
  $("confirm-yes").addEventListener("click", function () {
    if (!state || state.phase !== "question") return;
    var index = state.index, draft = current(), made = body(index, draft, true);
    $("confirm-yes").disabled = true;
    api("POST", "/api/answer", made.body).then(function () {
      mine[index] = made.body;
      dropDraft(index);
      showLocked(index, made.body, "");
    }, function (error) {
      if (error.status === 400 || !error.status) {
        say($("form-error"), error.status ? error.message
          : "Could not reach the host: your answer is kept here; press Lock in again.");
        $("confirm").hidden = true;
        return;
      }
      mine[index] = made.body;
      dropDraft(index);
      showLocked(index, made.body, error.message);
    }).then(function () { $("confirm-yes").disabled = false; });
  });

  function freeze() {
    $("answer-form").querySelectorAll("input, button").forEach(function (node) { node.disabled = true; });
    $("confirm").hidden = true;
    say($("form-error"), "Time is up: what you filled in goes to the host as a late answer and scores nothing.");
  }

  function timeUp(index) {
    if (expired[index] || mine[index]) return;
    expired[index] = true;
    if (built && built.indexOf(index + "|") === 0) freeze();
  }

  function sendLate(index) {
    if (mine[index] || lateSent[index] || !built || built.indexOf(index + "|") !== 0) return Promise.resolve();
    var draft = current();
    if (!dirty(draft)) return Promise.resolve();
    lateSent[index] = true;
    var late = body(index, draft, false).body;
    mine[index] = late;
    dropDraft(index);
    return api("POST", "/api/answer", late).catch(function () { /* refused by design: kept at zero points */ });
  }

  function showLocked(index, answer, note) {
    show("locked");
    say($("locked-title"), note && note.indexOf("⊘") === 0 ? "⊘ Locked in late" : "✓ Locked in: it is final");
    say($("locked-note"), note || "");
    var rows = $("locked-summary");
    rows.replaceChildren();
    if (!answer) return;
    [["Bottleneck", words("bottleneck", answer.bottleneck)], ["Best lever", words("lever", answer.lever)],
     ["Its gain", words("gain", answer.gain)], ["Because", words("reason", answer.reason)],
     ["How sure", words("certainty", answer.certainty)]].forEach(function (row) {
      rows.appendChild(make("dt", row[0]));
      rows.appendChild(make("dd", row[1]));
    });
    Object.keys(answer.estimates || {}).forEach(function (name) {
      rows.appendChild(make("dt", "Estimate"));
      rows.appendChild(make("dd", words("estimate", name) + ": " + answer.estimates[name]));
    });
  }

  // -- the reveal, the board, the podium ------------------------------------------------------
  function boardRows(list, rows, top) {
    list.replaceChildren();
    var shown = rows.slice(0, top);
    var you = rows.filter(function (r) { return r.name === me.name; })[0];
    if (you && shown.indexOf(you) < 0) shown.push(you);
    shown.forEach(function (r) {
      var item = make("li", null, r.name === me.name ? "me" : "");
      item.appendChild(make("span", r.rank + "."));
      item.appendChild(make("span", r.name, "name"));
      item.appendChild(make("span", r.points + " pts · " + r.cleared + " cleared"));
      list.appendChild(item);
    });
    if (!rows.length) list.appendChild(make("li", "No one on the board yet."));
  }

  function showReveal(s) {
    var index = s.index;
    if (shownReveal === index) { show("reveal"); return; }
    shownReveal = index;
    sendLate(index).then(function () {
      return Promise.all([api("GET", "/api/reveal?index=" + index), api("GET", "/api/board")]);
    }).then(function (got) {
      if (!state || state.phase !== "closed" || state.index !== index) return;
      var reveal = got[0], board = got[1], you = reveal.you || {}, answer = reveal.answer;
      say($("reveal-title"), "Question " + (index + 1) + ": the answer");
      say($("verdict"), you.verdict || "");
      var judged = $("parts-judged");
      judged.replaceChildren();
      (you.lines || []).forEach(function (line) { judged.appendChild(make("li", line)); });
      var rows = $("answer");
      rows.replaceChildren();
      [["Bottleneck", words("bottleneck", answer.bottleneck)],
       ["Best lever", words("lever", answer.best_lever) + " (" + words("gain", answer.gain_band) + ")"],
       ["Because", answer.reason_text || words("reason", answer.reason)]].forEach(function (row) {
        rows.appendChild(make("dt", row[0]));
        rows.appendChild(make("dd", row[1]));
      });
      say($("deciding"), answer.deciding ? "What decides it: " + answer.deciding : "");
      boardRows($("board"), board.players || [], 5);
      show("reveal");
    }, function (error) {
      shownReveal = null;
      link("⚠ " + (error.message || "cannot reach the host") + " (trying again)");
      setTimeout(function () { if (state && state.phase === "closed" && state.index === index) showReveal(state); }, 2000);
    });
  }

  function showDone() {
    api("GET", "/api/board").then(function (board) {
      var podium = $("podium"), places = {1: "1st", 2: "2nd", 3: "3rd"};
      podium.replaceChildren();
      (board.podium || []).forEach(function (r) {
        podium.appendChild(make("li", (places[r.rank] || r.rank + "th") + " · " + r.name + " · " + r.points + " points" +
          (r.name === me.name ? " ◀ you" : "")));
      });
      if (!(board.podium || []).length) podium.appendChild(make("li", "No one played."));
      boardRows($("final-board"), board.players || [], 10);
      show("done");
    }, function (error) { link("⚠ " + error.message); });
  }

  // -- start ----------------------------------------------------------------------------------
  if (me.token) { link("connecting to the host…"); connect(); } else { showJoin(""); }
})();
