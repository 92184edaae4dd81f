// Lab ports come from a slice of this process's own, below the kernel's ephemeral range, in turn:
// a port a lab just let go (a cut member) is not handed to the next lab straight away, as the
// kernel's port 0 would.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from '../../../infra/lab/free-port.ts';

const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

describe('freePorts', () => {
  it('gives distinct ports below the ephemeral range, and not the ones it just gave', async () => {
    const first = await freePorts(5);
    const second = await freePorts(5);
    expect(new Set([...first, ...second]).size).toBe(10);
    for (const port of [...first, ...second]) expect(port).toBeLessThan(ephemeralLow);
  });

  it('skips a port someone else holds', async () => {
    const [next] = await freePorts(1);
    // The slice's next port after `next`, taken by someone else before the lab asks.
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen({ port: next! + 1, host: '127.0.0.1', exclusive: true }, resolve));
    try {
      const [port] = await freePorts(1);
      expect(port).not.toBe(next! + 1);
      expect(port).toBeLessThan(ephemeralLow);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
