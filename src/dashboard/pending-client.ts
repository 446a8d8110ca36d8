// TEMPORARY until main has H-surface's client: the group limit calls the dashboard uses.
import type { GroupLimits } from './group-limits-form';

declare module '../client/queue' {
  interface QueueClient<T> {
    setGroupLimits(group: string, limits: GroupLimits): Promise<{ group: string; limits: GroupLimits }>;
    clearGroupLimits(group: string): Promise<void>;
  }
}
