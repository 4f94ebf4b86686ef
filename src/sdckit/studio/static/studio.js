// sdckit studio: the steward's page. Plain DOM and ES modules, no build step, no external asset.
// The one-time token of the URL the command printed goes with every request.
"use strict";

import { $, el, option } from "./dom.js";
import { buildForm, clearErrors, markError, readForm } from "./forms.js";
import { formatNumber, riskUtilityMap, sparkline } from "./plots.js";

const PAGE_ROWS = 20;
// A job is followed by long polls: the studio answers when the job ends, or after this many
// seconds with its progress, so the page neither waits longer than needed nor keeps asking.
const JOB_WAIT_S = 0.5;

const studio = {
  token: null,
  state: null,
  methods: [],
  previewOffset: 0,
  job: null,
  sweep: null,
  // The risk and utility of every step seen in this page, for the plots along the path.
  seen: new Map(),
};

// ------------------------------------------------------------------ talking to the back end

function readToken() {
  const url = new URL(location.href);
  const token = url.searchParams.get("token");
  if (token) {
    sessionStorage.setItem("sdckit-studio-token", token);
    // The token stays out of the address bar (and so out of screenshots and history).
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
    return token;
  }
  return sessionStorage.getItem("sdckit-studio-token");
}

/** The back end's answer: {ok, status, body}; body is JSON, or text for a text response. */
async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + studio.token };
  const init = { method, headers };
  if (body instanceof Blob) {
    headers["Content-Type"] = "application/octet-stream";
    init.body = body;
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (_) {
    return { ok: false, status: 0, body: { message: "the studio is not answering; is `sdckit studio` still running?" } };
  }
  const type = response.headers.get("content-type") || "";
  let payload;
  if (type.includes("json")) {
    try {
      payload = await response.json();
    } catch (_) {
      payload = { message: "the studio sent a malformed answer" };
    }
  } else {
    payload = await response.text();
  }
  return { ok: response.ok, status: response.status, body: payload };
}

/** The sentence a failed request should show, and the parameter or column it names. */
function problemOf(answer) {
  const body = answer.body;
  if (typeof body === "string") return { message: body || `the studio answered ${answer.status}` };
  let detail = body && (body.detail ?? body.error ?? body);
  if (Array.isArray(detail)) {
    // FastAPI's validation errors: a list of {loc, msg}.
    const first = detail[0] || {};
    const where = (first.loc || []).filter((p) => p !== "body").join(".");
    return { message: `${where ? where + ": " : ""}${first.msg || "invalid request"}`, parameter: where || undefined };
  }
  if (typeof detail === "string") detail = { message: detail };
  return {
    message: detail.message || (body && body.message) || `the studio answered ${answer.status}`,
    parameter: detail.parameter ?? (body && body.parameter),
    column: detail.column ?? (body && body.column),
  };
}

function showMessage(text) {
  const box = $("message");
  box.textContent = text;
  box.hidden = !text;
}

function notify(text) {
  $("notice").textContent = text;
}

/** Shows a failed request's reason; marks the control it names. Returns the problem. */
function showProblem(answer, form) {
  const problem = problemOf(answer);
  showMessage(problem.message);
  if (problem.parameter && form) markError(form, problem.parameter, problem.message);
  if (problem.column) {
    for (const select of document.querySelectorAll(`#columns [data-column="${CSS.escape(problem.column)}"]`)) {
      select.setAttribute("aria-invalid", "true");
    }
  }
  return problem;
}

async function call(method, path, body, form) {
  const answer = await api(method, path, body);
  if (!answer.ok) {
    showProblem(answer, form);
    return null;
  }
  return answer.body;
}

// ------------------------------------------------------------------ tabs

function selectTab(tab, focus) {
  for (const other of document.querySelectorAll("[role=tab]")) {
    const selected = other === tab;
    other.setAttribute("aria-selected", String(selected));
    other.tabIndex = selected ? 0 : -1;
    $(other.getAttribute("aria-controls")).hidden = !selected;
  }
  if (focus) tab.focus();
}

