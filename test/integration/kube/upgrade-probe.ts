// What the API server answers a streaming upgrade before any channel traffic, through the
// adapter's own transport: 101 and the subprotocol it chose, or a refusal's status, content type
// and body, which client-node reduces to "Unexpected server response: N" (kube-paths.md §4).
// Offers v4 only unless told: with v5 offered, an exec goes through the API server's translator,
// which upgrades first and fails on channel 3 (§0.3), so the answer before the upgrade is v4's.
import type { KubeConfig } from '@kubernetes/client-node';
import { streamTransport, UpgradeRefused } from '../../../functions/adapters/kube/streams/stream-transport.ts';

export type UpgradeOutcome = { upgraded: true; protocol: string } | { upgraded: false; status: number; contentType: string; body: string };

export async function probeUpgrade(
  config: KubeConfig,
  path: string,
  protocols: readonly string[] = ['v4.channel.k8s.io'],
  timeoutMs = 5_000,
): Promise<UpgradeOutcome> {
  const transport = streamTransport(config, { onSocket: () => undefined, protocols, handshakeTimeoutMs: timeoutMs });
  try {
    const ws = await transport.connect(path, null, null);
    ws.close();
    return { upgraded: true, protocol: ws.protocol };
  } catch (error) {
    if (error instanceof UpgradeRefused) return { upgraded: false, status: error.status, contentType: error.contentType, body: error.body };
    throw error;
  }
}
