// What an etcd pod's command line says about where it listens, read from the pod spec as kubeadm
// writes its static pod: `etcd --listen-metrics-urls=http://127.0.0.1:2381 …`. Pure.
import type { V1Container } from '@kubernetes/client-node';

/** The value of `--<flag>` in argv, given as `--flag=value` or `--flag value`; the last one wins, as in etcd. */
export function flagValue(argv: readonly string[], flag: string): string | undefined {
  let value: string | undefined;
  argv.forEach((arg, i) => {
    if (arg.startsWith(`--${flag}=`)) value = arg.slice(flag.length + 3);
    else if (arg === `--${flag}` && argv[i + 1] !== undefined) value = argv[i + 1];
  });
  return value;
}

/**
 * The port of the first plain http URL in --listen-metrics-urls of the etcd container (named
 * `etcd`, else the first); undefined when the flag is absent or lists only https URLs.
 */
export function plainMetricsPortOf(containers: readonly V1Container[] | undefined): number | undefined {
  const etcd = containers?.find((c) => c.name === 'etcd') ?? containers?.[0];
  const urls = flagValue([...(etcd?.command ?? []), ...(etcd?.args ?? [])], 'listen-metrics-urls');
  for (const text of urls?.split(',') ?? []) {
    try {
      const url = new URL(text.trim());
      if (url.protocol === 'http:') return Number(url.port || 80);
    } catch {
      // Not a URL: etcd would refuse to start on it; the next one may do.
    }
  }
  return undefined;
}
