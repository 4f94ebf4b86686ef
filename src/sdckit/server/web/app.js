// sdckit analysis server: the analyst's page. Plain DOM, no build step.
// Every value from the server is inserted as text (textContent), never as HTML.
"use strict";

const state = { token: null, meta: null, pieces: [], predictors: [], interactions: [] };

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function option(value, label, selected) {
  const o = el("option", { value }, label);
  if (selected) o.selected = true;
  return o;
}

async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + state.token };
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let payload = null;
  try {
    payload = await response.json();
  } catch (_) {
    payload = { status: "error", error: "bad_response", message: "the server sent no JSON" };
  }
  return { httpStatus: response.status, payload };
}

// ------------------------------------------------------------------ sign in

async function signIn(event) {
  if (event) event.preventDefault();
  const token = $("token").value.trim();
  if (!token) return;
  state.token = token;
  const me = await api("GET", "/api/me");
  if (me.httpStatus !== 200) {
    showSigninError(me.payload.message || "sign-in failed");
    state.token = null;
    return;
  }
  sessionStorage.setItem("sdckit-token", token);
  const meta = await api("GET", "/api/metadata");
  if (meta.httpStatus !== 200) {
    showSigninError(meta.payload.message || "could not load the metadata");
    return;
  }
  state.meta = meta.payload;
  $("signin-error").hidden = true;
  $("signin-panel").hidden = true;
  $("workspace").hidden = false;
  $("account").hidden = false;
  $("account-name").textContent = me.payload.name;
  renderVariables();
  resetForms();
}

function showSigninError(message) {
  $("signin-error").textContent = message;
  $("signin-error").hidden = false;
}

function signOut() {
  sessionStorage.removeItem("sdckit-token");
  state.token = null;
  location.reload();
}

// ------------------------------------------------------------------ variables

function variables() {
  return Object.entries(state.meta.variables);
}

function codesOf(variable) {
  return variable.kind === "categorical" ? variable.levels : variable.bins;
}

function renderVariables() {
  const list = el("dl", { class: "variables" });
  for (const [name, v] of variables()) {
    const codes = codesOf(v);
    list.append(
      el("dt", {}, el("strong", { text: name }), " ", el("span", { class: "kind", text: v.kind })),
      el("dd", {}, v.label ? el("div", { text: v.label }) : null,
        v.kind === "categorical"
          ? el("div", { class: "codes", text: "levels: " + codes.join(", ") })
          : el("details", { class: "codes" }, el("summary", { text: `${codes.length} bins` }),
            el("ol", { start: "0" }, ...codes.map((c) => el("li", { text: c })))),
        // Declared groups: selecting every level of one is checked as one class.
        v.groups
          ? el("div", { class: "codes", text: "groups: " + Object.entries(v.groups)
            .map(([g, members]) => `${g} (${members.join(", ")})`).join("; ") })
          : null)
    );
  }
  $("variables").replaceChildren(list);
}

// ------------------------------------------------------------------ universe

function universeStructure() {
  const pieces = [];
  for (const piece of state.pieces) {
    const out = {};
    for (const cond of piece) {
      if (!cond.selected.size) continue;
      const v = state.meta.variables[cond.variable];
      if (v.kind === "categorical") out[cond.variable] = [...cond.selected];
      else out[cond.variable] = { bins: [...cond.selected].sort((a, b) => a - b) };
    }
    if (Object.keys(out).length) pieces.push(out);
  }
  return { pieces };
}

function universeText() {
  const structure = universeStructure();
  if (!structure.pieces.length) return "ALL";
  return structure.pieces
    .map((piece) =>
      Object.entries(piece)
        .map(([name, sel]) =>
          Array.isArray(sel)
            ? (sel.length === 1 ? `${name} = ${quote(sel[0])}` : `${name} in {${sel.map(quote).join(", ")}}`)
            : `${name} in ${sel.bins.length === 1 ? "bin" : "bins"} ${sel.bins.join(", ")}`
        )
        .join(" AND ")
    )
    .join(" OR ");
}

