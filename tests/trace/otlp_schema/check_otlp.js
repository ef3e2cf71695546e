#!/usr/bin/env node
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Checks OTLP/HTTP JSON trace requests (ExportTraceServiceRequest) against the
// OpenTelemetry project's own OTLP schema: the protobufjs root that
// @opentelemetry/otlp-transformer generates from opentelemetry-proto
// (build/src/generated/root.js, the version pinned in package-lock.json).
//
// protobufjs alone is lenient (it ignores unknown fields, reads hex ids as
// base64, turns "3" into 3), so the check is strict, by the OTLP JSON mapping:
//   * every key at every depth is a field of its schema type (lowerCamelCase);
//   * traceId / spanId / parentSpanId are 32 / 16 lowercase hex digits, not all
//     zero (parentSpanId may be "" for a root span); other bytes are base64;
//   * enums are integers the schema defines; 32-bit integers are JSON numbers;
//     64-bit integers are decimal strings or safe integers; doubles are numbers
//     (or "NaN", "Infinity", "-Infinity"); strings and booleans are what they say;
//   * no null anywhere;
// then the request goes through the schema's own fromObject, verify, encode and
// decode, with the ids as bytes.
//
// Usage: check_otlp.js [--links] [--expect-span NAME]... [--expect-attr NAME:KEY~TEXT]... FILE...
// (each line of each file one request). Then, over all the spans of the files:
//   --links        every parentSpanId is the spanId of a span of the same trace;
//   --expect-span  a span of that name exists;
//   --expect-attr  a span NAME has a string attribute KEY that contains TEXT.
// Exit 0 when every line of every file passes, there is at least one line and
// every expectation holds; otherwise one message per problem on stderr, exit 1.
'use strict';

const fs = require('fs');
const path = require('path');

const ROOT_JS = path.join(__dirname, 'node_modules', '@opentelemetry', 'otlp-transformer', 'build', 'src', 'generated', 'root.js');
const root = require(ROOT_JS);

// The schema's type of a dotted name: "opentelemetry.proto.trace.v1.Span".
function typeByName(name) {
  let t = root;
  for (const part of name.split('.')) {
    t = t && t[part];
  }
  if (typeof t !== 'function' || typeof t.verify !== 'function') {
    throw new Error(`schema: no message type ${name}`);
  }
  return t;
}

// What the generated code says of each field of a type: its kind, whether it
// is repeated, its message type or enum values. Read from the type's
// prototype (its fields, with their proto JSON names) and from the generated
// verify() (the check protobufjs emits per field kind).
const fieldCache = new Map();
function fieldsOf(typeName) {
  if (fieldCache.has(typeName)) return fieldCache.get(typeName);
  const T = typeByName(typeName);
  const src = T.verify.toString();
  const fields = new Map();
  for (const f of Object.getOwnPropertyNames(T.prototype)) {
    if (f === 'constructor' || f === 'toJSON') continue;
    const d = Object.getOwnPropertyDescriptor(T.prototype, f);
    if (d.get || d.set) continue;  // a oneof's virtual member, not a field
    fields.set(f, describeField(typeName, f, src));
  }
  fieldCache.set(typeName, fields);
  return fields;
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function describeField(typeName, f, src) {
  const repeated = src.includes(`"${f}: array expected"`);
  const msg = new RegExp(`\\$root\\.([\\w.]+)\\.verify\\(message\\.${escapeRe(f)}(\\[i\\])?\\)`).exec(src);
  if (msg) return { kind: 'message', type: msg[1], repeated };
  const suffix = repeated ? '\\[\\]' : '';
  const scalar = new RegExp(`"${escapeRe(f)}: (string|boolean|integer\\|Long|integer|number|buffer|enum value)${suffix} expected"`).exec(src);
  if (!scalar) throw new Error(`schema: cannot tell the kind of ${typeName}.${f}`);
  const kinds = { 'string': 'string', 'boolean': 'bool', 'integer|Long': 'int64', 'integer': 'int32', 'number': 'double', 'buffer': 'bytes', 'enum value': 'enum' };
  const field = { kind: kinds[scalar[1]], repeated };
  if (field.kind === 'enum') {
    const sw = new RegExp(`switch \\(message\\.${escapeRe(f)}(\\[i\\])?\\) \\{([\\s\\S]*?)break;`).exec(src);
    if (!sw) throw new Error(`schema: no values for enum ${typeName}.${f}`);
    field.values = new Set([...sw[2].matchAll(/case (-?\d+):/g)].map((m) => Number(m[1])));
  }
  return field;
}

const HEX_IDS = { traceId: 32, spanId: 16, parentSpanId: 16 };

function checkScalar(field, name, v, where, problems) {
  const bad = (what) => problems.push(`${where}: ${what} (got ${JSON.stringify(v)})`);
  switch (field.kind) {
    case 'string':
      if (typeof v !== 'string') bad('a string expected');
      return;
    case 'bool':
      if (typeof v !== 'boolean') bad('a boolean expected');
      return;
    case 'int32':
      if (typeof v !== 'number' || !Number.isInteger(v)) bad('an integer (JSON number) expected');
      return;
    case 'int64':
      if (typeof v === 'string') {
        if (!/^-?(0|[1-9]\d*)$/.test(v)) bad('a 64-bit integer as a decimal string expected');
      } else if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
        bad('a 64-bit integer (decimal string or safe integer) expected');
      }
      return;
    case 'double':
      if (typeof v !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(v)) bad('a number expected');
      return;
    case 'enum':
      if (typeof v !== 'number' || !Number.isInteger(v)) bad('an enum value as an integer expected');
      else if (!field.values.has(v)) bad(`an enum value of ${[...field.values].join(', ')} expected`);
      return;
    case 'bytes':
      if (name in HEX_IDS) {
        const n = HEX_IDS[name];
        if (name === 'parentSpanId' && v === '') return;
        if (typeof v !== 'string' || v.length !== n || !/^[0-9a-f]+$/.test(v)) bad(`${n} lowercase hex digits expected`);
        else if (/^0+$/.test(v)) bad('an id that is not all zero expected');
      } else if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) {
        bad('base64 expected');
      }
      return;
    default:
      bad(`unknown kind ${field.kind}`);
  }
}

