// A client-node KubeConfig from a kubeconfig's text, or from the pod's own service account.
import { KubeConfig } from '@kubernetes/client-node';

export function kubeConfigFrom(source: string | { inCluster: true }): KubeConfig {
  const config = new KubeConfig();
  if (typeof source === 'string') config.loadFromString(source);
  else config.loadFromCluster();
  return config;
}
