import { loadConfig, type LoadedConfig } from '../extensions/workspace-config.ts';
import { NifflerError } from '../errors.ts';
import { ScriptWatch } from '../trust/scripts.ts';
import type { EngineOptions } from './boot.ts';

/** What a config read anew applies to (the engine's parts). */
interface ConfigUsers {
  /** A valid config was read: what takes it before anything awaits (the built-in tools). */
  read(loaded: LoadedConfig): void;
  /** A config read anew did not load (the last good one is kept). */
  failed(error: string): void;
  /** Applies a valid config just read to what runs: servers, the gateway, front-ends, watches, tasks. */
  apply(loaded: LoadedConfig): Promise<void>;
}

/**
 * The engine's config: the last good one, why the last read failed, and the repository files
 * trusted commands run as they were when it was read (a change reads it again).
 */
export class ConfigKeeper {
  #loaded: LoadedConfig | null;
  #error: string | null;
  readonly #scripts = new ScriptWatch();

  constructor(
    private readonly options: EngineOptions,
    private readonly users: ConfigUsers,
    loaded: LoadedConfig | null,
    error: string | null,
  ) {
    this.#loaded = loaded;
    if (loaded) this.#scripts.take(loaded);
    this.#error = error;
  }

  /** The config as last read (no re-read). */
  get last(): LoadedConfig | null {
    return this.#loaded;
  }

  get error(): string | null {
    return this.#error;
  }

  /** The repository files trusted commands run (to watch). */
  scriptFiles(): string[] {
    return this.#scripts.files();
  }

  /** Re-reads the config: a valid one is applied (only changed servers restart), a broken one reported. */
  async reload(): Promise<void> {
    const loaded = this.#read();
    if (loaded) await this.users.apply(loaded);
  }

  /** Reads the config and, when it is valid, takes it as the config now; reports a broken one. */
  #read(): LoadedConfig | undefined {
    const result = loadConfig({
      root: this.options.root,
      env: this.options.env ?? process.env,
      flags: this.options.flags ?? [],
    });
    if (!result.ok) {
      this.#error = result.error.message;
      this.options.log.warn('config reload failed; keeping the last good config', {
        error: result.error.message,
      });
      this.users.failed(result.error.message);
      return undefined;
    }
    this.options.onConfig?.(result.value);
    this.#loaded = result.value;
    this.#scripts.take(result.value);
    this.#error = null;
    // Built-in tools take their section as it now stands (a host not started yet reads it then),
    // before anything awaits: of two reloads close together, the later file wins.
    this.users.read(result.value);
    return result.value;
  }

  /**
   * The config now: when a repository file that trusted commands run changed since it was read
   * (a watch may not have fired yet), read again first — the repository is not trusted for it.
   */
  current(): LoadedConfig | null {
    const changed = this.#scripts.changed();
    if (changed) {
      this.options.log.info('a script the trusted repository runs changed', { file: changed });
      const loaded = this.#read();
      if (loaded) void this.users.apply(loaded);
    }
    return this.#loaded;
  }

  /** The config a turn runs with; none while the config has never loaded (the error says why). */
  require(): LoadedConfig {
    const loaded = this.current();
    if (loaded) return loaded;
    throw new NifflerError(
      'config-invalid',
      `${this.#error ?? 'the config did not load'}\nFix it and save: the daemon reloads it.`,
    );
  }
}
