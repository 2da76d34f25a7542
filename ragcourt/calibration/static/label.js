// ragcourt labelling page. Every text goes into the DOM through textContent (never parsed as
// HTML). Each label is POSTed and saved on disk before the next item is shown.
"use strict";

(function () {
  const token = document.querySelector('meta[name="ragcourt-token"]').content;
  const $ = (id) => document.getElementById(id);
  const ANSWER_KEYS = { "1": "correct", c: "correct", "2": "incorrect", i: "incorrect",
                        "3": "cant_tell", t: "cant_tell" };
  const PASSAGE_KEYS = { "0": 0, "1": 1, "2": 2 };
  const NAMES = { correct: "correct", incorrect: "incorrect", cant_tell: "can't tell",
                  0: "0 · not relevant", 1: "1 · somewhat relevant", 2: "2 · very relevant" };
  let cur = null;      // the item response on screen
  let busy = false;

  function setStatus(text) { $("status").textContent = text || ""; }

  async function api(method, path, body) {
    const init = { method, headers: {} };
    if (method === "POST") {
      init.headers["Content-Type"] = "application/json";
      init.headers["X-Ragcourt-Token"] = token;
      init.body = JSON.stringify(body || {});
    }
    const res = await fetch(path, init);
    let data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (!res.ok) {
      const msg = data && data.detail ? String(data.detail) : res.status + " " + res.statusText;
      throw new Error(msg);
    }
    return data;
  }

  function showProgress(done, total) {
    $("progress").textContent = done + " / " + total + " labelled";
    $("bar-fill").style.width = total ? (100 * done / total) + "%" : "0";
    const fin = total > 0 && done === total;
    $("done").hidden = !fin;
    $("done").textContent = fin
      ? "All " + total + " items are labelled. You can close this page." : "";
  }

  function render(data) {
    cur = data;
    const it = data.item;
    const isAnswer = it.kind === "answer";
    $("card").hidden = false;
    $("position").textContent = (isAnswer ? "Answer item " : "Passage item ") +
      (data.position + 1) + " of " + data.total;
    $("question").textContent = it.question;
    const refs = $("refs");
    refs.replaceChildren();
    for (const r of it.references) {
      const li = document.createElement("li");
      li.textContent = r;
      refs.appendChild(li);
    }
    $("refs-block").hidden = !isAnswer;
    $("answer-block").hidden = !isAnswer;
    $("passage-block").hidden = isAnswer;
    $("answer").textContent = isAnswer
      ? (it.abstained ? it.answer + "  (the system declined to answer)" : it.answer) : "";
    $("passage").textContent = isAnswer ? "" : it.passage;
    $("answer-buttons").hidden = !isAnswer;
    $("passage-buttons").hidden = isAnswer;
    const group = isAnswer ? $("answer-buttons") : $("passage-buttons");
    for (const b of group.querySelectorAll("button")) {
      b.setAttribute("aria-pressed", String(data.label !== null && b.dataset.value === String(data.label)));
    }
    $("current").textContent = data.label === null ? "Not labelled yet."
      : "Your label: " + NAMES[data.label] + " (press another key to change it).";
    $("prev").disabled = data.position === 0;
    $("next").disabled = data.position >= data.total - 1;
    showProgress(data.done, data.total);
    document.body.dataset.position = String(data.position);
    document.body.dataset.kind = it.kind;
  }

  async function show(position) {
    try {
      render(await api("GET", "/api/item/" + position));
      setStatus("");
    } catch (e) {
      setStatus("Could not load the item: " + e.message);
    }
  }

  async function submit(value) {
    if (!cur || busy) return;
    busy = true;
    try {
      const res = await api("POST", "/api/label", { item_id: cur.item.item_id, value: value });
      showProgress(res.done, res.total);
      setStatus("");
      await show(res.next === null ? res.position : res.next);
    } catch (e) {
      setStatus("Not saved: " + e.message);
    } finally {
      busy = false;
    }
  }

  async function undo() {
    if (busy) return;
    busy = true;
    try {
      const res = await api("POST", "/api/undo", {});
      if (res.undone === null) {
        setStatus("Nothing to undo.");
      } else {
        await show(res.position);
        setStatus("Undone: the label of this item was withdrawn.");
      }
    } catch (e) {
      setStatus("Undo failed: " + e.message);
    } finally {
      busy = false;
    }
  }

  function move(delta) {
    if (!cur) return;
    const p = cur.position + delta;
    if (p >= 0 && p < cur.total) show(p);
  }

  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || !cur) return;
    const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
    if (key === "u") { undo(); ev.preventDefault(); return; }
    if (key === "ArrowLeft" || key === "k") { move(-1); ev.preventDefault(); return; }
    if (key === "ArrowRight" || key === "j") { move(1); ev.preventDefault(); return; }
    const table = cur.item.kind === "answer" ? ANSWER_KEYS : PASSAGE_KEYS;
    if (Object.prototype.hasOwnProperty.call(table, key)) {
      submit(table[key]);
      ev.preventDefault();
    }
  });

  for (const b of document.querySelectorAll(".buttons button")) {
    b.addEventListener("click", () => {
      const v = b.dataset.value;
      submit(cur && cur.item.kind === "passage" ? Number(v) : v);
    });
  }
  $("prev").addEventListener("click", () => move(-1));
  $("next").addEventListener("click", () => move(1));
  $("undo").addEventListener("click", undo);

  async function start() {
    try {
      const st = await api("GET", "/api/state");
      if (st.total === 0) {
        $("progress").textContent = "0 / 0";
        setStatus("The sample is empty: nothing to label.");
        return;
      }
      await show(st.next === null ? 0 : st.next);
    } catch (e) {
      setStatus("Could not reach the labelling server: " + e.message);
    }
  }
  start();
})();
