import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerPrompt, type PromptWindow } from '../src/prompt';

/** A window that records what was shown and answers `answer`. */
function window(answer: string | undefined): PromptWindow & { shown: unknown[] } {
  const shown: unknown[] = [];
  return {
    shown,
    showInputBox: async (options) => {
      shown.push({ input: options });
      return answer;
    },
    showQuickPick: async (items, options) => {
      shown.push({ pick: items, options });
      return answer;
    },
  };
}

test('an input is asked in an input box with its default, a password hidden', async () => {
  const asked = window('grace');
  assert.deepEqual(await answerPrompt({ kind: 'input', label: 'Your name', default: 'ada' }, asked), { value: 'grace' });
  assert.deepEqual(asked.shown, [
    { input: { title: 'Volley', prompt: 'Your name', value: 'ada', password: false, ignoreFocusOut: true } },
  ]);
  const secret = window('s3cr3t');
  await answerPrompt({ kind: 'password', label: 'API token', default: null }, secret);
  assert.equal((secret.shown[0] as { input: { password: boolean } }).input.password, true);
});

test('a pick offers its choices; dismissing answers nothing', async () => {
  const asked = window('prod');
  assert.deepEqual(await answerPrompt({ kind: 'pick', label: 'environment', choices: ['dev', 'prod'] }, asked), {
    value: 'prod',
  });
  assert.deepEqual((asked.shown[0] as { pick: string[] }).pick, ['dev', 'prod']);
  assert.equal(await answerPrompt({ kind: 'pick', label: 'environment', choices: ['dev'] }, window(undefined)), null);
  assert.equal(await answerPrompt({ kind: 'input', label: 'Your name' }, window(undefined)), null);
});
