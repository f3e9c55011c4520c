import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartPolicy } from '../src/restart';

test('restarts a few times, then gives up', () => {
  const policy = new RestartPolicy(3, 60_000);
  const decisions = [0, 1000, 2000, 3000].map((now) => policy.onCrash(now));
  assert.deepEqual(
    decisions.map((decision) => decision.restart),
    [true, true, true, false],
  );
  assert.match(decisions[0].message, /restarting it \(1\/3\)/);
  assert.match(decisions[3].message, /stopped 4 times in 1 minutes and will not be restarted/);
});

test('old crashes are forgotten', () => {
  const policy = new RestartPolicy(2, 60_000);
  assert.equal(policy.onCrash(0).restart, true);
  assert.equal(policy.onCrash(30_000).restart, true);
  assert.equal(policy.onCrash(70_001).restart, true, 'the crash at 0 is out of the window');
  assert.equal(policy.onCrash(70_002).restart, false);
  policy.reset();
  assert.equal(policy.onCrash(70_003).restart, true);
});
