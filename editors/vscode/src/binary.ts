// Finding the `volley` binary: the `volley.path` setting, else `volley` on PATH.

import * as path from 'path';

/** What the lookup may ask of the file system (injected, so tests need no real files). */
export interface FileSystem {
  /** Whether `file` exists and is an executable file. */
  isExecutable(file: string): boolean;
}

export interface Environment {
  /** The PATH variable. */
  path: string | undefined;
  /** `process.platform`. */
  platform: string;
  /** Windows' PATHEXT. */
  pathExt?: string;
  /** The home directory, for a configured path starting with `~`. */
  home?: string;
}

export type Resolution = { found: true; path: string } | { found: false; message: string };

/**
 * The binary to run. A configured path must exist (with `~` expanded); a bare
 * configured name (`volley-dev`) is looked up on PATH like the default `volley`.
 */
export function resolveBinary(configured: string | undefined, environment: Environment, fs: FileSystem): Resolution {
  const setting = configured?.trim() ?? '';
  if (setting !== '') {
    const expanded = expandHome(setting, environment.home);
    const hasDirectory = expanded.includes('/') || (environment.platform === 'win32' && expanded.includes('\\'));
    if (hasDirectory) {
      for (const candidate of withExtensions(expanded, environment)) {
        if (fs.isExecutable(candidate)) {
          return { found: true, path: candidate };
        }
      }
      return {
        found: false,
        message: `The volley binary set in "volley.path" was not found or is not executable: ${expanded}`,
      };
    }
    const onPath = which(expanded, environment, fs);
    return onPath
      ? { found: true, path: onPath }
      : { found: false, message: `"${expanded}" (the "volley.path" setting) was not found on PATH.` };
  }
  const onPath = which('volley', environment, fs);
  return onPath
    ? { found: true, path: onPath }
    : {
        found: false,
        message:
          'The volley binary was not found on PATH. Install it (cargo install --path crates/cli) or set "volley.path".',
      };
}

/** The first executable `name` in PATH's directories. */
export function which(name: string, environment: Environment, fs: FileSystem): string | undefined {
  const separator = environment.platform === 'win32' ? ';' : ':';
  const join = environment.platform === 'win32' ? path.win32.join : path.posix.join;
  for (const directory of (environment.path ?? '').split(separator)) {
    if (directory === '') {
      continue;
    }
    for (const candidate of withExtensions(join(directory, name), environment)) {
      if (fs.isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

function withExtensions(file: string, environment: Environment): string[] {
  if (environment.platform !== 'win32' || /\.[^\\/.]+$/.test(file)) {
    return [file];
  }
  const extensions = (environment.pathExt ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((extension) => extension !== '');
  return [file, ...extensions.map((extension) => file + extension.toLowerCase())];
}

function expandHome(file: string, home: string | undefined): string {
  if (home && (file === '~' || file.startsWith('~/') || file.startsWith('~\\'))) {
    return home + file.slice(1);
  }
  return file;
}

/**
 * `resolve()` until it finds the binary, for up to `graceMs`, asking again every
 * `pollMs`: after a window reload an extension host can be handed the default settings
 * before the user's (seen in code-server: `volley.path` read empty, so the binary "not on
 * PATH", and no change event once the settings came). The last resolution either way.
 */
export async function resolveWithGrace(
  resolve: () => Resolution,
  graceMs: number,
  pollMs: number,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((done) => setTimeout(done, ms)),
): Promise<Resolution> {
  let resolution = resolve();
  for (let waited = 0; !resolution.found && waited < graceMs; waited += pollMs) {
    await sleep(pollMs);
    resolution = resolve();
  }
  return resolution;
}
