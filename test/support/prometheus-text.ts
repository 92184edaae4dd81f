// Reads a Prometheus text exposition with the official Prometheus client's own parser
// (prometheus_client.parser, Debian's python3-prometheus-client, which .ci/run installs). The one
// npm parser of the format, parse-prometheus-text-format, drops the labels of a labelled
// histogram, and the probe latency is one.
import { execFileSync } from 'node:child_process';

/** Debian's interpreter, where its package installs the module (a pyenv one on PATH would not have it). */
const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
families = [{"name": f.name, "type": f.type, "help": f.documentation,
             "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]}
            for f in text_string_to_metric_families(sys.stdin.read())]
json.dump(families, sys.stdout)
`;

export interface Sample {
  /** The sample's own name: a counter's ends _total, a histogram's _bucket, _sum or _count. */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  /** The family's name: a counter's without _total, as the parser gives it. */
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'unknown';
  help: string;
  samples: Sample[];
}

/** Throws what the parser said when the text is not the exposition format. */
export function parseExposition(text: string): Family[] {
  try {
    return JSON.parse(execFileSync(PYTHON, ['-c', SCRIPT], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] })) as Family[];
  } catch (error) {
    const { stderr } = error as { stderr?: string | Buffer };
    if (/No module named 'prometheus_client'|ENOENT/.test(`${stderr?.toString() ?? ''} ${String(error)}`)) {
      throw new Error(`the Prometheus client's parser is not installed (${PYTHON} has no prometheus_client): apt-get install -y python3-prometheus-client`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** The samples named `name` whose labels include `labels`, from every family. */
export const samplesOf = (families: Family[], name: string, labels: Record<string, string> = {}): Sample[] =>
  families.flatMap((f) => f.samples).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

/** The sum of those samples, or undefined when there is none. */
export function valueOf(families: Family[], name: string, labels: Record<string, string> = {}): number | undefined {
  const samples = samplesOf(families, name, labels);
  return samples.length === 0 ? undefined : samples.reduce((sum, s) => sum + s.value, 0);
}
