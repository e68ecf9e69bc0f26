// Parses a Prometheus text exposition with the third-party
// parse-prometheus-text-format package (installed by scripts/setup under
// /opt/aevatar/test-node) and prints what the C++ test compares:
//   {"families": {name: TYPE}, "samples": {"name{k=\"v\",…}": number}}
// Histograms contribute name_count{…} and name_sum{…}. Labels are sorted so
// a series has one key. Exits non-zero when the parser throws.
'use strict';
const fs = require('fs');
const parse = require('parse-prometheus-text-format');

const text = fs.readFileSync(process.argv[2], 'utf8');
const families = {};
const samples = {};

function key(name, labels) {
  const names = Object.keys(labels || {}).sort();
  if (names.length === 0) return name;
  return name + '{' + names.map((n) => n + '="' + labels[n] + '"').join(',') + '}';
}

for (const family of parse(text)) {
  families[family.name] = family.type;
  for (const metric of family.metrics) {
    if (family.type === 'HISTOGRAM') {
      samples[key(family.name + '_count', metric.labels)] = Number(metric.count);
      samples[key(family.name + '_sum', metric.labels)] = Number(metric.sum);
    } else {
      samples[key(family.name, metric.labels)] = Number(metric.value);
    }
  }
}
process.stdout.write(JSON.stringify({families, samples}));
