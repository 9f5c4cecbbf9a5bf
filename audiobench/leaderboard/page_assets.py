"""The leaderboard page's stylesheet and script, inlined into the one HTML file.

The script renders every table from the JSON data block with ``textContent``
and ``setAttribute`` only (never ``innerHTML``), so nothing from a result file
is ever parsed as markup. State lives in the URL fragment
(``#tab=<id>&sort=<column>&dir=asc|desc&family=<f>&domain=<d>&origin=computed|reported&cols=model``),
which makes every view a shareable link and lets tests drive the page without clicks.
"""

from __future__ import annotations

__all__ = ["SCRIPT", "STYLE"]

STYLE = """
:root {
  --fg: #1d2330; --muted: #5d6677; --bg: #ffffff; --panel: #f5f7fa; --line: #dde2ea;
  --accent: #2454c5; --accent-soft: #e6edfb; --best: #0d6b3d;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); background: var(--bg);
}
@media (prefers-color-scheme: dark) {
  :root { --fg: #e5e9f0; --muted: #a0a9b8; --bg: #14171c; --panel: #1c2027; --line: #323946;
          --accent: #7aa2ff; --accent-soft: #24304a; --best: #6fd39c; }
  svg { background: #ffffff; border-radius: 4px; }
}
body { margin: 0 auto; max-width: 1280px; padding: 1.5rem 1.5rem 3rem; line-height: 1.45; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.2rem; margin: 1.2rem 0 .3rem; }
.meta, .description, .rule, .note, footer { color: var(--muted); font-size: .92rem; }
.controls { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; margin: 1rem 0 .5rem; }
.controls label { font-size: .92rem; color: var(--muted); }
.controls select { margin-left: .35rem; font: inherit; color: var(--fg); background: var(--panel);
  border: 1px solid var(--line); border-radius: 6px; padding: .2rem .4rem; }
[role=tablist] { display: flex; flex-wrap: wrap; gap: .25rem;
  border-bottom: 1px solid var(--line); }
[role=tab] { font: inherit; border: 1px solid transparent; border-bottom: none; background: none;
  color: var(--muted); padding: .45rem .9rem; border-radius: 8px 8px 0 0; cursor: pointer; }
[role=tab][aria-selected=true] { color: var(--fg); background: var(--panel);
  border-color: var(--line); font-weight: 600; }
[role=tab]:focus-visible, th button:focus-visible, td button:focus-visible {
  outline: 2px solid var(--accent); outline-offset: 1px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: .92rem; margin-top: .5rem; min-width: 40%; }
th, td { padding: .35rem .6rem; border-bottom: 1px solid var(--line); text-align: left;
  white-space: nowrap; }
th { position: sticky; top: 0; background: var(--panel); font-weight: 600; }
tr.groups th { text-align: center; text-transform: uppercase; letter-spacing: .04em;
  font-size: .75rem; color: var(--muted); }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.group-start { border-left: 2px solid var(--line); }
th button { font: inherit; font-weight: 600; color: inherit; background: none; border: none;
  padding: 0; cursor: pointer; }
th[aria-sort=ascending] button::after { content: " ▲"; color: var(--accent); }
th[aria-sort=descending] button::after { content: " ▼"; color: var(--accent); }
.dir { color: var(--muted); font-weight: 400; margin-left: .2rem; }
tbody tr.row:hover { background: var(--accent-soft); }
td.missing { color: var(--muted); }
td .context { display: block; color: var(--muted); font-size: .75rem; white-space: nowrap; }
.private { border-left: .25rem solid var(--muted); padding-left: .6rem; }
td.best { color: var(--best); font-weight: 700; }
td.model { white-space: normal; overflow-wrap: anywhere; min-width: 12rem; max-width: 26rem; }
td.model button { font: inherit; color: var(--accent); background: none; border: none; padding: 0;
  cursor: pointer; text-align: left; }
td.model button::before { content: "▸ "; color: var(--muted); }
td.model button[aria-expanded=true]::before { content: "▾ "; }
.revision { color: var(--muted); font-size: .8rem; margin-left: .4rem; }
.origin { font-size: .72rem; margin-left: .4rem; padding: 0 .35rem; border-radius: 4px;
  border: 1px solid var(--muted); color: var(--muted); text-transform: uppercase; }
tr[data-origin=reported] td.model button { font-style: italic; }
tr.detail td { background: var(--panel); white-space: normal; }
tr.detail dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem;
  margin: .3rem 0; }
tr.detail dt { color: var(--muted); }
tr.detail dd { margin: 0; overflow-wrap: anywhere; }
[hidden] { display: none !important; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 1rem; }
figure { margin: 1rem 0 1rem; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: .88rem; }
.rejected li { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .85rem; overflow-wrap: anywhere; }
"""

