// What each test set up, undone after it: last set up, first torn down. Every step runs even when
// one before it fails, and the first failure fails the test.
import { afterEach } from 'vitest';

export type Teardown = (() => Promise<void>)[];

/** The steps to undo after each test of the file; push one as each thing is set up. */
export function tearDownAfterEach(): Teardown {
  const teardown: Teardown = [];
  afterEach(async () => {
    const errors: unknown[] = [];
    for (const step of teardown.splice(0).reverse()) await step().catch((error: unknown) => errors.push(error));
    if (errors.length > 0) throw errors[0];
  });
  return teardown;
}
