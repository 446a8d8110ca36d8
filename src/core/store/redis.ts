// The production Redis client: @upstash/redis (its Workers build) over the Upstash REST API.
import { Redis } from '@upstash/redis/cloudflare';

export interface RedisConnection {
  url: string;
  token: string;
}

export function createRedis({ url, token }: RedisConnection): Redis {
  return new Redis({
    url,
    token,
    // Keep replies as Redis sent them: "42" stays a string, JSON stays text.
    automaticDeserialization: false,
    // A retried request may run a script twice when only the answer was lost (a settle would
    // lease jobs nobody receives): the caller, not the client, decides whether to try again.
    retry: false,
  });
}
