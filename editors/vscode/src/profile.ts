// The active configuration profile: how it is stored, passed to the server and shown.

/** The workspace-state key the chosen profile is kept under. */
export const PROFILE_STATE_KEY = 'volley.profile';

/** The answer of `volley.profiles`. */
export interface ProfilesResult {
  profiles: string[];
  active: string | null;
  config: string | null;
  error: string | null;
}

/** A stored or picked profile, normalized: a name, or undefined for none. */
export function normalizeProfile(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The `initializationOptions` the server starts with. */
export function initializationOptions(profile: string | undefined): { profile: string | null } {
  return { profile: normalizeProfile(profile) ?? null };
}

/** The argument of the server's `volley.selectProfile`: a name, or null for none. */
export function selectProfileArgument(profile: string | undefined): string | null {
  return normalizeProfile(profile) ?? null;
}

/** The status bar text. */
export function statusText(profile: string | undefined): string {
  const name = normalizeProfile(profile);
  return name === undefined ? '$(globe) Volley: no profile' : `$(globe) Volley: ${name}`;
}

/** One entry of the profile quick pick; `profile` undefined is "no profile". */
export interface ProfileChoice {
  label: string;
  description?: string;
  profile: string | undefined;
}

/** The quick pick's entries: "no profile" first, then every profile, the active one marked. */
export function profileChoices(result: ProfilesResult, active: string | undefined): ProfileChoice[] {
  const current = normalizeProfile(active ?? result.active);
  const none: ProfileChoice = {
    label: 'No profile',
    description: current === undefined ? 'active' : 'variables of every profile count as defined',
    profile: undefined,
  };
  const named = result.profiles.map(
    (name): ProfileChoice => ({ label: name, description: name === current ? 'active' : undefined, profile: name }),
  );
  return [none, ...named];
}
