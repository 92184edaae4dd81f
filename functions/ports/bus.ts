// The bus port: handlers publish outcomes; an adapter routes them by the event catalogue.
import type { EventEnvelope } from '../../events/catalogue.ts';

export interface Bus {
  /** Resolves once every event is accepted by the bus, not once it is handled. */
  publish(...events: EventEnvelope[]): Promise<void>;
}