function setUpTabs() {
  const tabs = [...document.querySelectorAll("[role=tab]")];
  for (const tab of tabs) {
    tab.addEventListener("click", () => selectTab(tab, false));
    tab.addEventListener("keydown", (event) => {
      const i = tabs.indexOf(tab);
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      selectTab(tabs[(next + tabs.length) % tabs.length], true);
    });
  }
}

// ------------------------------------------------------------------ state

function columnNames() {
  return studio.state && studio.state.columns ? studio.state.columns.map((c) => c.name) : [];
}

async function refresh() {
  const state = await call("GET", "/api/state");
  if (state === null) return;
  studio.state = state;
  render();
}

function render() {
  const state = studio.state;
  $("file-line").replaceChildren(state.open
    ? el("span", {}, "File ", el("strong", { text: state.file }), ` · ${formatNumber(state.n_records)} rows × ${formatNumber(columnNames().length)} columns`)
    : "No file open.");
  const files = state.files || [];
  $("open-name").replaceChildren(...files.map((name) => option(name, name, name === state.file)));
  $("open-form").hidden = files.length === 0;
  renderColumns();
  renderHistory();
  renderMeasures();
  // The forms are built again only for another file: a step keeps what the steward typed.
  const formsKey = JSON.stringify([state.file, columnNames()]);
  if (studio.formsKey !== formsKey) {
    studio.formsKey = formsKey;
    renderMethodChoices();
  }
  renderOverrides();
  loadPreview();
  loadRecipe();
}

// ------------------------------------------------------------------ data tab

const KINDS = ["numeric", "categorical", "ordinal", "date"];
const ROLES = ["key", "sensitive", "weight", "id", "household", "other", "pass", "drop"];
const ROLE_LABELS = {
  key: "key (quasi-identifier)", household: "household id", pass: "pass through", other: "other (analysis variable)",
};

/** What a suggestion proposes (a role or a kind, decided by the back end) and why. */
function suggestionOf(column) {
  if (!column.suggestion) return null;
  const [what, ...rest] = column.suggestion.split(":");
  const reason = rest.join(":").trim();
  const looks = { identifier: "an identifier", code: "a code", weight: "a weight" }[what];
  return {
    role: column.suggested_role || null,
    kind: column.suggested_kind || null,
    text: looks ? `looks like ${looks} (${reason})` : column.suggestion,
  };
}

function renderColumns() {
  const state = studio.state;
  const columns = state.columns || [];
  if (!columns.length) {
    $("columns").replaceChildren(el("p", { class: "hint", text: "Open a file to see its columns." }));
    return;
  }
  const kinds = state.kinds || KINDS;
  const roles = state.roles || ROLES;
  const body = el("tbody");
  columns.forEach((column, i) => {
    const kind = el("select", { id: `kind-${i}`, class: "kind", "data-column": column.name, "aria-label": `kind of ${column.name}` },
      ...kinds.map((k) => option(k, k, k === column.kind)));
    const role = el("select", { id: `role-${i}`, class: "role", "data-column": column.name, "aria-label": `role of ${column.name}` },
      ...roles.map((r) => option(r, ROLE_LABELS[r] || r, r === column.role)));
    const suggested = suggestionOf(column);
    const flag = suggested
      ? el("span", { class: "suggestion", "data-role": suggested.role || false, "data-kind": suggested.kind || false, text: suggested.text })
      : null;
    body.append(el("tr", { "data-column": column.name },
      el("th", { class: "text", scope: "row", text: column.name }),
      el("td", { class: "text" }, kind),
      el("td", { class: "text" }, role),
      el("td", { class: "text suggested" }, flag)));
  });
  $("columns").replaceChildren(el("table", { class: "columns" },
    el("caption", { class: "hint", text: "One row per column of the file" }),
    el("thead", {}, el("tr", {},
      el("th", { class: "text", scope: "col", text: "column" }),
      el("th", { class: "text", scope: "col", text: "kind" }),
      el("th", { class: "text", scope: "col", text: "role" }),
      el("th", { class: "text", scope: "col", text: "suggestion from the data" }))),
    body));
}

