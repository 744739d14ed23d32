// A small OpenAPI viewer: every route, its parameters, request body and responses, with the JSON
// schemas they refer to. Everything is inserted as text; nothing is loaded from outside this server.
"use strict";

(function () {
  const main = document.getElementById("routes");

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else node.setAttribute(k, v);
    }
    for (const c of children) if (c != null) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }

  function resolve(spec, schema, depth) {
    // Inline $refs (bounded depth) so that each route reads on its own.
    if (depth > 6 || schema == null || typeof schema !== "object") return schema;
    if (Array.isArray(schema)) return schema.map((s) => resolve(spec, s, depth + 1));
    if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/components/schemas/")) {
      const name = schema.$ref.slice("#/components/schemas/".length);
      const target = (spec.components && spec.components.schemas || {})[name];
      return target ? resolve(spec, target, depth + 1) : schema;
    }
    const out = {};
    for (const [k, v] of Object.entries(schema)) out[k] = resolve(spec, v, depth + 1);
    return out;
  }

  function schemaBlock(spec, schema) {
    return el("pre", null, JSON.stringify(resolve(spec, schema, 0), null, 2));
  }

  function route(spec, path, method, op) {
    const box = el("details", { class: "route", id: (method + path).replace(/[^\w]+/g, "-") });
    box.append(el("summary", null, el("span", { class: "method " + method }, method.toUpperCase()),
      el("span", { class: "path" }, path), el("span", { class: "summary" }, op.summary || "")));
    if (op.description) box.append(el("p", { class: "description" }, op.description));
    if (op.parameters && op.parameters.length) {
      const table = el("table", null, el("tr", null, el("th", null, "parameter"), el("th", null, "in"),
        el("th", null, "required"), el("th", null, "schema")));
      for (const p of op.parameters) {
        table.append(el("tr", null, el("td", null, el("code", null, p.name)), el("td", null, p.in),
          el("td", null, p.required ? "yes" : "no"), el("td", null, el("code", null, JSON.stringify(resolve(spec, p.schema, 0))))));
      }
      box.append(el("h4", null, "Parameters"), table);
    }
    const body = op.requestBody && op.requestBody.content && op.requestBody.content["application/json"];
    if (body) box.append(el("h4", null, "Request body (application/json)"), schemaBlock(spec, body.schema));
    for (const [status, resp] of Object.entries(op.responses || {})) {
      box.append(el("h4", null, "Response " + status + (resp.description ? ": " + resp.description : "")));
      const json = resp.content && resp.content["application/json"];
      if (json && json.schema) box.append(schemaBlock(spec, json.schema));
    }
    return box;
  }

  fetch("/openapi.json").then((r) => r.json()).then((spec) => {
    document.getElementById("api-title").textContent = (spec.info.title || "API") + " " + (spec.info.version || "");
    main.replaceChildren();
    if (spec.info.summary) main.append(el("p", null, spec.info.summary));
    for (const [path, ops] of Object.entries(spec.paths || {})) {
      for (const [method, op] of Object.entries(ops)) main.append(route(spec, path, method, op));
    }
  }).catch(() => {
    document.getElementById("docs-status").textContent = "Could not load /openapi.json.";
  });
})();
