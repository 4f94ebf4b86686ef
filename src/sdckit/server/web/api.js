// The API reference, rendered from the server's own OpenAPI description (no outside resources).
"use strict";

function node(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function refName(schema) {
  if (!schema) return "";
  if (schema.$ref) return schema.$ref.split("/").pop();
  for (const key of ["anyOf", "oneOf"]) {
    if (schema[key]) return schema[key].map(refName).join(" | ");
  }
  if (schema.type === "array") return `list of ${refName(schema.items)}`;
  return schema.type || "any";
}

function renderEndpoints(spec) {
  const box = document.getElementById("endpoints");
  box.replaceChildren();
  for (const [path, methods] of Object.entries(spec.paths || {})) {
    for (const [method, op] of Object.entries(methods)) {
      const item = node("div", undefined, "endpoint");
      item.append(node("h3", `${method.toUpperCase()} ${path}`));
      if (op.summary) item.append(node("p", op.summary));
      if (op.description) item.append(node("p", op.description, "hint"));
      const body = op.requestBody && op.requestBody.content && op.requestBody.content["application/json"];
      if (body) item.append(node("p", `body: ${refName(body.schema)}`));
      const answers = node("ul");
      for (const [status, response] of Object.entries(op.responses || {})) {
        const json = response.content && response.content["application/json"];
        answers.append(node("li", `${status}: ${response.description || ""}${json ? " (" + refName(json.schema) + ")" : ""}`));
      }
      item.append(answers);
      box.append(item);
    }
  }
}

function renderSchemas(spec) {
  const box = document.getElementById("schemas");
  const schemas = (spec.components && spec.components.schemas) || {};
  for (const [name, schema] of Object.entries(schemas)) {
    const item = node("div", undefined, "schema");
    item.append(node("h3", name));
    if (schema.description) item.append(node("p", schema.description, "hint"));
    const list = node("ul");
    const required = new Set(schema.required || []);
    for (const [field, prop] of Object.entries(schema.properties || {})) {
      const line = `${field}${required.has(field) ? "" : " (optional)"}: ${refName(prop)}` +
        (prop.description ? ` - ${prop.description}` : "");
      list.append(node("li", line));
    }
    item.append(list);
    box.append(item);
  }
}

fetch("/api/openapi.json")
  .then((r) => r.json())
  .then((spec) => { renderEndpoints(spec); renderSchemas(spec); })
  .catch((err) => {
    document.getElementById("endpoints").replaceChildren(node("p", `cannot read the API description: ${err}`, "error"));
  });
