/**
 * What our code and undici read of an AbortSignal: whether it fired, why, and its abort listeners. An
 * AbortController's signal is one, and so is a CancelSource.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A CancelSignal and its abort() in one plain object, for the signals made on every request (the caller went
 * away, an upstream's deadline): an AbortController's signal is an EventTarget, several times dearer to make
 * and to listen to. It aborts with the error an AbortController gives, so failures read the same. As with an
 * AbortSignal, each listener runs once, and one added after the abort never runs.
 */
export class CancelSource implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] = [];

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted && !this.listeners.includes(listener)) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at >= 0) this.listeners.splice(at, 1);
  }
}
