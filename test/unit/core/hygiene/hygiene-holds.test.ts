// What holds a hygiene move back whatever the figures say: a pause before a storm, a storm before
// an open incident; a verdict that would not move is never held.
import { describe, expect, it } from 'vitest';
import { heldBack, type HygieneDecision } from '../../../../functions/core/hygiene/index.ts';

const move: HygieneDecision = { kind: 'move', from: 'a1', to: 'b2', reason: 'LEADER_DEGRADED', message: 'etcd-0 is degraded: move to etcd-1', evidence: {} };
const STORM = 'Fleet storm since 2025-06-01T12:00:00.000Z: 6 of 10 registered clusters opened incidents; nothing is moved until it lifts';

describe('heldBack', () => {
  it('a fleet storm holds a move, in its own words and reason, unalerted', () => {
    expect(heldBack(move, { clusterId: 'c1', storm: STORM })).toEqual({
      kind: 'hold',
      alert: false,
      reason: 'FLEET_STORM',
      message: `etcd-0 is degraded: move to etcd-1; but fleet storm since 2025-06-01T12:00:00.000Z: 6 of 10 registered clusters opened incidents; nothing is moved until it lifts`,
      evidence: {},
    });
  });

  it('a pause is said before the storm, and the storm before an open incident', () => {
    const paused = { mark: { by: 'ops', at: 0, why: 'freeze' }, fleetWide: true };
    expect(heldBack(move, { clusterId: 'c1', paused, storm: STORM }).reason).toBe('HYGIENE_PAUSED');
    expect(heldBack(move, { clusterId: 'c1', storm: STORM, openIncidents: ['i-1'] }).reason).toBe('FLEET_STORM');
  });

  it('a verdict that would not move is never held by a storm', () => {
    const leave: HygieneDecision = { kind: 'leave', reason: 'HYGIENE_LEADER_HEALTHY', message: 'the leader is healthy', evidence: {} };
    expect(heldBack(leave, { clusterId: 'c1', storm: STORM })).toBe(leave);
  });
});