function quote(level) {
  return /^[A-Za-z0-9_.+-]+$/.test(level) && !/^(and|or|in|all|bin|bins|node|nodes)$/i.test(level)
    ? level
    : JSON.stringify(level);
}

function renderPieces() {
  const container = $("pieces");
  container.replaceChildren();
  state.pieces.forEach((piece, p) => {
    const box = el("div", { class: "piece", "data-piece": p });
    box.append(el("h3", {}, `Piece ${p + 1}`, " ",
      el("button", { type: "button", class: "small", onclick: () => { state.pieces.splice(p, 1); renderPieces(); } }, "remove piece")));
    piece.forEach((cond, c) => {
      const v = state.meta.variables[cond.variable];
      const codes = codesOf(v);
      const boxes = el("div", { class: "choices" });
      codes.forEach((label, i) => {
        const value = v.kind === "categorical" ? label : i;
        const input = el("input", { type: "checkbox", "data-value": String(value) });
        input.checked = cond.selected.has(value);
        input.addEventListener("change", () => {
          if (input.checked) cond.selected.add(value); else cond.selected.delete(value);
          updateUniverseText();
        });
        boxes.append(el("label", { class: "choice" }, input, v.kind === "categorical" ? label : `${i}: ${label}`));
      });
      box.append(el("div", { class: "condition", "data-variable": cond.variable },
        el("strong", { text: cond.variable }), " in ",
        el("button", { type: "button", class: "small", onclick: () => { piece.splice(c, 1); renderPieces(); } }, "remove"),
        boxes));
    });
    const used = new Set(piece.map((cond) => cond.variable));
    const pick = el("select", { class: "add-variable", "aria-label": "variable to add" },
      ...variables().filter(([n]) => !used.has(n)).map(([n]) => option(n, n)));
    const add = el("button", { type: "button", class: "add-condition", onclick: () => {
      if (!pick.value) return;
      piece.push({ variable: pick.value, selected: new Set() });
      renderPieces();
    } }, "Add condition (AND)");
    box.append(el("div", { class: "add-row" }, pick, " ", add));
    container.append(box);
  });
  updateUniverseText();
}

function updateUniverseText() {
  const text = universeText();
  const shown = $("universe-text");
  // Any change of the universe makes an earlier check's answer stale: clear it.
  if (shown.textContent !== text) $("universe-result").replaceChildren();
  shown.textContent = text;
}

async function checkUniverse() {
  const out = $("universe-result");
  out.replaceChildren(el("p", { class: "hint", text: "checking..." }));
  const { httpStatus, payload } = await api("POST", "/api/universe/check", { universe: universeStructure() });
  if (payload.status === "ok") {
    out.replaceChildren(el("p", { class: "ok" },
      `Allowed (${payload.joint ? "joint" : "disjoint"}); size class: `, el("strong", { class: "size-class", text: payload.size_class })));
  } else {
    out.replaceChildren(renderProblem(payload, httpStatus));
  }
}

// ------------------------------------------------------------------ analysis forms

function names(kind) {
  return variables().filter(([, v]) => !kind || v.kind === kind).map(([n]) => n);
}

function transformOptions(select, variable, current) {
  select.replaceChildren(option("", "(none)"));
  const v = state.meta.variables[variable];
  if (v && v.kind === "continuous") {
    for (const t of state.meta.approved_transformations) select.append(option(t, t, t === current));
  }
}

function resetForms() {
  const all = names();
  $("ct-rows").replaceChildren(...all.map((n) => option(n, n)));
  $("ct-cols").replaceChildren(option("", "(none)"), ...all.map((n) => option(n, n)));
  $("ct-mean").replaceChildren(option("", "(none)"), ...names("continuous").map((n) => option(n, n)));
  $("corr-vars").replaceChildren(...names("continuous").map((n) =>
    el("label", { class: "choice" }, el("input", { type: "checkbox", value: n }), n)));
  fillResponse();
  state.pieces = [];
  state.predictors = [];
  state.interactions = [];
  renderPieces();
  renderPredictors();
}

