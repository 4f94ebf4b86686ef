// DOM helpers of the studio page. Every value from the back end is inserted as text, never as HTML.
"use strict";

export const $ = (id) => document.getElementById(id);

function setAttribute(node, key, value) {
  if (value === false || value === null || value === undefined) return;
  if (key === "class") node.className = value;
  else if (key === "text") node.textContent = value;
  else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
  else node.setAttribute(key, value === true ? "" : value);
}

/** An element with attributes (``text`` sets textContent, ``onX`` adds a listener) and children;
 * a child that is not a node is inserted as text. */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) setAttribute(node, key, value);
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : String(c))));
  return node;
}

export function option(value, label, selected) {
  const o = el("option", { value }, label);
  if (selected) o.selected = true;
  return o;
}
