// An exec Status that is not the command's exit, as the API server writes it on channel 3, read
// into the stream failure it stands for. Texts: shared/notes/kube-paths.md §1, §2, §4, §6.
import { describe, expect, it } from 'vitest';
import { diagnoseExecStatus } from '../../../../functions/adapters/kube/streams/stream-diagnosis.ts';
import { classifyFailure } from '../../../../functions/core/common/classify.ts';

const pod = { namespace: 'kube-system', name: 'etcd-cp-3' };
const internal = (message: string) => ({ status: 'Failure', reason: 'InternalError', code: 500, message: `Internal error occurred: ${message}` });
const ociFailed = (why: string) =>
  `error executing command in container: failed to exec in container: failed to start exec "4f1c": OCI runtime exec failed: exec failed: unable to start container process: ${why}: unknown`;

describe('diagnoseExecStatus: a binary the image does not have', () => {
  it.each([
    ['a bare name not on PATH (grafana/mimir#10571)', 'exec: "etcdctl": executable file not found in $PATH', 'etcdctl'],
    ['a path runc cannot stat', 'exec: "/usr/local/bin/etcdctl": stat /usr/local/bin/etcdctl: no such file or directory', '/usr/local/bin/etcdctl'],
    ['a path, without runc’s exec prefix', 'stat /opt/etcd/etcdctl: no such file or directory', '/opt/etcd/etcdctl'],
  ])('%s: its own cause, the binary named, not a dead path', (_, why, binary) => {
    const error = diagnoseExecStatus(pod, internal(ociFailed(why)));
    expect(error).toMatchObject({ why: 'binary-missing', reachability: 'other' });
    expect(error.message).toContain(`exec in kube-system/etcd-cp-3 failed: Internal error occurred: `);
    expect(error.message).toMatch(new RegExp(`\\(${binary.replaceAll('/', '\\/')} is not in the container's image\\)$`));
    expect(classifyFailure({ kind: error.reachability, message: error.message }).reason).toBe('RELAY_BINARY_MISSING');
  });

  it('older runc words it "starting container process caused"', () => {
    const error = diagnoseExecStatus(
      pod,
      internal(
        'OCI runtime exec failed: exec failed: container_linux.go:380: starting container process caused: exec: "sh": executable file not found in $PATH: unknown',
      ),
    );
    expect(error).toMatchObject({ why: 'binary-missing' });
    expect(error.message).toContain("(sh is not in the container's image)");
  });

  it('the v5 translator’s double wrapping reads the same', () => {
    const error = diagnoseExecStatus(pod, internal(`Internal error occurred: ${ociFailed('exec: "etcdctl": executable file not found in $PATH')}`));
    expect(error).toMatchObject({ why: 'binary-missing', reachability: 'other' });
  });

  it('a runtime that is down is still containerd’s, though its text says "no such file or directory"', () => {
    const down =
      'unable to upgrade connection: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /var/run/containerd/containerd.sock: connect: no such file or directory"';
    expect(diagnoseExecStatus(pod, internal(down))).toMatchObject({ why: 'containerd-down', reachability: 'refused' });
  });
});
