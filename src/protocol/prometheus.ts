// The Prometheus text exposition format (version 0.0.4), as GET /metrics answers it: families
// of samples, each with its HELP and TYPE lines. Written by hand: it is a few lines of escaping,
// and the Prometheus client libraries for JavaScript are Node-only registries of live counters,
// where groupq's figures are read from Redis at each scrape.

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Record<string, string>;

export interface Sample {
  labels: Labels;
  value: number;
}

export interface HistogramSample {
  labels: Labels;
  /** Upper bounds, in the histogram's unit, ascending; +Inf follows. */
  bounds: readonly number[];
  /** One count per bucket of `bounds`, then +Inf's (not cumulative). */
  counts: readonly number[];
  sum: number;
}

export type Family =
  | { name: string; help: string; type: 'counter' | 'gauge'; samples: Sample[] }
  | { name: string; help: string; type: 'histogram'; samples: HistogramSample[] };

const escapeHelp = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (text: string) => text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabel(value)}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** A number as the format writes it: integers exactly, others in JavaScript's shortest form. */
const numberText = (value: number) => (Number.isFinite(value) ? String(value) : value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN');

function histogramLines(name: string, sample: HistogramSample): string[] {
  const lines: string[] = [];
  let cumulative = 0;
  sample.counts.forEach((count, i) => {
    cumulative += count;
    const le = i < sample.bounds.length ? numberText(sample.bounds[i]!) : '+Inf';
    lines.push(`${name}_bucket${labelText({ ...sample.labels, le })} ${cumulative}`);
  });
  lines.push(`${name}_sum${labelText(sample.labels)} ${numberText(sample.sum)}`);
  lines.push(`${name}_count${labelText(sample.labels)} ${cumulative}`);
  return lines;
}

/** The families as one text document; a family without samples is left out. */
export function prometheusText(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (family.samples.length === 0) continue;
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    if (family.type === 'histogram') {
      for (const sample of family.samples) lines.push(...histogramLines(family.name, sample));
    } else {
      for (const sample of family.samples) lines.push(`${family.name}${labelText(sample.labels)} ${numberText(sample.value)}`);
    }
  }
  return lines.join('\n') + '\n';
}
