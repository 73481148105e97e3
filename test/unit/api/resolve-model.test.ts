import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/main/config/schema.ts';
import { DEFAULT_RETRY, resolveModelSpec } from '../../../src/main/threads/api.ts';

const env = { HOME: '/home/u' };
const config = ConfigSchema.parse({
  model: 'gpt',
  models: {
    gpt: { provider: 'openai', model: 'gpt-5', apiKeyEnv: 'MY_OPENAI' },
    claude: {
      provider: 'anthropic',
      model: 'claude-x',
      vision: true,
      reasoning: true,
      maxTokens: 9000,
    },
    vllm: {
      provider: 'openai',
      baseUrl: 'http://gpu:8000/v1/',
      model: 'qwen',
      toolProtocol: 'text',
    },
  },
});

describe('resolveModelSpec', () => {
  it('resolves the default model with its key and defaults', () => {
    expect(resolveModelSpec(config, undefined, { ...env, MY_OPENAI: 'sk-1' })).toEqual({
      name: 'gpt',
      provider: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-5',
      apiKey: 'sk-1',
      apiKeyEnv: 'MY_OPENAI',
      toolProtocol: 'auto',
      vision: false,
      reasoning: false,
      retry: DEFAULT_RETRY,
      stallTimeoutMs: 180_000,
      configFile: '~/.niffler/config.yaml',
    });
  });

  it('names the config file NIFFLER_HOME points at, not ~/.niffler', () => {
    const elsewhere = { ...env, NIFFLER_HOME: '/srv/nf' };
    expect(() => resolveModelSpec(config, 'nope', elsewhere)).toThrow(
      'Add it under `models:` in /srv/nf/config.yaml (or .niffler/config.yaml)',
    );
    expect(resolveModelSpec(config, 'vllm', elsewhere).configFile).toBe('/srv/nf/config.yaml');
  });

  it('reads ANTHROPIC_API_KEY for the official host when apiKeyEnv is absent', () => {
    const spec = resolveModelSpec(config, 'claude', { ...env, ANTHROPIC_API_KEY: 'k' });
    expect(spec).toMatchObject({
      apiKey: 'k',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
      vision: true,
      maxTokens: 9000,
    });
  });

  it('needs no key for a self-hosted server and trims the base URL', () => {
    const spec = resolveModelSpec(config, 'vllm', env, {
      retry: { maxRetries: 0 },
      stallTimeoutMs: 50,
    });
    expect(spec).toMatchObject({
      baseUrl: 'http://gpu:8000/v1',
      toolProtocol: 'text',
      stallTimeoutMs: 50,
    });
    expect(spec.apiKey).toBeUndefined();
    expect(spec.retry.maxRetries).toBe(0);
  });

  it('falls back to the built-in local Ollama model', () => {
    expect(resolveModelSpec(ConfigSchema.parse({}), 'local', env)).toMatchObject({
      provider: 'ollama',
      baseUrl: 'http://localhost:11434',
      model: 'qwen3:8b',
    });
  });

  it('names an unknown model, the known ones and what to configure', () => {
    expect(() => resolveModelSpec(config, 'nope', env)).toThrow(
      'model "nope" is not configured (known: local, gpt, claude, vllm). Add it under `models:` in ~/.niffler/config.yaml (or .niffler/config.yaml), or choose a configured one with `model:` or `--model NAME`.',
    );
  });

  it('names the unset key variable', () => {
    expect(() => resolveModelSpec(config, 'gpt', env)).toThrow(
      'model "gpt" reads its API key from $MY_OPENAI, which is not set. Export MY_OPENAI, or set models.gpt.apiKeyEnv in ~/.niffler/config.yaml to the variable that holds it.',
    );
  });
});
