import {
  chmodSync,
  lstatSync,
  mkdirSync,
  renameSync,
  rmSync,
  watch,
  type FSWatcher,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** How often the socket file is looked at besides the directory watch (which can miss events). */
const CHECK_MS = 1_000;

interface SocketEvents {
  /** The socket file had gone and is back. */
  recreated: () => void;
  /** The socket file cannot be kept (replaced by another file, or cannot be made again). */
  lost: (why: string) => void;
}

/**
 * The daemon's Unix socket, kept where front-ends look for it while the daemon runs: placed over
 * whatever a dead daemon left (only the holder of the lock gets here), placed again when someone
 * deletes it, and removed at the end only while it is still this daemon's (same device and inode).
 *
 * Each listening socket is bound under a temporary name and renamed into place, because libuv
 * unlinks the path a server was bound to when it closes: bound to the real path, closing a server
 * whose file was deleted would delete its successor's.
 */
export class DaemonSocket {
  #server: net.Server | undefined;
  #id: { dev: number; ino: number } | undefined;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #checking = false;
  #binds = 0;

  private constructor(
    readonly file: string,
    private readonly onConnection: (socket: net.Socket) => void,
    private readonly events: SocketEvents,
  ) {}

  /** Listens on `file`; resolves once it accepts connections. */
  static async listen(
    file: string,
    onConnection: (socket: net.Socket) => void,
    events: SocketEvents,
  ): Promise<DaemonSocket> {
    const socket = new DaemonSocket(file, onConnection, events);
    await socket.#bind();
    socket.#watch();
    socket.#timer = setInterval(() => void socket.#check(), CHECK_MS);
    socket.#timer.unref();
    return socket;
  }

  async #bind(): Promise<void> {
    const dir = path.dirname(this.file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Shorter than the real name, so it fits wherever the real one does (~104 bytes).
    const temporary = path.join(dir, `.${process.pid}-${++this.#binds}.s`);
    rmSync(temporary, { force: true });
    const server = net.createServer(this.onConnection);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(temporary, () => {
        server.off('error', reject);
        resolve();
      });
    });
    chmodSync(temporary, 0o600);
    renameSync(temporary, this.file);
    const { dev, ino } = lstatSync(this.file);
    this.#id = { dev, ino };
    const previous = this.#server;
    this.#server = server;
    previous?.close();
  }

  #watch(): void {
    try {
      const watcher = watch(path.dirname(this.file), (_event, name) => {
        if (!name || name === path.basename(this.file)) void this.#check();
      });
      // The directory itself went: the timer notices, and a new watch starts with the new socket.
      watcher.on('error', () => {
        watcher.close();
        if (this.#watcher === watcher) this.#watcher = undefined;
      });
      watcher.unref();
      this.#watcher = watcher;
    } catch {
      // No watch (the directory is gone, or no inotify left): the timer still looks.
    }
  }

  /** True while the file at the socket's path is the one this daemon placed there. */
  #isOurs(): boolean | null {
    try {
      const { dev, ino } = lstatSync(this.file);
      return dev === this.#id?.dev && ino === this.#id?.ino;
    } catch {
      return null;
    }
  }

  async #check(): Promise<void> {
    if (this.#closed || this.#checking) return;
    const ours = this.#isOurs();
    if (ours) return;
    if (ours === false)
      return this.events.lost(`its socket ${this.file} was replaced by another file`);
    this.#checking = true;
    try {
      await this.#bind();
      if (!this.#watcher) this.#watch();
      this.events.recreated();
    } catch (error) {
      this.events.lost(
        `its socket ${this.file} was deleted and could not be made again: ${(error as Error).message}`,
      );
    } finally {
      this.#checking = false;
    }
  }

  /** Stops accepting connections; removes the socket file if it is still this daemon's. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#watcher?.close();
    this.#server?.close();
    if (this.#isOurs()) rmSync(this.file, { force: true });
  }
}
