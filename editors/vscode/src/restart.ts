// When the language server stops unexpectedly: restart it a few times, then give up.

/** At most this many restarts within `WINDOW_MS`. */
export const MAX_RESTARTS = 4;
export const WINDOW_MS = 3 * 60 * 1000;

export type RestartDecision =
  | { restart: true; attempt: number; message: string }
  | { restart: false; message: string };

/**
 * Keeps the times of recent crashes and says whether to restart after one more at
 * `now` (milliseconds).
 */
export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    private readonly maxRestarts = MAX_RESTARTS,
    private readonly windowMs = WINDOW_MS,
  ) {}

  onCrash(now: number): RestartDecision {
    this.crashes = this.crashes.filter((time) => now - time < this.windowMs);
    this.crashes.push(now);
    const attempt = this.crashes.length;
    if (attempt > this.maxRestarts) {
      return {
        restart: false,
        message: `The Volley language server stopped ${attempt} times in ${Math.round(this.windowMs / 60000)} minutes and will not be restarted. See the "Volley" output for why.`,
      };
    }
    return {
      restart: true,
      attempt,
      message: `The Volley language server stopped; restarting it (${attempt}/${this.maxRestarts}).`,
    };
  }

  /** Forget past crashes (a manual restart). */
  reset(): void {
    this.crashes = [];
  }
}
