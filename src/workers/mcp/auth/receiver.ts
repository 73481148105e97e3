import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuthError } from './errors.ts';
import { whenAborted } from '../../shared/abort.ts';

const page = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif">` +
  `<h3>${title}</h3><p>${text}</p></body>`;

const escape = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** What the browser brought back: the code, and the issuer that sent it (RFC 9207), if named. */
interface Callback {
  code: string;
  iss?: string;
}

interface Waiter {
  resolve: (callback: Callback) => void;
  reject: (error: Error) => void;
}

/**
 * The loopback redirect receiver of the authorization-code flow (RFC 8252 §7.3): listens on
 * 127.0.0.1, takes `GET /callback?code&state` for the state it waits for, and tells the browser
 * it may close the tab. One receiver per server; closed when the flow ends.
 */
export class LoopbackReceiver {
  private server: http.Server | undefined;
  private readonly waiters = new Map<string, Waiter>();
  private url: string | undefined;

  constructor(private readonly serverName: string) {}

  /** The redirect URI once listening. */
  get redirectUrl(): string | undefined {
    return this.url;
  }

  /** Listens on `port` (0: any free port); resolves with the redirect URI. */
  async listen(port: number): Promise<string> {
    if (this.url) return this.url;
    const server = http.createServer((req, res) => this.receive(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    return this.url;
  }

  /** Resolves with the code the browser brings back for `state`; rejects on `signal` or a denial. */
  waitForCode(state: string, signal: AbortSignal | undefined): Promise<Callback> {
    return new Promise<Callback>((resolve, reject) => {
      const onAbort = () => {
        this.waiters.delete(state);
        reject(
          new AuthError(
            'needs-auth',
            `server "${this.serverName}": authorization was not completed`,
            {
              cause: signal?.reason,
            },
          ),
        );
      };
      const offAbort = whenAborted(signal, onAbort);
      const done = () => {
        offAbort();
        this.waiters.delete(state);
      };
      this.waiters.set(state, {
        resolve: (callback) => (done(), resolve(callback)),
        reject: (error) => (done(), reject(error)),
      });
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = this.url = undefined;
    for (const waiter of this.waiters.values())
      waiter.reject(
        new AuthError(
          'needs-auth',
          `server "${this.serverName}": stopped waiting for authorization`,
        ),
      );
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private receive(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const reply = (status: number, title: string, text: string): void =>
      void res
        .writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
        .end(page(title, text));
    if (req.method !== 'GET' || url.pathname !== '/callback') return reply(404, 'Not found', '');
    const waiter = this.waiters.get(url.searchParams.get('state') ?? '');
    if (!waiter)
      return reply(400, 'Unexpected request', 'niffler is not waiting for this authorization.');
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    if (error || !code) {
      const reason = `${error ?? 'no code'}${url.searchParams.get('error_description') ? `: ${url.searchParams.get('error_description')}` : ''}`;
      waiter.reject(
        new AuthError(
          'needs-auth',
          `server "${this.serverName}": the authorization was refused (${reason})`,
        ),
      );
      return reply(400, 'Authorization failed', escape(reason));
    }
    const iss = url.searchParams.get('iss');
    waiter.resolve({ code, ...(iss !== null ? { iss } : {}) });
    reply(
      200,
      'niffler is authorized',
      `Authorized ${escape(this.serverName)}. You can close this tab.`,
    );
  }
}