async function saveRoles() {
  showMessage("");
  for (const node of document.querySelectorAll("#columns [aria-invalid]")) node.removeAttribute("aria-invalid");
  const roles = {};
  const kinds = {};
  for (const select of document.querySelectorAll("#columns select.role")) roles[select.dataset.column] = select.value;
  for (const select of document.querySelectorAll("#columns select.kind")) kinds[select.dataset.column] = select.value;
  const state = await call("POST", "/api/roles", { roles, kinds });
  if (state === null) return;
  notify("Roles set.");
  await refresh();
}

function takeSuggestions() {
  for (const column of studio.state.columns || []) {
    const suggested = suggestionOf(column);
    if (!suggested) continue;
    const name = CSS.escape(column.name);
    if (suggested.role) document.querySelector(`#columns select.role[data-column="${name}"]`).value = suggested.role;
    if (suggested.kind) document.querySelector(`#columns select.kind[data-column="${name}"]`).value = suggested.kind;
  }
  notify("Suggestions taken; press Set roles to keep them.");
}

async function loadPreview() {
  if (!studio.state || !studio.state.open) {
    $("preview").replaceChildren();
    $("preview-range").textContent = "";
    return;
  }
  const step = $("preview-stage").value === "original" ? "&step=0" : "";
  const page = await call("GET", `/api/preview?offset=${studio.previewOffset}&limit=${PAGE_ROWS}${step}`);
  if (page === null) return;
  const total = page.n_records;
  const first = page.rows.length ? page.offset + 1 : 0;
  $("preview-range").textContent = `rows ${formatNumber(first)}–${formatNumber(page.offset + page.rows.length)} of ${formatNumber(total)}`;
  $("preview-prev").disabled = page.offset <= 0;
  $("preview-next").disabled = page.offset + page.rows.length >= total;
  const changed = page.changed || [];
  $("preview").replaceChildren(el("table", { class: "preview" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "row" }),
      ...page.columns.map((c) => el("th", { scope: "col", text: c })))),
    el("tbody", {}, ...page.rows.map((row, r) => el("tr", { class: changed[r] && changed[r].some(Boolean) ? "changed" : "" },
      el("th", { scope: "row", text: String(page.offset + r + 1) }),
      ...row.map((value, c) => el("td", {
        class: [typeof value === "number" ? "" : "text", changed[r] && changed[r][c] ? "changed" : ""].join(" ").trim(),
        text: value === null ? "" : String(value),
      })))))));
}

async function opened(state, name) {
  if (state === null) return;
  studio.previewOffset = 0;
  studio.seen.clear();
  notify(`Opened ${name}.`);
  studio.state = state;
  render();
}

async function openFile(event) {
  event.preventDefault();
  showMessage("");
  const name = $("open-name").value;
  await opened(await call("POST", "/api/open", { file: name }), name);
}

/** The file chosen in file input ``id``, or null after saying ``missing`` and focusing it. */
function chosenFile(id, missing) {
  showMessage("");
  const file = $(id).files[0];
  if (!file) {
    showMessage(missing);
    $(id).focus();
  }
  return file || null;
}

async function uploadFile(event) {
  event.preventDefault();
  const file = chosenFile("upload", "file: choose a CSV or Parquet file to upload");
  if (!file) return;
  await opened(await call("POST", `/api/upload?name=${encodeURIComponent(file.name)}`, file), file.name);
}

// ------------------------------------------------------------------ measures

// Risk measures where a larger value is safer; every other risk figure is better smaller.
const RISK_HIGHER_IS_BETTER = new Set(["k_anonymity", "l_diversity"]);
// Utility figures that measure a loss (smaller is better); for the others the page shows the
// change without calling it better or worse.
const UTILITY_LOSSES = new Set(["cells_changed_share"]);