SCRIPT = r"""
(function () {
  "use strict";
  var MISSING = "\u2013";
  var data = JSON.parse(document.getElementById("leaderboard-data").textContent);
  var tables = data.tables;
  var PLOTS = "plots";
  var state = {
    tab: null, sort: null, dir: null, family: "", domain: "", origin: "", cols: false, open: {}
  };
  var ORIGINS = ["computed", "reported"];
  // The model metadata columns (beside Params), shown with cols=model: id, label, title, key.
  var MODEL_COLUMNS = [
    ["embdim", "Emb. dim", "Embedding size", function (card) { return card.embedding_dim; }],
    ["open", "Open", "Open weights", function (card) {
      return card.open_weights === null ? null : (card.open_weights ? 1 : 0);
    }],
    ["released", "Released", "Release date", function (card) {
      return card.release_date === null ? null : Date.parse(card.release_date);
    }]
  ];

  function modelColumn(id) {
    return MODEL_COLUMNS.find(function (c) { return c[0] === id; });
  }

  function originShown(card) {
    return state.origin === "" || card.origin === state.origin || card.origin === "mixed";
  }

  function h(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value !== null && value !== undefined && value !== false) {
          node.setAttribute(key, value === true ? "" : String(value));
        }
      });
    }
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fmtScore(value, column) {
    if (value === null || value === undefined) return MISSING;
    return column.percent ? (value * 100).toFixed(2) : value.toFixed(4);
  }

  function fmtCount(value) {
    if (value === null || value === undefined) return MISSING;
    var units = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < units.length; i++) {
      var unit = units[i];
      if (Math.abs(value) >= unit[0]) return +(value / unit[0]).toPrecision(3) + unit[1];
    }
    return String(+value.toPrecision(3));
  }

  function fmtPlain(value) {
    return value === null || value === undefined || value === "" ? MISSING : String(value);
  }

  function arrow(column) { return column.higher_is_better ? "\u2191" : "\u2193"; }

  function filtering() { return state.family !== "" || state.domain !== ""; }

  function columnShown(column) {
    return (state.family === "" || column.family === state.family) &&
      (state.domain === "" || column.domains.indexOf(state.domain) >= 0);
  }

  function shownColumns(table) {
    var shown = [];
    table.columns.forEach(function (column, i) { if (columnShown(column)) shown.push(i); });
    return shown;
  }

  function tabShown(table) { return !filtering() || shownColumns(table).length > 0; }

  function defaultDir(table, sort) {
    if (sort === "model" || sort === "rank" || sort === "params" || sort === "embdim") {
      return "asc";
    }
    if (modelColumn(sort)) return "desc";  // open weights first, newest first
    var column = table.columns.find(function (c) { return c.id === sort; });
    return column && !column.higher_is_better ? "asc" : "desc";
  }

  function sortKey(table, row, sort) {
    if (sort === "rank") return row.rank;
    if (sort === "params") return data.models[row.model].n_parameters;
    if (modelColumn(sort)) return modelColumn(sort)[3](data.models[row.model]);
    var index = table.columns.findIndex(function (c) { return c.id === sort; });
    return index < 0 ? null : row.values[index];
  }

  function sortedRows(table) {
    var rows = table.rows.map(function (row, i) { return { row: row, order: i }; });
    var sort = state.sort;
    if (sort === null) return rows.map(function (r) { return r.row; });
    var sign = state.dir === "asc" ? 1 : -1;
    rows.sort(function (a, b) {
      var x, y;
      if (sort === "model") {
        x = data.models[a.row.model].name.toLowerCase();
        y = data.models[b.row.model].name.toLowerCase();
        if (x !== y) return sign * (x < y ? -1 : 1);
        return a.order - b.order;
      }
      x = sortKey(table, a.row, sort);
      y = sortKey(table, b.row, sort);
      var xMissing = x === null || x === undefined, yMissing = y === null || y === undefined;
      // Missing scores go last whichever way the column is sorted.
      if (xMissing !== yMissing) return xMissing ? 1 : -1;
      if (!xMissing && x !== y) return sign * (x - y);
      return a.order - b.order;
    });
    return rows.map(function (r) { return r.row; });
  }

  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var known = tables.map(function (t) { return t.id; }).concat([PLOTS]);
    var tab = params.get("tab");
    state.tab = known.indexOf(tab) >= 0 ? tab : null;
    state.family = data.families.indexOf(params.get("family")) >= 0 ? params.get("family") : "";
    state.domain = data.domains.indexOf(params.get("domain")) >= 0 ? params.get("domain") : "";
    state.origin = ORIGINS.indexOf(params.get("origin")) >= 0 ? params.get("origin") : "";
    state.cols = params.get("cols") === "model";
    state.sort = params.get("sort");
    var dir = params.get("dir");
    state.dir = dir === "asc" || dir === "desc" ? dir : null;
  }

  function writeHash() {
    var params = new URLSearchParams();
    if (state.tab) params.set("tab", state.tab);
    if (state.sort) { params.set("sort", state.sort); params.set("dir", state.dir); }
    if (state.family) params.set("family", state.family);
    if (state.domain) params.set("domain", state.domain);
    if (state.origin) params.set("origin", state.origin);
    if (state.cols) params.set("cols", "model");
    var text = "#" + params.toString();
    if (location.hash !== text) {
      try { history.replaceState(null, "", text); } catch (e) { /* file:// in some browsers */ }
    }
  }

  function settle() {
    var visible = tables.filter(tabShown).map(function (t) { return t.id; });
    if (state.tab !== PLOTS && visible.indexOf(state.tab) < 0) {
      state.tab = visible.length ? visible[0] : PLOTS;
    }
    var table = tables.find(function (t) { return t.id === state.tab; });
    // Sorting by a model column shows the model columns.
    if (modelColumn(state.sort)) state.cols = true;
    var valid = table && (state.sort === "model" || state.sort === "params" ||
      modelColumn(state.sort) ||
      (state.sort === "rank" && table.kind === "benchmark") ||
      table.columns.some(function (c) { return c.id === state.sort && columnShown(c); }));
    if (!valid) { state.sort = null; state.dir = null; }
    else if (!state.dir) state.dir = defaultDir(table, state.sort);
  }

  function renderTabs() {
    var nav = document.getElementById("tabs");
    nav.textContent = "";
    tables.concat([{ id: PLOTS, title: "Plots" }]).forEach(function (table) {
      if (table.id !== PLOTS && !tabShown(table)) return;
      var selected = table.id === state.tab;
      var button = h("button", {
        type: "button", role: "tab", id: "tab-" + table.id, "data-tab": table.id,
        "aria-selected": selected ? "true" : "false", "aria-controls": "panel-" + table.id,
        tabindex: selected ? "0" : "-1"
      }, table.title);
      button.addEventListener("click", function () {
        state.tab = table.id; state.sort = null; state.dir = null; update();
      });
      nav.appendChild(button);
    });
  }

  function modelSummary(card) {
    return [
      "parameters " + fmtCount(card.n_parameters),
      "embedding size " + fmtPlain(card.embedding_dim),
      "compression ratio " + fmtPlain(card.compression_ratio),
      "license " + fmtPlain(card.license),
      "revision " + fmtPlain(card.revision),
      card.origin === "computed" ? "computed with audiobench" : card.origin + ": " +
        fmtPlain(card.reported_from)
    ].join(" \u00b7 ");
  }

  function detailList(card) {
    var dl = h("dl");
    [
      ["Parameters", fmtCount(card.n_parameters)],
      ["Embedding size", fmtPlain(card.embedding_dim)],
      ["Compression ratio", fmtPlain(card.compression_ratio)],
      ["Bytes per second", fmtPlain(card.bytes_per_second)],
      ["FLOPs per second", fmtCount(card.flops_per_second)],
      ["Throughput (clips/s)", card.clips_per_s === null ? MISSING : card.clips_per_s.toFixed(1)],
      ["License", fmtPlain(card.license)],
      ["Open weights", card.open_weights === null ? MISSING : (card.open_weights ? "yes" : "no")],
      ["Release date", fmtPlain(card.release_date)],
      ["Origin", card.origin === "computed" ? "computed with audiobench" : card.origin],
      ["Reported from", fmtPlain(card.reported_from)],
      ["Revision", fmtPlain(card.revision)],
      ["Source", fmtPlain(card.source)],
      ["Pooling", fmtPlain(card.pooling)],
      ["Tasks", card.tasks.join(", ")],
      ["Latest result", fmtPlain(card.latest)],
      ["audiobench", fmtPlain(card.audiobench_version)]
    ].forEach(function (item) {
      dl.appendChild(h("dt", null, item[0]));
      dl.appendChild(h("dd", { class: item[1] === MISSING ? "missing" : null }, item[1]));
    });
    return dl;
  }

  function sortHeader(table, id, label, title, extraClass) {
    var sorted = state.sort === id;
    var th = h("th", {
      scope: "col", "data-col": id, class: extraClass || null, title: title,
      "aria-sort": sorted ? (state.dir === "asc" ? "ascending" : "descending") : "none"
    });
    var button = h("button", { type: "button" }, label);
    button.addEventListener("click", function () {
      if (state.sort === id) state.dir = state.dir === "asc" ? "desc" : "asc";
      else { state.sort = id; state.dir = defaultDir(table, id); }
      update();
    });
    th.appendChild(button);
    return th;
  }

  function renderTable(table) {
    var panel = h("section", {
      role: "tabpanel", id: "panel-" + table.id, "data-tab": table.id,
      "aria-labelledby": "tab-" + table.id
    });
    panel.appendChild(h("h2", null, table.title));
    panel.appendChild(h("p", { class: "description" }, table.description));
    var rule = [];
    if (table.rank_by.length) rule.push("Ranked by " + table.rank_by.join(", then ") + ".");
    rule.push(table.scale);  // one scale per table: percent, or raw in its unit
    rule.push("\u2191 higher is better, \u2193 lower is better, " + MISSING + " no score.");
    panel.appendChild(h("p", { class: "rule" }, rule.join(" ")));
    if (!table.rows.length) {
      panel.appendChild(h("p", { class: "note" }, "No results yet."));
      return panel;
    }
    var shown = shownColumns(table);
    var rows = sortedRows(table);
    var hidden = 0, otherOrigin = 0;
    if (filtering()) {
      rows = rows.filter(function (row) {
        var keep = shown.some(function (i) { return row.values[i] !== null; });
        if (!keep) hidden += 1;
        return keep;
      });
    }
    rows = rows.filter(function (row) {
      var keep = originShown(data.models[row.model]);
      if (!keep) otherOrigin += 1;
      return keep;
    });
    var ranked = table.kind === "benchmark";
    var fixed = (ranked ? 3 : 2) + (state.cols ? MODEL_COLUMNS.length : 0);
    var best = {};
    shown.forEach(function (i) {
      var column = table.columns[i], top = null;
      rows.forEach(function (row) {
        var v = row.values[i];
        if (v !== null && (top === null || (column.higher_is_better ? v > top : v < top))) top = v;
      });
      best[i] = top;
    });
    var groupStart = {};
    shown.forEach(function (i, k) {
      var previous = k > 0 ? table.columns[shown[k - 1]].group : undefined;
      if (table.columns[i].group && table.columns[i].group !== previous) groupStart[i] = true;
    });

    var wrap = h("div", { class: "table-wrap" });
    var element = h("table", { "data-table": table.id, "data-unit": table.unit });
    var thead = h("thead");
    if (shown.some(function (i) { return table.columns[i].group; })) {
      var groups = h("tr", { class: "groups" });
      groups.appendChild(h("th", { colspan: fixed }, ""));
      var k = 0;
      while (k < shown.length) {
        var group = table.columns[shown[k]].group, span = 0;
        while (k + span < shown.length && table.columns[shown[k + span]].group === group) span++;
        groups.appendChild(h("th", {
          colspan: span, class: group ? "group-start" : null, scope: "colgroup"
        }, group ? group + " subsets" : ""));
        k += span;
      }
      thead.appendChild(groups);
    }
    var head = h("tr");
    if (ranked) {
      head.appendChild(sortHeader(table, "rank", "#", "Rank under the benchmark's rule", "num"));
    }
    head.appendChild(sortHeader(table, "model", "Model", "Model name (click a row for details)"));
    head.appendChild(sortHeader(table, "params", "Params", "Parameter count", "num"));
    if (state.cols) {
      MODEL_COLUMNS.forEach(function (c) {
        head.appendChild(sortHeader(table, c[0], c[1], c[2], "num model-col"));
      });
    }
    shown.forEach(function (i) {
      var column = table.columns[i];
      var title = column.name + " \u2014 " + column.task + " " + column.score +
        (column.group ? " (" + column.group + " subsets)" : "") + "; " +
        (column.higher_is_better ? "higher" : "lower") + " is better";
      var th = sortHeader(table, column.id, column.label, title,
        "num" + (groupStart[i] ? " group-start" : ""));
      th.appendChild(h("span", { class: "dir", "aria-hidden": "true" }, arrow(column)));
      head.appendChild(th);
    });
    thead.appendChild(head);
    element.appendChild(thead);

    var tbody = h("tbody");
    rows.forEach(function (row) {
      var card = data.models[row.model];
      var open = state.open[row.model] === true;
      var tr = h("tr", {
        class: "row", "data-key": row.model, "data-model": card.name,
        "data-revision": card.revision === null ? "" : card.revision, "data-origin": card.origin
      });
      if (ranked) tr.appendChild(h("td", { class: "num" + (row.rank === null ? " missing" : "") },
        row.rank === null ? MISSING : row.rank));
      var cell = h("td", { class: "model" });
      var toggle = h("button", {
        type: "button", title: modelSummary(card), "aria-expanded": open ? "true" : "false"
      }, card.name);
      toggle.addEventListener("click", function () {
        state.open[row.model] = !state.open[row.model];
        update();
      });
      cell.appendChild(toggle);
      if (card.revision !== null) cell.appendChild(h("span", { class: "revision" }, card.revision));
      if (card.origin !== "computed") {
        // Scores published elsewhere and imported: marked, so no one reads them as our runs.
        cell.appendChild(h("span", {
          class: "origin", "data-origin-marker": card.origin,
          title: (card.origin === "reported" ? "Reported: published scores imported from " :
            "Some scores reported, imported from ") + fmtPlain(card.reported_from)
        }, card.origin));
      }
      tr.appendChild(cell);
      tr.appendChild(h("td", { class: "num" + (card.n_parameters === null ? " missing" : "") },
        fmtCount(card.n_parameters)));
      if (state.cols) {
        [fmtPlain(card.embedding_dim),
          card.open_weights === null ? MISSING : (card.open_weights ? "yes" : "no"),
          fmtPlain(card.release_date)].forEach(function (text, k) {
          tr.appendChild(h("td", {
            class: "num" + (text === MISSING ? " missing" : ""), "data-col": MODEL_COLUMNS[k][0]
          }, text));
        });
      }
      shown.forEach(function (i) {
        var value = row.values[i];
        var classes = ["num"];
        if (groupStart[i]) classes.push("group-start");
        if (value === null) classes.push("missing");
        else if (value === best[i]) classes.push("best");
        var note = row.notes && row.notes[i] ? row.notes[i] : "";
        var td = h("td", {
          class: classes.join(" "), "data-col": table.columns[i].id,
          "data-value": value === null ? "missing" : String(value), title: note || null
        }, fmtScore(value, table.columns[i]));
        // The reference a raw score reads against (baseline and lift, chance and spread).
        if (note && value !== null) td.appendChild(h("span", { class: "context" }, note));
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
      if (open) {
        var detail = h("tr", { class: "detail", "data-detail-for": row.model });
        var td = h("td", { colspan: fixed + shown.length });
        td.appendChild(detailList(card));
        detail.appendChild(td);
        tbody.appendChild(detail);
      }
    });
    element.appendChild(tbody);
    wrap.appendChild(element);
    panel.appendChild(wrap);
    if (hidden) {
      panel.appendChild(h("p", { class: "note" }, hidden +
        " model(s) with no score in the filtered columns are hidden."));
    }
    if (otherOrigin) {
      panel.appendChild(h("p", { class: "note", id: "origin-hidden" }, otherOrigin +
        " model(s) with " + (state.origin === "computed" ? "reported" : "computed") +
        " scores only are hidden; ranks are those of the whole board."));
    }
    return panel;
  }

  function renderFilters() {
    [["filter-family", data.families, "family"], ["filter-domain", data.domains, "domain"]]
      .forEach(function (spec) {
        var select = document.getElementById(spec[0]);
        if (!select.options.length) {
          select.appendChild(h("option", { value: "" }, "all"));
          spec[1].forEach(function (value) {
            select.appendChild(h("option", { value: value }, value.replace(/_/g, " ")));
          });
          select.addEventListener("change", function () {
            state[spec[2]] = select.value;
            update();
          });
        }
        select.value = state[spec[2]];
      });
  }

  function renderOriginControls() {
    var select = document.getElementById("filter-origin");
    if (!select.options.length) {
      [["", "all"], ["computed", "computed with audiobench"], ["reported", "reported (imported)"]]
        .forEach(function (o) { select.appendChild(h("option", { value: o[0] }, o[1])); });
      select.addEventListener("change", function () { state.origin = select.value; update(); });
      var box = document.getElementById("show-model-columns");
      box.addEventListener("change", function () {
        state.cols = box.checked;
        if (!state.cols && modelColumn(state.sort)) { state.sort = null; state.dir = null; }
        update();
      });
    }
    select.value = state.origin;
    document.getElementById("show-model-columns").checked = state.cols;
  }

  function update() {
    settle();
    renderFilters();
    renderOriginControls();
    renderTabs();
    var panels = document.getElementById("panels");
    panels.textContent = "";
    var table = tables.find(function (t) { return t.id === state.tab; });
    if (table) panels.appendChild(renderTable(table));
    document.getElementById("panel-plots").hidden = state.tab !== PLOTS;
    document.body.setAttribute("data-active-tab", state.tab);
    document.body.setAttribute("data-sort", state.sort ? state.sort + ":" + state.dir : "");
    writeHash();
  }

  readHash();
  update();
  window.addEventListener("hashchange", function () { readHash(); update(); });
  document.body.setAttribute("data-ready", "true");
})();
"""
