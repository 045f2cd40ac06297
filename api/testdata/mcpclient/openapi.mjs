// Checks CommiTea's OpenAPI document with validators nobody at CommiTea
// wrote, pinned in package-lock.json, for the api package's Go tests.
//
// Standard input: {"document": {...}, "exchanges": [{"method", "path",
// "authorized", "headers": {name: value}, "requestType", "request",
// "status", "responseType", "response"}]}, where request and response are
// the bodies as text. It prints one JSON object: the document's verdict
// from @seriousme/openapi-schema-validator (OpenAPI 3.1's own JSON
// Schema), and a problem for every exchange the document does not
// describe. An exchange is described when
//   - its response validates against the response the document declares
//     for its path, method and status (a path the document does not have
//     answers 404 with the error envelope);
//   - a request the server accepted (2xx) validates against the declared
//     request body, with every header it sent declared, so that the
//     document refuses nothing the server takes;
//   - a request without a token was refused 401.
// Schemas are checked with Ajv's JSON Schema 2020-12, OpenAPI 3.1's
// dialect, with formats.

import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const input = JSON.parse(readFileSync(0, "utf8"));
const doc = input.document;

const validator = new Validator();
const verdict = await validator.validate(structuredClone(doc));
const out = { valid: verdict.valid, version: validator.version, errors: verdict.errors ?? [], checked: 0, problems: [] };

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, "openapi.json");

const esc = (s) => s.replaceAll("~", "~0").replaceAll("/", "~1");

// resolve follows an OpenAPI $ref ("#/components/...") to the object and
// its JSON pointer.
function resolve(obj, pointer) {
  while (obj && typeof obj.$ref === "string" && obj.$ref.startsWith("#/")) {
    pointer = obj.$ref.slice(1);
    obj = pointer.split("/").slice(1).reduce((o, k) => o?.[k.replaceAll("~1", "/").replaceAll("~0", "~")], doc);
  }
  return [obj, pointer];
}

// check validates text as JSON against the schema at pointer.
function check(text, pointer) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `not JSON: ${err.message}`;
  }
  const validate = ajv.getSchema(`openapi.json#${pointer}`);
  if (!validate) {
    return `no schema at ${pointer}`;
  }
  if (validate(value)) {
    return null;
  }
  return ajv.errorsText(validate.errors, { dataVar: "body" });
}

const mediaType = (t) => (t ?? "").split(";")[0].trim();

for (const [i, x] of (input.exchanges ?? []).entries()) {
  out.checked++;
  const problem = (what) => out.problems.push({ i, method: x.method, path: x.path, status: x.status, problem: what, request: x.request?.slice(0, 300), response: x.response?.slice(0, 300) });
  const method = x.method.toLowerCase();
  const opPointer = `/paths/${esc(x.path)}/${method}`;
  const op = doc.paths?.[x.path]?.[method];
  if (!x.authorized && x.status !== 401) {
    problem("a request without a token was not refused 401");
  }
  if (!op) {
    if (x.status !== 404 && x.status !== 401) {
      problem("the document has no such operation, yet the server did not answer 404");
      continue;
    }
    const p = check(x.response, "/components/schemas/Error");
    if (p) problem(`response: ${p}`);
    continue;
  }
  const [resp, respPointer] = resolve(op.responses?.[String(x.status)], `${opPointer}/responses/${x.status}`);
  if (!resp) {
    problem(`status ${x.status} is not documented`);
  } else {
    const type = mediaType(x.responseType);
    const media = resp.content?.[type];
    if (!media) {
      problem(`response type ${type} is not documented for ${x.status}`);
    } else if (type === "application/json") {
      const p = check(x.response, `${respPointer}/content/${esc(type)}/schema`);
      if (p) problem(`response: ${p}`);
    }
  }
  if (x.status >= 200 && x.status < 300) {
    for (const h of Object.keys(x.headers ?? {})) {
      if (!(op.parameters ?? []).some((p) => p.in === "header" && p.name.toLowerCase() === h.toLowerCase())) {
        problem(`accepted header ${h} is not documented`);
      }
    }
    if (op.requestBody) {
      const p = check(x.request === "" ? "{}" : x.request, `${opPointer}/requestBody/content/application~1json/schema`);
      if (p) problem(`the server accepted a request the document refuses: ${p}`);
    }
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