function fillResponse() {
  const family = $("family").value;
  const candidates = variables()
    .filter(([, v]) => (family === "ols" ? v.kind === "continuous" : v.kind === "categorical" && v.levels.length === 2))
    .map(([n]) => n);
  $("response-var").replaceChildren(...candidates.map((n) => option(n, n)));
  transformOptions($("response-transform"), $("response-var").value, "");
  $("response-transform").disabled = family !== "ols";
  $("want-plot").disabled = family !== "ols";
  updateFormula();
}

function factorText(f) {
  return f.transform ? `${f.transform}(${f.variable})` : f.variable;
}

function renderPredictors() {
  const box = $("predictors");
  box.replaceChildren();
  state.predictors.forEach((pred, i) => {
    const varSelect = el("select", { class: "predictor-var", "aria-label": `predictor ${i + 1}` },
      ...names().map((n) => option(n, n, n === pred.variable)));
    const tSelect = el("select", { class: "predictor-transform", "aria-label": `transformation ${i + 1}` });
    transformOptions(tSelect, pred.variable, pred.transform);
    varSelect.addEventListener("change", () => { pred.variable = varSelect.value; pred.transform = ""; renderPredictors(); });
    tSelect.addEventListener("change", () => { pred.transform = tSelect.value; renderPredictors(); });
    box.append(el("div", { class: "predictor" }, tSelect, varSelect,
      el("button", { type: "button", class: "small", onclick: () => { state.predictors.splice(i, 1); renderPredictors(); } }, "remove")));
  });
  const terms = state.predictors.map(factorText);
  const ibox = $("interactions");
  ibox.replaceChildren();
  state.interactions = state.interactions.map((inter) => inter.filter((t) => terms.includes(t)));
  state.interactions.forEach((inter, i) => {
    const row = el("div", { class: "interaction" });
    for (const term of terms) {
      const input = el("input", { type: "checkbox", "data-term": term });
      input.checked = inter.includes(term);
      input.addEventListener("change", () => {
        const idx = inter.indexOf(term);
        if (input.checked && idx < 0) inter.push(term);
        if (!input.checked && idx >= 0) inter.splice(idx, 1);
        updateFormula();
      });
      row.append(el("label", { class: "choice" }, input, term));
    }
    row.append(el("button", { type: "button", class: "small", onclick: () => { state.interactions.splice(i, 1); renderPredictors(); } }, "remove"));
    ibox.append(row);
  });
  updateFormula();
}

function formulaStructure() {
  const response = { variable: $("response-var").value, transform: $("response-transform").value || null };
  const factors = new Map(state.predictors.map((p) => [factorText(p), { variable: p.variable, transform: p.transform || null }]));
  const terms = [...factors.values()].map((f) => [f]);
  for (const inter of state.interactions) {
    if (inter.length >= 2) terms.push(inter.map((t) => factors.get(t)).filter(Boolean));
  }
  return { response, terms };
}

function updateFormula() {
  const f = formulaStructure();
  const rhs = f.terms.map((term) => term.map(factorText).join(":")).join(" + ");
  $("formula-text").textContent = `${factorText(f.response)} ~ ${rhs || "..."}`;
}

function showForm() {
  const kind = $("analysis-kind").value;
  $("crosstab-form").hidden = kind !== "crosstab";
  $("regression-form").hidden = kind !== "regression";
  $("correlation-form").hidden = kind !== "correlation";
}

// ------------------------------------------------------------------ results

function fmt(x, digits) {
  if (x === null || x === undefined) return "–";
  if (typeof x !== "number") return String(x);
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
  return Math.abs(x) >= 1e5 || (Math.abs(x) < 1e-3 && x !== 0) ? x.toExponential(digits || 3) : x.toPrecision(digits || 4);
}

function table(headers, rows, cls) {
  return el("table", { class: cls || "" },
    el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { text: h })))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c, i) => el(i === 0 ? "th" : "td", { text: fmt(c) }))))));
}

function notes(payload) {
  const items = (payload.verdicts || []).flatMap((v) => v.adjustments || []);
  return items.length ? el("ul", { class: "notes" }, ...items.map((a) => el("li", { text: a }))) : null;
}