function measureLabel(name) {
  const label = name.replaceAll("_", " ");
  return label.charAt(0).toUpperCase() + label.slice(1);
}

/** The steps from the original (step 0) to the current one, as ids. */
function currentPath() {
  const state = studio.state;
  return [0, ...(state.path || []).filter((id) => id !== 0)];
}

function renderMeasures() {
  const state = studio.state;
  if (state.metrics) studio.seen.set(state.current, state.metrics);
  const path = currentPath();
  const step = stepById(state.current);
  $("measures-step").textContent = step
    ? `At step #${step.id}: ${stepLabel(step)}. Beside each figure its change from the previous step; below it, its path from the original file.`
    : "";
  for (const group of ["risk", "utility"]) {
    const figures = (state.metrics && state.metrics[group]) || {};
    const changes = (state.change && state.change[group]) || {};
    const box = $(group);
    const heading = el("h3", { text: group === "risk" ? "Risk" : "Utility against the original" });
    const names = Object.keys(figures);
    const notes = Object.entries((state.metrics && state.metrics.errors) || {})
      .map(([measure, message]) => el("p", { class: "warning", text: `${measureLabel(measure)}: ${message}` }));
    if (!names.length) {
      const hint = group === "risk" ? "Give some columns the role key to see the risk." : "No figure yet.";
      box.replaceChildren(heading, ...(group === "risk" ? notes : []), el("p", { class: "hint", text: state.open ? hint : "No file open." }));
      continue;
    }
    box.replaceChildren(heading, ...(group === "risk" ? notes : []),
      ...names.map((name) => measureRow(group, name, figures[name], changes[name], path)));
  }
}

function measureRow(group, name, value, change, path) {
  const label = measureLabel(name);
  const row = el("div", { class: "measure", "data-measure": name },
    el("span", { class: "name", text: label }),
    el("span", { class: "value", text: formatNumber(value) }));
  if (Number.isFinite(change)) {
    let direction = "";
    if (change !== 0) {
      const higherBetter = group === "risk" ? RISK_HIGHER_IS_BETTER.has(name) : !UTILITY_LOSSES.has(name) ? null : false;
      if (higherBetter !== null) direction = (change > 0) === higherBetter ? "better" : "worse";
    }
    row.append(el("span", { class: `delta ${direction}`.trim() },
      change === 0 ? "±0" : `${change > 0 ? "+" : "−"}${formatNumber(Math.abs(change))}`,
      el("span", { class: "sr-only", text: " from the previous step" })));
  }
  const values = path.map((id) => {
    const seen = studio.seen.get(id);
    const v = seen && seen[group] ? seen[group][name] : null;
    return Number.isFinite(v) ? v : null;
  });
  if (values.filter((v) => v !== null).length > 1) {
    row.append(sparkline(values, `${label} over the ${values.length} states from the original to this step`));
  }
  return row;
}

// ------------------------------------------------------------------ methods

function methodByName(name) {
  return studio.methods.find((m) => m.name === name);
}

function renderMethodChoices() {
  for (const id of ["method", "sweep-method"]) {
    const select = $(id);
    const kept = select.value;
    select.replaceChildren(...studio.methods.map((m) => option(m.name, m.title || m.name, m.name === kept)));
  }
  renderMethodForm();
  renderSweepForm();
}

function renderMethodForm() {
  const method = methodByName($("method").value);
  if (!method) {
    $("method-params").replaceChildren();
    $("method-description").textContent = "";
    return;
  }
  $("method-description").textContent = method.description || "";
  $("method-params").replaceChildren(buildForm(method, columnNames(), "p"));
}

