// The page at / of `pysmt serve` (pysmt/serving/page.py): asks this server's JSON interface for a sentence's
// translation with its details and draws them. Everything from the model or the client goes into the document as
// text nodes or attribute values (createElement, append, textContent): never parsed as HTML.
"use strict";

const COLOURS = 10; // .p0 ... .p9 in page.css

// An element with attributes and children (strings become text nodes).
function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    node.setAttribute(name, String(value));
  }
  node.append(...children);
  return node;
}

function byId(id) {
  return document.getElementById(id);
}

function number(value) {
  return typeof value === "number" ? value.toFixed(3) : String(value);
}

function say(message, isError) {
  const status = byId("status");
  status.textContent = message;
  status.className = isError ? "error" : "";
}

async function getJson(path, body) {
  const response = await fetch(path, body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) {
    throw new Error(`${response.status}: ${data && data.error ? data.error : response.statusText}`);
  }
  return data;
}

// A phrase's box: its number (its place in the translation), its words.
function phraseBox(side, index, start, end, words) {
  const chosen = words.slice(start, end);
  return element(
    "div",
    {
      class: `box ${side}-phrase p${index % COLOURS}${chosen.length ? "" : " empty"}`,
      "data-phrase": index,
      "data-start": start,
      "data-end": end,
    },
    element("span", { class: "number" }, String(index + 1)),
    element("span", { class: "words" }, chosen.length ? chosen.join(" ") : "(no words)"),
  );
}

function drawPhrases(entry) {
  const source = entry.src_words;
  const target = entry.tgt.split(/\s+/).filter((word) => word.length);
  const phrases = entry.phrases.map((phrase, index) => ({ ...phrase, index }));
  const bySource = [...phrases].sort((a, b) => a.src_start - b.src_start || a.src_end - b.src_end);
  byId("source-phrases").replaceChildren(
    ...bySource.map((p) => phraseBox("source", p.index, p.src_start, p.src_end, source)),
  );
  byId("target-phrases").replaceChildren(
    ...phrases.map((p) => phraseBox("target", p.index, p.tgt_start, p.tgt_end, target)),
  );
  return [source, target];
}

function drawAlignment(entry, source, target) {
  const links = new Set((entry.align[0] || "").split(/\s+/).filter((link) => link.length));
  const head = element("tr", {}, element("th", {}, ""), ...target.map((word) => element("th", { scope: "col" }, word)));
  const rows = source.map((word, s) =>
    element(
      "tr",
      {},
      element("th", { scope: "row" }, word),
      ...target.map((_, t) =>
        links.has(`${s}-${t}`)
          ? element("td", { class: "link", "data-link": `${s}-${t}` }, "\u25cf")
          : element("td", {}, ""),
      ),
    ),
  );
  byId("alignment").replaceChildren(element("thead", {}, head), element("tbody", {}, ...rows));
}

// One entry of the n-best list drawn as the translation's phrases and alignment.
function show(entries, rank) {
  const entry = entries[rank];
  const [source, target] = drawPhrases(entry);
  drawAlignment(entry, source, target);
  byId("shown").textContent = rank === 0 ? "" : `Shown below: n-best entry ${rank + 1}.`;
  for (const row of byId("nbest-list").querySelectorAll("tbody tr")) {
    row.classList.toggle("shown", Number(row.dataset.rank) === rank);
  }
}

function drawNbest(entries) {
  const features = entries[0].features;
  const head = element(
    "tr",
    {},
    element("th", {}, "#"),
    element("th", {}, "translation"),
    element("th", {}, "total"),
    ...features.map((feature) => element("th", { scope: "col" }, feature.name)),
  );
  const rows = entries.map((entry, rank) => {
    const row = element(
      "tr",
      { class: "nbest-entry", "data-rank": rank },
      element("td", { class: "number" }, String(rank + 1)),
      element("td", { class: "hypothesis" }, entry.tgt),
      element("td", { class: "number total" }, number(entry.pred_score)),
      ...entry.features.map((feature) =>
        element(
          "td",
          {
            class: "number weighted",
            "data-feature": feature.name,
            title: `scores ${feature.scores.map(number).join(" ")} \u00d7 weights ${feature.weights.map(number).join(" ")}`,
          },
          number(feature.weighted),
        ),
      ),
    );
    row.addEventListener("click", () => show(entries, rank));
    return row;
  });
  byId("nbest-list").replaceChildren(element("thead", {}, head), element("tbody", {}, ...rows));
}

function settingValue(value) {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    return element(
      "dl",
      {},
      ...Object.entries(value).flatMap(([key, inner]) => [element("dt", {}, key), element("dd", {}, settingValue(inner))]),
    );
  }
  return Array.isArray(value) ? value.join(", ") : String(value);
}

async function drawSettings() {
  const [model] = await getJson("/models");
  byId("settings").replaceChildren(
    ...Object.entries(model).flatMap(([key, value]) => [
      element("dt", {}, key),
      element("dd", { "data-setting": key }, settingValue(value)),
    ]),
  );
  const markup = model.opt ? model.opt["xml-input"] : undefined;
  byId("markup-note").textContent =
    markup && markup !== "pass-through"
      ? `This server reads XML markup in the sentence (--xml-input ${markup}), e.g. ` +
        '<np translation="the house">das Haus</np>.'
      : "This server reads the sentence as text: markup is translated as words (--xml-input pass-through).";
}

async function translate(sentence, nbest) {
  say("Translating\u2026", false);
  const [entries] = await getJson("/translate", [{ src: sentence, n_best: nbest, details: true }]);
  if (!entries.length) {
    say("No translation.", true);
    return;
  }
  byId("translation").textContent = entries[0].tgt;
  drawNbest(entries);
  show(entries, 0);
  byId("result").hidden = false;
  say("", false);
}

async function start() {
  const query = new URLSearchParams(window.location.search);
  const sentence = query.get("q");
  const nbest = Number.parseInt(query.get("n") || "5", 10);
  byId("nbest").value = String(Number.isFinite(nbest) && nbest > 0 ? nbest : 5);
  const settings = drawSettings().catch((error) => say(`Settings: ${error.message}`, true));
  if (sentence !== null && sentence.trim()) {
    byId("source").defaultValue = sentence; // (its text: the value a dumped DOM shows)
    try {
      await translate(sentence, Number(byId("nbest").value));
    } catch (error) {
      say(`Not translated: ${error.message}`, true);
    }
  }
  await settings;
  document.body.dataset.ready = "true";
}

document.addEventListener("DOMContentLoaded", start);