function renderProblem(payload, httpStatus) {
  if (payload.status === "refused") {
    return el("div", { class: "refusal" },
      el("h3", { text: `Refused (${payload.analysis})` }),
      el("ul", {}, ...payload.refusals.map((v) => el("li", {}, el("strong", { class: "rule", text: v.rule }), ": ", v.reason))));
  }
  return el("div", { class: "refusal error" },
    el("h3", { text: `Error ${httpStatus}: ${payload.error || "error"}` }),
    el("p", { text: payload.message || "" }),
    ...(payload.details || []).map((d) => el("p", { class: "hint", text: `${(d.loc || []).join(".")}: ${d.msg}` })));
}

function renderCrosstab(p) {
  const headers = [p.rows + (p.cols ? " \\ " + p.cols : ""), ...p.col_labels, "Total"];
  const rows = p.row_labels.map((label, i) => [label, ...p.counts[i], p.row_totals[i]]);
  rows.push(["Total", ...p.col_totals, p.total]);
  const parts = [el("h3", { text: `Counts on ${p.universe}` }), table(headers, rows, "counts")];
  if (p.mean_of) {
    const mrows = p.row_labels.map((label, i) => [label, ...p.means[i], p.row_means[i]]);
    mrows.push(["All", ...p.col_means, p.total_mean]);
    parts.push(el("h3", { text: `Mean of ${p.mean_of} (– suppressed)` }), table(headers, mrows, "means"));
  }
  return parts;
}

function renderRegression(p) {
  const kind = p.family === "ols" ? "Linear regression" : "Logistic regression";
  return [
    el("h3", { text: `${kind}: ${p.formula}` }),
    el("p", { class: "fit" }, `Universe ${p.universe}; ${p.n_obs} units; ${p.family === "ols" ? "R²" : "pseudo R²"} ${fmt(p.r_squared)}` +
      (p.adj_r_squared !== null && p.adj_r_squared !== undefined ? `, adjusted ${fmt(p.adj_r_squared)}` : "") +
      `; residual df ${fmt(p.df_resid)}` + (p.event ? `; event: ${p.event}` : "")),
    table(["term", "estimate", "std. error", p.family === "ols" ? "t" : "z", "p"],
      p.coefficients.map((c) => [c.term, c.estimate, c.std_error, c.statistic, c.p_value]), "coefficients"),
    el("h3", { text: p.family === "ols" ? "Analysis of variance" : "Analysis of deviance" }),
    table(["source", "df", p.family === "ols" ? "sum of squares" : "deviance", "statistic", "p"],
      p.anova.map((a) => [a.source, a.df, a.sum_of_squares, a.statistic, a.p_value]), "anova"),
    Object.keys(p.references).length
      ? el("p", { class: "hint", text: "reference categories: " + Object.entries(p.references).map(([k, v]) => `${k} = ${v}`).join(", ") })
      : null,
  ];
}

function renderCorrelation(p) {
  return [el("h3", { text: `Correlations on ${p.universe} (${p.n_obs} units)` }),
    table(["", ...p.variables], p.variables.map((v, i) => [v, ...p.matrix[i]]), "correlations")];
}

async function run() {
  const kind = $("analysis-kind").value;
  const universe = universeStructure();
  const out = $("result");
  $("residual-plot").replaceChildren();
  out.replaceChildren(el("p", { class: "hint", text: "running..." }));
  let path, body;
  if (kind === "crosstab") {
    path = "/api/crosstab";
    body = { universe, rows: $("ct-rows").value, cols: $("ct-cols").value || null, mean_of: $("ct-mean").value || null };
  } else if (kind === "regression") {
    path = "/api/regression";
    body = { universe, formula: formulaStructure(), family: $("family").value };
    if (!body.formula.terms.length) {
      out.replaceChildren(el("p", { class: "error", text: "add at least one predictor" }));
      return;
    }
  } else {
    path = "/api/correlation";
    body = { universe, variables: [...$("corr-vars").querySelectorAll("input:checked")].map((i) => i.value) };
    if (body.variables.length < 2) {
      out.replaceChildren(el("p", { class: "error", text: "tick at least two variables to correlate" }));
      return;
    }
  }
  const { httpStatus, payload } = await api("POST", path, body);
  if (payload.status !== "ok") {
    out.replaceChildren(renderProblem(payload, httpStatus));
    return;
  }
  const parts = kind === "crosstab" ? renderCrosstab(payload) : kind === "regression" ? renderRegression(payload) : renderCorrelation(payload);
  out.replaceChildren(...parts.filter(Boolean));
  const n = notes(payload);
  if (n) out.append(el("h3", { text: "Adjustments" }), n);
  out.append(el("p", { class: "hint", text: `audit entry ${payload.audit_id}` }));
  if (kind === "regression" && $("want-plot").checked) {
    await diagnosticPlot(body.family === "ols" ? RESIDUAL_PLOT : BINNED_PLOT, universe, body.formula);
  }
}

