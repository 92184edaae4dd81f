// probe-members hosts every work that starts by reaching a cluster's etcd: a report opens (or
// joins) an incident and probes; each later look probes again; an awaiting incident's replacement
// is checked; the periodic learner and leader-hygiene checks run. The catalogue routes each event
// to its work (events/catalogue.ts `works`).
import { hygieneCheckAsked } from '../app/hygiene/index.ts';
import { openIncident, probeAgain } from '../app/incident/index.ts';
import { learnerCheckAsked } from '../app/learners/index.ts';
import { checkReplacementDue } from '../app/replacement/index.ts';
import type { ClusterDeps } from '../app/common/index.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const probeMembersWorks = {
  'open-incident': openIncident,
  'probe-again': probeAgain,
  'check-replacement': checkReplacementDue,
  'check-learners': learnerCheckAsked,
  'check-hygiene': hygieneCheckAsked,
};

export const createProbeMembersHandler = (deps: ClusterDeps) => eventHandler('probe-members', deps, probeMembersWorks);
