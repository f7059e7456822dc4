import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';

/**
 * A message bus for cache invalidation. In one process it is an event emitter; with Redis it is
 * pub/sub, so every instance hears every message (including its own).
 */
export interface Bus {
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, handler: (message: string) => void): Promise<void>;
  close(): Promise<void>;
}

export function memoryBus(): Bus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    async publish(channel, message) {
      emitter.emit(channel, message);
    },
    async subscribe(channel, handler) {
      emitter.on(channel, handler);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}

export function redisBus(publisher: Redis): Bus {
  const subscriber = publisher.duplicate();
  const handlers = new Map<string, Array<(m: string) => void>>();
  subscriber.on('message', (channel: string, message: string) => {
    for (const h of handlers.get(channel) ?? []) h(message);
  });
  return {
    async publish(channel, message) {
      await publisher.publish(channel, message);
    },
    async subscribe(channel, handler) {
      if (!handlers.has(channel)) {
        handlers.set(channel, []);
        await subscriber.subscribe(channel);
      }
      handlers.get(channel)!.push(handler);
    },
    async close() {
      handlers.clear();
      subscriber.disconnect();
    },
  };
}
