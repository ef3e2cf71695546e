#!/usr/bin/env node
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The strict OTLP check rejects what protobufjs alone lets through: a request
// that passes, then one mutation at a time that must fail, each with the
// problem it must name. Exit 0 when every case behaves.
'use strict';

const { checkRequest } = require('./check_otlp.js');

const valid = {
  resourceSpans: [{
    resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
    scopeSpans: [{
      scope: { name: 'digital_delivery', version: '0.1.0' },
      spans: [{
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        spanId: '00f067aa0ba902b7',
        parentSpanId: '00f067aa0ba902b6',
        name: 'GET /orders/{id}',
        kind: 3,
        startTimeUnixNano: '1764288000123456789',
        endTimeUnixNano: '1764288000164456789',
        attributes: [
          { key: 'server.port', value: { intValue: '443' } },
          { key: 'dd.points', value: { doubleValue: 1.5 } },
          { key: 'dd.cached', value: { boolValue: false } },
        ],
        events: [{ timeUnixNano: '1764288000124456789', name: 'upload.progress' }],
        status: { code: 2, message: 'HTTP 503' },
      }],
    }],
  }],
};

const span = (r) => r.resourceSpans[0].scopeSpans[0].spans[0];
const cases = [
  ['a misspelled field', (r) => { span(r).spanID = span(r).spanId; delete span(r).spanId; }, 'spanID: not a field of opentelemetry.proto.trace.v1.Span'],
  ['a misspelled nested field', (r) => { span(r).status.Code = 2; delete span(r).status.code; }, 'Code: not a field of opentelemetry.proto.trace.v1.Status'],
  ['a snake_case field name', (r) => { span(r).start_time_unix_nano = span(r).startTimeUnixNano; delete span(r).startTimeUnixNano; }, 'start_time_unix_nano: not a field'],
  ['a base64 trace id', (r) => { span(r).traceId = Buffer.from(span(r).traceId, 'hex').toString('base64'); }, 'traceId: 32 lowercase hex digits expected'],
  ['a base64 span id', (r) => { span(r).spanId = 'APBnqgupArc='; }, 'spanId: 16 lowercase hex digits expected'],
  ['an uppercase hex id', (r) => { span(r).spanId = '00F067AA0BA902B7'; }, 'spanId: 16 lowercase hex digits expected'],
  ['an all-zero trace id', (r) => { span(r).traceId = '0'.repeat(32); }, 'traceId: an id that is not all zero expected'],
  ['a string where an integer belongs (enum)', (r) => { span(r).kind = '3'; }, 'kind: an enum value as an integer expected'],
  ['a string where an integer belongs (uint32)', (r) => { span(r).droppedAttributesCount = '1'; }, 'droppedAttributesCount: an integer (JSON number) expected'],
  ['an enum name', (r) => { span(r).kind = 'SPAN_KIND_CLIENT'; }, 'kind: an enum value as an integer expected'],
  ['an enum out of range', (r) => { span(r).status.code = 7; }, 'code: an enum value of 0, 1, 2 expected'],
  ['a non-numeric 64-bit integer', (r) => { span(r).startTimeUnixNano = '2026-11-28T00:00:00Z'; }, 'startTimeUnixNano: a 64-bit integer as a decimal string expected'],
  ['an integer attribute that is not a number', (r) => { span(r).attributes[0].value.intValue = 'four'; }, 'intValue: a 64-bit integer as a decimal string expected'],
  ['a string where a double belongs', (r) => { span(r).attributes[1].value.doubleValue = '1.5'; }, 'doubleValue: a number expected'],
  ['a null', (r) => { span(r).name = null; }, 'name: null'],
  ['an object where an array belongs', (r) => { span(r).attributes = {}; }, 'attributes: an array expected'],
  ['an unknown top-level field', (r) => { r.resource_spans = []; }, 'resource_spans: not a field of opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'],
];

let failures = 0;
const ok = checkRequest(JSON.stringify(valid));
if (ok.length) {
  console.error(`the valid request fails: ${ok.join('; ')}`);
  ++failures;
}
for (const [what, mutate, expected] of cases) {
  const r = JSON.parse(JSON.stringify(valid));
  mutate(r);
  const problems = checkRequest(JSON.stringify(r));
  if (!problems.some((p) => p.includes(expected))) {
    console.error(`${what}: expected a problem containing "${expected}", got ${JSON.stringify(problems)}`);
    ++failures;
  } else {
    console.log(`rejected ${what}: ${problems[0]}`);
  }
}
console.log(`negative_test: ${cases.length} mutations, ${failures} failure(s)`);
process.exit(failures ? 1 : 0);
