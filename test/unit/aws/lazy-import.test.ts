// A chunk is imported once for every caller, and an import that failed is tried again on the next use.
import { describe, expect, it } from 'vitest';
import { lazyImport } from '../../../functions/lib/lazy-import.ts';

describe('lazyImport', () => {
  it('imports once, however many callers ask at once', async () => {
    let imports = 0;
    const lazy = lazyImport(async () => ({ n: ++imports }));
    expect(lazy.loaded()).toBeUndefined();
    const [a, b] = await Promise.all([lazy.load(), lazy.load()]);
    expect(a).toBe(b);
    expect(imports).toBe(1);
    expect(lazy.loaded()).toBe(a);
  });

  it('a failed import is tried again on the next use, not kept as the container’s answer', async () => {
    let tries = 0;
    const lazy = lazyImport(async () => {
      if (++tries === 1) throw new Error('chunk not found');
      return 'loaded';
    });
    await expect(lazy.load()).rejects.toThrow('chunk not found');
    expect(lazy.loaded()).toBeUndefined();
    await expect(lazy.load()).resolves.toBe('loaded');
    expect(tries).toBe(2);
  });
});