// The two residual diagnostics of a regression: OLS gets synthetic residuals,
// logit binned residuals; both come back as one PNG and say why no point is a person.
const RESIDUAL_PLOT = {
  path: "/api/residual-plot",
  what: "synthetic residual plots",
  hint: "Residuals are synthetic (smoothed real pattern plus noise); no point is a real person.",
};
const BINNED_PLOT = {
  path: "/api/logit-diagnostics",
  what: "binned residual plots",
  hint: "Each point is the mean residual of a group of many people (by fitted probability, public bins or categories), with a ±2 standard-error band; no point is a real person.",
};

async function diagnosticPlot(plot, universe, formula) {
  const box = $("residual-plot");
  box.replaceChildren(el("p", { class: "hint", text: `drawing ${plot.what}...` }));
  const { httpStatus, payload } = await api("POST", plot.path, { universe, formula });
  if (payload.status !== "ok") {
    box.replaceChildren(renderProblem(payload, httpStatus));
    return;
  }
  const img = el("img", { alt: `${plot.what} of ${payload.formula}`, class: "residual-plot" });
  img.src = "data:image/png;base64," + payload.png_base64;
  const title = plot.what.charAt(0).toUpperCase() + plot.what.slice(1);
  box.replaceChildren(el("h3", { text: title }), el("p", { class: "hint", text: plot.hint }), img);
}

async function loadHistory() {
  const { httpStatus, payload } = await api("GET", "/api/history?limit=50");
  const box = $("history");
  if (httpStatus !== 200) {
    box.replaceChildren(renderProblem(payload, httpStatus));
    return;
  }
  if (!payload.identity_logging) {
    box.replaceChildren(el("p", { class: "hint", text: payload.note }));
    return;
  }
  box.replaceChildren(table(["id", "time (UTC)", "analysis", "outcome", "query"],
    payload.entries.map((e) => [e.id, e.arrived_at.replace("T", " ").slice(0, 19), e.analysis, e.outcome, JSON.stringify(e.query)]), "history"));
}

// ------------------------------------------------------------------ wiring

document.addEventListener("DOMContentLoaded", () => {
  $("signin-form").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", signOut);
  $("add-piece").addEventListener("click", () => { state.pieces.push([]); renderPieces(); });
  $("check-universe").addEventListener("click", checkUniverse);
  $("analysis-kind").addEventListener("change", showForm);
  $("family").addEventListener("change", fillResponse);
  $("response-var").addEventListener("change", () => { transformOptions($("response-transform"), $("response-var").value, ""); updateFormula(); });
  $("response-transform").addEventListener("change", updateFormula);
  $("add-predictor").addEventListener("click", () => {
    const used = new Set([$("response-var").value]);
    const first = names().find((n) => !used.has(n)) || names()[0];
    state.predictors.push({ variable: first, transform: "" });
    renderPredictors();
  });
  $("add-interaction").addEventListener("click", () => { state.interactions.push([]); renderPredictors(); });
  $("run").addEventListener("click", run);
  $("load-history").addEventListener("click", loadHistory);
  const saved = sessionStorage.getItem("sdckit-token");
  if (saved) {
    $("token").value = saved;
    signIn();
  }
});
