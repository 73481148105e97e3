import type { Socket } from 'node:net';
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node';

/**
 * The daemon socket's message writer: each message leaves in one write — its Content-Length
 * header and its JSON together. vscode-jsonrpc's own writer writes the two apart, so every message
 * cost two system calls and woke the reader twice (the gateway's relay paid that per call, both
 * ways).
 */
export class SocketFrameWriter extends AbstractMessageWriter implements MessageWriter {
  #errors = 0;

  constructor(private readonly socket: Socket) {
    super();
    socket.on('error', (error) => this.fireError(error));
    socket.on('close', () => this.fireClose());
  }

  write(message: Message): Promise<void> {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    const header = Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii');
    return new Promise<void>((resolve, reject) => {
      this.socket.write(Buffer.concat([header, body]), (error) => {
        if (!error) {
          this.#errors = 0;
          return resolve();
        }
        this.fireError(error, message, ++this.#errors);
        reject(error);
      });
    });
  }

  end(): void {
    this.socket.end();
  }
}
