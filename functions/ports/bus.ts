// The bus port: handlers publish outcomes; an adapter routes them by the event catalogue.
import type { EventEnvelope } from '../../events/catalogue.ts';

export interface Bus {
  /** Resolves once every event is accepted by the bus, not once it is handled. */
  publish(...events: EventEnvelope[]): Promise<void>;
  /**
   * Told once per event that its outbox was cleared: the event is out for good, however often it
   * was published on the way (a left-over outbox is carried out again). Must not throw.
   */
  settled?(events: EventEnvelope[]): Promise<void>;
}