async function applyMethod(event) {
  event.preventDefault();
  const method = methodByName($("method").value);
  const box = $("method-params");
  showMessage("");
  clearErrors(box);
  const { params, problems } = readForm(method, box, "p");
  if (problems.length) {
    for (const [name, message] of problems) markError(box, name, message);
    showMessage(problems.map((p) => p[1]).join("; "));
    return;
  }
  const seed = $("seed").value.trim() === "" ? null : Number($("seed").value);
  const job = await call("POST", "/api/apply", { method: method.name, params, seed }, box);
  if (job === null) return;
  const done = await followJob(job, `Applying ${method.name}`, box);
  if (done) notify(`Applied ${method.name}.`);
  await refresh();
}

// ------------------------------------------------------------------ jobs

/** Follows a background job with the progress bar until it ends; true if it succeeded. */
async function followJob(job, label, form) {
  const id = job.id ?? job.job;
  studio.job = id;
  $("job-label").textContent = label;
  $("job-progress").value = 0;
  $("job-message").textContent = "";
  $("job-bar").hidden = false;
  $("job-cancel").disabled = false;
  try {
    for (;;) {
      const answer = await api("GET", `/api/jobs/${encodeURIComponent(id)}?wait=${JOB_WAIT_S}`);
      if (!answer.ok) {
        showProblem(answer, form);
        return false;
      }
      const status = answer.body;
      if (status.total > 0) {
        $("job-progress").value = status.done / status.total;
        $("job-message").textContent = `${formatNumber(status.done)} of ${formatNumber(status.total)}`;
      }
      if (status.status === "done") {
        studio.lastJob = status;
        return true;
      }
      if (status.status === "failed") {
        showProblem({ ok: false, status: 422, body: status.error || { error: "the method failed" } }, form);
        return false;
      }
      if (status.status === "cancelled") {
        notify(`${label}: cancelled; the state is as it was.`);
        return false;
      }
    }
  } finally {
    studio.job = null;
    $("job-bar").hidden = true;
  }
}

async function computeSuda() {
  showMessage("");
  const job = await call("POST", "/api/risk/suda");
  if (job === null) return;
  if (await followJob(job, "Computing SUDA")) notify("SUDA computed for this step.");
  await refresh();
}

async function cancelJob() {
  if (studio.job === null) return;
  $("job-cancel").disabled = true;
  await call("POST", `/api/jobs/${encodeURIComponent(studio.job)}/cancel`);
}

// ------------------------------------------------------------------ history

