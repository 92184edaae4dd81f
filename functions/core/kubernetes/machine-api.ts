// Which Cluster API version to read and write Clusters, MachineHealthChecks, Machines and
// KubeadmControlPlanes in, from the versions the management cluster serves of cluster.x-k8s.io
// (its discovery): v1beta2 wherever it is served (Cluster API v1.11 on, its storage version),
// v1beta1 on earlier releases. Cluster API stops serving v1beta1 in April 2027
// (kubernetes-sigs/cluster-api#13394), so a fixed v1beta1 would stop working there. Pure.

/** The versions this product reads, preferred first. */
export const MACHINE_API_VERSIONS = ['v1beta2', 'v1beta1'] as const;
export type MachineApiVersion = (typeof MACHINE_API_VERSIONS)[number];

export type MachineApiChoice = { kind: 'chosen'; version: MachineApiVersion; by: 'asked' | 'discovered' } | { kind: 'refused'; why: string };

/**
 * `served`: the versions discovery lists for cluster.x-k8s.io (undefined: the group is not served
 * at all); `asked`: a version a person named, which must be served.
 */
export function chooseMachineApi(served: readonly string[] | undefined, asked?: MachineApiVersion): MachineApiChoice {
  if (served === undefined || served.length === 0)
    return {
      kind: 'refused',
      why: "the management cluster serves no cluster.x-k8s.io API: Cluster API is not installed there (is the kubeconfig the management cluster's?)",
    };
  const listed = served.join(', ');
  if (asked !== undefined)
    return served.includes(asked)
      ? { kind: 'chosen', version: asked, by: 'asked' }
      : { kind: 'refused', why: `the management cluster serves cluster.x-k8s.io ${listed}, not ${asked}` };
  const version = MACHINE_API_VERSIONS.find((v) => served.includes(v));
  return version
    ? { kind: 'chosen', version, by: 'discovered' }
    : {
        kind: 'refused',
        why: `the management cluster serves cluster.x-k8s.io ${listed}, none of ${MACHINE_API_VERSIONS.join(' or ')}, which this release reads`,
      };
}
