// Forms generated from the parameter specs the back end derives from each method's code
// (GET /api/methods): no form is written by hand for any method.
"use strict";

import { el } from "./dom.js";

const NUMBER_TYPES = new Set(["int", "integer", "float", "number"]);

function typeOf(spec) {
  const type = String(spec.type || "str").toLowerCase();
  if (type === "integer") return "int";
  if (type === "number") return "float";
  if (type === "boolean") return "bool";
  if (type === "string") return "str";
  return type;
}

function isColumnList(spec) {
  const type = typeOf(spec);
  return type === "columns" || (type === "column" && spec.multiple);
}

function describe(spec) {
  const parts = [];
  if (spec.help) parts.push(spec.help);
  const range = [];
  if (spec.minimum !== undefined && spec.minimum !== null) range.push(`${spec.exclusive_minimum ? ">" : "≥"} ${spec.minimum}`);
  if (spec.maximum !== undefined && spec.maximum !== null) range.push(`${spec.exclusive_maximum ? "<" : "≤"} ${spec.maximum}`);
  if (range.length) parts.push(`Range: ${range.join(" and ")}.`);
  if (spec.default !== undefined && spec.default !== null && typeOf(spec) !== "bool") {
    parts.push(`Default: ${Array.isArray(spec.default) ? spec.default.join(", ") : spec.default}.`);
  } else if (!spec.required && typeOf(spec) !== "bool") {
    parts.push("Optional.");
  } else if (spec.required && !/\brequired\b/i.test(spec.help || "")) {
    parts.push("Required.");
  }
  return parts.join(" ");
}

/**
 * One labelled control per parameter of ``method``; returns the container.
 * @param {object} method a spec from GET /api/methods: {name, description, parameters: [{name, type, default, ...}]}
 * @param {string[]} columns the file's column names, offered where a parameter names columns
 * @param {string} prefix id prefix, unique per form on the page
 */
export function buildForm(method, columns, prefix) {
  const box = el("div", { class: "params" });
  for (const spec of method.parameters || []) {
    const id = `${prefix}-${spec.name}`;
    const helpId = `${id}-help`;
    const errorId = `${id}-error`;
    const type = typeOf(spec);
    const wrap = el("div", { class: "param", "data-param": spec.name });
    const help = el("span", { id: helpId, class: "hint", text: describe(spec) });
    const error = el("span", { id: errorId, class: "param-error", role: "alert", hidden: true });
    if (isColumnList(spec)) {
      const chosen = new Set(spec.default || []);
      const set = el("fieldset", { id, "aria-describedby": `${helpId} ${errorId}` },
        el("legend", { text: spec.label || spec.name }));
      columns.forEach((column, i) => {
        const boxId = `${id}-${i}`;
        set.append(el("label", { for: boxId },
          el("input", { type: "checkbox", id: boxId, value: column, checked: chosen.has(column) }), ` ${column}`));
      });
      wrap.append(set, help, error);
    } else {
      let control;
      if (type === "bool") {
        control = el("input", { type: "checkbox", id, checked: Boolean(spec.default) });
      } else if (type === "column" || (spec.choices && spec.choices.length)) {
        // A null choice is the "(none)" entry of an optional parameter.
        const choices = (type === "column" ? columns : spec.choices).filter((c) => c !== null);
        control = el("select", { id });
        if (!spec.required || spec.nullable) control.append(el("option", { value: "" }, "(none)"));
        for (const choice of choices) {
          const o = el("option", { value: String(choice) }, String(choice));
          if (spec.default !== null && spec.default !== undefined && String(spec.default) === String(choice)) o.selected = true;
          control.append(o);
        }
      } else if (NUMBER_TYPES.has(type)) {
        control = el("input", {
          type: "number", id,
          step: type === "int" ? "1" : "any",
          value: spec.default ?? "",
        });
      } else {
        const shown = spec.default === null || spec.default === undefined ? ""
          : typeof spec.default === "object" ? JSON.stringify(spec.default) : String(spec.default);
        control = el("input", { type: "text", id, value: shown, size: 30, autocomplete: "off" });
      }
      control.setAttribute("aria-describedby", `${helpId} ${errorId}`);
      control.dataset.param = spec.name;
      const label = el("label", { for: id, text: spec.label || spec.name });
      if (type === "bool") wrap.append(control, " ", label, help, error);
      else wrap.append(label, " ", control, help, error);
    }
    box.append(wrap);
  }
  return box;
}

/** Clears the per-parameter error marks of a generated form. */
export function clearErrors(box) {
  for (const node of box.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
  for (const node of box.querySelectorAll(".param-error")) {
    node.textContent = "";
    node.hidden = true;
  }
}

/** Marks parameter ``name`` of the form as wrong, with ``message`` beside it; false if absent. */
export function markError(box, name, message) {
  const wrap = box.querySelector(`.param[data-param="${CSS.escape(name)}"]`);
  if (!wrap) return false;
  const control = wrap.querySelector("input, select, fieldset");
  control.setAttribute("aria-invalid", "true");
  const error = wrap.querySelector(".param-error");
  error.textContent = message;
  error.hidden = false;
  return true;
}

function sameValue(a, b) {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * The parameter values of a generated form that differ from their defaults, as JSON values
 * (so the recorded step, and the recipe, name only what the steward chose).
 * @returns {{params: object, problems: [string, string][]}} problems: [parameter, message] the page
 *   can tell before asking the back end (a number that does not parse)
 */
export function readForm(method, box, prefix) {
  const given = {};
  const problems = [];
  for (const spec of method.parameters || []) {
    const id = `${prefix}-${spec.name}`;
    const type = typeOf(spec);
    if (isColumnList(spec)) {
      const picked = [...box.querySelectorAll(`#${CSS.escape(id)} input:checked`)].map((i) => i.value);
      if (picked.length) given[spec.name] = picked;
      else if (spec.required) problems.push([spec.name, `${spec.name}: choose at least one column (required)`]);
      continue;
    }
    const control = box.querySelector(`#${CSS.escape(id)}`);
    if (type === "bool") {
      given[spec.name] = control.checked;
      continue;
    }
    const raw = control.value.trim();
    if (raw === "") {
      if (spec.required) problems.push([spec.name, `${spec.name}: a value is required`]);
      else if (spec.nullable && spec.default !== null && spec.default !== undefined) given[spec.name] = null;
      continue;
    }
    if (NUMBER_TYPES.has(type)) {
      const value = Number(raw);
      if (!Number.isFinite(value) || (type === "int" && !Number.isInteger(value))) {
        problems.push([spec.name, `${spec.name}: '${raw}' is not ${type === "int" ? "a whole number" : "a number"}`]);
      } else given[spec.name] = value;
    } else if (type === "str" || type === "column" || (spec.choices && spec.choices.length)) {
      given[spec.name] = raw;
    } else {
      // Lists and mappings are typed as JSON; anything else is taken as text.
      try {
        given[spec.name] = JSON.parse(raw);
      } catch (_) {
        given[spec.name] = raw;
      }
    }
  }
  const params = {};
  for (const spec of method.parameters || []) {
    if (spec.name in given && (spec.required || !sameValue(given[spec.name], spec.default))) params[spec.name] = given[spec.name];
  }
  return { params, problems };
}
