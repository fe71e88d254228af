/**
 * Where the Edge API is and which key to use: `--api-url`/`--api-key` flags first, then the
 * `EDGESYNC_API_URL`/`EDGESYNC_API_KEY` environment. "Nothing configured" is a valid answer
 * (undefined): the daemon then starts the embedded local server. Half a configuration is an
 * error, never a silent fallback to the local server. The key never appears in a message.
 */
import { ConfigError, UsageError } from '../errors.js';

export const API_URL_ENV = 'EDGESYNC_API_URL';
export const API_KEY_ENV = 'EDGESYNC_API_KEY';

export interface ApiConfig {
  /** Absolute http(s) URL without a trailing slash; request paths are appended to it. */
  readonly baseUrl: string;
  readonly apiKey: string;
}

export interface ResolveApiConfigInput {
  readonly flags: { readonly apiUrl?: string | undefined; readonly apiKey?: string | undefined };
  readonly env: Readonly<Record<string, string | undefined>>;
}

export function resolveApiConfig(input: ResolveApiConfigInput): ApiConfig | undefined {
  const url = pick(input.flags.apiUrl, input.env[API_URL_ENV]);
  // Keys often come from files or secrets with a trailing newline.
  const apiKey = pick(input.flags.apiKey, input.env[API_KEY_ENV])?.trim() || undefined;
  if (url === undefined && apiKey === undefined) return undefined;
  if (url === undefined) {
    throw new ConfigError(`an API key is set but no API URL: pass --api-url or set ${API_URL_ENV}`);
  }
  if (apiKey === undefined) {
    throw new ConfigError(`an API URL is set but no API key: pass --api-key or set ${API_KEY_ENV}`);
  }
  if (/\s/.test(apiKey)) throw new ConfigError('the API key contains whitespace');
  try {
    return { baseUrl: normalizeBaseUrl(url), apiKey };
  } catch (err) {
    // A bad --api-url is a usage error (exit 64), like any other bad flag; a bad
    // EDGESYNC_API_URL stays a configuration error.
    if (
      input.flags.apiUrl !== undefined &&
      input.flags.apiUrl !== '' &&
      err instanceof ConfigError
    ) {
      throw new UsageError(`--api-url: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

/** Validates an API base URL and drops its trailing slash. */
export function normalizeBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // The text is not echoed: a swapped --api-url/--api-key would print the key.
    throw new ConfigError('invalid API URL: not an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`invalid API URL: scheme ${url.protocol} is not http: or https:`);
  }
  if (url.username !== '' || url.password !== '') {
    // Credentials in a URL end up in logs; the key has its own setting.
    throw new ConfigError('invalid API URL: it must not contain credentials (use the API key)');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new ConfigError(`invalid API URL "${url.origin}${url.pathname}": no query or fragment`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function pick(flag: string | undefined, env: string | undefined): string | undefined {
  if (flag !== undefined && flag !== '') return flag;
  if (env !== undefined && env !== '') return env;
  return undefined;
}
