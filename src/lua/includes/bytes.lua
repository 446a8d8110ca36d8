-- What the queue's waiting and delayed jobs hold, as meta counts it (the quotas of quota.lua):
-- `bytes`, their data in bytes of JSON text (maxBytes), and `pub`, how many of them a publish
-- token sent (publishMaxJobs). A job counts as it comes to wait (enqueued, a repeat's run,
-- retried by hand, back after an attempt that will be retried) and stops as it leaves waiting
-- and delayed (leased, cancelled, removed, expired); a debounce collapse or an update replaces
-- its data. The job is in hand at each of these steps, so the counts cost no command: they ride
-- on meta's write (meta.lua). A queue created before a field starts it at 0, and a count never
-- goes below 0.

-- @include meta

-- A publish token's jobs are told by their ids (src/core/engine/publish-policy.ts): no field per job.
local PUBLISH_ID_PREFIX = 'pub:'

local function isPublished(id)
  return string.sub(id, 1, #PUBLISH_ID_PREFIX) == PUBLISH_ID_PREFIX
end

local function countBytes(M, delta)
  if delta ~= 0 then metaSet(M, 'bytes', int(math.max(0, metaNum(M, 'bytes') + delta))) end
end

local function countPublished(M, delta)
  if delta ~= 0 then metaSet(M, 'pub', int(math.max(0, metaNum(M, 'pub') + delta))) end
end

-- Job `id`, with `size` bytes of data, comes to wait (delta 1) or leaves waiting (delta -1).
local function countWaiting(M, id, delta, size)
  countBytes(M, delta * size)
  if isPublished(id) then countPublished(M, delta) end
end