function checkMessage(typeName, obj, where, problems) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    problems.push(`${where}: an object of ${typeName} expected (got ${JSON.stringify(obj)})`);
    return;
  }
  const fields = fieldsOf(typeName);
  for (const [k, v] of Object.entries(obj)) {
    const at = `${where}.${k}`;
    const field = fields.get(k);
    if (!field) {
      problems.push(`${at}: not a field of ${typeName} (fields: ${[...fields.keys()].join(', ')})`);
      continue;
    }
    if (v === null) {
      problems.push(`${at}: null`);
      continue;
    }
    const one = (x, w) => (field.kind === 'message' ? checkMessage(field.type, x, w, problems) : checkScalar(field, k, x, w, problems));
    if (field.repeated) {
      if (!Array.isArray(v)) problems.push(`${at}: an array expected`);
      else v.forEach((x, i) => one(x, `${at}[${i}]`));
    } else {
      one(v, at);
    }
  }
}

// The request with its hex ids as bytes, for the schema's own fromObject.
function idsAsBytes(v, key) {
  if (Array.isArray(v)) return v.map((x) => idsAsBytes(x));
  if (v !== null && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = idsAsBytes(x, k);
    return o;
  }
  if (key in HEX_IDS && typeof v === 'string') return Buffer.from(v, 'hex');
  return v;
}

const REQUEST = 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest';

// The problems of one request's JSON text ([] when it passes).
function checkRequest(text) {
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return [`not JSON: ${e.message}`];
  }
  const problems = [];
  checkMessage(REQUEST, v, 'request', problems);
  if (problems.length) return problems;
  const T = typeByName(REQUEST);
  const msg = T.fromObject(idsAsBytes(v));
  const err = T.verify(msg);
  if (err) return [`schema verify: ${err}`];
  const back = T.decode(T.encode(msg).finish());
  const spans = back.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  const sent = v.resourceSpans.flatMap((r) => (r.scopeSpans || []).flatMap((s) => s.spans || []));
  if (spans.length !== sent.length) return [`schema round trip: ${sent.length} spans became ${spans.length}`];
  return [];
}

// The problems of the expectations over every span of the requests.
function checkExpectations(requests, opts) {
  const spans = requests.flatMap((r) => r.resourceSpans.flatMap((rs) => (rs.scopeSpans || []).flatMap((ss) => ss.spans || [])));
  const problems = [];
  if (opts.links) {
    const traceOf = new Map(spans.map((s) => [s.spanId, s.traceId]));
    for (const s of spans) {
      if (!s.parentSpanId) continue;
      if (!traceOf.has(s.parentSpanId)) problems.push(`span "${s.name}": its parent ${s.parentSpanId} is no exported span`);
      else if (traceOf.get(s.parentSpanId) !== s.traceId) problems.push(`span "${s.name}": its parent is of another trace`);
    }
  }
  for (const name of opts.spans) {
    if (!spans.some((s) => s.name === name)) problems.push(`no span named "${name}"`);
  }
  for (const e of opts.attrs) {
    const m = /^([^:]+):([^~]+)~(.*)$/.exec(e);
    if (!m) {
      problems.push(`--expect-attr ${e}: NAME:KEY~TEXT expected`);
      continue;
    }
    const [, name, key, text] = m;
    const ok = spans.some((s) => s.name === name && (s.attributes || []).some((a) => a.key === key && typeof a.value.stringValue === 'string' && a.value.stringValue.includes(text)));
    if (!ok) problems.push(`no span "${name}" with ${key} containing "${text}"`);
  }
  return { count: spans.length, problems };
}

function main(args) {
  const opts = { links: false, spans: [], attrs: [] };
  const files = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--links') opts.links = true;
    else if (args[i] === '--expect-span' && i + 1 < args.length) opts.spans.push(args[++i]);
    else if (args[i] === '--expect-attr' && i + 1 < args.length) opts.attrs.push(args[++i]);
    else files.push(args[i]);
  }
  if (!files.length) {
    console.error('usage: check_otlp.js [--links] [--expect-span NAME]... [--expect-attr NAME:KEY~TEXT]... FILE...');
    return 2;
  }
  let lines = 0;
  let failed = 0;
  const requests = [];
  for (const f of files) {
    fs.readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
      if (!line) return;
      ++lines;
      const problems = checkRequest(line);
      for (const p of problems) console.error(`${f}:${i + 1}: ${p}`);
      if (problems.length) ++failed;
      else requests.push(JSON.parse(line));
    });
  }
  if (lines === 0) {
    console.error('check_otlp: no request to check');
    return 1;
  }
  const expected = checkExpectations(requests, opts);
  for (const p of expected.problems) console.error(`check_otlp: ${p}`);
  console.log(`check_otlp: ${lines} request(s), ${expected.count} span(s), ${failed} failed, ${expected.problems.length} expectation(s) unmet`);
  return failed || expected.problems.length ? 1 : 0;
}

module.exports = { checkRequest, checkExpectations };

if (require.main === module) process.exit(main(process.argv.slice(2)));
