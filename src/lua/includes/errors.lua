-- The statuses a script leads its reply with when it refuses, by name: `return { LEASE_LOST }`.
-- src/protocol/errors.ts (LuaStatus) maps each one to the API's error; a test keeps the two equal.
-- Included first, before any include that returns one: a name used before its `local` would
-- compile as a global, which Redis refuses when the script runs.
local QUEUE_NOT_FOUND = -1
local JOB_NOT_FOUND = -2
local LEASE_LOST = -3
local INVALID_STATE = -4 -- {INVALID_STATE, the job's state}
local PAYLOAD_TOO_LARGE = -5 -- {PAYLOAD_TOO_LARGE, item (1-based), limit in bytes, its name?}
local GROUP_NOT_FOUND = -6
local REPEAT_NOT_FOUND = -7
local QUEUE_DELETING = -8 -- a deletion is under way (put-queue: the caller finishes it first)
local TOO_MANY_REPEATS = -9 -- {TOO_MANY_REPEATS, the most a queue may hold}
local JOB_CHANGED_GROUP = -10 -- {JOB_CHANGED_GROUP, group}: the caller declared another group's key
local JOB_CANCELLED = -11 -- a lease callback of a job that was cancelled under it (lease.lua)
local QUEUE_FULL = -12 -- {QUEUE_FULL, limit, its name}: the enqueue would pass maxJobs, maxBytes or publishMaxJobs (quota.lua)
local RATE_LIMITED = -13 -- {RATE_LIMITED, ms until the window ends, max, periodMs, limit name}: past publishRateLimit or publishTokenRateLimit (publish-rate.lua)
local DELAY_TOO_LONG = -14 -- {DELAY_TOO_LONG, item (1-based), maxDelayMs}: a start later than the queue's maxDelayMs
local PARTITIONS_FIXED = -15 -- {PARTITIONS_FIXED, the queue's partitions}: a queue's partitions never change (put-queue)
local CONFIG_CHANGED = -16 -- the config is not the revision its writer read (put-queue: the writer reads it again)
local OUT_OF_ORDER = -17 -- a lease callback of a batch's job ahead of whose end a job of its batch is leased (settle's per-settlement state)

-- A partitioned queue's own meta (its root, tag `{<queue>}`) holds its config and `partitions`;
-- everything else lives in its partitions (tags `{<queue>:<p>}`). A call that must run on a
-- partition is refused there with an error the engine reads as "route by partition"
-- (src/core/engine/partitions.ts): so a caller that assumed one partition pays nothing for it.
local function refuseRoot(partitions)
  if partitions then error({ err = 'PARTITIONED ' .. partitions }) end
end

-- A partition (or queue) being moved to another database of the pool refuses every call until it
-- is there (PARTITION_MOVING: the caller tries again shortly); one that has moved refuses with the
-- database it is on now (PARTITION_MOVED: an isolate that had not heard routes again). `move` is
-- its meta's field: 'to <d>' while it moves to database d, 'at <d>' once it is there
-- (move-fence.lua, src/core/engine/move.ts); `moving`: a move under way is no refusal (a read).
local function refuseMoving(move, moving)
  if not move then return end
  if string.sub(move, 1, 3) == 'at ' then error({ err = 'PARTITION_MOVED ' .. string.sub(move, 4) }) end
  if not moving then error({ err = 'PARTITION_MOVING' }) end
end

-- Whether `meta` holds a queue's config (one command, as HEXISTS); a root refuses (refuseRoot),
-- and so does a partition moving or moved (refuseMoving).
local function hasQueue(meta)
  local found = redis.call('HMGET', meta, 'config', 'partitions', 'move')
  refuseRoot(found[2])
  refuseMoving(found[3])
  return found[1] ~= false
end
