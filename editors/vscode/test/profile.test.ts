import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initializationOptions, normalizeProfile, profileChoices, selectProfileArgument, statusText } from '../src/profile';

test('stored values normalize to a name or none', () => {
  assert.equal(normalizeProfile('dev'), 'dev');
  assert.equal(normalizeProfile(''), undefined);
  assert.equal(normalizeProfile('  '), undefined);
  assert.equal(normalizeProfile(null), undefined);
  assert.equal(normalizeProfile(undefined), undefined);
  assert.equal(normalizeProfile(3), undefined);
});

test('initialization options and the selectProfile argument', () => {
  assert.deepEqual(initializationOptions('dev'), { profile: 'dev' });
  assert.deepEqual(initializationOptions(undefined), { profile: null });
  assert.deepEqual(initializationOptions(''), { profile: null });
  assert.equal(JSON.stringify(initializationOptions('staging')), '{"profile":"staging"}');
  assert.equal(selectProfileArgument('dev'), 'dev');
  assert.equal(selectProfileArgument(undefined), null);
});

test('status bar text', () => {
  assert.equal(statusText('dev'), '$(globe) Volley: dev');
  assert.equal(statusText(undefined), '$(globe) Volley: no profile');
});

test('quick pick choices mark the active profile', () => {
  const result = { profiles: ['dev', 'prod'], active: 'prod', config: '/w/volley.jsonc', error: null };
  const choices = profileChoices(result, undefined);
  assert.deepEqual(
    choices.map((choice) => [choice.label, choice.description, choice.profile]),
    [
      ['No profile', 'variables of every profile count as defined', undefined],
      ['dev', undefined, 'dev'],
      ['prod', 'active', 'prod'],
    ],
  );
  assert.equal(profileChoices(result, 'dev')[1].description, 'active');
  const none = profileChoices({ profiles: [], active: null, config: null, error: null }, undefined);
  assert.deepEqual(none.map((choice) => [choice.label, choice.description]), [['No profile', 'active']]);
});
