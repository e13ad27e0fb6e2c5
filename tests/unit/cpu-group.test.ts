// The CPU group lowered backends share (subgraphs/data/services/backend-priority.ts): finding the kernel's CPU
// controller in a mountinfo text, a process's group in its /proc/<pid>/cgroup text, and making the group on a
// hierarchy (a folder standing for a cgroup2 mount here; the real kernel's is exercised by
// tests/integration/data/data-fair-share.test.ts where this machine's is writable).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  cpuGroupPathOf,
  cpuHierarchyOf,
  createLoweredGroup,
  LOWERED_WEIGHT,
} from '../../subgraphs/data/services/backend-priority.ts';

const V1 = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct',
  '34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset',
].join('\n');
const V2 = '29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate';

describe('the CPU controller in mountinfo', () => {
  it('finds a cgroup v1 cpu hierarchy (also mounted with cpuacct), never the cpuset one', () => {
    expect(cpuHierarchyOf(V1, () => '')).toEqual({ version: 1, mount: '/sys/fs/cgroup/cpu,cpuacct' });
    expect(
      cpuHierarchyOf(
        V1.split('\n')
          .filter((l) => !l.includes('cpu,cpuacct'))
          .join('\n'),
        () => 'cpu',
      ),
    ).toBe(null);
  });

  it('finds cgroup2 only where its root offers the cpu controller', () => {
    expect(cpuHierarchyOf(V2, () => 'cpuset cpu io memory pids')).toEqual({ version: 2, mount: '/sys/fs/cgroup' });
    expect(cpuHierarchyOf(V2, () => 'cpuset io memory pids')).toBe(null);
    // A hybrid host: the v1 cpu hierarchy is the one holding the controller.
    expect(cpuHierarchyOf(`${V2.replace('/sys/fs/cgroup', '/sys/fs/cgroup/unified')}\n${V1}`, () => '')).toEqual({
      version: 1,
      mount: '/sys/fs/cgroup/cpu,cpuacct',
    });
  });

  it('ignores a hierarchy mounted from a sub-tree (a namespace): its paths would not match /proc/<pid>/cgroup', () => {
    expect(cpuHierarchyOf(V2.replace(' / /sys/fs/cgroup', ' /machine.slice /sys/fs/cgroup'), () => 'cpu')).toBe(null);
    expect(cpuHierarchyOf('garbage\n\n1 2 3', () => 'cpu')).toBe(null);
  });

  it("reads a process's group from its cgroup file, by version", () => {
    const text = '12:cpu,cpuacct:/system.slice/postgresql.service\n3:cpuset:/\n0::/system.slice/postgresql.service\n';
    expect(cpuGroupPathOf(text, 1)).toBe('/system.slice/postgresql.service');
    expect(cpuGroupPathOf('1:cpu:/\n0::/', 1)).toBe('/');
    expect(cpuGroupPathOf(text, 2)).toBe('/system.slice/postgresql.service');
    expect(cpuGroupPathOf('3:cpuset:/x\n', 1)).toBe(null);
    expect(cpuGroupPathOf('', 2)).toBe(null);
  });
});

describe('the lowered backends group', () => {
  const hierarchy = (controllers: string, subtree: string) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cpu-group-'));
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), controllers);
    fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), subtree);
    const mountinfo = path.join(root, 'mountinfo');
    fs.writeFileSync(mountinfo, `29 23 0:26 / ${root} rw,relatime - cgroup2 cgroup2 rw\n`);
    return { root, mountinfo };
  };

  it('is made on a cgroup2 hierarchy: the controller handed down from the root, the weight of a nice-19 task', () => {
    const { root, mountinfo } = hierarchy('cpu io memory', 'memory');
    const group = createLoweredGroup(mountinfo, 'lowered-test');
    expect(group).toEqual({ version: 2, mount: root, path: `${root}/lowered-test` });
    expect(fs.readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8')).toBe('+cpu');
    expect(fs.readFileSync(path.join(root, 'lowered-test', 'cpu.weight'), 'utf8')).toBe(String(LOWERED_WEIGHT));
    // Made again (another install, a restart): the same group.
    expect(createLoweredGroup(mountinfo, 'lowered-test')).toEqual(group);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('is none where there is no CPU controller or its hierarchy cannot be written (lowering by nice value only)', () => {
    const { root, mountinfo } = hierarchy('io memory', '');
    expect(createLoweredGroup(mountinfo, 'lowered-test')).toBe(null);
    expect(fs.existsSync(path.join(root, 'lowered-test'))).toBe(false);
    // The group's name taken by a file: the folder cannot be made.
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpu');
    fs.writeFileSync(path.join(root, 'lowered-test'), '');
    expect(createLoweredGroup(mountinfo, 'lowered-test')).toBe(null);
    expect(createLoweredGroup(path.join(root, 'no-such-mountinfo'))).toBe(null);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
