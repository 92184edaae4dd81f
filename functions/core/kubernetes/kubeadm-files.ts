// Where kubeadm keeps etcd's files on every control-plane node (and in every etcd pod, which
// mounts them): the exec relay's etcdctl and a recovery plan's commands name the same ones.

/** The certificates in every kubeadm etcd pod; the healthcheck client is what kubeadm's own probe uses. */
export const KUBEADM_ETCD_TLS = {
  cacert: '/etc/kubernetes/pki/etcd/ca.crt',
  cert: '/etc/kubernetes/pki/etcd/healthcheck-client.crt',
  key: '/etc/kubernetes/pki/etcd/healthcheck-client.key',
} as const;