function paramsText(params) {
  return Object.entries(params || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
}

function stepById(id) {
  return (studio.state.steps || []).find((s) => s.id === id);
}

function snapshotNames(id) {
  return Object.entries(studio.state.snapshots || {}).filter(([, step]) => step === id).map(([name]) => name);
}

function stepLabel(node) {
  const names = snapshotNames(node.id);
  const what = node.method || "original file";
  return names.length ? `${what} “${names.join("”, “")}”` : what;
}

function renderHistory() {
  const state = studio.state;
  const steps = state.steps || [];
  $("undo").disabled = !state.can_undo;
  $("redo").disabled = !state.can_redo;
  if (!steps.length) {
    $("history").replaceChildren(el("p", { class: "hint", text: "No file open." }));
    return;
  }
  const children = new Map();
  for (const node of steps) {
    const key = node.parent ?? null;
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(node);
  }
  const onPath = new Set(currentPath());
  const list = (parent, depth) => {
    const ul = el("ul", { class: depth === 0 ? "tree root" : "tree" });
    for (const node of children.get(parent) || []) {
      const current = node.id === state.current;
      const li = el("li", { "data-step": node.id, class: onPath.has(node.id) ? "on-path" : "" },
        el("div", { class: current ? "step current" : "step" },
          el("button", {
            type: "button", class: "go small", "aria-current": current ? "step" : false,
            "aria-label": `go to step ${node.id}: ${stepLabel(node)}`, onclick: () => goTo(node.id),
          }, `#${node.id}`),
          el("span", { class: "method", text: node.method || "original file" }),
          node.method ? el("span", { class: "params", text: `${paramsText(node.params)}${node.seed !== null && node.seed !== undefined ? `; seed ${node.seed}` : ""}` }) : null,
          ...snapshotNames(node.id).map((name) => el("span", { class: "snapshot-name", text: name }))));
      if (children.has(node.id)) li.append(list(node.id, depth + 1));
      ul.append(li);
    }
    return ul;
  };
  $("history").replaceChildren(list(null, 0));
}

async function historyAction(path, body, done) {
  showMessage("");
  const state = await call("POST", path, body);
  if (state === null) return;
  notify(done);
  await refresh();
}

async function loadRecipeFile(event) {
  event.preventDefault();
  const file = chosenFile("recipe-file", "recipe: choose a recipe file (.toml) to load");
  if (!file) return;
  const job = await call("POST", "/api/recipe", new Blob([await file.text()], { type: "text/plain" }));
  if (job === null) return;
  if (await followJob(job, `Replaying ${file.name}`)) {
    const result = studio.lastJob.result || {};
    notify(`Loaded ${file.name}: ${formatNumber(result.steps)} step(s) replayed, now at step #${result.step}.`);
  }
  await refresh();
}

function goTo(step) {
  return historyAction("/api/goto", { step }, `At step #${step}.`);
}

// ------------------------------------------------------------------ export and recipe

async function loadRecipe() {
  const parts = { recipe: "toml", "recipe-script": "script", "recipe-commands": "commands" };
  let recipe = {};
  if (studio.state.open) {
    const answer = await api("GET", "/api/recipe");
    if (answer.ok) recipe = answer.body;
  }
  for (const [id, key] of Object.entries(parts)) {
    const text = recipe[key];
    $(id).textContent = Array.isArray(text) ? text.join("\n") : text || "";
  }
}

function renderOverrides() {
  // The back end says how a release treats each column: published, confidential (left out
  // unless ticked here) or never (a direct identifier: no tick can release it).
  const confidential = (studio.state.columns || []).filter((c) => c.release === "confidential");
  $("export-confirm-unmasked").checked = false;
  $("export-unmasked").hidden = true;
  $("export-override").hidden = confidential.length === 0;
  $("export-override-columns").replaceChildren(...confidential.map((c, i) => el("label", { for: `override-${i}` },
    el("input", { type: "checkbox", id: `override-${i}`, value: c.name }), ` ${c.name} (${ROLE_LABELS[c.role] || c.role})`)));
}

/** Fetches an exported file with the token and hands it to the browser as a download. */
async function download(name) {
  const response = await fetch(`/api/download/${encodeURIComponent(name)}`, { headers: { Authorization: "Bearer " + studio.token } });
  if (!response.ok) {
    showMessage(`${name}: the studio could not send the file`);
    return;
  }
  const url = URL.createObjectURL(await response.blob());
  const link = el("a", { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

async function exportRelease(event) {
  event.preventDefault();
  const override = [...document.querySelectorAll("#export-override-columns input:checked")].map((i) => i.value);
  const body = {
    name: $("export-name").value.trim(),
    format: $("export-format").value,
    report: $("export-report").checked,
    override,
    confirm_unmasked: $("export-confirm-unmasked").checked,
  };
  $("export-result").replaceChildren();
  showMessage("");
  $("export-name").removeAttribute("aria-invalid");
  const answer = await api("POST", "/api/export", body);
  if (!answer.ok) {
    const problem = showProblem(answer);
    if (problem.parameter === "name") $("export-name").setAttribute("aria-invalid", "true");
    if (problem.parameter === "confirm_unmasked") {
      // Nothing was masked: the steward must say, in so many words, that the original may go out.
      $("export-unmasked").hidden = false;
      $("export-unmasked-reason").textContent = problem.message;
      $("export-confirm-unmasked").focus();
    }
    return;
  }
  const done = answer.body;
  const released = new Set(done.columns || []);
  const left = (studio.state.columns || []).filter((c) => !released.has(c.name));
  $("export-result").replaceChildren(
    ...(done.warnings || []).map((w) => el("p", { class: "warning", text: w })),
    left.length ? el("p", { class: "left-out", text: `Left out of the release: ${left.map((c) => `${c.name} (${ROLE_LABELS[c.role] || c.role})`).join(", ")}.` }) : null,
    el("p", {}, "Written to ", el("code", { text: done.directory }), ":"),
    el("ul", { class: "written" }, ...Object.entries(done.files || {}).map(([kind, name]) =>
      el("li", { "data-kind": kind }, `${kind}: `, el("code", { text: name }), " ",
        el("button", { type: "button", class: "small", "aria-label": `download ${name}`, onclick: () => download(name) }, "Download")))));
  notify(`Exported ${Object.keys(done.files || {}).join(", ")}.`);
}

// ------------------------------------------------------------------ sweep

const NUMBER_TYPES = ["integer", "number"];

function renderSweepForm() {
  const method = methodByName($("sweep-method").value);
  const select = $("sweep-param");
  const kept = select.value;
  const numeric = (method ? method.parameters || [] : []).filter((p) => NUMBER_TYPES.includes(p.type));
  select.replaceChildren(...numeric.map((p) => option(p.name, p.name, p.name === kept)));
  $("sweep-params").replaceChildren(method ? buildForm(method, columnNames(), "s") : "");
}

function parseValues(parameter) {
  const raw = $("sweep-values").value.split(",").map((v) => v.trim()).filter(Boolean);
  const values = raw.map(Number);
  const bad = raw.find((v, i) => !Number.isFinite(values[i]) || (parameter.type === "integer" && !Number.isInteger(values[i])));
  if (bad !== undefined) return { problem: `values: '${bad}' is not ${parameter.type === "integer" ? "a whole number" : "a number"}` };
  if (!values.length) return { problem: "values: give at least one value of the parameter swept" };
  return { values };
}

async function runSweep(event) {
  event.preventDefault();
  showMessage("");
  const method = methodByName($("sweep-method").value);
  const box = $("sweep-params");
  clearErrors(box);
  $("sweep-values").removeAttribute("aria-invalid");
  const parameter = (method.parameters || []).find((p) => p.name === $("sweep-param").value);
  if (!parameter) {
    showMessage(`${method.name} has no numeric parameter to sweep`);
    return;
  }
  const { values, problem } = parseValues(parameter);
  if (problem) {
    $("sweep-values").setAttribute("aria-invalid", "true");
    showMessage(problem);
    return;
  }
  const { params, problems } = readForm(method, box, "s");
  delete params[parameter.name];
  if (problems.length) {
    for (const [name, message] of problems) markError(box, name, message);
    $("sweep-fixed").open = true;
    showMessage(problems.map((p) => p[1]).join("; "));
    return;
  }
  const seed = Number($("sweep-seed").value || 0);
  const body = { method: method.name, grid: { [parameter.name]: values }, params, seed };
  const job = await call("POST", "/api/sweep", body, box);
  if (job === null) {
    if (box.querySelector("[aria-invalid]")) $("sweep-fixed").open = true;
    return;
  }
  if (!(await followJob(job, `Sweeping ${parameter.name} of ${method.name}`, box))) return;
  studio.sweep = studio.lastJob.result;
  const sweep = studio.sweep;
  const pick = (id, names, preferred) => {
    const kept = $(id).value;
    const chosen = names.includes(kept) ? kept : preferred.find((n) => names.includes(n)) || names[0];
    $(id).replaceChildren(...names.map((n) => option(n, measureLabel(n), n === chosen)));
  };
  pick("sweep-risk", sweep.risk_figures, ["sample_uniques", "records_below_k3"]);
  pick("sweep-utility", sweep.utility_figures, ["cells_changed_share"]);
  $("sweep-result").hidden = false;
  drawSweep();
  notify(`Swept ${parameter.name} of ${method.name} over ${values.length} values; choose a point to make it a step.`);
}

function drawSweep() {
  const sweep = studio.sweep;
  if (!sweep) return;
  const risk = $("sweep-risk").value;
  const utility = $("sweep-utility").value;
  const points = sweep.points.map((p) => ({ risk: p.figures[risk], utility: p.figures[utility], label: p.setting }));
  $("sweep-map").replaceChildren(riskUtilityMap(points, { risk: measureLabel(risk), utility: measureLabel(utility) }, pickSweepPoint));
  const figures = [...sweep.risk_figures, ...sweep.utility_figures];
  $("sweep-table").replaceChildren(el("table", { class: "sweep-points" },
    el("caption", { class: "hint", text: "Every setting of the sweep, with its figures" }),
    el("thead", {}, el("tr", {}, el("th", { class: "text", scope: "col", text: "setting" }),
      ...figures.map((f) => el("th", { scope: "col", text: measureLabel(f) })),
      el("th", { scope: "col", text: "seed" }),
      el("th", { scope: "col", text: "step" }))),
    el("tbody", {}, ...sweep.points.map((p, i) => el("tr", { "data-point": i },
      el("th", { class: "text", scope: "row", text: p.setting }),
      ...figures.map((f) => el("td", { text: formatNumber(p.figures[f]) })),
      el("td", { class: "seed", text: String(p.seed) }),
      el("td", {}, el("button", { type: "button", class: "small", "aria-label": `make ${p.setting} a step`, onclick: () => pickSweepPoint(i) }, "Make a step")))))));
}

async function pickSweepPoint(index) {
  showMessage("");
  const sweep = studio.sweep;
  const point = sweep.points[index];
  const body = { method: sweep.method, params: point.params, seed: point.seed, parent: sweep.parent };
  const job = await call("POST", "/api/apply", body);
  if (job === null) return;
  if (await followJob(job, `Applying ${sweep.method} with ${point.setting}`)) {
    notify(`Applied ${sweep.method} with ${point.setting} to step #${sweep.parent}.`);
  }
  await refresh();
}

// ------------------------------------------------------------------ start

async function start() {
  setUpTabs();
  studio.token = readToken();
  $("open-form").addEventListener("submit", openFile);
  $("upload-form").addEventListener("submit", uploadFile);
  $("save-roles").addEventListener("click", saveRoles);
  $("take-suggestions").addEventListener("click", takeSuggestions);
  $("preview-prev").addEventListener("click", () => { studio.previewOffset = Math.max(0, studio.previewOffset - PAGE_ROWS); loadPreview(); });
  $("preview-next").addEventListener("click", () => { studio.previewOffset += PAGE_ROWS; loadPreview(); });
  $("preview-stage").addEventListener("change", loadPreview);
  $("method").addEventListener("change", renderMethodForm);
  $("method-form").addEventListener("submit", applyMethod);
  $("job-cancel").addEventListener("click", cancelJob);
  $("undo").addEventListener("click", () => historyAction("/api/undo", {}, "Undone."));
  $("redo").addEventListener("click", () => historyAction("/api/redo", {}, "Redone."));
  $("snapshot-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("snapshot-name").value.trim();
    if (!name) {
      showMessage("name: give the snapshot a name");
      $("snapshot-name").focus();
      return;
    }
    historyAction("/api/snapshot", { name }, `Snapshot ${name} saved.`);
  });
  $("export-form").addEventListener("submit", exportRelease);
  $("compute-suda").addEventListener("click", computeSuda);
  $("recipe-form").addEventListener("submit", loadRecipeFile);
  $("sweep-method").addEventListener("change", renderSweepForm);
  $("sweep-risk").addEventListener("change", drawSweep);
  $("sweep-utility").addEventListener("change", drawSweep);
  $("sweep-form").addEventListener("submit", runSweep);
  if (!studio.token) {
    showMessage("this page needs the token of the link `sdckit studio` printed; open that link");
    return;
  }
  const methods = await call("GET", "/api/methods");
  if (methods === null) return;
  studio.methods = methods.methods;
  await refresh();
  document.body.dataset.ready = "true";
}

start();
