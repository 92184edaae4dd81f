// The CLI test support's waits: a wait that times out says what the binary had printed by then,
// not what it had printed when the wait began.
import { afterEach, describe, expect, it } from 'vitest';
import { killService, startCli, type Service } from './support.ts';

describe('a service wait that times out', () => {
  let service: Service | undefined;
  afterEach(async () => {
    await killService(service);
    service = undefined;
  });

  it('waitForStderr names the stderr printed before the deadline', async () => {
    service = startCli(['probe']);
    await expect(service.waitForStderr(/never printed/, 3_000)).rejects.toThrow(/--endpoints or --kubeconfig is required/);
  });

  it('until names what it waited for, and the stderr printed before the deadline', async () => {
    service = startCli(['probe']);
    await expect(service.until(() => undefined, 'a line that never comes', 3_000)).rejects.toThrow(
      /a line that never comes.*--endpoints or --kubeconfig is required/s,
    );
  });
});
