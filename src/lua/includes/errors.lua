-- The statuses a script leads its reply with when it refuses, by name: `return { LEASE_LOST }`.
-- src/protocol/errors.ts (LuaStatus) maps each one to the API's error; a test keeps the two equal.
-- Included first, before any include that returns one: a name used before its `local` would
-- compile as a global, which Redis refuses when the script runs.
local QUEUE_NOT_FOUND = -1
local JOB_NOT_FOUND = -2
local LEASE_LOST = -3
local INVALID_STATE = -4 -- {INVALID_STATE, the job's state}
local PAYLOAD_TOO_LARGE = -5 -- {PAYLOAD_TOO_LARGE, item (1-based), limit in bytes}
local GROUP_NOT_FOUND = -6
local REPEAT_NOT_FOUND = -7
local QUEUE_DELETING = -8 -- a deletion is under way (put-queue: the caller finishes it first)
local TOO_MANY_REPEATS = -9 -- {TOO_MANY_REPEATS, the most a queue may hold}
local JOB_CHANGED_GROUP = -10 -- {JOB_CHANGED_GROUP, group}: the caller declared another group's key
local JOB_CANCELLED = -11 -- a lease callback of a job that was cancelled under it (lease.lua)
local QUEUE_FULL = -12 -- {QUEUE_FULL, maxJobs}: the enqueue would pass the queue's maxJobs (quota.lua)
local RATE_LIMITED = -13 -- {RATE_LIMITED, ms until the window ends, max, periodMs}: a publish token's client is past publishRateLimit
local DELAY_TOO_LONG = -14 -- {DELAY_TOO_LONG, item (1-based), maxDelayMs}: a start later than the queue's maxDelayMs
